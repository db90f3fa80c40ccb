//! cclab-sim: a deterministic packet-level simulator of Linux-like TCP over a network of links and
//! queues.
//!
//! Contract: `Simulation::new(config)?.run()` turns a [`SimConfig`] into [`Results`]. A run is
//! single-threaded and deterministic: the same config (including its seed) gives bit-identical
//! results on every machine. Nothing here reads files, clocks or threads.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

pub mod access;
pub mod config;
pub mod events;
pub mod histogram;
pub mod host;
pub mod ids;
mod link;
pub mod net;
pub mod packet;
pub mod queue;
pub mod quic;
pub mod reorder;
pub mod results;
pub mod rng;
pub mod tcp;
pub mod topology;
pub mod udp;
pub mod wifi;
pub mod wifi_net;

pub use cclab_cc::{Dur, Time};
pub use config::*;
pub use results::*;

mod engine;
pub use engine::{ElementId, EngineOptions, Router, Simulation};
