//! A timing wheel: the pending times of many items (the traffic sources),
//! earliest first, in O(1) per operation however many items it holds.
//!
//! Each item is in the wheel at most once, at a time; items come out in the
//! order of their 128-bit keys (see [`TieKey`]: the time in the high 64
//! bits, the event queue's key, see [`super::queue`]), ties included,
//! exactly as a heap of the keys would give them. The wheel keeps the
//! times alone and computes an item's whole key only when its time ties
//! with another's: most items never need theirs.
//!
//! Time is cut into buckets of 2^`shift` ps; the wheel has 2^`bits` of them,
//! each an array of the items whose time falls in it, for the buckets
//! after the current one and less than a turn of the wheel ahead. The
//! current bucket's items are sorted into `run` when the wheel reaches it;
//! an item inserted into the current bucket joins `run` in its place. Items
//! a turn or more ahead wait in a second, coarser wheel of one bucket a turn
//! (`later`, [`LATER_TURNS`] turns), each moved into the first wheel's
//! buckets when its turn begins; those further still wait in a heap (`far`,
//! by time alone: the run they join sorts them by key) and join `run` when
//! the wheel reaches their bucket.
//!
//! In front of the buckets, `near` takes an item that comes after every
//! item already there and lies within `reach` of the item taken last: a
//! queue in key order by construction, filled at its back and emptied at
//! its front, which `peek` compares with the buckets' earliest item. The
//! sources of a burst all rescheduled one gap ahead each come after all
//! the others pending within that gap, so they go round this queue, one
//! append and one compare each, and never through a bucket; silences and
//! the rest go to the buckets.
//!
//! Only the speed depends on the sizes: a bucket of about the mean gap
//! between items and a turn longer than the usual rescheduling interval
//! make every operation a few steps; with few items a bucket of many gaps
//! is faster still (see [`TimingWheel::sized`]).

use super::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Turns of the wheel the second wheel covers (a power of two). An on/off
/// source's silence lasts many turns: in the heap, each cost a sift through
/// its levels, a cache miss each with 10,000 sources; here a push and a
/// move.
pub const LATER_TURNS: u64 = 256;

/// The key of an item at a time: the time in the high 64 bits, and below
/// them what orders the items of one time (a function of the time and the
/// item alone).
pub trait TieKey {
    /// The key of `item` at `time`.
    fn key(&self, time: Time, item: u32) -> u128;
}

/// The pending times of items `0..n`, earliest (by key) first.
pub struct TimingWheel<K> {
    keys: K,
    shift: u32,
    /// 2^bits buckets a turn.
    bits: u32,
    mask: u64,
    /// Each bucket's items with their times, in the order they were put
    /// in (contiguous: the wheel reads a bucket without chasing links from
    /// item to item, which at 10,000 items cost a cache miss each).
    buckets: Vec<Vec<(Time, u32)>>,
    /// Absolute index (time >> shift) of the current bucket.
    cur: u64,
    /// The current bucket's items, sorted by key from `head` on (those
    /// before `head` have been taken).
    run: Vec<(Time, u32)>,
    head: usize,
    /// Items in the buckets.
    listed: usize,
    /// Items a turn or more ahead of the current bucket, and within
    /// LATER_TURNS turns of the current turn: by turn (index turn %
    /// LATER_TURNS), moved into `buckets` when the wheel enters their turn.
    later: Vec<Vec<(Time, u32)>>,
    /// Items in `later`.
    later_listed: usize,
    /// Items LATER_TURNS turns or more ahead of the current turn.
    far: BinaryHeap<Reverse<(Time, u32)>>,
    /// The bucket of the earliest item in `far` (u64::MAX: none).
    far_bucket: u64,
    /// Items in key order, each put in after all the others there, less
    /// than `reach` after the last item taken: a source rescheduled one
    /// gap of its burst ahead is usually the latest of all those pending
    /// within the gap, and goes here in one step, never through a bucket.
    near: Ring,
    /// How far ahead of `now` an item may be to join `near`.
    reach: Time,
    /// The time of the item `peek` returned last.
    now: Time,
    /// `peek` returned `near`'s first item (else the run's).
    from_near: bool,
    /// The earliest item of the buckets, the run, the second wheel and
    /// the heap (None: they hold none), kept so that `peek` compares two
    /// items it has at hand.
    wheel_first: Option<(Time, u32)>,
}

