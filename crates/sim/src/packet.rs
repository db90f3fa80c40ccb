//! Packets as small plain values.
//!
//! Contract: a [`Packet`] is `Copy` and carries everything a receiver needs inline (an ACK's SACK
//! blocks are a fixed array), so moving packets through queues never allocates. Sequence numbers
//! count segments (segment `i` carries payload bytes `[i·mss, (i+1)·mss)`, the last one may be
//! shorter); this is Linux's byte sequence space divided by the MSS, exact for the bulk and
//! fixed-size applications cclab models.

use crate::ids::{FlowId, ProbeId, UdpId};
use cclab_cc::Time;

/// Most SACK blocks an ACK carries (RFC 2018 allows 4 without timestamps; the issue asks for 4).
pub const MAX_SACK_BLOCKS: usize = 4;

/// A half-open range of segment numbers `[start, end)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqRange {
    /// First segment.
    pub start: u64,
    /// One past the last segment.
    pub end: u64,
}

/// Up to [`MAX_SACK_BLOCKS`] SACK blocks stored compactly, as 32-bit offsets from the ACK's
/// cumulative acknowledgement (a DSACK block may lie below it, hence signed). Keeps ACKs — and so
/// every packet — small; windows are far below 2³¹ segments.
///
/// The ACK's window field travels here too ([`SackBlocks::window`]): the 33 bytes of blocks
/// leave 3 bytes of alignment padding in this 4-aligned struct, which hold the 16-bit window
/// and its presence flag, so that no packet grows for it (`Packet` stays 88 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    off: [i32; MAX_SACK_BLOCKS],
    len: [u32; MAX_SACK_BLOCKS],
    n: u8,
    /// The TCP header's window field (RFC 7323 §2.3: the window right-shifted by the
    /// receiver's window scale), meaningful when `has_wnd`.
    wnd: u16,
    /// The receiver advertises its window ([`crate::tcp::receiver::rcvbuf`]); false: the flow's
    /// fixed `FlowConfig::rcv_wnd` (or none) applies, as for every flow without a receive
    /// buffer model.
    has_wnd: bool,
}

