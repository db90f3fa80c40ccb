//! QUIC transport after RFC 9000 (packets, ACK frames) and RFC 9002 (loss detection and
//! congestion control) with quicly's defaults, running the same controllers as TCP
//! ([`cclab_cc::CongestionControl`]) through the same delivery-rate sampler
//! ([`cclab_cc::kit::rate`]).
//!
//! Contract: a flow carries one stream, cut into chunks of [`crate::QuicConfig::payload_bytes`]
//! (the last chunk of a sized transfer may be shorter); a packet carries one chunk (or, as a
//! probe with nothing to send, a PING). [`Sender`] and [`Receiver`] are sans-IO: the engine
//! hands them `now` and packets and sends what they return. Packet numbers are never reused:
//! lost data goes out again in a new packet (RFC 9000 §13.3), so no acknowledgement is
//! ambiguous. Only the application-data packet number space exists (the connection starts
//! with 1-RTT keys, as in quicly's simulator); there is no flow control.
//!
//! Sender (`sender.rs`, `sender/`): RTT estimation (`rtt.rs`, RFC 9002 §5), loss detection by
//! packet threshold 3 and time threshold 9/8·max(srtt, latest_rtt) with 1 ms granularity
//! (§6.1), PTO = srtt + max(4·rttvar, 1 ms) + max_ack_delay doubled per consecutive PTO, each
//! sending two probe packets (§6.2), persistent congestion (§7.6) and one congestion response
//! per recovery episode (§7.3.2). Receiver (`receiver.rs`): ACK every second ack-eliciting
//! packet, at once on a gap, reordering or CE, else after max_ack_delay 25 ms (RFC 9000
//! §13.2). ACK frames (`frame.rs`) carry up to 7 ranges inline (a deviation from quicly's 64,
//! documented there).
//!
//! Controller hook order (the kit's contract, in quicly's places):
//! - per ACK that newly acknowledges packets: the rate sampler's `on_delivered` per packet and
//!   the RTT sample; ECN-CE count increase (below); loss detection (below); the rate sample
//!   (`generate`); `pkts_acked`; if in Recovery or CWR (or Loss after persistent congestion)
//!   and a packet sent after the episode began is newly acknowledged → `set_state(Open)`
//!   (RFC 9002 §7.3.2: recovery ends); `cong_control(rs)`; if it returned false, the state is
//!   neither Recovery nor CWR and the sender is cwnd-limited (or the controller
//!   `grows_when_not_cwnd_limited`, as quicly's CUBIC) → `cong_avoid`, once per ACK frame
//!   with all the packets it newly acknowledges (quicly `handle_ack_frame` calls
//!   `cc_on_acked` once per frame with the bytes newly acknowledged).
//! - on loss (by ACK or by the loss timer): `on_packet_lost` per lost packet; if the newest lost
//!   packet was sent after the current episode began, a new episode: `ssthresh` once
//!   (`ce_reduction` false), cwnd = max(ssthresh, 2) at once (no PRR) unless the controller
//!   owns cwnd (its last `cong_control` returned true), `set_state(Recovery)`.
//! - on an ECN-CE count increase (unless the controller `handles_ce`): if the newest newly
//!   acknowledged packet was sent after the current episode began, `ssthresh` with
//!   `ce_reduction` true, cwnd = ssthresh likewise, `set_state(Cwr)`.
//! - persistent congestion: cwnd = the minimum window (2 packets, RFC 9002 §7.2),
//!   `set_state(Loss)`, and the episode is forgotten (RFC 9002 §7.6.2), so the next loss
//!   starts a new one.
//! - a PTO changes no window (RFC 9002 §7.5); it only sends probes.
//!
//! Time: the endpoints round every `now` they are given down to the flow's clock granularity
//! and every deadline they set up to it, so RTT samples, timers and the controller all see the
//! same coarse clock (1 ms reproduces quicly's simulator, whose whole stack reads milliseconds).
//!
//! Wire: a data packet is `datagram_bytes` (1280) + `ip_udp_overhead` (0 by default: quicly's
//! simulator counts no IP/UDP header) on the wire and carries `datagram_bytes − framing_bytes`
//! stream bytes; an ACK-only packet is [`ACK_PACKET_BYTES`] + `ip_udp_overhead`. Neither TSQ
//! nor TSO applies (UDP). Pacing follows the flow's `pacing` mode: off unless the controller
//! asks for it (`auto`) or the flow sets `on`; the rate is the controller's, else quicly's
//! (`quicly_pacer_calc_send_rate`: 2·cwnd/srtt), with a burst of 8 packets
//! (`QUICLY_PACER_BURST_LOW`).

mod frame;
mod ranges;
mod receiver;
pub mod rtt;
mod sender;

pub use frame::{AckFrame, MAX_ACK_RANGES};
pub use ranges::SeqSet;
pub use receiver::Receiver;
pub use sender::{QuicCounters, Sender, Sent};

use cclab_cc::{Dur, Time};

/// The chunk number of a packet that carries no stream data (a PING probe).
pub const PING: u64 = u64::MAX;

/// Bytes of a full data packet that are not stream payload. A 1-RTT packet has a short header
/// (1 byte, the destination connection ID — 8 bytes here — and a 1–4-byte packet number,
/// RFC 9000 §17.3), a 16-byte AEAD tag (RFC 9001 §5.3) and a STREAM frame header (type, stream
/// ID, a 1–8-byte offset, no Length for the packet's last frame, RFC 9000 §19.8): between 29
/// and 40 bytes depending on connection-ID length and offset. cclab takes 28, calibrated to the
/// reference note on quicly's simulator (goodput "near 97.8 % of the link rate":
/// 1252 / 1280 = 97.81 %); [`crate::QuicConfig::framing_bytes`] changes it.
pub const FRAMING_BYTES: u32 = 28;

/// Bytes of an ACK-only packet: short header 11 + AEAD tag 16 + an ACK frame of about 13
/// (type, Largest Acknowledged, ACK Delay, range count, first range, ECN counts, a few ranges).
pub const ACK_PACKET_BYTES: u32 = 40;

/// `t` rounded down to a multiple of `g`.
#[inline]
#[must_use]
pub fn quantise(t: Time, g: Dur) -> Time {
    if g.0 <= 1 { t } else { Time(t.0 - t.0 % g.0) }
}

/// `t` rounded up to a multiple of `g`.
#[inline]
#[must_use]
pub fn quantise_up(t: Time, g: Dur) -> Time {
    if g.0 <= 1 {
        t
    } else {
        Time(t.0.div_ceil(g.0).saturating_mul(g.0))
    }
}

#[cfg(test)]
mod tests;
