//! UDP cross traffic a scenario adds (`[[udp]]`): sources without congestion control (CBR,
//! on/off, Poisson) between two hosts of the preset; their declarations, listed by
//! `cclab list udp`.
//!
//! Contract: each pattern is declared once as a [`Pattern`] (name, doc, source, its own keys and
//! a `build` into the simulator's [`UdpPattern`]) listed in [`ALL`]; the keys every pattern
//! takes (`name`, `src`, `dst`, `reverse`, `size`, `dscp`, `ecn`, `start`, `stop`) are declared
//! once in [`COMMON`]. [`resolve`] reads the `[[udp]]` tables of a scenario once its preset's
//! network is built (the hosts are known then), checks every key against these declarations and
//! returns [`UdpSource`]s or a located error (file, line, key, valid values, a suggestion for a
//! misspelt key); [`attach`] puts them into a [`SimConfig`]. The default direction is that of
//! the latency probes: from the client to the server (the `access` presets: `client` →
//! `server0`; the dumbbell: the first flow's sender → its receiver, else the first probe's);
//! `reverse = true` swaps the two ends. Adding a pattern is one declaration here and one variant
//! of [`UdpPattern`].

use std::ops::Range;

use cclab_sim::packet::Ecn;
use cclab_sim::udp::{Periods, UdpConfig, UdpPattern};
use cclab_sim::{Dur, NodeId, NodeKind, SimConfig, Time};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use toml::Spanned;

use super::ScenarioError;
use super::elements::required_rate as rate;
use super::error::{Source, suggest, unknown_choice};
use super::params::{self, Component, Conflict, Entry, Given, Kind, Param, RawValue};
use crate::units::fmt_dur;

/// A UDP pattern a scenario can name, with its keys; `build` makes its [`UdpPattern`].
pub type Pattern = Component<UdpPattern>;

/// Most datagrams one source may send (`rate·(stop − start)/(8·size)`): each is an event, so a
/// typo such as `rate = "100Tbit"` would otherwise keep a run busy for hours.
pub const MAX_UDP_PACKETS: u64 = 100_000_000;
/// Most datagrams all `[[udp]]` sources of a scenario may send together: the events of one
/// source at its bound, so a thousand sources cannot make a run a thousand times longer.
pub const MAX_UDP_PACKETS_TOTAL: u64 = MAX_UDP_PACKETS;
/// Most `[[udp]]` sources a scenario may have.
pub const MAX_UDP_SOURCES: usize = 1_000;

const RATE: Kind = Kind::Other {
    ty: "rate",
    range: "bit/s, or e.g. \"12Mbit\"",
    quoted: true,
};

const fn rate_param(doc: &'static str) -> Param {
    Param {
        name: "rate",
        kind: RATE,
        unit: "",
        default: "—",
        doc,
        source: "iperf3 `-u -b`",
    }
}

/// Constant bit rate.
pub const CBR: Pattern = Pattern {
    name: "cbr",
    doc: "constant bit rate: one datagram every size·8/rate, computed from its index (no drift)",
    source: "iperf3 `-u -b`; ns-2 `CBR_Traffic`",
    params: &[rate_param("sending rate in wire bits (required)")],
    build: |v| Ok(UdpPattern::Cbr { rate_bps: rate(v)? }),
};

