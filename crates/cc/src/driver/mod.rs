//! Test-only controller drivers, built on the transport kit ([`crate::kit`]) so that controller
//! tests see the hooks called exactly as a real transport calls them.
//!
//! Contract: [`Pipe`] ([`pipe`]) is a window clock without a network — one ACK per segment
//! after an RTT the test chooses, or single scripted events (ACKs, losses, RTOs, undo, idle)
//! for unit and property tests of window-based controllers. [`Net`] ([`net`]) is one sender
//! over a packet-level path (a FIFO bottleneck with a drop-tail buffer, random loss, a policer,
//! CE marks, ACK aggregation, an application-limited source, a CPU-starved sender, RTO), for
//! controllers whose behaviour depends on rate sampling, pacing and queueing (BBRv1, BBRv3).

mod net;
mod pipe;

pub(crate) use net::{Ack, IW, Net, Path};
pub(crate) use pipe::Pipe;
