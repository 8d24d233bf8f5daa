//! Fast path 4, eager TCP ends: a flow's receiver that takes each data
//! segment, or its sender each ACK, as soon as the last port computes the
//! packet's arrival. The plan decides which ends are eager; each flow's
//! record keeps its [`EagerEnds`], which the IP fabric asks (through
//! `TcpHosts::takes_early`) when a packet leaves the last port of its path.

use crate::engine::Time;
use crate::ip::Packet;

/// Which of a flow's ends take packets early.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::sim) struct EagerEnds {
    /// The receiver takes a data segment as soon as its arrival is known.
    rx: bool,
    /// The sender takes an ACK as soon as its arrival is known.
    tx: bool,
}

impl EagerEnds {
    /// The plan's choice for a flow's receiver (`rx`) and sender (`tx`).
    pub(in crate::sim) fn new(rx: bool, tx: bool) -> Self {
        EagerEnds { rx, tx }
    }

    /// Whether the end host of `packet`'s path takes it at `far`, as soon
    /// as its arrival is known: a data segment if the receiver is eager; an
    /// ACK if the sender is and its own deadline (retransmission or persist
    /// timer, from `deadline`) does not come before `far`.
    #[inline(always)]
    pub(in crate::sim) fn take(
        self,
        packet: &Packet,
        far: Time,
        deadline: impl FnOnce() -> Option<Time>,
    ) -> bool {
        if packet.is_data {
            self.rx
        } else {
            self.tx && deadline().is_none_or(|d| d > far)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eager_sender_waits_for_its_own_deadline() {
        let (data, ack) = (Packet::data(0, 0, 1), Packet::ack(0, 0, 1, 1000));
        let both = EagerEnds::new(true, true);
        assert!(both.take(&data, 5, || None));
        assert!(both.take(&ack, 5, || None) && both.take(&ack, 5, || Some(6)));
        assert!(!both.take(&ack, 5, || Some(5)));
        assert!(!EagerEnds::new(false, true).take(&data, 5, || None));
        assert!(!EagerEnds::new(true, false).take(&ack, 5, || None));
    }
}