impl<K: TieKey> TimingWheel<K> {
    /// An empty wheel for items (`u32`s) ordered by `keys`, with buckets of
    /// 2^`shift` ps and 2^`bits` buckets.
    pub fn new(keys: K, shift: u32, bits: u32) -> Self {
        let shift = shift.min(63);
        let bits = bits.clamp(1, 24);
        TimingWheel {
            keys,
            shift,
            bits,
            mask: (1u64 << bits) - 1,
            buckets: (0..1usize << bits).map(|_| Vec::new()).collect(),
            cur: 0,
            run: Vec::new(),
            head: 0,
            listed: 0,
            later: (0..LATER_TURNS).map(|_| Vec::new()).collect(),
            later_listed: 0,
            far: BinaryHeap::new(),
            far_bucket: u64::MAX,
            near: Ring::new(),
            reach: 1u64 << shift,
            now: 0,
            from_near: false,
            wheel_first: None,
        }
    }

    /// A wheel for items that together are due about `per_s` times a
    /// second, each rescheduled about `gap_ps` after it is due.
    pub fn sized(keys: K, per_s: f64, gap_ps: f64) -> Self {
        // Buckets of 16 to 32 mean gaps between items (a power of two), a
        // turn of about twice the usual interval. With a few items the
        // current bucket then holds each of them several times over and
        // works as a sorted array: an item rescheduled within it slides in
        // near the end of the run, and the wheel seldom moves on (smaller
        // buckets were measured slower: docs/performance.md).
        let mean_gap = if per_s > 0.0 { 1e12 / per_s } else { 1e12 };
        let shift = (16.0 * mean_gap).max(1.0).log2().ceil() as u32;
        let turn = (2.0 * gap_ps / (1u64 << shift.min(63)) as f64).max(16.0);
        let bits = turn.log2().ceil().min(20.0) as u32;
        let mut wheel = Self::new(keys, shift, bits);
        // `near` takes items rescheduled about a gap ahead (a burst's next
        // cell), not those after a silence of a gap or more on top.
        wheel.reach = (1.5 * gap_ps) as Time;
        wheel
    }

    /// The key of `item` at `time`.
    #[inline(always)]
    pub fn key(&self, time: Time, item: u32) -> u128 {
        self.keys.key(time, item)
    }

    /// True when `a` comes before `b` (a time and an item each).
    #[inline(always)]
    fn before(&self, a: (Time, u32), b: (Time, u32)) -> bool {
        a.0 < b.0 || (a.0 == b.0 && self.tie_before(a, b))
    }

    /// `before` for two items of one time: by their keys. Kept out of line
    /// so that the keys are computed only for a tie, never speculatively.
    #[cold]
    #[inline(never)]
    fn tie_before(&self, a: (Time, u32), b: (Time, u32)) -> bool {
        self.key(a.0, a.1) < self.key(b.0, b.1)
    }

    #[inline(always)]
    fn bucket(&self, time: Time) -> u64 {
        time >> self.shift
    }

    /// The turn of the wheel that bucket `b` belongs to.
    #[inline(always)]
    fn turn(&self, b: u64) -> u64 {
        b >> self.bits
    }

    /// Puts `item` (not in the wheel) in at `time`, which must not be
    /// before the time of the item taken last.
    #[inline(always)]
    pub fn insert(&mut self, item: u32, time: Time) {
        debug_assert!(time >= self.now, "a time before the last item taken");
        let x = (time, item);
        let after_near = match self.near.back() {
            Some(last) => self.before(last, x),
            None => true,
        };
        if after_near && time - self.now < self.reach {
            self.near.push_back(x);
            return;
        }
        self.insert_wheel(item, time);
        if self.wheel_first.is_none_or(|w| self.before(x, w)) {
            self.wheel_first = Some(x);
        }
    }

