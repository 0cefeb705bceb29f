fn main() {
    std::process::exit(tasklisp::cli::main());
}
