//! The `capabilities` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    capabilities::run()
}
