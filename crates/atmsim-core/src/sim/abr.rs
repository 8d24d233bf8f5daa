//! ABR end systems: the source's in-rate schedule, turn-around at the
//! destination, backward RM cells on their way back.

use super::*;

impl Simulation {
    /// Makes sure the SES of VC `v` has an opportunity scheduled if it has
    /// something to send, at the earliest time its ACR allows.
    pub(super) fn wake_ses(&mut self, v: usize) {
        let now = self.now;
        let Some(st) = self.vcs[v].ses.as_mut() else {
            return;
        };
        if st.queue.is_empty() && !st.greedy {
            return;
        }
        let t = st.ses.next_opportunity(now);
        if st.scheduled.is_none_or(|s| t < s) {
            st.scheduled = Some(t);
            self.queue.push(t, Event::SesSend(v as u32));
        }
    }

    pub(super) fn on_ses_send(&mut self, v: usize) {
        self.queue.pop();
        let now = self.now;
        let vc = &mut self.vcs[v];
        let first_link = vc.links[0] as usize;
        let st = vc.ses.as_mut().expect("SesSend on a VC without an SES");
        if st.scheduled != Some(now) {
            return; // superseded by an earlier opportunity
        }
        st.scheduled = None;
        if st.greedy && now >= st.greedy_stop {
            st.greedy = false;
        }
        if st.queue.is_empty() && !st.greedy {
            return;
        }
        let cell = match st.ses.emit(now) {
            Emit::Frm(c) => {
                self.rm_generated += 1;
                c
            }
            Emit::Data => match st.queue.pop_front() {
                Some(c) => c,
                None => {
                    // Greedy: a new one-cell frame.
                    let frame = vc.frames_sent as u32;
                    vc.frames_sent += 1;
                    vc.cells_sent += 1;
                    Cell::data(v as u32, frame, 1, true)
                }
            },
        };
        self.port_arrive(first_link, cell);
        self.wake_ses(v);
    }

    /// A cell reaches the end of its VC's forward path at an ABR destination.
    pub(super) fn abr_destination(&mut self, cell: Cell) -> Option<Cell> {
        let v = &mut self.vcs[cell.vc as usize];
        let des = v.des.as_mut()?;
        if is_frm(&cell) {
            let brm = des.on_frm(&cell);
            self.rm_delivered += 1;
            self.rm_generated += 1;
            let back = v.back_links[0] as usize;
            self.port_arrive(back, brm);
            None
        } else {
            des.on_data(&cell);
            Some(cell)
        }
    }

    /// A backward RM cell arrived over back_links[hop] of its VC.
    pub(super) fn on_brm_arrival(&mut self, mut cell: Cell) {
        let now = self.now;
        let vc = cell.vc as usize;
        let h = cell.hop as usize;
        let n = self.vcs[vc].back_links.len();
        if h + 1 == n {
            // Back at the source.
            self.rm_delivered += 1;
            if let Some(st) = self.vcs[vc].ses.as_mut() {
                st.ses.on_brm(&cell);
            }
            self.wake_ses(vc);
            return;
        }
        if let Some(k) = self.vcs[vc].brm_mark[h] {
            let hop = self.atm(k as usize);
            let ps = hop.port_state(now);
            if let Some(a) = hop.algorithm.as_mut() {
                a.on_brm(now, &mut cell, &ps);
            }
        }
        cell.hop += 1;
        let next = self.vcs[vc].back_links[cell.hop as usize] as usize;
        self.port_arrive(next, cell);
    }
}
