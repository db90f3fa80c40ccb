//! Named path profiles: a bottleneck rate, a base RTT and a buffer (and, for Pantheon's
//! calibrated scenarios, a trace, a loss, a policer or an ACK-path model) that a dumbbell
//! scenario takes with `profile = "LTE"` instead of giving `rate`, `delay` and `buffer` itself.
//!
//! Contract: [`PROFILES`] lists every profile once, with where its numbers come from;
//! [`find`] looks one up by its exact name. A dumbbell with a profile gets `rate` = the
//! profile's rate, `delay` = half its RTT (the one-way delay of a flow with no access delay)
//! and `buffer` = the profile's buffer; any of the three the scenario gives itself wins. The
//! profile's [`Extras`] add what a rate, a delay and a buffer cannot say: the bottleneck's or
//! the ACK link's rate from a trace (made by [`crate::tracegen`] when the scenario is resolved,
//! so a profile reads no file and works from any directory), a Bernoulli loss on the
//! bottleneck (unless the file gives `loss` or `drops`), and elements on the `left` router
//! (a `policer` on data, an `ack_aggregate` on ACKs) that run before the file's own; a
//! `[[links]]` entry of the file for the same link replaces the profile's trace.
//!
//! Two families. The first seventeen are the single-bottleneck profiles of quicly's simulator
//! (h2o/quicly `t/` simulator profiles, the network settings the ABBA and Cuback evaluations
//! ran over): eight access-network archetypes, four paths measured in Japan (buffer = loaded
//! RTT − idle RTT), three small-BDP stress cases and two shallow-buffer decision cases. The
//! `pantheon-1` … `pantheon-18` profiles are Pantheon's calibrated emulation scenarios (Yan et
//! al., "Pantheon: the training ground for Internet congestion-control research", USENIX ATC
//! 2018, its calibrated emulators: mahimahi emulators whose parameters were fitted to real
//! paths, and synthetic cases for policers, ACK aggregation and buffer sizes). Where the
//! published setup leaves a detail open, the profile's doc line states the choice and why;
//! choices common to all:
//! - `mm-link` takes a trace for each direction; a trace profile puts its trace on both
//!   (`bottleneck` and `bottleneck_reverse`, whose queue stays unlimited as mahimahi's default
//!   queue is), so ACKs wait for the same gaps as in the emulator; a constant-rate profile's
//!   ACK direction keeps the dumbbell's default (the data rate, a large queue, no loss) unless
//!   it is an ACK-path case;
//! - "uplink loss" (`mm-loss uplink`) is taken as loss of data packets after the bottleneck
//!   queue: the uplink is the direction of the calibrated data transfer, and in the emulator's
//!   command `mm-loss` wraps `mm-link`, so a packet leaving the link queue meets the loss after
//!   it has used its delivery opportunity (a lost packet costs link time).

use cclab_sim::Dur;

use crate::units::{BufferSpec, fmt_dur, fmt_rate};

/// One named path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// The name a scenario gives (`profile = "…"`).
    pub name: &'static str,
    /// Base round-trip time.
    pub rtt: Dur,
    /// Bottleneck buffer.
    pub buffer: BufferSpec,
    /// The path's rate, bit/s: the bottleneck's constant rate, a trace's nominal rate, or a
    /// policer's token rate.
    pub rate_bps: u64,
    /// What the path stands for, with any choice the source leaves open.
    pub doc: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// What a rate, a delay and a buffer cannot say.
    pub extras: Extras,
}

/// The parts of a profile beyond rate, RTT and buffer (all off in [`Extras::NONE`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extras {
    /// The bottleneck's rate over time (its nominal rate then stands for `rate_bps`).
    pub trace: Option<ProfileTrace>,
    /// The ACK direction's rate over time.
    pub reverse_trace: Option<ProfileTrace>,
    /// Bernoulli loss of each data packet after the bottleneck queue (`mm-loss uplink`).
    pub loss: f64,
    /// A token-bucket `policer` at `rate_bps` with this bucket (bytes) on the data arriving
    /// at the `left` router; the bottleneck link then runs at the hosts' NIC rate, so the
    /// policer alone limits the rate.
    pub policer_burst: Option<u64>,
    /// An `ack_aggregate` on the ACKs arriving at the `left` router, releasing every period.
    pub ack_release: Option<Dur>,
}

impl Extras {
    /// A plain path: rate, RTT and buffer only.
    pub const NONE: Extras = Extras {
        trace: None,
        reverse_trace: None,
        loss: 0.0,
        policer_burst: None,
        ack_release: None,
    };

