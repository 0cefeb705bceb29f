/// Counts heap use, for the memory budget (`--max-memory`).
#[global_allocator]
static ALLOCATOR: tasklisp::CountingAllocator = tasklisp::CountingAllocator;

fn main() {
    tune_allocator();
    std::process::exit(tasklisp::cli_main());
}

/// glibc gives memory back to the kernel as soon as the top of a heap is free: one
/// `madvise` for nearly every large string freed (2,743 of them while one 100 kB string
/// is built by 20,000 appends). Keeping up to 128 MiB free at the top, and serving
/// blocks below 32 MiB from the heap rather than `mmap`, ends that churn; memory past
/// those sizes is still returned. See docs/BENCHMARKS.md.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    // SAFETY: mallopt only sets allocator parameters, and runs before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}