    /// `insert` into the buckets (or beyond them).
    #[inline(always)]
    fn insert_wheel(&mut self, item: u32, time: Time) {
        let b = self.bucket(time);
        let ahead = b.wrapping_sub(self.cur);
        if ahead == 0 {
            // The current bucket (most insertions, with buckets of many
            // gaps): into the run, in order.
            self.insert_current(item, time);
        } else if ahead <= self.mask {
            // 1 ..= mask buckets ahead: into its bucket.
            let slot = (b & self.mask) as usize;
            self.buckets[slot].push((time, item));
            self.listed += 1;
        } else if b < self.cur {
            // Before the current bucket (the wheel moved on to its next
            // item while earlier ones waited in `near`): into the run, in
            // its place, before all of it.
            self.insert_current(item, time);
        } else {
            self.insert_far(item, time, b);
        }
    }

    /// Into the current run, in order: appended, then moved back past the
    /// items it comes before (a new time is usually among the latest).
    #[inline(always)]
    fn insert_current(&mut self, item: u32, time: Time) {
        let k = self.run.len();
        self.run.push((time, item));
        self.slide_back(k, self.head, (time, item));
    }

    /// Puts `x`, the item at `run[k]`, in its place among `run[lo..k]`
    /// (sorted), moving those it comes before one step on.
    #[inline(always)]
    fn slide_back(&mut self, mut k: usize, lo: usize, x: (Time, u32)) {
        while k > lo && self.before(x, self.run[k - 1]) {
            self.run[k] = self.run[k - 1];
            k -= 1;
        }
        self.run[k] = x;
    }

    /// An item a turn or more ahead: into the second wheel, or into the
    /// heap when it lies LATER_TURNS turns or more ahead.
    #[cold]
    #[inline(never)]
    fn insert_far(&mut self, item: u32, time: Time, b: u64) {
        let turn = self.turn(b);
        if turn - self.turn(self.cur) < LATER_TURNS {
            self.later[(turn % LATER_TURNS) as usize].push((time, item));
            self.later_listed += 1;
            return;
        }
        self.far.push(Reverse((time, item)));
        self.far_bucket = self.far_bucket.min(b);
    }

    /// The earliest item and its time, still in the wheel (None when empty).
    #[inline(always)]
    pub fn peek(&mut self) -> Option<(Time, u32)> {
        let first = match (self.near.front(), self.wheel_first) {
            (Some(n), Some(w)) => {
                self.from_near = self.before(n, w);
                if self.from_near {
                    n
                } else {
                    w
                }
            }
            (Some(n), None) => {
                self.from_near = true;
                n
            }
            (None, Some(w)) => {
                self.from_near = false;
                w
            }
            (None, None) => return None,
        };
        self.now = first.0;
        Some(first)
    }

    /// Takes out the item `peek` returned.
    #[inline(always)]
    pub fn pop(&mut self) {
        if self.from_near {
            self.near.pop_front();
        } else {
            self.pop_wheel();
        }
    }

    /// Takes out the earliest item of the buckets (`wheel_first`), and
    /// finds the next.
    #[inline(never)]
    fn pop_wheel(&mut self) {
        let first = self.wheel_peek();
        debug_assert_eq!(first, self.wheel_first, "pop without peek");
        self.head += 1;
        self.wheel_first = self.wheel_peek();
    }

    /// The earliest item of the buckets (moving on to it).
    #[inline(always)]
    fn wheel_peek(&mut self) -> Option<(Time, u32)> {
        match self.run.get(self.head) {
            Some(&first) => Some(first),
            None => self.advance(),
        }
    }

    /// After `pop`, an item likely to come soon after the next one (for
    /// prefetching its records; None when not known without moving on).
    #[inline(always)]
    pub fn following(&self) -> Option<u32> {
        if self.from_near {
            self.near.second()
        } else {
            self.run.get(self.head + 1).copied()
        }
        .map(|(_, item)| item)
    }

