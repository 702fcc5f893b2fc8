//! Link the `wasm-hooks` binary as a position-dependent executable: an agent
//! starts it once per event, and a PIE spends about 2 ms of every start
//! applying its ~50,000 relocations. The library is unaffected.

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
