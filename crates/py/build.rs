//! Embeds the build identity, `SCTPSIM_BUILD_ID`: a SHA-256 of everything that decides what
//! a simulation computes — the Rust sources and manifests of every workspace crate, the
//! workspace manifest and lock file (dependency versions), and the compiler version. A sweep
//! reuses a stored run only if this identity matches (python/sctpsim/sweep.py), so a run is
//! recomputed whenever a new engine could give a different result, and not when only the
//! build settings (profile, LTO, paths) change, which do not change results.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let crates = manifest_dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let root = crates.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut files = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    let mut watched = files.clone();
    let mut members: Vec<PathBuf> = fs::read_dir(&crates)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("Cargo.toml").is_file()).collect())
        .unwrap_or_default();
    members.sort();
    for member in members {
        for extra in ["Cargo.toml", "build.rs"] {
            let p = member.join(extra);
            if p.is_file() {
                files.push(p.clone());
                watched.push(p);
            }
        }
        let src = member.join("src");
        collect(&src, &mut files);
        watched.push(src);
    }
    files.sort();
    let mut h = Sha256::new();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc).arg("-V").output().map(|o| o.stdout).unwrap_or_default();
    h.update(&version);
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        let bytes = fs::read(f).unwrap_or_default();
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let id: String = h.finalize().iter().take(10).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=SCTPSIM_BUILD_ID={id}");
    for w in watched {
        println!("cargo:rerun-if-changed={}", w.display());
    }
}

/// Every file under `dir`, recursively.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}
