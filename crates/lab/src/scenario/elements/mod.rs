//! Network elements a scenario places on nodes' forwarding paths (`[[elements]]`): a delay, a
//! delay schedule, a loss model, a jitter that may reorder, an outage, a duplicator, a
//! pass-through; their declarations, listed by `cclab list elements`.
//!
//! Contract: each element is declared once, in its own file under this module, as an
//! [`Element`] (name, one-line doc, source, [`Param`](super::params::Param) keys and a `build`
//! into the simulator's [`ElementSpec`]) listed in [`ALL`]; `cclab list elements --params` and
//! the README's element table print [`ALL`]. An `[[elements]]` entry names the `node` it sits
//! on (any node of the preset, e.g. the dumbbell's `right` router) and its `kind`; the other
//! keys are the kind's parameters, checked by `params::resolve_component` like a controller's.
//! Elements on one node run in file order, at most [`MAX_ELEMENTS_PER_NODE`] of them (and at
//! most [`MAX_DUPLICATORS`] duplicators in a scenario). Three
//! more keys, common to every kind ([`COMMON`]), choose the packets the element acts on (the
//! others pass it by): `from` (a neighbour of the node: only packets arriving over the link
//! from it), `packets` (`all`, `data` or `acks`) and
//! `flows` (flow names or indexes). Adding an element is one file here and one line in
//! [`ALL`] (plus the element itself in `cclab_sim::net`).

mod ack_aggregate;
mod ack_thin;
mod delay;
mod delay_schedule;
mod duplicate;
mod jitter;
mod loss;
mod outage;
mod pass;
mod policer;
mod reroute;
mod shaper;
mod times;

use std::ops::Range;

use cclab_sim::net::{ElementSpec, PacketKind, Selector};
use cclab_sim::{ElementConfig, FlowId, LossConfig, NodeId, SimConfig};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, unknown_choice};
use super::params::{self, Component, Given, Kind, Param, RawValue};

/// An element a scenario can name, with its parameters; `build` makes its [`ElementSpec`].
pub type Element = Component<ElementSpec>;

/// The `jitter` element's declaration, which a `[[links]]` entry's `delay_model = "jitter"` also
/// takes (the same keys, drawn in the link's delay line).
pub(crate) const JITTER: &Element = &jitter::JITTER;

/// A required `rate` key (the policer's, the shaper's, a UDP source's).
pub(crate) use policer::rate as required_rate;

/// Every network element, in the order `cclab list elements` prints them.
pub const ALL: &[&Element] = &[
    &pass::PASS,
    &delay::DELAY,
    &jitter::JITTER,
    &loss::LOSS,
    &duplicate::DUPLICATE,
    &delay_schedule::DELAY_SCHEDULE,
    &outage::OUTAGE,
    &policer::POLICER,
    &shaper::SHAPER,
    &reroute::REROUTE,
    &ack_thin::ACK_THIN,
    &ack_aggregate::ACK_AGGREGATE,
];

/// The keys of [`COMMON`], listed after the kinds by `cclab list elements --params`.
pub const EVERY: params::Entry = params::Entry {
    name: "every kind",
    doc: "keys every element takes besides its own: which packets it acts on (the others pass it by)",
    source: "implemented once in the engine's node layer",
    params: COMMON,
};

/// The keys every element takes besides its own: which packets it acts on.
pub const COMMON: &[Param] = &[
    Param {
        name: "from",
        kind: Kind::Other {
            ty: "node",
            range: "a neighbour of `node`",
            quoted: true,
        },
        unit: "",
        default: "(any)",
        doc: "only packets arriving over the link from this node (default: from any)",
        source: "—",
    },
    Param {
        name: "packets",
        kind: Kind::Choice(&["all", "data", "acks"]),
        unit: "",
        default: "all",
        doc: "only TCP data segments, only TCP pure ACKs, or every packet (probes included)",
        source: "—",
    },
    Param {
        name: "flows",
        kind: Kind::Other {
            ty: "list",
            range: "flow names or indexes",
            quoted: false,
        },
        unit: "",
        default: "[]",
        doc: "only packets (data and ACKs) of these flows (default: any packet)",
        source: "—",
    },
];

/// Most elements one node may hold, the preset's profile's included. The engine hands a packet
/// through a node's chain without recursion, so a longer chain would not crash, but every
/// packet crossing the node costs one call per element: the bound caps what a chain adds per
/// hop at a thousand calls, far beyond a real path's few middleboxes per hop.
pub const MAX_ELEMENTS_PER_NODE: usize = 1_000;

/// Most `duplicate` elements a scenario may have. Each may copy every packet that crosses it,
/// data and ACKs alike (a router's elements see both directions), so `k` of them can turn one
/// segment and the ACKs it draws into `4^k` packets: forty made a 100 ms run never end. netem,
/// whose `duplicate` the element follows, has one per qdisc; four allow a chain of them at a
/// cost of at most 256 copies.
pub const MAX_DUPLICATORS: usize = 4;