    /// Moves on to the next bucket holding an item and sorts it into `run`.
    fn advance(&mut self) -> Option<(Time, u32)> {
        self.run.clear();
        self.head = 0;
        loop {
            if self.listed == 0 {
                // Nothing within a turn: jump to the next turn holding
                // items of the second wheel, or to the earliest far item,
                // whichever comes first.
                let next_turn = if self.later_listed > 0 {
                    (self.turn(self.cur) + 1) << self.bits
                } else {
                    u64::MAX
                };
                let next = next_turn.min(self.far_bucket);
                if next == u64::MAX {
                    return None;
                }
                self.cur = next;
            } else {
                self.cur += 1;
            }
            if self.cur & self.mask == 0 && self.later_listed > 0 {
                self.enter_turn();
            }
            let slot = (self.cur & self.mask) as usize;
            // The bucket becomes the run, and the (empty) run's storage the
            // bucket's: no copying, and no allocation once each has grown.
            // Items are mostly put in in time order, so the run is nearly
            // sorted and an insertion sort finishes it in a few steps each.
            debug_assert!(self.run.is_empty());
            std::mem::swap(&mut self.run, &mut self.buckets[slot]);
            self.listed -= self.run.len();
            self.sort_run();
            if self.far_bucket == self.cur {
                self.take_far();
            }
            if let Some(&first) = self.run.first() {
                return Some(first);
            }
        }
    }

    /// The wheel enters a new turn (`cur` is its first bucket): the second
    /// wheel's items of that turn go into their buckets (all within the
    /// turn, so less than a turn ahead).
    #[cold]
    fn enter_turn(&mut self) {
        let slot = (self.turn(self.cur) % LATER_TURNS) as usize;
        debug_assert!(self.later[slot]
            .iter()
            .all(|&(time, _)| self.turn(self.bucket(time)) == self.turn(self.cur)));
        let n = self.later[slot].len();
        let (shift, mask) = (self.shift, self.mask);
        // Drained in place: the slot keeps its storage for the turn it
        // holds next.
        for (time, item) in self.later[slot].drain(..) {
            self.buckets[((time >> shift) & mask) as usize].push((time, item));
        }
        self.listed += n;
        self.later_listed -= n;
    }

    /// Sorts the run by key: an insertion sort, as the run is nearly sorted,
    /// unless it moves items more than a few times each on average. Many
    /// items at one time (thousands of sources started together) come in
    /// the random order of their keys, which an insertion sort takes in
    /// O(n^2): 4,000 sources at one instant spent 9 s in it. Those runs are
    /// sorted by their keys in O(n log n) instead, to the same order.
    fn sort_run(&mut self) {
        let n = self.run.len();
        let mut budget = 4 * n + 64;
        for i in 1..n {
            let x = self.run[i];
            let mut k = i;
            while k > 0 && self.before(x, self.run[k - 1]) {
                self.run[k] = self.run[k - 1];
                k -= 1;
                budget -= 1;
                if budget == 0 {
                    self.run[k] = x;
                    self.sort_run_by_key();
                    return;
                }
            }
            self.run[k] = x;
        }
    }

    /// Sorts the run by its items' whole keys (time, then the tie key), the
    /// order `before` gives; `sort_by_cached_key` computes each key once and
    /// keeps equal keys in their order, as the insertion sort does.
    #[cold]
    #[inline(never)]
    fn sort_run_by_key(&mut self) {
        let keys = &self.keys;
        self.run
            .sort_by_cached_key(|&(time, item)| keys.key(time, item));
    }

    /// Moves the far items of the current bucket into the run (being
    /// built: nothing of it taken yet).
    #[cold]
    fn take_far(&mut self) {
        debug_assert_eq!(self.head, 0);
        while let Some(&Reverse((time, item))) = self.far.peek() {
            let b = self.bucket(time);
            if b != self.cur {
                self.far_bucket = b;
                return;
            }
            self.far.pop();
            self.insert_current(item, time);
        }
        self.far_bucket = u64::MAX;
    }

    /// Items in the wheel.
    pub fn len(&self) -> usize {
        self.run.len() - self.head
            + self.listed
            + self.later_listed
            + self.far.len()
            + self.near.len()
    }

