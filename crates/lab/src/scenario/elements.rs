//! Network elements a scenario will be able to place on a link's path (a delay or loss model, a
//! duplicator, a policer, an ACK thinner): their declarations, listed by `cclab list elements`.
//!
//! Contract: each element is declared once, in its own file under this module, as a
//! declaration (name, one-line doc, source, [`Param`](super::params::Param) keys) listed in
//! [`ALL`]; `cclab list elements --params` and the README's element table print [`ALL`]. The
//! list is empty: the scenario key that places elements (`[[topology.elements]]`) and the
//! `build` of each declaration into the simulator's element configuration come with that
//! configuration in `cclab-sim`. Until then no scenario key reads this module, and the first
//! element turns [`ALL`] into a list of `Component`s that build it, resolved by
//! `params::resolve_component` like controllers and queue disciplines.

use super::params::Entry;

/// Every network element, in the order `cclab list elements` prints them (none yet).
pub const ALL: &[&Entry] = &[];
