//! The trivial element: every packet leaves at once, unchanged.
//!
//! Contract: [`Pass`] returns each packet it is given at the time it is given, and counts them;
//! it holds nothing and never needs a timer. It marks a place on a path (a node's forwarding
//! path, a test) where an element can go.

use cclab_cc::Time;

use super::{Element, NetPacket, Output};

/// Hands every packet on at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pass {
    /// Packets handed on.
    pub passed: u64,
}

impl<P: NetPacket> Element<P> for Pass {
    #[inline]
    fn process(&mut self, _now: Time, pkt: Option<P>) -> Output<P> {
        match pkt {
            Some(p) => {
                self.passed += 1;
                Output::Packet(p)
            }
            None => Output::Idle,
        }
    }
}