impl SackBlocks {
    /// Append `r` (absolute segment numbers) relative to `base`; false when full.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a SACK block lies within the receive window above base, far below 2^31 segments from it and long"
    )]
    pub fn push(&mut self, base: u64, r: SeqRange) -> bool {
        let i = usize::from(self.n);
        if i == MAX_SACK_BLOCKS {
            return false;
        }
        self.off[i] = r.start.wrapping_sub(base) as i64 as i32;
        self.len[i] = (r.end - r.start) as u32;
        self.n += 1;
        true
    }
    /// Number of blocks.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.n)
    }
    /// True when there is no block.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Block `i` in absolute segment numbers, given the same `base` as at `push`.
    #[must_use]
    pub fn get(&self, base: u64, i: usize) -> SeqRange {
        let start = base.wrapping_add_signed(i64::from(self.off[i]));
        SeqRange {
            start,
            end: start + u64::from(self.len[i]),
        }
    }

    /// The advertised window field of the ACK (scaled by the receiver's window scale), if the
    /// receiver models its buffer.
    #[inline]
    #[must_use]
    pub fn window(&self) -> Option<u16> {
        self.has_wnd.then_some(self.wnd)
    }

    /// Set the advertised window field.
    #[inline]
    pub fn set_window(&mut self, wnd: u16) {
        self.wnd = wnd;
        self.has_wnd = true;
    }
}

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Payload {
    /// A TCP data segment.
    Data {
        /// Segment number.
        seq: u64,
        /// Which transmission of this segment (0 = original).
        tx_count: u32,
        /// Sender's timestamp (TSval): the transmission time.
        tsval: Time,
        /// TCP CWR flag (RFC 3168 §6.1.2): the sender reduced its window after an ECE.
        cwr: bool,
    },
    /// A QUIC packet carrying stream data ([`crate::quic`]): ack-eliciting, in flight.
    QuicData {
        /// Packet number (RFC 9000 §12.3): never reused, a retransmission gets a new one.
        pn: u64,
        /// The stream chunk it carries (chunk `i` = stream bytes `[i·p, (i+1)·p)` for the
        /// flow's stream payload `p` per packet), or [`crate::quic::PING`] for a probe
        /// without data (a PING frame, RFC 9000 §19.2).
        chunk: u64,
    },
    /// A QUIC packet carrying only an ACK frame (RFC 9000 §19.3; not ack-eliciting).
    QuicAck(crate::quic::AckFrame),
    /// A TCP pure ACK.
    Ack {
        /// Cumulative ACK: next segment expected.
        ack: u64,
        /// SACK blocks relative to `ack`, most recent first (RFC 2018 §4); a DSACK block
        /// (RFC 2883) comes first.
        sack: SackBlocks,
        /// The first SACK block is a DSACK (reports a duplicate).
        dsack: bool,
        /// Echoed timestamp (TSecr) of the data segment that triggered this ACK.
        tsecr: Time,
        /// TCP ECE flag (RFC 3168 §6.1.3): set from a CE arrival until a CWR arrives.
        ece: bool,
        /// Accurate ECN (RFC 9768 / draft-ietf-tcpm-accurate-ecn): the receiver's count of
        /// CE-marked data packets received (`r.cep`), modulo 256. The ACE field carries it
        /// modulo 8 and the AccECN option as 24 bits; 8 bits are unambiguous here because the
        /// receiver never covers 256 segments with one ACK.
        ce_count: u8,
    },
    /// A TCP SYN ([`crate::tcp::handshake`]).
    Syn {
        /// Sender's timestamp (TSval): the transmission time.
        tsval: Time,
        /// Which transmission (0 = original).
        tx_count: u32,
        /// The SYN carries the flow's first segment (TCP Fast Open, RFC 7413).
        data: bool,
    },
    /// A TCP SYN-ACK answering a SYN.
    SynAck {
        /// Echoed timestamp (TSecr): the TSval of the SYN answered.
        tsecr: Time,
        /// It acknowledges the data of a Fast Open SYN.
        data_acked: bool,
    },
    /// A request of a request/response workload ([`crate::tcp::exchange`]): one data segment
    /// from the client (the flow's receiver) to the server (its sender). It carries the
    /// client's acknowledgement when one was pending (Linux sends a pending delayed ACK on the
    /// next data segment, `tcp_event_ack_sent`), as a cumulative ACK without SACK blocks (a
    /// request is sent only once the response arrived whole, so there is no hole to report).
    Request {
        /// Which exchange (0 = the flow's first request).
        index: u32,
        /// Which transmission (0 = original).
        tx_count: u32,
        /// It carries an acknowledgement (`ack`, `tsecr`, `ece`, `ce_count` are meaningful).
        acks: bool,
        /// TCP ECE flag of the acknowledgement.
        ece: bool,
        /// Accurate ECN CE counter of the acknowledgement.
        ce_count: u8,
        /// Cumulative ACK: next segment expected.
        ack: u64,
        /// Echoed timestamp of the acknowledgement.
        tsecr: Time,
    },
    /// A TCP zero-window probe (Linux `tcp_xmit_probe_skb`: a segment without data at
    /// SND.UNA − 1, which the receiver answers with an ACK carrying its window). Sent by the
    /// persist timer ([`crate::tcp::sender`]) when the peer's window is closed.
    WindowProbe,
    /// A latency probe request.
    ProbeRequest {
        /// Sequence number of the probe.
        seq: u64,
        /// When it was sent.
        sent: Time,
    },
    /// A latency probe reply.
    ProbeReply {
        /// Sequence number echoed.
        seq: u64,
        /// Send time echoed.
        sent: Time,
    },
    /// A datagram of a UDP source (no reply).
    Udp {
        /// Sequence number (0 = first sent).
        seq: u64,
        /// When it was sent (the receiver measures the one-way delay).
        sent: Time,
    },
}

/// Which endpoint a packet belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A TCP flow.
    Flow(FlowId),
    /// A latency probe.
    Probe(ProbeId),
    /// A UDP source (cross traffic).
    Udp(UdpId),
}

