//! Parser for the output of iputils `ping -D -n ADDR`: the echo replies and the sent count.
//!
//! Contract:
//! - Input is the whole output of `ping -D -n`, or any part of it (a run still going, or cut at
//!   any byte); nothing is spawned here. A reply line counts only when it is complete up to its
//!   ` ms` unit, so a line cut mid-way is never read as a shorter RTT.
//! - A reply is a line `[UNIX_S] N bytes from ADDR: icmp_seq=SEQ ttl=T time=RTT ms`. Lines
//!   without the `-D` timestamp, duplicates marked `(DUP!)`, errors (`From ADDR icmp_seq=3
//!   Destination Host Unreachable`), `no answer yet for icmp_seq=4` (from `-O`) and all other
//!   lines are skipped.
//! - `transmitted` is read from the closing `N packets transmitted, M received, ...` line, and
//!   is `None` while that line has not been printed.
//! - No input panics.

/// One echo reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingReply {
    /// Time the reply was received, seconds since the Unix epoch (`-D`).
    pub unix_s: f64,
    /// ICMP sequence number (`icmp_seq`).
    pub seq: u64,
    /// Round-trip time, ms.
    pub rtt_ms: f64,
}

/// What one `ping -D -n` run printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PingLog {
    /// Echo replies in the order printed.
    pub replies: Vec<PingReply>,
    /// Echo requests sent, from the closing statistics; `None` while ping is still running.
    pub transmitted: Option<u64>,
}

/// Parses the output of `ping -D -n`, whole or partial.
#[must_use]
pub fn parse_ping(text: &str) -> PingLog {
    let mut log = PingLog::default();
    for line in text.lines() {
        if let Some(reply) = parse_reply_line(line) {
            log.replies.push(reply);
        } else if let Some(transmitted) = parse_transmitted_line(line) {
            log.transmitted = Some(transmitted);
        }
    }
    log
}

/// Parses one line of `ping -D -n` output if it is an echo reply (see the module contract).
#[must_use]
pub fn parse_reply_line(line: &str) -> Option<PingReply> {
    let (stamp, rest) = line.trim_start().strip_prefix('[')?.split_once(']')?;
    let unix_s = stamp
        .parse::<f64>()
        .ok()
        .filter(|t| t.is_finite() && *t >= 0.0)?;
    if !rest.contains(" bytes from ") || rest.contains("(DUP!)") {
        return None;
    }
    let mut seq = None;
    let mut rtt_ms = None;
    let mut tokens = rest.split_whitespace();
    while let Some(token) = tokens.next() {
        if let Some(v) = token
            .strip_prefix("icmp_seq=")
            .or_else(|| token.strip_prefix("icmp_req="))
        {
            seq = v.parse::<u64>().ok();
        } else if let Some(v) = token.strip_prefix("time=") {
            rtt_ms = v
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r >= 0.0 && tokens.next() == Some("ms"));
        }
    }
    Some(PingReply {
        unix_s,
        seq: seq?,
        rtt_ms: rtt_ms?,
    })
}

