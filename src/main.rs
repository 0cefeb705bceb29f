/// Counts heap use, for the memory budget (`--max-memory`).
#[global_allocator]
static ALLOCATOR: tasklisp::memory::CountingAllocator = tasklisp::memory::CountingAllocator;

fn main() {
    std::process::exit(tasklisp::cli::main());
}
