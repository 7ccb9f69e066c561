//! The wasm facade (in progress).
