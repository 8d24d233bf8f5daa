//! FMMRA, the Fast Max-Min Rate Allocation of TCP over FMMRA (An et al., 1998) section 3.4.
//!
//! **Our reconstruction** (of TCP over FMMRA section 3.4): the published equations were not
//! reachable, so this implements the behaviour the paper describes. The port
//! measures the ABR capacity C = link rate - CBR/VBR rate - the rate of
//! backward RM cells of VCs running the other way (target
//! utilization 1.0) over averaging intervals. It keeps, per VC, whether the
//! VC is bottlenecked here or elsewhere and, if elsewhere, its rate; the
//! advertised rate is AR = (C - sum of rates bottlenecked elsewhere) /
//! (number bottlenecked here). On every RM cell, forward and backward, with
//! r = min(cell ER, CCR): the VC is "elsewhere" at rate r if r < AR (AR
//! computed as if it were here), else "here"; any "elsewhere" VC whose rate
//! is not below the new AR moves back "here"; the cell's ER becomes
//! min(ER, AR). Marking both directions lets downstream switches learn
//! upstream bottlenecks and the reverse.

use super::algorithm::{AlgorithmStats, Measured, Meter, PortState, SwitchAlgorithm};
use super::is_rm;
use crate::atm::Cell;
use crate::engine::Time;

