//! Network elements a scenario places on nodes' forwarding paths (`[[elements]]`): a delay, a
//! loss model, a jitter that may reorder, a pass-through; their declarations, listed by
//! `cclab list elements`.
//!
//! Contract: each element is declared once, in its own file under this module, as an
//! [`Element`] (name, one-line doc, source, [`Param`](super::params::Param) keys and a `build`
//! into the simulator's [`ElementSpec`]) listed in [`ALL`]; `cclab list elements --params` and
//! the README's element table print [`ALL`]. An `[[elements]]` entry names the `node` it sits
//! on (any node of the preset, e.g. the dumbbell's `right` router) and its `kind`; the other
//! keys are the kind's parameters, checked by `params::resolve_component` like a controller's.
//! Elements on one node run in file order. Adding an element is one file here and one line in
//! [`ALL`] (plus the element itself in `cclab_sim::net`).

mod ack_aggregate;
mod ack_thin;
mod delay;
mod duplicate;
mod jitter;
mod loss;
mod pass;
mod reroute;

use std::ops::Range;

use cclab_sim::net::ElementSpec;
use cclab_sim::{ElementConfig, NodeId, SimConfig};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use super::ScenarioError;
use super::error::{Source, unknown_choice};
use super::params::{self, Component, Given, RawValue};

/// An element a scenario can name, with its parameters; `build` makes its [`ElementSpec`].
pub type Element = Component<ElementSpec>;

/// Every network element, in the order `cclab list elements` prints them.
pub const ALL: &[&Element] = &[
    &pass::PASS,
    &delay::DELAY,
    &jitter::JITTER,
    &loss::LOSS,
    &duplicate::DUPLICATE,
    &reroute::REROUTE,
    &ack_thin::ACK_THIN,
    &ack_aggregate::ACK_AGGREGATE,
];

/// One resolved `[[elements]]` entry: the node (by name) and what sits there.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedElement {
    /// Name of the node whose forwarding path it is on.
    pub node: String,
    /// The element.
    pub spec: ElementSpec,
}

/// One `[[elements]]` table as written: `node`, `kind` and the kind's keys.
#[derive(Debug)]
struct RawElement {
    node: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
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
                    params: Vec::new(),
                };
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "node" => &mut e.node,
                        "kind" => &mut e.kind,
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
/// `cfg` (the scenario's network without elements).
///
/// # Errors
/// A missing `node` or `kind`, an unknown kind (with the valid ones), a key the kind does not
/// take, a value outside its declaration, or a node the preset does not have (with its nodes).
pub(crate) fn resolve(
    src: &Source<'_>,
    cfg: &SimConfig,
) -> Result<Vec<PlacedElement>, ScenarioError> {
    let raw: ElementsOnly = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    let mut out = Vec::with_capacity(raw.elements.len());
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
        let spec =
            params::resolve_component(src, &field, "element", Some("kind"), ALL, kind, &e.params)?;
        if !cfg.nodes.iter().any(|n| n.name == *node.get_ref()) {
            let names: Vec<&str> = cfg.nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(src.error(
                Some(node.span()),
                format!("{field}.node"),
                unknown_choice("node", node.get_ref(), &names),
            ));
        }
        out.push(PlacedElement {
            node: node.get_ref().clone(),
            spec,
        });
    }
    Ok(out)
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
        cfg.elements.push(ElementConfig {
            node: NodeId(u32::try_from(at).expect("fewer than 2^32 nodes")),
            spec: e.spec.clone(),
        });
    }
}