/// One resolved `[[elements]]` entry: the node (by name) and what sits there.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedElement {
    /// Name of the node whose forwarding path it is on.
    pub node: String,
    /// The element.
    pub spec: ElementSpec,
    /// Which packets it acts on (`from` by node name, resolved by [`attach`]).
    pub select: Selector,
    /// Name of the neighbour in `from`, if any.
    pub from: Option<String>,
}

/// One `[[elements]]` table as written: `node`, `kind` and the kind's keys.
#[derive(Debug)]
struct RawElement {
    node: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
    from: Option<Spanned<String>>,
    packets: Option<Spanned<String>>,
    flows: Option<Spanned<RawValue>>,
    params: Given,
}

impl<'de> Deserialize<'de> for RawElement {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawElement;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an element table with `node` and `kind`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawElement, A::Error> {
                let mut e = RawElement {
                    node: None,
                    kind: None,
                    from: None,
                    packets: None,
                    flows: None,
                    params: Vec::new(),
                };
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "node" => &mut e.node,
                        "kind" => &mut e.kind,
                        "from" => &mut e.from,
                        "packets" => &mut e.packets,
                        "flows" => {
                            if e.flows.is_some() {
                                return Err(de::Error::custom("duplicate key `flows`"));
                            }
                            e.flows = Some(map.next_value()?);
                            continue;
                        }
                        _ => {
                            let value: Spanned<RawValue> = map.next_value()?;
                            e.params.push((key, value));
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return Err(de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    *slot = Some(map.next_value()?);
                }
                Ok(e)
            }
        }
        d.deserialize_map(V)
    }
}

/// The part of a scenario file this module reads.
#[derive(Debug, Deserialize)]
struct ElementsOnly {
    #[serde(default)]
    elements: Vec<Spanned<RawElement>>,
}

/// The `[[elements]]` of scenario text `src`, checked against [`ALL`] and against the nodes of
/// `cfg` (the scenario's network without elements); a `loss` of model `per_rtt` without
/// `flight` takes `flight` (N, the packets of a full flight over the path, or why the preset
/// cannot give it).
///
/// # Errors
/// A missing `node` or `kind`, an unknown kind (with the valid ones), a key the kind does not
/// take, a value outside its declaration, a node the preset does not have (with its nodes), a
/// node with more than [`MAX_ELEMENTS_PER_NODE`] elements, more than [`MAX_DUPLICATORS`]
/// `duplicate` elements, or a `per_rtt` loss without `flight` on a path that cannot give it.
pub(crate) fn resolve(
    src: &Source<'_>,
    cfg: &SimConfig,
    flight: &Result<f64, String>,
) -> Result<Vec<PlacedElement>, ScenarioError> {
    let raw: ElementsOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    let mut out = Vec::with_capacity(raw.elements.len());
    // Elements per node so far: the profile's (already in `cfg`), then the file's.
    let mut held = vec![0usize; cfg.nodes.len()];
    let mut duplicators = 0;
    for e in &cfg.elements {
        held[e.node.0 as usize] += 1;
        duplicators += usize::from(matches!(e.spec, ElementSpec::Duplicate { .. }));
    }
    for (i, entry) in raw.elements.iter().enumerate() {
        let field = format!("elements[{i}]");
        let span: Range<usize> = entry.span();
        let e = entry.get_ref();
        let missing = |key: &str| {
            src.error(
                Some(span.clone()),
                format!("{field}.{key}"),
                format!("an element needs `{key}`"),
            )
        };
        let kind = e.kind.as_ref().ok_or_else(|| missing("kind"))?;
        let node = e.node.as_ref().ok_or_else(|| missing("node"))?;
        let mut spec =
            params::resolve_component(src, &field, "element", Some("kind"), ALL, kind, &e.params)?;
        if matches!(spec, ElementSpec::Duplicate { .. }) {
            duplicators += 1;
            if duplicators > MAX_DUPLICATORS {
                return Err(src.error(
                    Some(kind.span()),
                    format!("{field}.kind"),
                    format!(
                        "a scenario may have at most {MAX_DUPLICATORS} `duplicate` elements \
                         (each may copy every packet that crosses it, ACKs included)"
                    ),
                ));
            }
        }
        if let ElementSpec::Loss {
            model: LossConfig::PerRtt { flight: n, .. },
        } = &mut spec
            && *n == loss::FLIGHT_FROM_PATH
        {
            *n = flight.clone().map_err(|why| {
                src.error(
                    Some(kind.span()),
                    format!("{field}.flight"),
                    format!(
                        "model per_rtt without `flight` takes N from the path, but {why}; give \
                         `flight`, the packets of a full flight (BDP + buffer)"
                    ),
                )
            })?;
        }
        let Some(at) = cfg.nodes.iter().position(|n| n.name == *node.get_ref()) else {
            let names: Vec<&str> = cfg.nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(src.error(
                Some(node.span()),
                format!("{field}.node"),
                unknown_choice("node", node.get_ref(), &names),
            ));
        };
        held[at] += 1;
        if held[at] > MAX_ELEMENTS_PER_NODE {
            return Err(src.error(
                Some(node.span()),
                format!("{field}.node"),
                format!(
                    "node `{}` would hold more than {MAX_ELEMENTS_PER_NODE} elements (the most \
                     one node may hold, a profile's included)",
                    node.get_ref()
                ),
            ));
        }
        let select = selector(src, &field, cfg, node.get_ref(), e)?;
        out.push(PlacedElement {
            node: node.get_ref().clone(),
            spec,
            select,
            from: e.from.as_ref().map(|f| f.get_ref().clone()),
        });
    }
    Ok(out)
}