/// A packet on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Source route the packet follows (an index into the engine's route table).
    pub route: u32,
    /// Position on the route: index of the next link to take.
    pub hop: u32,
    /// Bytes on the wire (IP packet size).
    pub wire_bytes: u32,
    /// Flow or probe it belongs to.
    pub owner: Owner,
    /// On the last segment of a TCP data skb: the skb's wire bytes (its segments are sent
    /// together and the skb is freed, one TX completion, when the last one leaves the NIC);
    /// 0 on other packets.
    pub skb_bytes: u32,
    /// DSCP code point of the IP header (RFC 2474; 0 = CS0 / best effort). A TCP flow's
    /// segments and ACKs carry the flow's class, a probe's request and reply the probe's (Flent
    /// marks both ends, netperf `-Y local,remote`). Queues may classify on it.
    pub dscp: u8,
    /// ECN field of the IP header (RFC 3168 §5).
    pub ecn: Ecn,
    /// Contents.
    pub payload: Payload,
}

/// The two-bit ECN field of the IP header (RFC 3168 §5; ECT(1) identifies L4S, RFC 9331 §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (00).
    #[default]
    NotEct = 0,
    /// ECN-capable transport, codepoint 1 (01): the L4S identifier.
    Ect1 = 1,
    /// ECN-capable transport, codepoint 0 (10): classic ECN.
    Ect0 = 2,
    /// Congestion experienced (11).
    Ce = 3,
}

impl Ecn {
    /// ECT(0), ECT(1) or CE: a queue may mark instead of dropping.
    #[must_use]
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }

    /// ECT(1) or CE: the L4S classifier of RFC 9331 §5.1 (Linux DualPI2 `l4s_ect`).
    #[must_use]
    pub fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
}

impl Packet {
    /// Set CE if the packet is ECN-capable; false (nothing changed) if it is not, and the
    /// queue must drop it instead (RFC 3168 §5).
    #[inline]
    pub fn mark_ce(&mut self) -> bool {
        if self.ecn.is_ect() {
            self.ecn = Ecn::Ce;
            true
        } else {
            false
        }
    }

    /// True for data packets: TCP data segments and QUIC stream packets.
    #[must_use]
    pub fn is_data(&self) -> bool {
        matches!(
            self.payload,
            Payload::Data { .. } | Payload::QuicData { .. }
        )
    }

    /// For unit tests: original TCP data segment `seq` of flow `flow` (on route `flow`), not
    /// ECN-capable, stamped at time 0.
    #[cfg(test)]
    pub(crate) fn test_segment(flow: u32, seq: u64, wire_bytes: u32, skb_bytes: u32) -> Packet {
        Packet {
            route: flow,
            hop: 0,
            wire_bytes,
            owner: Owner::Flow(FlowId(flow)),
            skb_bytes,
            dscp: 0,
            ecn: Ecn::NotEct,
            payload: Payload::Data {
                seq,
                tx_count: 0,
                tsval: Time::ZERO,
                cwr: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    /// Packets are copied through every queue: keep them within 88 bytes (80 before the DSCP
    /// byte; the largest payload, an ACK with four SACK blocks, is 56). A UDP datagram's
    /// payload is as small as a probe's, and the owner tag has room for a third kind, so
    /// neither grew the packet.
    #[test]
    fn packets_stay_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 88);
        assert!(std::mem::size_of::<super::Payload>() <= 56);
        assert!(std::mem::size_of::<super::Owner>() <= 8);
        // The advertised window lives in SackBlocks' padding.
        assert_eq!(std::mem::size_of::<super::SackBlocks>(), 36);
    }

    #[test]
    fn window_field_is_absent_unless_set() {
        let mut s = super::SackBlocks::default();
        assert_eq!(s.window(), None);
        s.set_window(0);
        assert_eq!(s.window(), Some(0));
        s.set_window(513);
        assert_eq!(s.window(), Some(513));
    }

    /// DSCP and ECN codepoints travel in the packet unchanged (a queue reads them from there).
    #[test]
    fn udp_packets_carry_their_codepoints() {
        use super::*;
        let p = Packet {
            route: 0,
            hop: 0,
            wire_bytes: 1200,
            owner: Owner::Udp(UdpId(3)),
            skb_bytes: 0,
            dscp: 46,
            ecn: Ecn::Ect1,
            payload: Payload::Udp {
                seq: 7,
                sent: Time(5),
            },
        };
        let q = p;
        assert_eq!(
            (q.dscp, q.ecn, q.owner),
            (46, Ecn::Ect1, Owner::Udp(UdpId(3)))
        );
        assert!(!q.is_data());
        assert!(q.ecn.is_l4s());
    }
}
