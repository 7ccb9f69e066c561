//! The feature `workshop` compiles a participant's handler into the crate
//! (`src/labs/handlers/workshop.rs`): `workshop/handler.rs`, or the file the
//! environment variable `INBOX_LAB_WORKSHOP` names (relative to this
//! folder; `cargo xtask workshop --handler FILE`, and the xtask's test
//! with a broken fixture). This passes its absolute path on as
//! `INBOX_LAB_WORKSHOP_FILE`, and rebuilds when it changes.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=INBOX_LAB_WORKSHOP");
    if std::env::var_os("CARGO_FEATURE_WORKSHOP").is_none() {
        return;
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let file = match std::env::var_os("INBOX_LAB_WORKSHOP") {
        Some(f) if !f.is_empty() => root.join(f),
        _ => root.join("workshop").join("handler.rs"),
    };
    if !file.is_file() {
        println!(
            "cargo:warning=the workshop's handler {} does not exist",
            file.display()
        );
    }
    println!("cargo:rerun-if-changed={}", file.display());
    println!("cargo:rustc-env=INBOX_LAB_WORKSHOP_FILE={}", file.display());
}
