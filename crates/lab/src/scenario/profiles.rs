//! Named path profiles: a bottleneck rate, a base RTT and a buffer that a dumbbell scenario
//! takes with `profile = "LTE"` instead of giving `rate`, `delay` and `buffer` itself.
//!
//! Contract: [`PROFILES`] lists every profile once, with where its numbers come from;
//! [`find`] looks one up by its exact name. A dumbbell with a profile gets `rate` = the
//! profile's rate, `delay` = half its RTT (the one-way delay of a flow with no access delay)
//! and `buffer` = the profile's buffer as time at the link rate; any of the three the scenario
//! gives itself wins. The numbers are the single-bottleneck profiles of quicly's simulator
//! (h2o/quicly `t/` simulator profiles, the network settings the ABBA and Cuback evaluations
//! ran over): eight access-network archetypes, four paths measured in Japan (buffer = loaded
//! RTT − idle RTT), three small-BDP stress cases and two shallow-buffer decision cases.

use cclab_sim::Dur;

use crate::units::{fmt_dur, fmt_rate};

/// One named path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// The name a scenario gives (`profile = "…"`).
    pub name: &'static str,
    /// Base round-trip time.
    pub rtt: Dur,
    /// Bottleneck buffer as time at the link rate (bytes = rate / 8 × buffer).
    pub buffer: Dur,
    /// Bottleneck rate, bit/s.
    pub rate_bps: u64,
    /// What the path stands for.
    pub doc: &'static str,
}

const fn ms(x: u64) -> Dur {
    Dur(x * 1_000_000)
}

const fn us(x: u64) -> Dur {
    Dur(x * 1_000)
}

const fn p(name: &'static str, rtt: Dur, buffer: Dur, mbps: u64, doc: &'static str) -> Profile {
    Profile {
        name,
        rtt,
        buffer,
        rate_bps: mbps * 1_000_000,
        doc,
    }
}

/// Where the numbers come from.
pub const SOURCE: &str = "quicly's simulator profiles (h2o/quicly), as used by its ABBA and \
                          Cuback evaluations";

/// Every profile, in the order `cclab list profiles` prints them.
pub const PROFILES: &[Profile] = &[
    p("DSL", ms(30), ms(50), 30, "DSL access"),
    p("Home_WiFi", ms(25), ms(15), 100, "home Wi-Fi"),
    p("Public", ms(40), ms(200), 20, "public hotspot, deep buffer"),
    p("Corporate_WiFi", ms(10), ms(20), 500, "corporate Wi-Fi"),
    p("LTE", ms(60), ms(120), 30, "LTE cellular"),
    p("5G", ms(40), ms(80), 100, "5G cellular"),
    p("LEO", ms(40), ms(80), 50, "low-earth-orbit satellite"),
    p("GEO", ms(600), ms(600), 50, "geostationary satellite"),
    p(
        "DoCoMo@Office",
        ms(28),
        ms(217),
        140,
        "measured path over NTT DoCoMo's mobile network, office",
    ),
    p(
        "au@Office",
        ms(20),
        ms(233),
        440,
        "measured path over au's mobile network, office",
    ),
    p(
        "WiFi@Office",
        ms(4),
        ms(11),
        710,
        "measured path over office Wi-Fi",
    ),
    p(
        "DoCoMo@mall",
        ms(41),
        ms(300),
        38,
        "measured path over NTT DoCoMo's mobile network, shopping mall",
    ),
    p("congested", ms(200), ms(400), 1, "a slow, congested path"),
    p(
        "bdp20",
        ms(100),
        ms(100),
        1,
        "small BDP (about 20 packets in flight)",
    ),
    p(
        "bdp40",
        ms(100),
        ms(100),
        2,
        "small BDP (about 40 packets in flight)",
    ),
    p(
        "queue5ms",
        ms(25),
        ms(5),
        100,
        "shallow buffer of 5 ms (decision case)",
    ),
    p(
        "queue2.5ms",
        ms(25),
        us(2_500),
        100,
        "shallow buffer of 2.5 ms (decision case)",
    ),
];

