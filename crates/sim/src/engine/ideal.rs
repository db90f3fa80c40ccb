//! The ideal flow-completion time of a sized flow: how long its transfer takes alone on an
//! empty path, the yardstick of FCT slowdown (FCT ÷ ideal FCT).
//!
//! Contract: [`ideal_fct`] takes the links of the flow's data path (in order), the transfer's
//! payload bytes and the segment size, and returns the time from the first byte leaving the
//! sender to the last byte reaching the receiver when every segment is sent at once and
//! forwarded store-and-forward over otherwise idle links: every link's propagation delay, every
//! link's serialisation of the first segment, and the rest of the bytes at the slowest link's
//! rate (the pipeline of a burst: Bertsekas and Gallager, *Data Networks*, 2nd ed., §2.10 /
//! the ideal FCT of pFabric, Alizadeh et al., SIGCOMM 2013, §5, and HPCC, Li et al., SIGCOMM
//! 2019, §5.1, which divide by the FCT of a flow alone at line rate). Each segment carries
//! [`TCP_IP_HEADER_BYTES`] of headers on the wire. A handshake, when the flow makes one, adds
//! its round trip on top ([`handshake_rtt`]: the SYN over the data path, the SYN-ACK over the
//! ACK path); a Fast Open transfer that fits in the SYN does not wait for it. Links without a rate serialise in no time;
//! a link whose rate or delay changes over time counts with its configured (initial) values.

use cclab_cc::Dur;

use crate::config::{LinkConfig, TCP_IP_HEADER_BYTES};

/// Ideal transfer time of `size` payload bytes in segments of `mss` bytes over `path`.
/// `None` for an empty transfer.
#[must_use]
pub fn ideal_fct(path: &[&LinkConfig], size: u64, mss: u32) -> Option<Dur> {
    if size == 0 || mss == 0 {
        return None;
    }
    let segments = size.div_ceil(u64::from(mss));
    let header = u64::from(TCP_IP_HEADER_BYTES);
    let wire_total = size + segments * header;
    let first = size.min(u64::from(mss)) + header;
    let mut t = Dur::ZERO;
    let mut slowest: Option<u64> = None;
    for l in path {
        t += l.delay;
        if let Some(rate) = l.rate_bps {
            t += Dur::serialization(first, rate);
            slowest = Some(slowest.map_or(rate, |s| s.min(rate)));
        }
    }
    if let Some(rate) = slowest {
        t += Dur::serialization(wire_total - first, rate);
    }
    Some(t)
}

/// One packet of `bytes` on the wire over the idle `path`: each link's delay and
/// serialisation (store and forward).
#[must_use]
pub fn one_way(path: &[&LinkConfig], bytes: u32) -> Dur {
    path.iter().fold(Dur::ZERO, |t, l| {
        let ser = l
            .rate_bps
            .map_or(Dur::ZERO, |r| Dur::serialization(u64::from(bytes), r));
        t + l.delay + ser
    })
}

/// The ideal response time of a request/response exchange ([`crate::tcp::exchange`]): the
/// request of `request_wire` bytes crosses the idle `reverse` path, then the response of
/// `response` payload bytes is transferred as [`ideal_fct`] says over `forward`; an exchange
/// that opens its connection first waits for the handshake's round trip (the client's SYN over
/// `reverse`, the SYN-ACK over `forward`, [`handshake_rtt`]). `None` for an empty response.
#[must_use]
pub fn ideal_response_time(
    forward: &[&LinkConfig],
    reverse: &[&LinkConfig],
    request_wire: u32,
    response: u64,
    mss: u32,
    opens_connection: bool,
    syn_bytes: u32,
) -> Option<Dur> {
    let data = ideal_fct(forward, response, mss)?;
    let handshake = if opens_connection {
        handshake_rtt(reverse, forward, syn_bytes, syn_bytes)
    } else {
        Dur::ZERO
    };
    Some(handshake + one_way(reverse, request_wire) + data)
}

/// Round trip of a handshake's two control segments of `syn_bytes` and `synack_bytes` on the
/// wire over the idle `forward` and `reverse` paths: each link's delay and serialisation.
#[must_use]
pub fn handshake_rtt(
    forward: &[&LinkConfig],
    reverse: &[&LinkConfig],
    syn_bytes: u32,
    synack_bytes: u32,
) -> Dur {
    one_way(forward, syn_bytes) + one_way(reverse, synack_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LossConfig, NodeId, QueueConfig, QueueLimit};

    fn link(rate_mbps: Option<u64>, delay_ms: u64) -> LinkConfig {
        LinkConfig {
            name: "l".to_owned(),
            from: NodeId(0),
            to: NodeId(1),
            rate_bps: rate_mbps.map(|r| r * 1_000_000),
            rate_shape: None,
            delay: Dur::from_millis(delay_ms),
            delay_changes: Vec::new(),
            jitter: None,
            queue: QueueConfig::DropTail {
                limit: QueueLimit::Packets(100),
            },
            loss: LossConfig::None,
            monitor: false,
        }
    }

    #[test]
    fn one_segment_over_one_link_is_delay_plus_serialisation() {
        // 1000 B payload + 52 B headers at 8 Mbit/s: 1052 µs; plus 10 ms.
        let l = link(Some(8), 10);
        let t = ideal_fct(&[&l], 1000, 1448).expect("a transfer");
        assert_eq!(t, Dur::from_micros(10_000 + 1052));
    }

    #[test]
    fn a_burst_pipelines_behind_the_slowest_link() {
        // 10 full segments over 100 Mbit/s then 10 Mbit/s: the first segment crosses both
        // (1500 B: 120 µs + 1200 µs), the other nine follow at 10 Mbit/s (9 × 1200 µs).
        let a = link(Some(100), 1);
        let b = link(Some(10), 5);
        let t = ideal_fct(&[&a, &b], 10 * 1448, 1448).expect("a transfer");
        assert_eq!(t, Dur::from_micros(6_000 + 120 + 1_200 + 9 * 1_200));
    }

    #[test]
    fn rateless_links_add_only_delay_and_empty_transfers_have_none() {
        let l = link(None, 7);
        assert_eq!(ideal_fct(&[&l], 5000, 1448), Some(Dur::from_millis(7)));
        assert_eq!(ideal_fct(&[&l], 0, 1448), None);
    }

    /// A request of 100 + 52 B at 8 Mbit/s over a 20 ms reverse link (152 µs + 20 ms), then one
    /// 1000-byte response segment (1052 µs + 10 ms); an exchange that opens its connection adds
    /// the handshake's 60-byte SYN and SYN-ACK (60 µs + 20 ms, 60 µs + 10 ms).
    #[test]
    fn a_response_waits_for_its_request_and_a_new_connection_for_its_handshake() {
        let f = link(Some(8), 10);
        let r = link(Some(8), 20);
        let t = ideal_response_time(&[&f], &[&r], 152, 1000, 1448, false, 60);
        assert_eq!(t, Some(Dur::from_micros(20_152 + 11_052)));
        let t = ideal_response_time(&[&f], &[&r], 152, 1000, 1448, true, 60);
        assert_eq!(t, Some(Dur::from_micros(30_120 + 20_152 + 11_052)));
    }

    #[test]
    fn handshake_round_trip_crosses_both_paths() {
        let f = link(Some(8), 10);
        let r = link(Some(8), 20);
        // 60 B at 8 Mbit/s = 60 µs; 52 B = 52 µs.
        assert_eq!(
            handshake_rtt(&[&f], &[&r], 60, 52),
            Dur::from_micros(30_000 + 60 + 52)
        );
    }
}
