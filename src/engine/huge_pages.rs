//! Large arrays on 2 MiB pages: the request state of a herd is read in random order, one
//! request per event, and on 4 KiB pages every access past a few megabytes is also a TLB
//! miss (10^7 clients: 53 s on huge pages against 60-66 s without).

/// Arrays from this size up ask for 2 MiB pages: a herd's request state is read in random
/// order, one request per event, and past a few megabytes every 4 KiB page is a TLB miss.
pub(super) const HUGE_PAGE_FROM: usize = 4 << 20;

/// `n` copies of `value` in a vector whose memory the kernel is asked to back with
/// transparent huge pages (`madvise(MADV_HUGEPAGE)`, before the first write, since pages are
/// chosen when first touched). With 2 MiB pages the whole request state of ten million
/// clients is reachable through the TLB, and each miss to memory costs one access instead
/// of a page walk and the access. Only the 2 MiB-aligned part of the allocation can be
/// advised; the advice is a hint with no effect on the contents, and is skipped where the
/// kernel has no transparent huge pages (or refuses it).
pub(super) fn filled_on_huge_pages<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut items: Vec<T> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    if bytes >= HUGE_PAGE_FROM {
        advise_huge_pages(items.as_mut_ptr().cast::<u8>(), bytes);
    }
    items.resize(n, value);
    items
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let first = (start as usize).next_multiple_of(HUGE);
    let end = (start as usize + bytes) / HUGE * HUGE;
    if first < end {
        // SAFETY: [first, end) lies inside the allocation that starts at `start` and spans
        // `bytes`, which this process owns; MADV_HUGEPAGE only changes how the kernel backs
        // those pages, never their contents, and its failure is harmless (4 KiB pages stay).
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::{NONE, Request, RequestInfo};

    #[test]
    fn arrays_asking_for_huge_pages_hold_every_value() {
        // Above the threshold, with a length that ends mid-page: the advice must not
        // change a single element, nor the length.
        let n = HUGE_PAGE_FROM / std::mem::size_of::<Request>() * 3 + 7;
        let mut value = Request::new();
        value.serial = 7;
        value.policy = 3;
        let items = filled_on_huge_pages(n, value);
        assert_eq!(items.len(), n);
        assert!(items.iter().all(|r| r.serial == 7 && r.policy == 3));
        let small = filled_on_huge_pages(3, RequestInfo::new());
        assert_eq!(small.len(), 3);
        assert!(small.iter().all(|i| i.ended && i.parent == NONE));
    }
}
