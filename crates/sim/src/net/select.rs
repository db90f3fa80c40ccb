//! Which packets a node's element acts on: a selector common to every element.
//!
//! Contract: a [`Selector`] matches a packet by the node it came from (the far end of the
//! link it arrived over), by its kind (TCP data segments, TCP pure ACKs, or anything) and by
//! the flow it belongs to (data and ACKs of a flow both belong to it; UDP probes belong to
//! none). The engine's node layer (`engine/nodes.rs`) hands a packet that an element's
//! selector does not match straight to the next element of the node, as if the element were
//! not there; the default selector matches everything, which is the behaviour of an element
//! without one. So "loss on one flow", "jitter on the ACK path" or "an outage of one link" are
//! any element with a selector, implemented once.

use crate::ids::{FlowId, NodeId};
use crate::packet::{Owner, Packet, Payload};

/// The kinds of packets a selector takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketKind {
    /// Every packet.
    #[default]
    All,
    /// TCP data segments.
    Data,
    /// TCP pure ACKs.
    Acks,
}

/// Which packets an element on a node acts on.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Selector {
    /// Only packets that arrive from this neighbour (`None`: from any).
    pub from: Option<NodeId>,
    /// Only packets of this kind.
    pub packets: PacketKind,
    /// Only packets of these flows (empty: of any flow, and probes).
    pub flows: Vec<FlowId>,
}

impl Selector {
    /// The selector matches every packet.
    #[must_use]
    pub fn is_all(&self) -> bool {
        self.from.is_none() && self.packets == PacketKind::All && self.flows.is_empty()
    }

    /// Whether `pkt`, which arrived from node `from`, is selected.
    #[must_use]
    pub fn matches(&self, pkt: &Packet, from: NodeId) -> bool {
        if self.from.is_some_and(|n| n != from) {
            return false;
        }
        let kind = match self.packets {
            PacketKind::All => true,
            PacketKind::Data => matches!(pkt.payload, Payload::Data { .. }),
            PacketKind::Acks => matches!(pkt.payload, Payload::Ack { .. }),
        };
        kind && (self.flows.is_empty()
            || matches!(pkt.owner, Owner::Flow(f) if self.flows.contains(&f)))
    }
}
