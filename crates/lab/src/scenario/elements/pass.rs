//! `pass`: an element that hands every packet on at once (a placeholder; it changes nothing).

use cclab_sim::net::ElementSpec;

use super::Element;

/// Pass-through.
pub(super) const PASS: Element = Element {
    name: "pass",
    doc: "hands every packet on at once (changes nothing)",
    source: "neqo test-fixture sim node pattern",
    params: &[],
    build: |_| Ok(ElementSpec::Pass),
};
