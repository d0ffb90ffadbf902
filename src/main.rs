//! rtbench command-line entry point; all logic lives in the library.

fn main() {
    std::process::exit(rtbench::app::main(std::env::args_os().collect()));
}
