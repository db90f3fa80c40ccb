//! Packets as small plain values.
//!
//! Contract: a [`Packet`] is `Copy` and carries everything a receiver needs inline (an ACK's SACK
//! blocks are a fixed array), so moving packets through queues never allocates. Sequence numbers
//! count segments (segment `i` carries payload bytes `[i·mss, (i+1)·mss)`, the last one may be
//! shorter); this is Linux's byte sequence space divided by the MSS, exact for the bulk and
//! fixed-size applications cclab models.

use crate::config::{FlowId, NodeId, ProbeId};
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
    },
    /// A TCP pure ACK.
    Ack {
        /// Cumulative ACK: next segment expected.
        ack: u64,
        /// SACK blocks, most recent first (RFC 2018 §4); a DSACK block (RFC 2883) comes first.
        sack: [SeqRange; MAX_SACK_BLOCKS],
        /// Number of valid entries in `sack`.
        n_sack: u8,
        /// The first SACK block is a DSACK (reports a duplicate).
        dsack: bool,
        /// Echoed timestamp (TSecr) of the data segment that triggered this ACK.
        tsecr: Time,
    },
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
}

/// Which endpoint a packet belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A TCP flow.
    Flow(FlowId),
    /// A latency probe.
    Probe(ProbeId),
}

/// A packet on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Destination node (routing key).
    pub dst: NodeId,
    /// Bytes on the wire (IP packet size).
    pub wire_bytes: u32,
    /// Flow or probe it belongs to.
    pub owner: Owner,
    /// When it entered its current queue (for sojourn time).
    pub enqueued: Time,
    /// Contents.
    pub payload: Payload,
}

impl Packet {
    /// True for TCP data segments.
    #[must_use]
    pub fn is_data(&self) -> bool {
        matches!(self.payload, Payload::Data { .. })
    }
}