/// The selector of entry `e` (on node `node`): `from` a neighbour, `packets` a kind, `flows`
/// by name or index (`from` is filled in by [`attach`]).
fn selector(
    src: &Source<'_>,
    field: &str,
    cfg: &SimConfig,
    node: &str,
    e: &RawElement,
) -> Result<Selector, ScenarioError> {
    let mut select = Selector::default();
    if let Some(from) = &e.from {
        let id = |name: &str| cfg.nodes.iter().position(|n| n.name == name);
        let at = id(node);
        let mut neighbours: Vec<&str> = cfg
            .links
            .iter()
            .filter(|l| Some(l.to.0 as usize) == at)
            .map(|l| cfg.nodes[l.from.0 as usize].name.as_str())
            .collect();
        neighbours.dedup();
        if !neighbours.contains(&from.get_ref().as_str()) {
            return Err(src.error(
                Some(from.span()),
                format!("{field}.from"),
                format!(
                    "`{}` is not a neighbour of `{node}`; its neighbours are: {}",
                    from.get_ref(),
                    neighbours.join(", ")
                ),
            ));
        }
    }
    if let Some(p) = &e.packets {
        select.packets = match p.get_ref().as_str() {
            "all" => PacketKind::All,
            "data" => PacketKind::Data,
            "acks" => PacketKind::Acks,
            other => {
                return Err(src.error(
                    Some(p.span()),
                    format!("{field}.packets"),
                    unknown_choice("packet kind", other, &["all", "data", "acks"]),
                ));
            }
        };
    }
    if let Some(flows) = &e.flows {
        let names: Vec<&str> = cfg.flows.iter().map(|f| f.name.as_str()).collect();
        let items = match flows.get_ref() {
            RawValue::Array(items) => items.clone(),
            _ => vec![flows.clone()],
        };
        for (i, it) in items.iter().enumerate() {
            let at = format!("{field}.flows[{i}]");
            let index = match it.get_ref() {
                RawValue::Str(s) => names.iter().position(|n| n == s).ok_or_else(|| {
                    src.error(Some(it.span()), &at, unknown_choice("flow", s, &names))
                })?,
                RawValue::Int(i) if usize::try_from(*i).is_ok_and(|i| i < names.len()) => {
                    usize::try_from(*i).expect("checked")
                }
                other => {
                    return Err(src.error(
                        Some(it.span()),
                        at,
                        format!(
                            "expected a flow name or an index in 0..{}, got {}",
                            names.len(),
                            other.describe()
                        ),
                    ));
                }
            };
            let id = FlowId(u32::try_from(index).expect("fewer than 2^32 flows"));
            if !select.flows.contains(&id) {
                select.flows.push(id);
            }
        }
    }
    Ok(select)
}

/// Put `elements` into `cfg`, each on the node of its name, in order.
///
/// # Panics
/// If a node does not exist ([`resolve`] checked them against the same preset).
pub(crate) fn attach(elements: &[PlacedElement], cfg: &mut SimConfig) {
    for e in elements {
        let at = cfg
            .nodes
            .iter()
            .position(|n| n.name == e.node)
            .expect("element nodes are checked when the scenario is parsed");
        let mut select = e.select.clone();
        select.from = e.from.as_ref().map(|name| {
            let i = cfg
                .nodes
                .iter()
                .position(|n| n.name == *name)
                .expect("element neighbours are checked when the scenario is parsed");
            NodeId(u32::try_from(i).expect("fewer than 2^32 nodes"))
        });
        cfg.elements.push(ElementConfig {
            node: NodeId(u32::try_from(at).expect("fewer than 2^32 nodes")),
            spec: e.spec.clone(),
            select,
        });
    }
}
