//! The start module's size budget, a lint check: what the database worker loads before the page
//! is ready — `www/pkg/inbox_lab_bg.wasm` and its glue `inbox_lab.js`, the release build — may
//! not grow past [`START_BUDGET`] bytes of gzip -9 (the measure of `cargo xtask bench`'s "Bytes
//! shipped", which compares it with the official SQLite build). What only some screens need
//! belongs in the full module (`www/pkg-full`, the crate's feature `full`), loaded when that work
//! first starts; a change that must grow the start module raises the budget here, in the same
//! commit, and says why.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::Path;

/// The budget, in bytes of gzip -9 (wasm + glue): the start module as measured when the labs
/// only some screens need moved to the full module, to which the database worker hands its
/// database at their first op (2026-12-07: 447,693; 552,781 before), plus room for a
/// toolchain's noise. The official build's 0.8× is 468,833 (`cargo xtask bench`).
pub const START_BUDGET: u64 = 450_000;

/// The start module's files, under the repository root.
const START_FILES: [&str; 2] = ["www/pkg/inbox_lab_bg.wasm", "www/pkg/inbox_lab.js"];

/// Checks the built start module under `root` against [`START_BUDGET`]; returns its size.
pub fn check(root: &Path) -> Result<u64> {
    let mut total = 0;
    for file in START_FILES {
        let bytes = std::fs::read(root.join(file))
            .with_context(|| format!("reading {file} (built by `cargo xtask build`)"))?;
        total += gzip_size(&bytes)?;
    }
    if total > START_BUDGET {
        bail!(
            "the start module is {total} bytes of gzip, over its budget of {START_BUDGET} \
             (xtask/src/size.rs): move what only some screens need into the full module, or \
             raise the budget there and say why"
        );
    }
    Ok(total)
}

/// The length of `bytes` compressed with gzip at level 9.
fn gzip_size(bytes: &[u8]) -> Result<u64> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes)?;
    Ok(gz.finish()?.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_shrinks_what_repeats_and_not_what_does_not() {
        let repeated = vec![b'a'; 100_000];
        assert!(gzip_size(&repeated).unwrap() < 1_000);
        let mut noise = vec![0u8; 100_000];
        let mut x: u32 = 1;
        for b in &mut noise {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        assert!(gzip_size(&noise).unwrap() > 99_000);
    }

    #[test]
    fn a_module_over_its_budget_is_refused_naming_the_budget() {
        let root = std::env::temp_dir().join(format!("inbox-lab-size-{}", std::process::id()));
        std::fs::create_dir_all(root.join("www/pkg")).unwrap();
        // Incompressible bytes, more than the budget: over it whatever the glue.
        let mut x: u64 = 7;
        let wasm: Vec<u8> = (0..START_BUDGET + 10_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) as u8
            })
            .collect();
        std::fs::write(root.join(START_FILES[0]), &wasm).unwrap();
        std::fs::write(root.join(START_FILES[1]), b"export default 1;").unwrap();
        let err = check(&root).unwrap_err().to_string();
        assert!(err.contains("over its budget"), "{err}");
        std::fs::write(root.join(START_FILES[0]), vec![0u8; 1_000_000]).unwrap();
        assert!(check(&root).unwrap() < START_BUDGET);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
