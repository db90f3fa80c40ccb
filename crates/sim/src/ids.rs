//! Indices that name the entities of a run: nodes, links, flows, probes and UDP sources, each an index into
//! its list in [`crate::SimConfig`].
//!
//! Contract: plain `Copy` newtypes with no behaviour; every module that names an entity uses
//! these (packets, queue disciplines, elements, the engine), and none of them needs the rest
//! of the configuration for it.

/// Index of a node in [`crate::SimConfig::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);
/// Index of a link in [`crate::SimConfig::links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);
/// Index of a flow in [`crate::SimConfig::flows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);
/// Index of a probe in [`crate::SimConfig::probes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeId(pub u32);
/// Index of a UDP source in [`crate::SimConfig::udp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UdpId(pub u32);