/// On/off bursts.
pub const ONOFF: Pattern = Pattern {
    name: "onoff",
    doc: "bursts at `rate` during on periods, silence during off periods, starting with an on period",
    source: "ns-2 `EXPOO_Traffic` (exponential on/off)",
    params: &[
        rate_param("sending rate while on (required)"),
        Param {
            name: "on",
            kind: Kind::Duration { max: Dur::MAX },
            unit: "",
            default: "1s",
            doc: "(mean) length of an on period",
            source: "ns-2 `burst_time_`",
        },
        Param {
            name: "off",
            kind: Kind::Duration { max: Dur::MAX },
            unit: "",
            default: "1s",
            doc: "(mean) length of an off period",
            source: "ns-2 `idle_time_`",
        },
        Param {
            name: "periods",
            kind: Kind::Choice(&["exponential", "fixed"]),
            unit: "",
            default: "exponential",
            doc: "period lengths exponential with the given means, or fixed",
            source: "ns-2 `EXPOO_Traffic`",
        },
    ],
    build: |v| {
        let positive = |key: &'static str| -> Result<Dur, Conflict> {
            match v.duration(key) {
                Some(d) if d == Dur::ZERO => Err((key, format!("`{key}` must be positive"))),
                Some(d) => Ok(d),
                None => Ok(Dur::from_secs(1)),
            }
        };
        Ok(UdpPattern::OnOff {
            rate_bps: rate(v)?,
            on: positive("on")?,
            off: positive("off")?,
            periods: match v.choice("periods") {
                Some("fixed") => Periods::Fixed,
                _ => Periods::Exponential,
            },
        })
    },
};

/// Poisson arrivals.
pub const POISSON: Pattern = Pattern {
    name: "poisson",
    doc: "exponential gaps between datagrams: a Poisson process at the mean rate",
    source: "RFC 2330 §11.1.1 (Poisson sampling); ns-2 exponential traffic with no idle time",
    params: &[rate_param("mean sending rate (required)")],
    build: |v| Ok(UdpPattern::Poisson { rate_bps: rate(v)? }),
};

/// Every UDP pattern, in the order `cclab list udp` prints them.
pub const ALL: &[&Pattern] = &[&CBR, &ONOFF, &POISSON];

/// The keys of [`COMMON`], listed after the patterns by `cclab list udp --params`.
pub const EVERY: Entry = Entry {
    name: "every kind",
    doc: "keys every UDP source takes besides its pattern's",
    source: "—",
    params: COMMON,
};

/// Default wire size of a datagram: a full 1500-byte Ethernet MTU packet (RFC 894).
pub const DEFAULT_SIZE: u32 = 1500;

/// The keys every `[[udp]]` source takes.
pub const COMMON: &[Param] = &[
    Param {
        name: "name",
        kind: Kind::Other {
            ty: "string",
            range: "unique among the sources",
            quoted: true,
        },
        unit: "",
        default: "udp<index>",
        doc: "name in the outputs",
        source: "—",
    },
    Param {
        name: "src",
        kind: Kind::Other {
            ty: "node",
            range: "a host of the preset",
            quoted: true,
        },
        unit: "",
        default: "(client)",
        doc: "sending host (default: the client, as the latency probes: `client` of access, the first flow's sender of a dumbbell)",
        source: "—",
    },
    Param {
        name: "dst",
        kind: Kind::Other {
            ty: "node",
            range: "a host of the preset",
            quoted: true,
        },
        unit: "",
        default: "(server)",
        doc: "receiving host (default: the server: `server0` of access, the first flow's receiver of a dumbbell)",
        source: "—",
    },
    Param {
        name: "reverse",
        kind: Kind::Bool,
        unit: "",
        default: "false",
        doc: "swap `src` and `dst`: server → client",
        source: "—",
    },
    Param {
        name: "size",
        kind: Kind::Int {
            min: 28,
            max: 65_535,
        },
        unit: "bytes",
        default: "1500",
        doc: "wire size of every datagram (IP packet: 20 IP + 8 UDP header bytes at least)",
        source: "RFC 768, RFC 791; 1500 = Ethernet MTU (RFC 894)",
    },
    Param {
        name: "dscp",
        kind: Kind::Int { min: 0, max: 63 },
        unit: "",
        default: "0",
        doc: "DSCP code point of the datagrams (46 = EF); queues may classify on it",
        source: "RFC 2474 §3; RFC 3246 (EF)",
    },
    Param {
        name: "ecn",
        kind: Kind::Choice(&["not-ect", "ect0", "ect1", "ce"]),
        unit: "",
        default: "not-ect",
        doc: "ECN codepoint of the datagrams (nothing reacts to CE marks; ect1 is classified L4S)",
        source: "RFC 3168 §5; RFC 9331 §5.1",
    },
    Param {
        name: "start",
        kind: Kind::Duration { max: Dur::MAX },
        unit: "",
        default: "0s",
        doc: "first datagram",
        source: "—",
    },
    Param {
        name: "stop",
        kind: Kind::Duration { max: Dur::MAX },
        unit: "",
        default: "(end)",
        doc: "no datagram at or after this time",
        source: "—",
    },
];

