//! Host buffers on transparent huge pages, for the large ones written whole as soon as they
//! are made (copies from the GPU). Linux hosts commonly give huge pages only on request
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`); with the request, the first
//! touches of such a buffer fault 2 MB in at a time instead of 4 KB. SSCA#2 kernel 1 at
//! SCALE 24 downloads 4 GB of rows: on one H200 host it took 0.72-0.77 s on 4 KB pages and
//! 0.56-0.69 s with every large block on huge pages (glibc's `glibc.malloc.hugetlb=1`,
//! 2026-12-04). Not every block: on this project's 2-core CPU host, advising every block of
//! 32 MB or more made the CPU kernel 1 at SCALE 22 slower (7.3-8.0 s against 9.7-10.6 s),
//! so only buffers that are written whole ask for it. Advice only: where the kernel declines
//! it, or has huge pages off, the pages stay as they were.

/// Buffers from this size on are advised (glibc maps them fresh, untouched, on `calloc`).
const LARGE: usize = 32 << 20;

/// `n` zeroed items, the pages not yet touched and advised for huge pages when large.
pub fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let v = vec![T::default(); n];
    advise(v.as_ptr() as usize, std::mem::size_of_val(v.as_slice()));
    v
}

/// The whole pages of `start .. start + size` advised for huge pages, when `size` is large.
fn advise(start: usize, size: usize) {
    const PAGE: usize = 4096;
    if size < LARGE {
        return;
    }
    let first = start.next_multiple_of(PAGE);
    let end = (start + size) & !(PAGE - 1);
    // SAFETY: the range lies inside the vector's block; advice changes no contents, and a
    // refusal (an error return) leaves the pages as they were.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_buffers_small_and_large_hold_zeros() {
        for n in [0, 3, (super::LARGE / 8) + 5] {
            let v = super::zeroed::<u64>(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0));
        }
    }
}
