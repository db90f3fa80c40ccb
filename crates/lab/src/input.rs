//! Reading input files with bounds: only regular files, and only up to a size.
//!
//! Contract: [`read_text`] and [`read_bytes`] refuse anything that is not a regular file (a
//! directory, `/dev/zero`, a FIFO) and any file larger than the given limit, with an
//! [`io::Error`] that says which; they never read more than `limit + 1` bytes, so a file that
//! grows while it is read is refused too. The kind of file is checked with `stat(2)` before the
//! file is opened, because opening a FIFO for reading blocks until a writer opens it (`fifo(7)`),
//! and again on the open file. Every file cclab reads goes through them.

use std::fs::File;
use std::io::{self, Read as _};
use std::path::Path;

/// Largest scenario, study or `base` file (16 MiB): hand-written TOML is a few KB.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;
/// Largest run record or manifest a store may hold (1 GiB); the store refuses to write a larger
/// record, and [`crate::scenario::MAX_SAMPLE_ROWS`] is derived from it so that the sample series
/// of any run fit.
pub const MAX_STORE_FILE_BYTES: u64 = 1 << 30;
/// Most bytes one sample row (one flow at one sample time) adds to a run record: the series'
/// value and its six raw columns (time, value, cwnd, RTT, pacing and delivery rate), plus one
/// number for the grid time and a link series, eight numbers of at most 25 bytes of JSON each
/// (the longest shortest-round-trip `f64`, `-2.2250738585072014e-308`, is 24 characters, and a
/// comma).
pub const RECORD_BYTES_PER_SAMPLE_ROW: u64 = 8 * 25;

/// Read a UTF-8 input file of at most [`MAX_INPUT_BYTES`].
///
/// # Errors
/// The file cannot be opened or read, is not a regular file, is larger than the limit, or is
/// not UTF-8.
pub fn read_text(path: &Path) -> io::Result<String> {
    let bytes = read_bytes(path, MAX_INPUT_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the file is not UTF-8 text"))
}

/// Read a regular file of at most `limit` bytes.
///
/// # Errors
/// The file cannot be opened or read, is not a regular file, or is larger than `limit`.
pub fn read_bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let not_regular = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a directory, device or pipe cannot be read as input)",
        )
    };
    // Before opening: `open(2)` of a FIFO blocks until a writer appears.
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    // After opening too: the path may have been replaced in between.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than the {} limit for this file", fmt_bytes(limit)),
        )
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// `16 MiB`, `1 GiB`, or bytes.
fn fmt_bytes(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n}-byte")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_large_files() {
        let dir = std::env::temp_dir().join(format!("cclab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = read_text(&dir).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        if Path::new("/dev/zero").exists() {
            let e = read_text(Path::new("/dev/zero")).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; 2000]).unwrap();
        let e = read_bytes(&big, 1000).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        assert_eq!(read_bytes(&big, 2000).unwrap().len(), 2000);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A FIFO with no writer is refused at once: opening it for reading would block forever.
    #[cfg(unix)]
    #[test]
    fn refuses_a_fifo_without_blocking() {
        let dir = std::env::temp_dir().join(format!("cclab-input-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("s.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if made {
            let (tx, rx) = std::sync::mpsc::channel();
            let path = fifo.clone();
            std::thread::spawn(move || tx.send(read_text(&path).map(drop)));
            let r = rx
                .recv_timeout(std::time::Duration::from_secs(5))
                .expect("reading a FIFO blocked");
            let e = r.unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
