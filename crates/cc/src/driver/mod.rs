//! Test-only controller drivers, built on the transport kit ([`crate::kit`]) so that controller
//! tests see the hooks called exactly as a real transport calls them.
//!
//! Contract: [`Pipe`] ([`pipe`]) is a window clock without a network — one ACK per segment
//! after an RTT the test chooses, or single scripted events (ACKs, losses, RTOs, undo, idle)
//! for unit and property tests of window-based controllers.

mod pipe;

pub(crate) use pipe::Pipe;
