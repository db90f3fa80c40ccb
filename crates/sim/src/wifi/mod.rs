//! IEEE 802.11 (Wi-Fi) MAC models.

pub mod edca;