/// Reads `N` from `N packets transmitted, M received, ...`.
#[must_use]
pub fn parse_transmitted_line(line: &str) -> Option<u64> {
    let (count, rest) = line.trim().split_once(' ')?;
    if !rest.starts_with("packets transmitted") {
        return None;
    }
    count.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ping -D -n -c 3 -i 0.2 127.0.0.1` on this lab's host (iputils 20221126).
    const LOOPBACK: &str = "\
PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
[1796425147.382392] 64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.075 ms
[1796425147.584229] 64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.046 ms
[1796425147.788155] 64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=0.039 ms

--- 127.0.0.1 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 406ms
rtt min/avg/max/mdev = 0.039/0.053/0.075/0.015 ms
";

    /// Same host, `ping -D -n -O -i 0.5 10.77.0.2` in a network namespace where 10.77.0.2 does
    /// not answer ARP, stopped before its summary (shortened).
    const UNREACHABLE_PARTIAL: &str = "\
PING 10.77.0.2 (10.77.0.2) 56(84) bytes of data.
[1796425161.300155] no answer yet for icmp_seq=1
[1796425161.812169] no answer yet for icmp_seq=2
[1796425163.860526] From 10.77.0.1 icmp_seq=1 Destination Host Unreachable
[1796425163.860603] From 10.77.0.1 icmp_seq=2 Destination Host Unreachable
[1796425164.372110] no answer yet for icmp_seq=3
";

    #[test]
    fn real_loopback_run() {
        let log = parse_ping(LOOPBACK);
        assert_eq!(log.transmitted, Some(3));
        assert_eq!(
            log.replies,
            vec![
                PingReply {
                    unix_s: 1_796_425_147.382_392,
                    seq: 1,
                    rtt_ms: 0.075
                },
                PingReply {
                    unix_s: 1_796_425_147.584_229,
                    seq: 2,
                    rtt_ms: 0.046
                },
                PingReply {
                    unix_s: 1_796_425_147.788_155,
                    seq: 3,
                    rtt_ms: 0.039
                },
            ]
        );
    }

    #[test]
    fn errors_and_missing_answers_are_skipped() {
        let log = parse_ping(UNREACHABLE_PARTIAL);
        assert!(log.replies.is_empty());
        assert_eq!(log.transmitted, None);

        let text = "[1733352000.123456] 64 bytes from 10.77.0.2: icmp_seq=1 ttl=64 time=40.3 ms\n\
                    [1733352001.2] From 10.77.0.1 icmp_seq=3 Destination Host Unreachable\n\
                    [1733352001.3] no answer yet for icmp_seq=4\n\
                    [1733352001.4] 64 bytes from 10.77.0.2: icmp_seq=1 ttl=64 time=41 ms (DUP!)\n\
                    [1733352001.5] 64 bytes from 10.77.0.2: icmp_seq=5 ttl=64 time=1234 ms\n\
                    5 packets transmitted, 2 received, +1 duplicates, +1 errors, 60% packet loss, time 4005ms\n";
        let log = parse_ping(text);
        assert_eq!(log.transmitted, Some(5));
        assert_eq!(
            log.replies,
            vec![
                PingReply {
                    unix_s: 1_733_352_000.123_456,
                    seq: 1,
                    rtt_ms: 40.3
                },
                PingReply {
                    unix_s: 1_733_352_001.5,
                    seq: 5,
                    rtt_ms: 1234.0
                },
            ]
        );
    }

    #[test]
    fn partial_output_line_by_line() {
        // Feeding the capture one line at a time gives the same replies as the whole text.
        let whole = parse_ping(LOOPBACK).replies;
        let one_by_one: Vec<_> = LOOPBACK.lines().filter_map(parse_reply_line).collect();
        assert_eq!(one_by_one, whole);
        // A reply line cut before its unit is not read as a shorter RTT.
        let line = LOOPBACK.lines().nth(1).unwrap();
        assert_eq!(parse_reply_line(&line[..line.len() - 4]), None);
        assert!(parse_reply_line(line).is_some());
        // Every prefix parses, and has no summary until the summary line is complete.
        for end in 0..LOOPBACK.len() {
            let log = parse_ping(&LOOPBACK[..end]);
            assert!(log.replies.len() <= 3);
            assert!(log.transmitted.is_none() || LOOPBACK[..end].contains("transmitted"));
        }
    }

    #[test]
    fn garbage_gives_nothing_and_never_panics() {
        for text in [
            "",
            "\n",
            "[",
            "[]",
            "[x] 64 bytes from a: icmp_seq=1 time=1 ms",
            "[1.0] 64 bytes from a: icmp_seq=-1 time=1 ms",
            "[1.0] 64 bytes from a: icmp_seq=1 time=-1 ms",
            "[nan] 64 bytes from a: icmp_seq=1 time=1 ms",
            "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.1 ms",
            "packets transmitted",
            "x packets transmitted, 0 received",
            "ping: connect: Network is unreachable",
            "\u{1F600}[1.0]\u{1F600} bytes from",
        ] {
            assert_eq!(parse_ping(text), PingLog::default(), "{text:?}");
        }
    }
}
