//! rtbench command-line entry point; all logic lives in the library.

fn main() {
    // Die quietly on a closed pipe (`rtbench report --json | head`), as command-line
    // tools do; Rust ignores SIGPIPE by default and would report an error instead.
    // SAFETY: resetting a signal disposition before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    std::process::exit(rtbench::app::main(std::env::args_os().collect()));
}