/// One resolved `[[udp]]` source, its ends by node name.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpSource {
    /// Name in the outputs.
    pub name: String,
    /// Sending host.
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// When it sends.
    pub pattern: UdpPattern,
    /// Wire bytes per datagram.
    pub size: u32,
    /// DSCP code point.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// First datagram.
    pub start: Dur,
    /// No datagram at or after this time.
    pub stop: Option<Dur>,
}

/// One `[[udp]]` table as written: `kind` and the other keys in file order.
#[derive(Debug)]
struct RawUdp {
    kind: Option<Spanned<String>>,
    params: Given,
}

impl<'de> Deserialize<'de> for RawUdp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawUdp;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a UDP source table with `kind` and its keys")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawUdp, A::Error> {
                let mut u = RawUdp {
                    kind: None,
                    params: Vec::new(),
                };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "kind" {
                        if u.kind.is_some() {
                            return Err(serde::de::Error::custom("duplicate key `kind`"));
                        }
                        u.kind = Some(map.next_value()?);
                    } else {
                        let value: Spanned<RawValue> = map.next_value()?;
                        u.params.push((key, value));
                    }
                }
                Ok(u)
            }
        }
        d.deserialize_map(V)
    }
}

/// The part of a scenario file this module reads.
#[derive(Debug, Deserialize)]
struct UdpOnly {
    #[serde(default)]
    udp: Vec<Spanned<RawUdp>>,
}

/// The default ends of a source in `cfg`: client → server (`client` → `server0`), else the
/// first flow's, else the first probe's sender → receiver.
fn default_ends(cfg: &SimConfig) -> Option<(NodeId, NodeId)> {
    let find = |name: &str| {
        cfg.nodes
            .iter()
            .position(|n| n.name == name)
            .and_then(|i| u32::try_from(i).ok())
            .map(NodeId)
    };
    if let (Some(c), Some(s)) = (find("client"), find("server0")) {
        return Some((c, s));
    }
    cfg.flows
        .first()
        .map(|f| (f.src, f.dst))
        .or_else(|| cfg.probes.first().map(|p| (p.src, p.dst)))
}

