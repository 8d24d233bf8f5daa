//! Prefetching the next merged source's records when there are many.

/// Sources from which the merged sources prefetch the next one's records
/// (below, they stay in the cache and prefetching only costs; the
/// measurements are in docs/performance.md).
pub(super) const PREFETCH_SOURCES: usize = 1000;

/// Asks the CPU to bring `*p`'s cache line in (a hint: no effect on results).
#[inline(always)]
#[allow(unsafe_code)]
pub(super) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