    /// True when the profile is rate, RTT and buffer only.
    #[must_use]
    pub fn is_none(&self) -> bool {
        *self == Extras::NONE
    }
}

/// A trace a profile's link follows, made by [`crate::tracegen`] at resolve time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileTrace {
    /// The trace of this name in [`crate::tracegen::SHIPPED`] (the same text as the file
    /// under `traces/`).
    Shipped(&'static str),
    /// [`crate::tracegen::constant`]`(rate_bps, period_ms)`.
    Constant {
        /// Mean rate, bit/s.
        rate_bps: u64,
        /// Loop period, ms.
        period_ms: u64,
    },
}

impl ProfileTrace {
    /// The trace's text (mahimahi format).
    ///
    /// # Panics
    /// If a shipped name is not in [`crate::tracegen::SHIPPED`] (a test checks every
    /// profile's).
    #[must_use]
    pub fn text(&self) -> String {
        match *self {
            ProfileTrace::Shipped(name) => {
                let (_, make) = crate::tracegen::SHIPPED
                    .iter()
                    .find(|(n, _)| *n == name)
                    .unwrap_or_else(|| panic!("no shipped trace {name}"));
                make()
            }
            ProfileTrace::Constant {
                rate_bps,
                period_ms,
            } => crate::tracegen::constant(rate_bps, period_ms),
        }
    }

    /// The trace as a rate model.
    ///
    /// # Panics
    /// If the generator's text is not a valid trace (a test parses every profile's).
    #[must_use]
    pub fn shape(&self) -> cclab_sim::net::rate::RateShape {
        let trace = cclab_sim::net::rate::Trace::parse(&self.text())
            .unwrap_or_else(|e| panic!("generated trace {self:?}: line {}: {}", e.line, e.reason));
        cclab_sim::net::rate::RateShape::Trace(trace.into())
    }

    /// How the doc and `cclab check` name it.
    #[must_use]
    pub fn describe(&self) -> String {
        match *self {
            ProfileTrace::Shipped(name) => format!("trace `{name}`"),
            ProfileTrace::Constant {
                rate_bps,
                period_ms,
            } => format!(
                "trace of {} opportunities per {period_ms} ms",
                rate_bps * period_ms / 12_000_000
            ),
        }
    }
}

const fn ms(x: u64) -> Dur {
    Dur(x * 1_000_000)
}

const fn us(x: u64) -> Dur {
    Dur(x * 1_000)
}

/// A quicly profile: buffer as time at the link rate.
const fn p(name: &'static str, rtt: Dur, buffer: Dur, mbps: u64, doc: &'static str) -> Profile {
    Profile {
        name,
        rtt,
        buffer: BufferSpec::Time(buffer),
        rate_bps: mbps * 1_000_000,
        doc,
        source: QUICLY,
        extras: Extras::NONE,
    }
}

/// A Pantheon profile: RTT = twice the emulator's one-way delay (`mm-delay`).
const fn pantheon(
    name: &'static str,
    one_way: Dur,
    buffer: BufferSpec,
    rate_bps: u64,
    doc: &'static str,
    extras: Extras,
) -> Profile {
    Profile {
        name,
        rtt: Dur(one_way.0 * 2),
        buffer,
        rate_bps,
        doc,
        source: PANTHEON,
        extras,
    }
}

/// Where the quicly profiles come from.
pub const QUICLY: &str = "quicly's simulator profiles (h2o/quicly), as used by its ABBA and \
                          Cuback evaluations";

/// Where the Pantheon profiles come from.
pub const PANTHEON: &str = "Pantheon's calibrated emulation scenarios (Yan et al., \"Pantheon: \
                            the training ground for Internet congestion-control research\", \
                            USENIX ATC 2018)";

/// Where the numbers come from (both families).
pub const SOURCE: &str = "quicly's simulator profiles (h2o/quicly), as used by its ABBA and \
                          Cuback evaluations; `pantheon-*`: Pantheon's calibrated emulation \
                          scenarios (Yan et al., \"Pantheon: the training ground for Internet \
                          congestion-control research\", USENIX ATC 2018)";

/// Extras with a trace on both directions of the bottleneck and a loss.
const fn traced(name: &'static str, loss: f64) -> Extras {
    Extras {
        trace: Some(ProfileTrace::Shipped(name)),
        reverse_trace: Some(ProfileTrace::Shipped(name)),
        loss,
        ..Extras::NONE
    }
}