    /// True when the wheel holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A queue of (time, item) in a power-of-two ring buffer: `near`'s
/// storage (cheaper per item here than a `VecDeque`: docs/performance.md).
struct Ring {
    buf: Box<[(Time, u32)]>,
    /// `buf.len() - 1`.
    mask: usize,
    /// Positions of the first item and past the last, counted from the
    /// start (taken modulo the buffer's length).
    head: usize,
    tail: usize,
}

impl Ring {
    fn new() -> Self {
        Ring {
            buf: vec![(0, 0); 16].into_boxed_slice(),
            mask: 15,
            head: 0,
            tail: 0,
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn at(&self, pos: usize) -> (Time, u32) {
        debug_assert_eq!(self.buf.len(), self.mask + 1);
        // SAFETY: `buf.len()` is `mask + 1` (a power of two, set with
        // `buf` in `new` and `grow`), so `pos & mask` is within it.
        unsafe { *self.buf.get_unchecked(pos & self.mask) }
    }

    #[inline(always)]
    fn front(&self) -> Option<(Time, u32)> {
        (self.tail != self.head).then(|| self.at(self.head))
    }

    #[inline(always)]
    fn second(&self) -> Option<(Time, u32)> {
        (self.len() > 1).then(|| self.at(self.head.wrapping_add(1)))
    }

    #[inline(always)]
    fn back(&self) -> Option<(Time, u32)> {
        (self.tail != self.head).then(|| self.at(self.tail.wrapping_sub(1)))
    }

    #[inline(always)]
    fn pop_front(&mut self) {
        debug_assert!(self.tail != self.head);
        self.head = self.head.wrapping_add(1);
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    fn push_back(&mut self, x: (Time, u32)) {
        if self.len() > self.mask {
            self.grow();
        }
        debug_assert_eq!(self.buf.len(), self.mask + 1);
        // SAFETY: as in `at`.
        unsafe { *self.buf.get_unchecked_mut(self.tail & self.mask) = x };
        self.tail = self.tail.wrapping_add(1);
    }

    /// Twice the room, the items moved to the start of the new buffer.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.len();
        let mut buf = vec![(0, 0); 2 * self.buf.len()];
        for (k, slot) in buf.iter_mut().take(n).enumerate() {
            *slot = self.at(self.head.wrapping_add(k));
        }
        self.buf = buf.into_boxed_slice();
        self.mask = self.buf.len() - 1;
        self.head = 0;
        self.tail = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::splitmix64;

    /// Keys whose order within a time is drawn from the time and the item
    /// (as the event queue's arrival keys are), so that ties are broken
    /// neither by the item's index nor by insertion order.
    struct Hashed;

    impl TieKey for Hashed {
        fn key(&self, time: Time, item: u32) -> u128 {
            let h = splitmix64(time ^ (item as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            ((time as u128) << 64) | ((h >> 33) << 32) as u128 | item as u128
        }
    }

    /// Items rescheduled at random gaps (some within the current bucket,
    /// some ties, some in the second wheel, some far ahead; with few items,
    /// long stretches of empty buckets and turns) come out exactly as from
    /// a heap of their whole keys.
    #[test]
    fn items_come_out_in_key_order_as_from_a_heap() {
        let sizes = [(0, 1), (4, 3), (10, 6), (20, 12)];
        let cases = sizes
            .into_iter()
            .flat_map(|z| [(z, 50u32), (z, 3)])
            .flat_map(|c| [(c, None), (c, Some(3000)), (c, Some(2_000_000))]);
        for (((shift, bits), n), reach) in cases {
            let mut wheel = TimingWheel::new(Hashed, shift, bits);
            if let Some(reach) = reach {
                wheel.reach = reach;
            }
            let mut heap = BinaryHeap::new();
            let mut r = 7u64;
            for item in 0..n {
                r = splitmix64(r);
                // Many ties at the start.
                let t = r % 50;
                wheel.insert(item, t);
                heap.push(Reverse((Hashed.key(t, item), item)));
            }
            for _ in 0..20_000 {
                let Reverse((want, want_item)) = heap.pop().unwrap();
                let (t, item) = wheel.peek().unwrap();
                assert_eq!(
                    (wheel.key(t, item), item),
                    (want, want_item),
                    "shift {shift} bits {bits} n {n} reach {reach:?}"
                );
                wheel.pop();
                r = splitmix64(r);
                let gap = match r % 4 {
                    0 => 0,
                    1 => r % 7,
                    2 => r % 3000,
                    _ if r % 16 == 3 => r % 100_000_000,
                    _ => r % 1_000_000,
                };
                let t = t + gap;
                wheel.insert(item, t);
                heap.push(Reverse((Hashed.key(t, item), item)));
                assert_eq!(wheel.len(), heap.len());
            }
        }
    }

    /// Thousands of items at one time, in the random order of their keys,
    /// come out in key order and in O(n log n): the run's sort gives up its
    /// insertion sort for a sort by key (100,000 items at one instant took
    /// minutes in the insertion sort alone).
    #[test]
    fn many_items_at_one_time_come_out_in_key_order() {
        for n in [1_000u32, 100_000] {
            let mut wheel = TimingWheel::new(Hashed, 10, 6);
            let mut want: Vec<(u128, u32)> = Vec::new();
            for item in 0..n {
                wheel.insert(item, 5_000);
                want.push((Hashed.key(5_000, item), item));
            }
            want.sort();
            for &(key, item) in &want {
                let (t, got) = take(&mut wheel).unwrap();
                assert_eq!((wheel.key(t, got), got), (key, item));
            }
            assert!(take(&mut wheel).is_none());
        }
    }

    /// The earliest item, taken out.
    fn take<K: TieKey>(wheel: &mut TimingWheel<K>) -> Option<(Time, u32)> {
        let first = wheel.peek();
        if first.is_some() {
            wheel.pop();
        }
        first
    }

    /// The wheel moves on to its next item while `near` holds earlier
    /// ones; an item then put in between comes out in its place.
    #[test]
    fn an_item_before_the_current_bucket_comes_out_in_order() {
        let mut wheel = TimingWheel::new(Hashed, 0, 2);
        wheel.insert(0, 5);
        wheel.insert(1, 1000);
        assert_eq!(take(&mut wheel), Some((5, 0)));
        // The wheel is now at item 1's bucket; 500 is too far ahead of 5
        // for `near`.
        assert_eq!(wheel.cur, 1000);
        wheel.insert(2, 500);
        wheel.insert(0, 5);
        assert_eq!(take(&mut wheel), Some((5, 0)));
        assert_eq!(take(&mut wheel), Some((500, 2)));
        assert_eq!(take(&mut wheel), Some((1000, 1)));
        assert!(wheel.is_empty());
    }

    /// `near`'s ring grows past its first size and wraps around, in order.
    #[test]
    fn the_near_ring_grows_and_wraps() {
        let mut wheel = TimingWheel::new(Hashed, 10, 4);
        wheel.reach = 1_000_000;
        let (mut put, mut taken, mut last) = (0u32, 0u32, 0);
        for round in 0..50u64 {
            for k in 0..(round % 40) {
                wheel.insert(put, round * 1000 + k);
                put += 1;
            }
            while let Some((t, _)) = wheel.peek() {
                if t >= round * 1000 + 20 {
                    break;
                }
                assert!(t >= last);
                last = t;
                wheel.pop();
                taken += 1;
            }
        }
        assert!(wheel.near.buf.len() >= 32, "the ring never grew");
        assert_eq!(wheel.len() as u32, put - taken);
    }

    #[test]
    fn an_empty_wheel_says_so_and_far_items_are_reached() {
        let mut wheel = TimingWheel::new(Hashed, 0, 2);
        assert_eq!(wheel.peek(), None);
        wheel.insert(1, 1_000_000);
        wheel.insert(0, 7);
        assert_eq!(take(&mut wheel), Some((7, 0)));
        assert_eq!(take(&mut wheel), Some((1_000_000, 1)));
        assert!(wheel.is_empty());
        assert_eq!(wheel.peek(), None);
    }
}
