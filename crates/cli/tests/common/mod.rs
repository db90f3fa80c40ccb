//! Helpers shared by the end-to-end tests of the `cclab` binary: run it in a directory, find the
//! workspace, make a fresh temporary directory per test.

#![allow(dead_code, reason = "each test file uses some of the helpers")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run `cclab args` with `dir` as working directory.
pub fn cclab_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cclab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run cclab")
}

/// The workspace root (the shipped `scenarios/` are below it).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An empty directory for one test (`suite` and `tag` keep tests of different files and
/// processes apart).
pub fn temp_dir(suite: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-{suite}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
