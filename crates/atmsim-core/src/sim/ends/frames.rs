//! The frame store of a TCP-carrying VC: the frames sent and not resolved
//! yet, each with its packet and its dropped cells.

use crate::ip::Packet;
use std::collections::VecDeque;

/// The frames of a TCP-carrying VC that have not been resolved yet, by
/// frame id: the packet each carries and how many of its cells were dropped.
/// Frame ids are the VC's frame count in 32 bits, as the cells carry them:
/// they wrap after 2^32 frames, so every id here is taken relative to the
/// oldest (AAL5 only ever compares ids for equality).
#[derive(Default)]
pub(super) struct FrameStore {
    pub(super) base: u32,
    pub(super) entries: VecDeque<FrameEntry>,
}

pub(super) struct FrameEntry {
    pub(super) packet: Packet,
    pub(super) cells: u16,
    pub(super) dropped: u16,
}

impl FrameStore {
    pub(super) fn push(&mut self, frame: u32, entry: FrameEntry) {
        if self.entries.is_empty() {
            self.base = frame;
        }
        debug_assert_eq!(frame, self.base.wrapping_add(self.entries.len() as u32));
        self.entries.push_back(entry);
    }

    pub(super) fn get_mut(&mut self, frame: u32) -> Option<&mut FrameEntry> {
        // An id before the oldest wraps to a position past the end.
        let k = frame.wrapping_sub(self.base);
        self.entries.get_mut(k as usize)
    }

    pub(super) fn pop_front(&mut self) -> Option<(u32, FrameEntry)> {
        let e = self.entries.pop_front()?;
        let id = self.base;
        self.base = self.base.wrapping_add(1);
        Some((id, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_ids_wrap_after_two_to_the_32_frames() {
        let entry = || FrameEntry {
            packet: Packet::data(0, 0, 1),
            cells: 1,
            dropped: 0,
        };
        let mut store = FrameStore::default();
        store.push(u32::MAX, entry());
        store.push(0, entry());
        store.get_mut(0).unwrap().dropped = 1;
        assert!(store.get_mut(1).is_none() && store.get_mut(u32::MAX - 1).is_none());
        assert_eq!(
            store.pop_front().map(|(id, e)| (id, e.dropped)),
            Some((u32::MAX, 0))
        );
        assert_eq!(
            store.pop_front().map(|(id, e)| (id, e.dropped)),
            Some((0, 1))
        );
    }
}
