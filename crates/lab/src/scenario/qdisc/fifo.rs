//! The drop-tail FIFO: no parameters of its own (the topology's `buffer` sizes it), so it
//! builds no [`AqmConfig`](cclab_sim::AqmConfig) and the bottleneck keeps its analytic FIFO.

use super::{Component, FIFO, Qdisc};

/// The drop-tail FIFO.
pub(super) const DROP_TAIL: Qdisc = Qdisc {
    decl: Component {
        name: FIFO,
        doc: "drop-tail FIFO sized by the topology's `buffer` (the default)",
        source: "Linux pfifo/bfifo",
        params: &[],
        build: |_| Ok(None),
    },
    describe: |_| Vec::new(),
};
