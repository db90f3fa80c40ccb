//! IEEE 802.11n/ac/ax (HT, VHT, HE): PHY rates and airtimes ([`phy`]), A-MPDU/A-MSDU sizing
//! and the limits that bound an aggregate ([`ampdu`]), the analytic single-station goodput model
//! of an aggregate exchange ([`goodput`]), EDCA channel access with its contention ([`edca`]),
//! Block Ack bookkeeping ([`blockack`]), mac80211's transmit queues ([`txq`]: per-station,
//! per-TID fq_codel, Airtime Queue Limits, the airtime-fairness scheduler), and a BSS MAC that
//! composes them ([`mac`]: an AP and its stations, frames pulled from the transmit queues,
//! A-MSDUs, A-MPDUs or single MPDUs, RTS/CTS, per-MPDU errors and retransmissions, in-order
//! delivery, TX completions and queue drops). The per-MPDU error rate of an MCS from the SNR
//! ([`error_model`]) and a Minstrel-HT-like rate controller ([`minstrel`]) stand alone, and the
//! MAC uses them when asked: a link with an SNR loses MPDUs by the error model's curve for the
//! rate used, and with [`mac::RateControl::Minstrel`] each link picks its rate per A-MPDU.
//!
//! Contract: sans-IO; `phy`, `ampdu`, `goodput` and `error_model` are pure, time-free functions
//! (durations are values, no clock, no randomness); `edca`, `mac` and `minstrel` take the time
//! and a seed from their caller. Invalid parameters give typed errors, never panics. The engine
//! runs a [`mac::Mac`] per configured BSS (`engine/wifi.rs`, `SimConfig::wifi`).

pub mod ampdu;
pub mod blockack;
pub mod edca;
pub mod error_model;
pub mod goodput;
pub mod mac;
pub mod minstrel;
pub mod phy;
pub mod txq;
