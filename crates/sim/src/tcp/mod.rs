//! A Linux-like TCP: sender ([`sender::Sender`]) and receiver ([`receiver::Receiver`]).
//!
//! Contract: both are sans-IO state machines driven by the engine with `now`; they return
//! packets through an output buffer and expose their next timer deadline. Linux (v6.x
//! `net/ipv4/tcp_*.c`) is the reference where RFCs leave choices open; each rule names its source.
//! [`output`] holds the transmit path's sizing rules (TSQ, TSO autosizing, cwnd quota) as pure
//! functions.

pub mod exchange;
pub mod handshake;
pub mod output;
pub mod receiver;
pub mod rtt;
pub mod sender;