/// Every profile's name, in the order of [`PROFILES`] (a test keeps the two in step).
pub const NAMES: &[&str] = &[
    "DSL",
    "Home_WiFi",
    "Public",
    "Corporate_WiFi",
    "LTE",
    "5G",
    "LEO",
    "GEO",
    "DoCoMo@Office",
    "au@Office",
    "WiFi@Office",
    "DoCoMo@mall",
    "congested",
    "bdp20",
    "bdp40",
    "queue5ms",
    "queue2.5ms",
];

/// Every profile's name.
#[must_use]
pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.name).collect()
}

impl super::params::Declared for Profile {
    fn name(&self) -> &'static str {
        self.name
    }
    fn doc(&self) -> &'static str {
        self.doc
    }
    fn source(&self) -> &'static str {
        SOURCE
    }
    fn params(&self) -> &'static [super::params::Param] {
        &[]
    }
}

/// `cclab list profiles --params`: every profile with its numbers, as plain text or (with
/// `markdown`) as the README's table.
#[must_use]
pub fn table(markdown: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if markdown {
        let _ = writeln!(
            s,
            "Source: {SOURCE}.\n\n| profile | rate | RTT | buffer | what it stands for |\n|---|---|---|---|---|"
        );
    } else {
        let _ = writeln!(
            s,
            "{:<16}{:>12}{:>10}{:>10}  what it stands for",
            "profile", "rate", "RTT", "buffer"
        );
    }
    for p in PROFILES {
        let (rate, rtt, buffer) = (fmt_rate(p.rate_bps), fmt_dur(p.rtt), fmt_dur(p.buffer));
        if markdown {
            let _ = writeln!(
                s,
                "| `{}` | {rate} | {rtt} | {buffer} | {} |",
                p.name, p.doc
            );
        } else {
            let _ = writeln!(
                s,
                "{:<16}{rate:>12}{rtt:>10}{buffer:>10}  {}",
                p.name, p.doc
            );
        }
    }
    if !markdown {
        let _ = writeln!(s, "\nSource: {SOURCE}.");
    }
    s
}

/// The profile called `name`.
#[must_use]
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published table also gives each profile's BDP and buffer in 1280-byte packets; the
    /// transcribed rate, RTT and buffer reproduce both columns to their printed 0.1 packet.
    #[test]
    fn profiles_reproduce_the_published_packet_counts() {
        let table: &[(&str, f64, f64)] = &[
            ("DSL", 87.9, 146.5),
            ("Home_WiFi", 244.1, 146.5),
            ("Public", 78.1, 390.6),
            ("Corporate_WiFi", 488.3, 976.6),
            ("LTE", 175.8, 351.6),
            ("5G", 390.6, 781.2),
            ("LEO", 195.3, 390.6),
            ("GEO", 2929.7, 2929.7),
            ("DoCoMo@Office", 382.8, 2966.8),
            ("au@Office", 859.4, 10011.7),
            ("WiFi@Office", 277.3, 762.7),
            ("DoCoMo@mall", 152.1, 1113.3),
            ("congested", 19.5, 39.1),
            ("bdp20", 9.8, 9.8),
            ("bdp40", 19.5, 19.5),
            ("queue5ms", 244.1, 48.8),
            ("queue2.5ms", 244.1, 24.4),
        ];
        assert_eq!(table.len(), PROFILES.len());
        #[expect(clippy::cast_precision_loss, reason = "small exact values")]
        let packets = |rate: u64, d: Dur| rate as f64 / 8.0 * d.as_secs_f64() / 1280.0;
        for &(name, bdp, buffer) in table {
            let p = find(name).unwrap_or_else(|| panic!("no profile {name}"));
            let got = (packets(p.rate_bps, p.rtt), packets(p.rate_bps, p.buffer));
            assert!(
                (got.0 - bdp).abs() <= 0.051 && (got.1 - buffer).abs() <= 0.051,
                "{name}: {got:?} vs ({bdp}, {buffer})"
            );
        }
    }

    /// Names are unique and usable as TOML strings without escaping.
    #[test]
    fn names_are_unique() {
        let mut n = names();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), PROFILES.len());
        assert_eq!(names(), NAMES);
        assert!(n.iter().all(|s| s.chars().all(|c| c.is_ascii_graphic())));
    }
}
