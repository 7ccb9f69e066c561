//! The `inbox-lab` command line. Everything lives in [`inbox_lab::cli`].

#[cfg(not(target_family = "wasm"))]
fn main() -> std::process::ExitCode {
    inbox_lab::cli::main()
}

// The browser has no command line: on wasm the crate is used as a library
// by the worker, and this binary is an empty program.
#[cfg(target_family = "wasm")]
fn main() {}