/// Extras with a loss only.
const fn lossy(loss: f64) -> Extras {
    Extras {
        loss,
        ..Extras::NONE
    }
}

/// A policer of one BDP at `mbps` and `rtt_ms`, in bytes.
const fn policed(mbps: u64, rtt_ms: u64) -> Extras {
    Extras {
        policer_burst: Some(mbps * 1_000_000 / 8 * rtt_ms / 1_000),
        ..Extras::NONE
    }
}

/// Pantheon's 12 Mbit/s data rate of the ACK-path and buffer cases.
const MBIT12: u64 = 12_000_000;

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
    pantheon(
        "pantheon-1",
        ms(28),
        BufferSpec::Packets(14),
        570_000,
        "Pantheon 1: 0.57 Mbit/s Poisson trace (poisson-0.57mbit.trace, both directions), \
         28 ms one way, 4.77 % uplink loss (data, after the queue), 14-packet drop-tail",
        traced("poisson-0.57mbit.trace", 0.0477),
    ),
    pantheon(
        "pantheon-2",
        ms(88),
        BufferSpec::Packets(130),
        2_640_000,
        "Pantheon 2: 2.64 Mbit/s Poisson trace (poisson-2.64mbit.trace, both directions), \
         88 ms one way, 130-packet drop-tail",
        traced("poisson-2.64mbit.trace", 0.0),
    ),
    pantheon(
        "pantheon-3",
        ms(130),
        BufferSpec::Packets(426),
        3_040_000,
        "Pantheon 3: 3.04 Mbit/s Poisson trace (poisson-3.04mbit.trace, both directions), \
         130 ms one way, 426-packet drop-tail",
        traced("poisson-3.04mbit.trace", 0.0),
    ),
    pantheon(
        "pantheon-4",
        ms(27),
        BufferSpec::Packets(173),
        100_420_000,
        "Pantheon 4: 100.42 Mbit/s, 27 ms one way, 173-packet drop-tail",
        Extras::NONE,
    ),
    pantheon(
        "pantheon-5",
        ms(51),
        BufferSpec::Packets(94),
        77_720_000,
        "Pantheon 5: 77.72 Mbit/s, 51 ms one way, 0.06 % uplink loss (data, after the queue), \
         94-packet drop-tail",
        lossy(0.0006),
    ),
    pantheon(
        "pantheon-6",
        ms(45),
        BufferSpec::Packets(450),
        114_680_000,
        "Pantheon 6: 114.68 Mbit/s, 45 ms one way, 450-packet drop-tail",
        Extras::NONE,
    ),
    pantheon(
        "pantheon-7",
        ms(10),
        BufferSpec::Packets(1),
        12_000_000,
        "Pantheon 7: token-bucket policer at 12 Mbit/s, 20 ms RTT, 1-packet drop-tail; \
         the policer (data, left router) sets the rate, the link runs at the NIC rate; bucket \
         not published: one BDP (30000 bytes), the least that passes a one-BDP window \
         sent back to back",
        policed(12, 20),
    ),
    pantheon(
        "pantheon-8",
        ms(10),
        BufferSpec::Packets(1),
        60_000_000,
        "Pantheon 8: token-bucket policer at 60 Mbit/s, 20 ms RTT, 1-packet drop-tail; \
         the policer (data, left router) sets the rate, the link runs at the NIC rate; bucket \
         not published: one BDP (150000 bytes), the least that passes a one-BDP window \
         sent back to back",
        policed(60, 20),
    ),
    pantheon(
        "pantheon-9",
        ms(10),
        BufferSpec::Packets(1),
        108_000_000,
        "Pantheon 9: token-bucket policer at 108 Mbit/s, 20 ms RTT, 1-packet drop-tail; \
         the policer (data, left router) sets the rate, the link runs at the NIC rate; bucket \
         not published: one BDP (270000 bytes), the least that passes a one-BDP window \
         sent back to back",
        policed(108, 20),
    ),
    pantheon(
        "pantheon-10",
        ms(50),
        BufferSpec::Packets(1),
        12_000_000,
        "Pantheon 10: token-bucket policer at 12 Mbit/s, 100 ms RTT, 1-packet drop-tail; \
         the policer (data, left router) sets the rate, the link runs at the NIC rate; bucket \
         not published: one BDP (150000 bytes), the least that passes a one-BDP window \
         sent back to back",
        policed(12, 100),
    ),
    pantheon(
        "pantheon-11",
        ms(50),
        BufferSpec::Packets(1),
        60_000_000,
        "Pantheon 11: token-bucket policer at 60 Mbit/s, 100 ms RTT, 1-packet drop-tail; \
         the policer (data, left router) sets the rate, the link runs at the NIC rate; bucket \
         not published: one BDP (750000 bytes), the least that passes a one-BDP window \
         sent back to back",
        policed(60, 100),
    ),
    pantheon(
        "pantheon-12",
        ms(50),
        BufferSpec::Packets(1),
        108_000_000,
        "Pantheon 12: token-bucket policer at 108 Mbit/s, 100 ms RTT, 1-packet drop-tail; \
         the policer (data, left router) sets the rate, the link runs at the NIC rate; bucket \
         not published: one BDP (1350000 bytes), the least that passes a one-BDP window \
         sent back to back",
        policed(108, 100),
    ),
    pantheon(
        "pantheon-13",
        ms(30),
        BufferSpec::Bytes(90_000),
        MBIT12,
        "Pantheon 13: data at 12 Mbit/s, ACK link of one 1500-byte opportunity per 100 ms \
         (0.12 Mbit/s trace; waiting ACKs share one); delay and buffer not published: 30 ms \
         one way and one BDP, as in 15-18",
        Extras {
            reverse_trace: Some(ProfileTrace::Constant {
                rate_bps: 120_000,
                period_ms: 100,
            }),
            ..Extras::NONE
        },
    ),
    pantheon(
        "pantheon-14",
        ms(30),
        BufferSpec::Bytes(90_000),
        MBIT12,
        "Pantheon 14: data at 12 Mbit/s, ACKs released every 200 ms (ack_aggregate, left \
         router; Pantheon's 10 opportunities of 1500 bytes per release exceed the ~100 ACKs \
         a 12 Mbit/s flow sends meanwhile); 30 ms one way and one BDP, as in 15-18",
        Extras {
            ack_release: Some(ms(200)),
            ..Extras::NONE
        },
    ),
    pantheon(
        "pantheon-15",
        ms(30),
        BufferSpec::Bytes(9_000),
        MBIT12,
        "Pantheon 15: 12 Mbit/s, 30 ms one way, drop-tail of BDP/10 (9000 bytes)",
        Extras::NONE,
    ),
    pantheon(
        "pantheon-16",
        ms(30),
        BufferSpec::Bytes(30_000),
        MBIT12,
        "Pantheon 16: 12 Mbit/s, 30 ms one way, drop-tail of BDP/3 (30000 bytes)",
        Extras::NONE,
    ),
    pantheon(
        "pantheon-17",
        ms(30),
        BufferSpec::Bytes(45_000),
        MBIT12,
        "Pantheon 17: 12 Mbit/s, 30 ms one way, drop-tail of BDP/2 (45000 bytes)",
        Extras::NONE,
    ),
    pantheon(
        "pantheon-18",
        ms(30),
        BufferSpec::Bytes(90_000),
        MBIT12,
        "Pantheon 18: 12 Mbit/s, 30 ms one way, drop-tail of one BDP (90000 bytes)",
        Extras::NONE,
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
    "pantheon-1",
    "pantheon-2",
    "pantheon-3",
    "pantheon-4",
    "pantheon-5",
    "pantheon-6",
    "pantheon-7",
    "pantheon-8",
    "pantheon-9",
    "pantheon-10",
    "pantheon-11",
    "pantheon-12",
    "pantheon-13",
    "pantheon-14",
    "pantheon-15",
    "pantheon-16",
    "pantheon-17",
    "pantheon-18",
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
        self.source
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
        let (rate, rtt, buffer) = (fmt_rate(p.rate_bps), fmt_dur(p.rtt), p.buffer.to_string());
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
        let quicly: Vec<&Profile> = PROFILES.iter().filter(|p| p.source == QUICLY).collect();
        assert_eq!(table.len(), quicly.len());
        #[expect(clippy::cast_precision_loss, reason = "small exact values")]
        let packets = |rate: u64, d: Dur| rate as f64 / 8.0 * d.as_secs_f64() / 1280.0;
        for &(name, bdp, buffer) in table {
            let p = find(name).unwrap_or_else(|| panic!("no profile {name}"));
            assert!(p.extras.is_none(), "{name}");
            let BufferSpec::Time(b) = p.buffer else {
                panic!("{name}: a quicly buffer is a time at the link rate")
            };
            let got = (packets(p.rate_bps, p.rtt), packets(p.rate_bps, b));
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

    /// Pantheon's scenarios as listed (rate, one-way delay, loss, buffer): the profiles carry
    /// them, RTT being twice the one-way delay.
    #[test]
    fn pantheon_profiles_carry_the_published_parameters() {
        // (number, rate bit/s, one-way ms, loss, buffer)
        let listed: &[(u32, u64, u64, f64, BufferSpec)] = &[
            (1, 570_000, 28, 0.0477, BufferSpec::Packets(14)),
            (2, 2_640_000, 88, 0.0, BufferSpec::Packets(130)),
            (3, 3_040_000, 130, 0.0, BufferSpec::Packets(426)),
            (4, 100_420_000, 27, 0.0, BufferSpec::Packets(173)),
            (5, 77_720_000, 51, 0.0006, BufferSpec::Packets(94)),
            (6, 114_680_000, 45, 0.0, BufferSpec::Packets(450)),
        ];
        for &(n, rate, one_way, loss, buffer) in listed {
            let p = find(&format!("pantheon-{n}")).unwrap();
            assert_eq!(
                (p.rate_bps, p.rtt, p.extras.loss, p.buffer),
                (rate, ms(2 * one_way), loss, buffer),
                "pantheon-{n}"
            );
            assert_eq!(
                p.extras.trace.is_some(),
                n <= 3,
                "pantheon-{n}: Poisson trace"
            );
        }
        // 7–12: policers at 12 / 60 / 108 Mbit/s, RTT 20 ms then 100 ms, 1-packet drop-tail,
        // a bucket of one BDP at the policer rate.
        for (k, (mbps, rtt)) in [
            (12, 20),
            (60, 20),
            (108, 20),
            (12, 100),
            (60, 100),
            (108, 100),
        ]
        .into_iter()
        .enumerate()
        {
            let p = find(&format!("pantheon-{}", 7 + k)).unwrap();
            assert_eq!((p.rate_bps, p.rtt), (mbps * 1_000_000, ms(rtt)));
            assert_eq!(p.buffer, BufferSpec::Packets(1));
            assert_eq!(p.extras.policer_burst, Some(mbps * 1_000_000 * rtt / 8_000));
        }
        // 15–18: 12 Mbit/s at 60 ms RTT is a BDP of 90 000 bytes; the buffers are its 1/10,
        // 1/3, 1/2 and 1.
        let bdp = 12_000_000 / 8 * 60 / 1000;
        for (n, div) in [(15, 10), (16, 3), (17, 2), (18, 1)] {
            let p = find(&format!("pantheon-{n}")).unwrap();
            assert_eq!((p.rate_bps, p.rtt), (12_000_000, ms(60)));
            assert_eq!(p.buffer, BufferSpec::Bytes(bdp / div), "pantheon-{n}");
        }
        // 13: one 1500-byte opportunity per 100 ms on the ACK link is 0.12 Mbit/s.
        let ack = find("pantheon-13").unwrap().extras.reverse_trace.unwrap();
        assert_eq!(ack.text(), "100\n");
        assert_eq!(ack.shape().nominal_bps(), 120_000);
        assert_eq!(
            find("pantheon-14").unwrap().extras.ack_release,
            Some(ms(200))
        );
    }

    /// Every profile's trace is made at resolve time and parses; a Poisson trace's mean rate
    /// lies within three standard deviations of a Poisson count of the nominal rate over its
    /// 5 s loop (√n opportunities out of n) of the profile's rate.
    #[test]
    fn pantheon_traces_are_made_and_match_their_rates() {
        for p in PROFILES {
            for t in [p.extras.trace, p.extras.reverse_trace]
                .into_iter()
                .flatten()
            {
                let shape = t.shape();
                if p.extras.trace == Some(t) {
                    #[expect(clippy::cast_precision_loss, reason = "rates below 2^53")]
                    let (got, want) = (shape.nominal_bps() as f64, p.rate_bps as f64);
                    let n = want * 5.0 / 12_000.0;
                    assert!(
                        (got / want - 1.0).abs() <= 3.0 / n.sqrt(),
                        "{}: {got} vs {want}",
                        p.name
                    );
                }
            }
        }
    }

    /// The profile's doc lines are what `cclab list profiles` prints next to the names.
    #[test]
    fn the_table_prints_every_doc_line() {
        let t = table(false);
        for p in PROFILES {
            assert!(t.contains(p.doc), "{}", p.name);
        }
    }
}
