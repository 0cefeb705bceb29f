//! The global memory budget. The binary installs [`CountingAllocator`], which keeps a
//! count of the heap bytes in use; the evaluator compares that count with
//! `Limits::max_memory` every 1,024 calls and in long builtin loops, so a runaway
//! program ends in a `RESOURCE_EXHAUSTION` that names memory instead of being killed.
//! A program embedding the library may install the allocator too; without it nothing
//! is counted and the budget is not enforced.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

static IN_USE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Bytes allocated on this thread less those freed on it: what a child evaluation
    /// (`eval-sandboxed`) is charged, whatever other threads do meanwhile.
    static THREAD_NET: Cell<i64> = const { Cell::new(0) };
}

/// Adds `delta` to this thread's count. `try_with`: the count has no destructor, but an
/// allocation made while the thread is torn down must never fail for it.
fn count_on_thread(delta: i64) {
    let _ = THREAD_NET.try_with(|net| net.set(net.get().wrapping_add(delta)));
}

/// The system allocator, counting the bytes it hands out.
pub struct CountingAllocator;

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the
// counter is only arithmetic on the sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
            count_on_thread(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
            count_on_thread(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        count_on_thread(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            IN_USE.fetch_add(new_size, Ordering::Relaxed);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
            count_on_thread(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Bytes allocated on this thread less those freed on it, or `None` when the counting
/// allocator is not installed. Only differences of two readings mean anything.
pub fn thread_net() -> Option<i64> {
    in_use()?;
    THREAD_NET.try_with(Cell::get).ok()
}

/// Heap bytes in use, or `None` when the counting allocator is not installed.
pub fn in_use() -> Option<u64> {
    match IN_USE.load(Ordering::Relaxed) {
        0 => None,
        n => Some(n as u64),
    }
}

/// The default budget: half of the physical memory, and half of the address-space
/// limit when one is set (`ulimit -v`), so the budget trips before the system refuses.
pub fn default_budget() -> u64 {
    let physical = physical_memory().unwrap_or(8 << 30);
    let address_space = address_space_limit().unwrap_or(u64::MAX);
    (physical / 2).min(address_space / 2)
}

fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let pages = u64::try_from(pages).ok()?;
    let page_size = u64::try_from(page_size).ok()?;
    pages.checked_mul(page_size)
}

fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    let status = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    (status == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Parses a size as the command line takes it: bytes, or a number with `K`, `M`, `G`
/// (powers of 1,024), e.g. `512M`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = [('K', 10), ('M', 20), ('G', 30)]
        .into_iter()
        .find_map(|(unit, shift)| {
            text.strip_suffix(unit)
                .or_else(|| text.strip_suffix(unit.to_ascii_lowercase()))
                .map(|digits| (digits, shift))
        })
        .unwrap_or((text, 0));
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {text:?} (bytes, or a number with K, M or G)"))?;
    n.checked_mul(1u64 << shift)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("size out of range: {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn the_default_budget_is_a_fraction_of_memory() {
        let budget = default_budget();
        assert!(budget > 0);
        assert!(budget <= physical_memory().unwrap_or(u64::MAX));
    }
}
