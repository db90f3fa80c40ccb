//! Bounded capture of a command's output: what a program started on a host writes to its
//! standard output or error is read from a pipe by a thread, which keeps the first and the last
//! [`KEEP_HEAD`] and [`KEEP_TAIL`] bytes and counts the rest.
//!
//! Contract: [`capture`] reads its reader to the end (or to a read error) in its own thread and
//! never holds more than [`KEEP_HEAD`] + [`KEEP_TAIL`] bytes of it, however much the program
//! writes; nothing goes to disk. [`Captured::text`] gives the kept bytes as text (invalid UTF-8
//! replaced, never dropped) with a line saying how many bytes were left out between them;
//! [`Captured::error`] says why reading stopped early, if it did. [`Capture::finish`] waits a
//! bounded time for the end of the output, so a descendant that keeps the pipe open cannot hold
//! up the run.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc;
use std::time::Duration;

/// Bytes kept from the start of a command's output (per stream). With the tail, 64 KiB per
/// stream keep `emulator.json` within a few MiB for a scenario's 64 commands whatever they
/// print; 32 KiB is several hundred lines of a tool's report.
pub const KEEP_HEAD: usize = 32 * 1024;

/// Bytes kept from the end of a command's output (per stream): its closing summary.
pub const KEEP_TAIL: usize = 32 * 1024;

/// What was read of one output stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes (at most [`KEEP_HEAD`]).
    pub head: Vec<u8>,
    /// The last bytes after the head (at most [`KEEP_TAIL`]).
    pub tail: Vec<u8>,
    /// All bytes read.
    pub total: u64,
    /// Why reading stopped before the end, if it did.
    pub error: Option<String>,
}

impl Captured {
    /// Bytes read but not kept.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept bytes as text: the head, a line `[… N bytes left out …]` when bytes were
    /// dropped, the tail. Invalid UTF-8 is replaced by U+FFFD.
    #[must_use]
    pub fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        let dropped = self.dropped();
        if dropped > 0 {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&format!(
                "[… {dropped} bytes left out: the first {KEEP_HEAD} and the last {KEEP_TAIL} \
                 bytes are kept …]\n"
            ));
        }
        s.push_str(&String::from_utf8_lossy(&self.tail));
        s
    }
}

/// Read `r` to its end, keeping the head and tail.
#[must_use]
pub fn read_bounded(mut r: impl Read) -> Captured {
    let mut c = Captured::default();
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                c.total += n as u64;
                let mut chunk = &buf[..n];
                let room = KEEP_HEAD - c.head.len();
                if room > 0 {
                    let k = room.min(chunk.len());
                    c.head.extend_from_slice(&chunk[..k]);
                    chunk = &chunk[k..];
                }
                if chunk.len() >= KEEP_TAIL {
                    tail.clear();
                    tail.extend(&chunk[chunk.len() - KEEP_TAIL..]);
                } else {
                    let over = (tail.len() + chunk.len()).saturating_sub(KEEP_TAIL);
                    tail.drain(..over);
                    tail.extend(chunk);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                c.error = Some(e.to_string());
                break;
            }
        }
    }
    c.tail = tail.into();
    c
}

/// A stream being read in its own thread.
#[derive(Debug)]
pub struct Capture(Option<mpsc::Receiver<Captured>>);

/// Start reading `r` (a child's pipe; `None`: nothing to read) in a thread.
#[must_use]
pub fn capture(r: Option<impl Read + Send + 'static>) -> Capture {
    Capture(r.map(|r| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(read_bounded(r));
        });
        rx
    }))
}

impl Capture {
    /// What was read, once the stream ended, waiting at most `wait` for its end (a process
    /// that escaped the command's end may still hold the pipe open).
    #[must_use]
    pub fn finish(self, wait: Duration) -> Captured {
        match self.0 {
            None => Captured {
                error: Some("the output could not be captured".into()),
                ..Captured::default()
            },
            Some(rx) => rx.recv_timeout(wait).unwrap_or_else(|_| Captured {
                error: Some(format!(
                    "the output was still open {:.1} s after the command ended; it is lost",
                    wait.as_secs_f64()
                )),
                ..Captured::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let c = read_bounded(&b"hello\nworld\n"[..]);
        assert_eq!(c.text(), "hello\nworld\n");
        assert_eq!((c.total, c.dropped()), (12, 0));
        assert!(c.error.is_none());
    }

    /// 10 MB of `y\n` keep 64 KiB: the first and last 32 KiB, and a line with the count of
    /// what is left out.
    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_rest() {
        let mut data = b"FIRST\n".to_vec();
        data.extend(std::iter::repeat_n(*b"y\n", 5_000_000).flatten());
        data.extend_from_slice(b"LAST\n");
        let c = read_bounded(&data[..]);
        assert_eq!(c.total, data.len() as u64);
        assert_eq!(c.head.len(), KEEP_HEAD);
        assert_eq!(c.tail.len(), KEEP_TAIL);
        assert_eq!(c.dropped(), data.len() as u64 - 64 * 1024);
        let t = c.text();
        assert!(t.starts_with("FIRST\n") && t.ends_with("y\nLAST\n"));
        assert!(
            t.contains(&format!("[… {} bytes left out", c.dropped())),
            "{}",
            &t[KEEP_HEAD - 10..KEEP_HEAD + 100]
        );
        assert!(t.len() < 64 * 1024 + 200);
    }

    /// Output that is not UTF-8 is kept with replacement characters (`read_to_string` gave
    /// nothing at all), and a read error is reported, not turned into empty output.
    #[test]
    fn binary_output_and_read_errors_are_not_lost() {
        let c = read_bounded(&b"ok \xff\xfe done\n"[..]);
        assert_eq!(c.text(), "ok \u{fffd}\u{fffd} done\n");
        struct Failing(bool);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    Err(std::io::Error::other("device gone"))
                } else {
                    buf[..3].copy_from_slice(b"abc");
                    Ok(3)
                }
            }
        }
        let c = read_bounded(Failing(false));
        assert_eq!(c.text(), "abc");
        assert_eq!(c.error.as_deref(), Some("device gone"));
    }

    #[test]
    fn a_stream_held_open_does_not_hold_up_the_end() {
        let (r, _w) = std::os::unix::net::UnixStream::pair().unwrap();
        let t = std::time::Instant::now();
        let c = capture(Some(r)).finish(Duration::from_millis(100));
        assert!(t.elapsed() < Duration::from_secs(2));
        assert!(c.error.unwrap().contains("still open"));
    }
}
