//! The `wasm-hooks` binary: a thin shell over the `wasm_hooks` library. It
//! parses arguments, calls the library and prints; `main` only maps the
//! result of [`cli::run`] to an exit code.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
