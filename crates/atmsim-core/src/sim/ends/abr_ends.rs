//! The ABR source and destination end systems of the VCs (ATM Forum
//! Traffic Management Specification 4.0): the source queue and in-rate
//! opportunities, the RM cells turned around and absorbed.

use super::Endpoints;
use crate::abr::ses::Emit;
use crate::abr::SourceEndSystem;
use crate::atm::Cell;
use crate::engine::{Event, EventQueue, Time};
use crate::ids::VcId;
use std::collections::VecDeque;

/// The ABR source end system of a VC with the cells it holds.
pub(super) struct SesState {
    pub(super) ses: SourceEndSystem,
    /// Data cells waiting for an in-rate opportunity (the ABR source queue).
    pub(super) queue: VecDeque<Cell>,
    /// An infinite backlog of one-cell frames (until `greedy_stop`).
    pub(super) greedy: bool,
    pub(super) greedy_stop: Time,
    /// Time of the pending SesSend event.
    pub(super) scheduled: Option<Time>,
}

impl Endpoints {
    /// True when `vc` has an ABR source end system (its cells wait there
    /// for in-rate opportunities).
    #[inline]
    pub(in crate::sim) fn has_ses(&self, vc: VcId) -> bool {
        self.vcs[vc.index()].ses.is_some()
    }

    /// Queues the cells of frame `frame` at `vc`'s source end system.
    pub(in crate::sim) fn ses_enqueue(&mut self, vc: VcId, frame: u32, cells: u16) {
        let st = self.vcs[vc.index()].ses.as_mut().expect("an ABR VC");
        for k in 0..cells {
            st.queue
                .push_back(Cell::data(vc.get(), frame, cells, k + 1 == cells));
        }
    }

    /// Makes sure the SES of VC `v` has an opportunity scheduled if it has
    /// something to send, at the earliest time its ACR allows.
    pub(in crate::sim) fn wake_ses(&mut self, v: VcId, now: Time, agenda: &mut EventQueue) {
        let Some(st) = self.vcs[v.index()].ses.as_mut() else {
            return;
        };
        if st.queue.is_empty() && !st.greedy {
            return;
        }
        let t = st.ses.next_opportunity(now);
        if st.scheduled.is_none_or(|s| t < s) {
            st.scheduled = Some(t);
            agenda.push_arrival(t, Event::SesSend(v));
        }
    }

    /// The SES of VC `v` has an in-rate opportunity at `now`: the cell it
    /// sends (a forward RM cell or data), or None (a superseded
    /// opportunity, or nothing to send).
    pub(in crate::sim) fn ses_send(&mut self, v: VcId, now: Time) -> Option<Cell> {
        let vc = &mut self.vcs[v.index()];
        let st = vc.ses.as_mut().expect("SesSend on a VC without an SES");
        if st.scheduled != Some(now) {
            return None; // superseded by an earlier opportunity
        }
        st.scheduled = None;
        if st.greedy && now >= st.greedy_stop {
            st.greedy = false;
        }
        if st.queue.is_empty() && !st.greedy {
            return None;
        }
        Some(match st.ses.emit(now) {
            Emit::Frm(c) => {
                self.rm_generated += 1;
                c
            }
            Emit::Data => match st.queue.pop_front() {
                Some(c) => c,
                None => {
                    // Greedy: a new one-cell frame.
                    let frame = vc.posted.open(1);
                    Cell::data(v.get(), frame, 1, true)
                }
            },
        })
    }

    /// A backward RM cell is back at its source end system.
    pub(in crate::sim) fn brm_at_source(&mut self, cell: &Cell) {
        self.rm_delivered += 1;
        if let Some(st) = self.vcs[cell.vc as usize].ses.as_mut() {
            st.ses.on_brm(cell);
        }
    }

    /// The ACR and the last ER received of ABR VC `vc`'s source, cells/s.
    pub(in crate::sim) fn ses_rates(&self, vc: VcId) -> Option<(f64, f64)> {
        let st = self.vcs[vc.index()].ses.as_ref()?;
        Some((st.ses.acr, st.ses.last_er))
    }
}