/// The ABR capacity measured over an interval: the link rate less the
/// CBR/VBR cells and the backward RM cells of VCs running the other way
/// (target utilization 1.0).
fn capacity(m: &Measured, port: &PortState) -> f64 {
    (port.link_cps - m.vbr_cps - m.reverse_brm_cps).max(0.0)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Bottleneck {
    Unknown,
    Here,
    Elsewhere(f64),
}

/// FMMRA at one port.
pub struct Fmmra {
    meter: Meter,
    capacity: Option<f64>,
    state: Vec<Bottleneck>,
    sum_elsewhere: f64,
    n_here: u32,
    last_er: f64,
}

impl Fmmra {
    /// FMMRA for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, meter: Meter) -> Self {
        Fmmra {
            meter,
            capacity: None,
            state: vec![Bottleneck::Unknown; n_vcs],
            sum_elsewhere: 0.0,
            n_here: 0,
            last_er: 0.0,
        }
    }

    /// The advertised rate for capacity `c`, with `extra_here` more VCs here.
    fn ar(&self, c: f64, extra_here: u32) -> f64 {
        let free = (c - self.sum_elsewhere).max(0.0);
        let n = self.n_here + extra_here;
        if n == 0 {
            free
        } else {
            free / n as f64
        }
    }

    fn remove(&mut self, vc: usize) {
        match self.state[vc] {
            Bottleneck::Here => self.n_here -= 1,
            Bottleneck::Elsewhere(r) => self.sum_elsewhere -= r,
            Bottleneck::Unknown => {}
        }
        self.state[vc] = Bottleneck::Unknown;
    }

    /// Processes an RM cell of VC `vc` with ER `er` and CCR `ccr` at
    /// capacity `c`; returns the advertised rate to write.
    pub fn update(&mut self, vc: u32, er: f64, ccr: f64, c: f64) -> f64 {
        let v = vc as usize;
        self.remove(v);
        let r = er.min(ccr);
        if r < self.ar(c, 1) {
            self.state[v] = Bottleneck::Elsewhere(r);
            self.sum_elsewhere += r;
        } else {
            self.state[v] = Bottleneck::Here;
            self.n_here += 1;
        }
        // VCs recorded as bottlenecked elsewhere at a rate the new AR no
        // longer exceeds are bottlenecked here after all: largest first.
        loop {
            let ar = self.ar(c, 0);
            let largest = self
                .state
                .iter()
                .enumerate()
                .filter_map(|(i, s)| match s {
                    Bottleneck::Elsewhere(x) if *x >= ar => Some((i, *x)),
                    _ => None,
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            match largest {
                Some((i, x)) => {
                    self.sum_elsewhere -= x;
                    self.state[i] = Bottleneck::Here;
                    self.n_here += 1;
                }
                None => break,
            }
        }
        self.ar(c, 0)
    }

    fn mark(&mut self, now: Time, cell: &mut Cell, port: &PortState) {
        if let Some(m) = self.meter.close_if_due(now) {
            self.capacity = Some(capacity(&m, port));
        }
        let c = self.capacity.unwrap_or(port.link_cps);
        let ar = self.update(cell.vc, cell.er as f64, cell.ccr as f64, c);
        self.last_er = ar;
        if (ar as f32) < cell.er {
            cell.er = ar as f32;
        }
    }
}

impl SwitchAlgorithm for Fmmra {
    fn name(&self) -> &'static str {
        "fmmra"
    }

    fn on_cell(
        &mut self,
        now: Time,
        cell: &mut Cell,
        abr: bool,
        priority: usize,
        port: &PortState,
    ) {
        if let Some(m) = self.meter.count(now, cell.vc, abr, priority) {
            self.capacity = Some(capacity(&m, port));
        }
        if abr && is_rm(cell) {
            self.mark(now, cell, port);
        }
    }

    fn on_brm(&mut self, now: Time, cell: &mut Cell, port: &PortState) {
        self.mark(now, cell, port);
    }

    fn on_reverse_brm(&mut self, now: Time, port: &PortState) {
        if let Some(m) = self.meter.count_reverse_brm(now) {
            self.capacity = Some(capacity(&m, port));
        }
    }

    fn stats(&self) -> AlgorithmStats {
        AlgorithmStats {
            load_factor: 0.0,
            fair_share_cps: self.capacity.map_or(0.0, |c| self.ar(c, 0)),
            last_er_cps: self.last_er,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_with_one_vc_bottlenecked_elsewhere() {
        // C = 90; VC 0 can only do 10 (bottlenecked upstream); VCs 1, 2 greedy.
        let mut f = Fmmra::new(3, Meter::new(3, 1, 1));
        let c = 90.0;
        let mut ar = 0.0;
        for _ in 0..3 {
            ar = f.update(0, 10.0, 10.0, c);
            f.update(1, 1000.0, 1000.0, c);
            f.update(2, 1000.0, 1000.0, c);
        }
        assert_eq!(f.state[0], Bottleneck::Elsewhere(10.0));
        assert_eq!(ar, 40.0);
        assert_eq!(f.update(1, 1000.0, 40.0, c), 40.0);
        // VC 0's constraint goes away: it comes back here and all get 30.
        f.update(0, 1000.0, 1000.0, c);
        assert_eq!(f.update(1, 1000.0, 40.0, c), 30.0);
    }

    #[test]
    fn marking_lowers_er_only() {
        let mut f = Fmmra::new(1, Meter::new(1, 1, 1));
        let p = PortState {
            link_cps: 100.0,
            abr_queue: 0,
        };
        let mut rm = crate::abr::forward_rm(0, 500.0, 1000.0, 0.0);
        f.on_cell(0, &mut rm, true, 2, &p);
        assert_eq!(rm.er, 100.0);
        let mut low = crate::abr::forward_rm(0, 5.0, 5.0, 0.0);
        f.on_cell(0, &mut low, true, 2, &p);
        assert_eq!(low.er, 5.0);
    }

    #[test]
    fn backward_rm_cells_of_the_other_direction_take_capacity() {
        // Intervals of 10 cells: 10 reverse backward RM cells in 1 ms are
        // 10,000 cells/s the port's VCs cannot have.
        let mut f = Fmmra::new(1, Meter::new(1, 1_000_000_000_000, 10));
        let p = PortState {
            link_cps: 100_000.0,
            abr_queue: 0,
        };
        for k in 1..=10u64 {
            f.on_reverse_brm(k * 100_000_000, &p);
        }
        assert_eq!(f.capacity, Some(90_000.0));
    }
}
