//! The transport kit: the parts of a sender that stand between its loss detection and the
//! congestion controller, shared by every transport that runs a [`crate::CongestionControl`]
//! (the simulator's TCP sender, the controller test driver, and later a QUIC sender or an
//! adapter into another stack), so that a controller sees the same calls in the same order
//! everywhere.
//!
//! Contract: [`rate`] is the delivery-rate sampler (Linux `tcp_rate.c`: a [`TxRecord`] per
//! transmitted segment, a [`crate::RateSample`] per ACK); [`recovery`] is the congestion state
//! machine (Open, Disorder, CWR, Recovery, Loss; PRR, RFC 6937; the hook order of Linux
//! `tcp_input.c`). Both are plain data owned by the transport, take `now` and the window state
//! as arguments, and neither allocates nor reads a clock. Loss detection itself (SACK
//! scoreboard, RACK-TLP, RTO timers) stays with the transport.

pub mod rate;
pub mod recovery;

pub use rate::{RateAck, RateSampler, TxRecord};
pub use recovery::{AckSignals, Recovery, Transition, Undo};
