//! The sizing rules of Linux's transmit path (`net/ipv4/tcp_output.c`) as pure functions: the
//! TCP Small Queues budget, TSO/GSO autosizing and the congestion-window quota of one skb.
//!
//! Contract: every function is a plain computation on its arguments (no state, no clock), so
//! the sender, the engine and tests can evaluate the same rule. Rates are bytes per second as
//! Linux keeps `sk_pacing_rate`; `None` stands for Linux's `~0UL` ("unlimited", the value a
//! socket has before its first RTT sample). Bytes are wire bytes of the skb (payload plus
//! headers of every segment), this model's stand-in for `skb->truesize`.

use cclab_cc::Dur;
use cclab_cc::num::saturating_u32;

use crate::config::{MAX_PACING_SHIFT, MAX_TCP_HEADER, TsoConfig, TsoRule};

/// Linux `sysctl_tcp_tso_rtt_log` default (`tcp_sk_init`): the extra TSO term halves for every
/// 2^9 µs = 512 µs of min_rtt (commit `65466904b015`, 5.18).
pub const TSO_RTT_LOG: u32 = 9;

/// Linux `GSO_MAX_SEGS` (`sk_gso_max_segs` of a device without a lower limit): 65535.
pub const GSO_MAX_SEGS: u32 = 65_535;

/// How the socket is paced, Linux `sk_pacing_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingStatus {
    /// `SK_PACING_NONE`: nobody paces; TSQ caps the budget by `tcp_limit_output_bytes`.
    None,
    /// `SK_PACING_NEEDED`: TCP paces itself with its hrtimer (`tcp_needs_internal_pacing`).
    Internal,
    /// `SK_PACING_FQ`: the fq qdisc releases each skb at its EDT stamp; TCP does not hold it.
    Fq,
}

/// `tcp_small_queue_check`'s limit before the retransmission factor: max(2 · skb bytes,
/// pacing_rate >> shift), capped by `tcp_limit_output_bytes` only for an unpaced socket
/// (`SK_PACING_NONE`, since commit `c73e5807e4f6`, 4.20).
#[must_use]
pub fn tsq_limit(
    skb_bytes: u64,
    pacing_rate: Option<u64>,
    shift: u8,
    unpaced: bool,
    limit_output_bytes: u64,
) -> u64 {
    let by_rate = pacing_rate.unwrap_or(u64::MAX) >> shift.min(MAX_PACING_SHIFT);
    let limit = (2 * skb_bytes).max(by_rate);
    if unpaced {
        limit.min(limit_output_bytes)
    } else {
        limit
    }
}

/// The TSO goal in segments (`tcp_tso_autosize` as called by `tcp_tso_segs`):
/// bytes = pacing_rate >> shift, plus (since 5.18) `sk_gso_max_size` >> ⌊min_rtt_µs / 2^9⌋,
/// capped at `sk_gso_max_size` = gso_max_size − 1 − `MAX_TCP_HEADER` (`sk_setup_caps`; before
/// 5.18 the same cap was applied inside `tcp_tso_autosize`); segments = max(bytes / mss,
/// `min_tso_segs`), at most `GSO_MAX_SEGS`. Without a min_rtt sample Linux's `tcp_min_rtt` is
/// `~0U`, so the extra term is absent.
#[must_use]
pub fn tso_autosize(
    pacing_rate: Option<u64>,
    shift: u8,
    min_rtt: Option<Dur>,
    mss: u32,
    min_tso_segs: u32,
    tso: &TsoConfig,
) -> u32 {
    let gso = u64::from(tso.gso_max_size.saturating_sub(MAX_TCP_HEADER + 1));
    let mut bytes = pacing_rate.unwrap_or(u64::MAX) >> shift.min(MAX_PACING_SHIFT);
    if tso.rule == TsoRule::Post518
        && let Some(r) = min_rtt
    {
        let r = r.as_micros() >> TSO_RTT_LOG;
        if r < 32 {
            bytes = bytes.saturating_add(gso >> r);
        }
    }
    let segs = saturating_u32(bytes.min(gso) / u64::from(mss.max(1)));
    segs.max(min_tso_segs).min(GSO_MAX_SEGS)
}

/// `tcp_cwnd_test`: segments one skb may carry now, min(max(cwnd/2, 1), cwnd − in_flight) (so
/// at least two skbs are in flight), 0 when the window is full.
#[must_use]
pub fn cwnd_quota(cwnd: u32, in_flight: u32) -> u32 {
    if in_flight >= cwnd {
        return 0;
    }
    (cwnd >> 1).max(1).min(cwnd - in_flight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsq_limit_takes_the_larger_term_and_caps_only_unpaced_sockets() {
        // 100 Mbit/s = 12.5 MB/s: >> 10 = 12207 bytes.
        let rate = Some(12_500_000);
        assert_eq!(tsq_limit(1500, rate, 10, false, 1 << 20), 12_207);
        assert_eq!(tsq_limit(10_000, rate, 10, false, 1 << 20), 20_000);
        assert_eq!(tsq_limit(1500, rate, 10, true, 8_000), 8_000);
        assert_eq!(tsq_limit(1500, rate, 10, false, 8_000), 12_207);
        // No rate yet: unlimited, so only the cap of an unpaced socket bounds it.
        assert_eq!(tsq_limit(1500, None, 10, true, 1 << 20), 1 << 20);
    }

    #[test]
    fn tso_autosize_follows_both_rules() {
        let post = TsoConfig::default();
        let pre = TsoConfig {
            rule: TsoRule::Pre518,
            ..post
        };
        let rate = Some(12_500_000); // 12207 bytes per 2^-10 s
        // WAN (40 ms): no extra term; 12207 / 1448 = 8.
        let wan = Some(Dur::from_millis(40));
        assert_eq!(tso_autosize(rate, 10, wan, 1448, 2, &post), 8);
        assert_eq!(tso_autosize(rate, 10, wan, 1448, 2, &pre), 8);
        // LAN (100 µs): + 65215 >> 0, capped at 65215 bytes = 45 segments.
        let lan = Some(Dur::from_micros(100));
        assert_eq!(tso_autosize(rate, 10, lan, 1448, 2, &post), 45);
        assert_eq!(tso_autosize(rate, 10, lan, 1448, 2, &pre), 8);
        // 1.5 ms: + 65215 >> 2 = 16303 bytes.
        let ms = Some(Dur::from_micros(1500));
        assert_eq!(
            tso_autosize(rate, 10, ms, 1448, 2, &post),
            (12_207 + 16_303) / 1448
        );
        // Slow flows take the floor.
        assert_eq!(tso_autosize(Some(100_000), 10, wan, 1448, 2, &post), 2);
        assert_eq!(tso_autosize(Some(100_000), 10, wan, 1448, 1, &post), 1);
    }

    #[test]
    fn cwnd_quota_leaves_room_for_two_skbs() {
        assert_eq!(cwnd_quota(10, 0), 5);
        assert_eq!(cwnd_quota(10, 5), 5);
        assert_eq!(cwnd_quota(10, 8), 2);
        assert_eq!(cwnd_quota(10, 10), 0);
        assert_eq!(cwnd_quota(1, 0), 1);
        assert_eq!(cwnd_quota(3, 0), 1);
    }
}