/// The `[[udp]]` sources of scenario text `src`, checked against [`ALL`] and [`COMMON`] and
/// against the hosts of `cfg` (the scenario's network without them).
///
/// # Errors
/// A missing or unknown `kind`, a key no pattern takes (with a suggestion), a value outside
/// its declaration, a node that is not a host of the preset (with its hosts), a duplicate
/// name, times outside the run, or more datagrams than [`MAX_UDP_PACKETS`] (one source) or
/// [`MAX_UDP_PACKETS_TOTAL`] (all sources).
#[expect(
    clippy::too_many_lines,
    reason = "one check after another, each with its own message"
)]
pub(crate) fn resolve(src: &Source<'_>, cfg: &SimConfig) -> Result<Vec<UdpSource>, ScenarioError> {
    let raw: UdpOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    if raw.udp.len() > MAX_UDP_SOURCES {
        return Err(src.error(
            Some(raw.udp[MAX_UDP_SOURCES].span()),
            format!("udp[{MAX_UDP_SOURCES}]"),
            format!("too many UDP sources: a scenario may have at most {MAX_UDP_SOURCES}"),
        ));
    }
    let common: Vec<&str> = COMMON.iter().map(|p| p.name).collect();
    let hosts: Vec<&str> = cfg
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Host)
        .map(|n| n.name.as_str())
        .collect();
    let end = Time(cfg.duration.as_nanos());
    let mut out: Vec<UdpSource> = Vec::with_capacity(raw.udp.len());
    let mut total_packets: u128 = 0;
    for (i, entry) in raw.udp.iter().enumerate() {
        let field = format!("udp[{i}]");
        let span: Range<usize> = entry.span();
        let e = entry.get_ref();
        let Some(kind) = e.kind.as_ref() else {
            return Err(src.error(
                Some(span),
                format!("{field}.kind"),
                format!(
                    "a UDP source needs `kind`, one of: {}",
                    ALL.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        let (mut shared, mut own): (Given, Given) = (Vec::new(), Vec::new());
        for (key, value) in &e.params {
            if common.contains(&key.as_str()) {
                shared.push((key.clone(), value.clone()));
            } else {
                own.push((key.clone(), value.clone()));
            }
        }
        // A key neither the pattern nor any source takes: suggest from both lists.
        if let Some(p) = ALL.iter().find(|p| p.name == kind.get_ref().as_str()) {
            for (key, value) in &own {
                let known = ALL.iter().any(|q| q.params.iter().any(|k| k.name == key));
                if !known {
                    let mut names: Vec<&str> = p.params.iter().map(|k| k.name).collect();
                    names.extend(&common);
                    let mut m = format!(
                        "a UDP source has no key `{key}` (kind `{}` takes: {})",
                        p.name,
                        names.join(", ")
                    );
                    if let Some(s) = suggest(key, &names) {
                        m.push_str(&format!(" (did you mean `{s}`?)"));
                    }
                    return Err(src.error(Some(value.span()), format!("{field}.{key}"), m));
                }
            }
        }
        let pattern =
            params::resolve_component(src, &field, "UDP kind", Some("kind"), ALL, kind, &own)?;
        let v = params::resolve(src, &field, "UDP source", &EVERY, &[&EVERY], &shared)?;
        let at = |key: &str| v.span(key);
        let node = |key: &'static str| -> Result<Option<NodeId>, ScenarioError> {
            match v.raw(key) {
                None => Ok(None),
                Some(RawValue::Str(name)) => cfg
                    .nodes
                    .iter()
                    .position(|n| n.name == *name && n.kind == NodeKind::Host)
                    .map(|i| Some(NodeId(u32::try_from(i).expect("fewer than 2^32 nodes"))))
                    .ok_or_else(|| {
                        src.error(
                            at(key),
                            format!("{field}.{key}"),
                            unknown_choice("host", name, &hosts),
                        )
                    }),
                Some(other) => Err(src.error(
                    at(key),
                    format!("{field}.{key}"),
                    format!(
                        "expected a host name, one of: {}; got {}",
                        hosts.join(", "),
                        other.describe()
                    ),
                )),
            }
        };
        let (s, d) = (node("src")?, node("dst")?);
        let defaults = default_ends(cfg);
        let (Some(mut s), Some(mut d)) = (s.or(defaults.map(|x| x.0)), d.or(defaults.map(|x| x.1)))
        else {
            return Err(src.error(
                Some(span),
                format!("{field}.src"),
                format!(
                    "the preset has no client and server to default to (no flow or probe): \
                     give `src` and `dst`, hosts such as: {}",
                    hosts.join(", ")
                ),
            ));
        };
        if v.bool("reverse") == Some(true) {
            std::mem::swap(&mut s, &mut d);
        }
        if s == d {
            return Err(src.error(
                at("dst").or_else(|| at("src")).or(Some(span)),
                format!("{field}.dst"),
                format!(
                    "source and destination are the same host `{}`",
                    cfg.nodes[s.0 as usize].name
                ),
            ));
        }
        let name = match v.raw("name") {
            Some(RawValue::Str(n)) => n.clone(),
            Some(other) => {
                return Err(src.error(
                    at("name"),
                    format!("{field}.name"),
                    format!("expected a string, got {}", other.describe()),
                ));
            }
            None => format!("udp{i}"),
        };
        if out.iter().any(|u| u.name == name) {
            return Err(src.error(
                at("name").or(Some(span.clone())),
                format!("{field}.name"),
                format!("a UDP source named `{name}` already exists; names must be unique"),
            ));
        }
        let start = v.duration("start").unwrap_or(Dur::ZERO);
        if Time(start.as_nanos()) >= end {
            return Err(src.error(
                at("start"),
                format!("{field}.start"),
                format!(
                    "must be before the end of the run ({}), got {}",
                    fmt_dur(cfg.duration),
                    fmt_dur(start)
                ),
            ));
        }
        let stop = v.duration("stop");
        if let Some(t) = stop
            && t <= start
        {
            return Err(src.error(
                at("stop"),
                format!("{field}.stop"),
                format!(
                    "must be after `start` ({}), got {}",
                    fmt_dur(start),
                    fmt_dur(t)
                ),
            ));
        }
        let size = v.u32("size").unwrap_or(DEFAULT_SIZE);
        let active = stop.unwrap_or(cfg.duration).min(cfg.duration).as_nanos() - start.as_nanos();
        // On/off: every burst starts with a datagram, so short periods add one per cycle.
        let bursts = match pattern {
            UdpPattern::OnOff { on, off, .. } => {
                u128::from(active) / u128::from(on.as_nanos().saturating_add(off.as_nanos()).max(1))
                    + 1
            }
            _ => 0,
        };
        let packets = u128::from(pattern.rate_bps()) * u128::from(active)
            / (8 * u128::from(size) * 1_000_000_000)
            + bursts;
        total_packets += packets;
        if packets <= u128::from(MAX_UDP_PACKETS)
            && total_packets > u128::from(MAX_UDP_PACKETS_TOTAL)
        {
            let rate_span = own.iter().find(|(k, _)| k == "rate").map(|(_, v)| v.span());
            return Err(src.error(
                rate_span.or(Some(span)),
                format!("{field}.rate"),
                format!(
                    "the UDP sources up to this one make {total_packets} datagrams; at most \
                     {MAX_UDP_PACKETS_TOTAL} are allowed in all (this one: {packets}): use \
                     fewer sources, lower rates, larger datagrams or a shorter time"
                ),
            ));
        }
        if packets > u128::from(MAX_UDP_PACKETS) {
            return Err(src.error(
                v.span("size").or(Some(span)),
                format!("{field}.rate"),
                format!(
                    "{} bit/s of {size}-byte datagrams for {} make {packets} datagrams; at most \
                     {MAX_UDP_PACKETS} are allowed per source: use a lower rate, larger \
                     datagrams, longer on/off periods or a shorter time",
                    pattern.rate_bps(),
                    fmt_dur(Dur(active))
                ),
            ));
        }
        let ecn = match v.choice("ecn") {
            Some("ect0") => Ecn::Ect0,
            Some("ect1") => Ecn::Ect1,
            Some("ce") => Ecn::Ce,
            _ => Ecn::NotEct,
        };
        out.push(UdpSource {
            name,
            src: cfg.nodes[s.0 as usize].name.clone(),
            dst: cfg.nodes[d.0 as usize].name.clone(),
            pattern,
            size,
            dscp: v.u8("dscp").unwrap_or(0),
            ecn,
            start,
            stop,
        });
    }
    Ok(out)
}

/// Put `sources` into `cfg`, their ends looked up by name.
///
/// # Panics
/// If a host does not exist ([`resolve`] checked them against the same preset).
pub(crate) fn attach(sources: &[UdpSource], cfg: &mut SimConfig) {
    let id = |cfg: &SimConfig, name: &str| {
        let i = cfg
            .nodes
            .iter()
            .position(|n| n.name == name)
            .expect("UDP hosts are checked when the scenario is parsed");
        NodeId(u32::try_from(i).expect("fewer than 2^32 nodes"))
    };
    for u in sources {
        let (src, dst) = (id(cfg, &u.src), id(cfg, &u.dst));
        cfg.udp.push(UdpConfig {
            name: u.name.clone(),
            src,
            dst,
            pattern: u.pattern,
            size: u.size,
            dscp: u.dscp,
            ecn: u.ecn,
            start: Time(u.start.as_nanos()),
            stop: u.stop.map(|t| Time(t.as_nanos())),
        });
    }
}
