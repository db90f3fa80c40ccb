//! Routing: the source route of every flow and probe, both directions, and of every UDP
//! source, computed once before the run.
//!
//! Contract: [`compute_paths`] gives each route the links a packet crosses, fewest hops first
//! (ties to the lower link index), leaving out links that take no time (a Wi-Fi hop takes the
//! MAC's); it fails with [`ConfigError::NoRoute`] when a destination cannot be reached and
//! rejects a round trip that takes no time at all.

use std::collections::{BTreeMap, VecDeque};

use cclab_cc::Dur;

use crate::config::{ConfigError, NodeId, SimConfig};

use super::id32;

/// Fewest-hop routes between nodes: a path found by breadth-first search over outgoing links
/// in index order (so ties go to the lower link index), with links that have neither rate nor
/// delay (nor a nonzero delay change) left out, except the hops of a Wi-Fi BSS. A node with a
/// single outgoing link (a host on an access link) is walked through directly, and search trees
/// are cached per starting node, so a dumbbell with thousands of hosts needs two searches, not
/// one per flow. The simulator routes every flow and probe with it; the emulator routes real
/// packets between the hosts of a scenario with it, so both take the same links.
#[derive(Debug)]
pub struct Router<'a> {
    cfg: &'a SimConfig,
    /// Outgoing links of each node, in index order.
    out_links: Vec<Vec<u32>>,
    /// Wi-Fi hops take the MAC's time, though their links have neither rate nor delay.
    wifi_hop: Vec<bool>,
    /// BFS tree per starting node: the link that first reached each node (`u32::MAX`:
    /// unreached).
    trees: BTreeMap<usize, Vec<u32>>,
}

impl<'a> Router<'a> {
    /// The router of `cfg`'s nodes and links.
    #[must_use]
    pub fn new(cfg: &'a SimConfig) -> Self {
        let mut out_links: Vec<Vec<u32>> = vec![Vec::new(); cfg.nodes.len()];
        let mut wifi_hop = vec![false; cfg.links.len()];
        for s in cfg.wifi.iter().flat_map(|w| &w.stations) {
            for l in [s.uplink, s.downlink] {
                if let Some(h) = wifi_hop.get_mut(l.0 as usize) {
                    *h = true;
                }
            }
        }
        for (i, l) in cfg.links.iter().enumerate() {
            out_links[l.from.0 as usize].push(id32(i));
        }
        Router {
            cfg,
            out_links,
            wifi_hop,
            trees: BTreeMap::new(),
        }
    }

    /// BFS tree from `root`.
    fn bfs(&self, root: usize) -> Vec<u32> {
        let n = self.cfg.nodes.len();
        let mut via = vec![u32::MAX; n];
        let mut seen = vec![false; n];
        let mut queue = VecDeque::from([root]);
        seen[root] = true;
        while let Some(u) = queue.pop_front() {
            for &li in &self.out_links[u] {
                let v = self.cfg.links[li as usize].to.0 as usize;
                if !seen[v] {
                    seen[v] = true;
                    via[v] = li;
                    queue.push_back(v);
                }
            }
        }
        via
    }

    /// The links (indices into `cfg.links`) a packet from `from` to `to` crosses, in order;
    /// [`ConfigError::NoRoute`] naming `what` if `to` cannot be reached.
    ///
    /// # Errors
    /// [`ConfigError::NoRoute`] when there is no way from `from` to `to`.
    pub fn path(
        &mut self,
        from: NodeId,
        to: NodeId,
        what: &str,
    ) -> Result<Box<[u32]>, ConfigError> {
        let cfg = self.cfg;
        let n = cfg.nodes.len();
        let no_route = || ConfigError::NoRoute {
            what: what.to_owned(),
            from: cfg.nodes[from.0 as usize].name.clone(),
            to: cfg.nodes[to.0 as usize].name.clone(),
        };
        let to = to.0 as usize;
        let mut links = Vec::new();
        let mut cur = from.0 as usize;
        // Forced moves first: a node with one way out has no choice to make.
        while cur != to && self.out_links[cur].len() == 1 && links.len() <= n {
            let li = self.out_links[cur][0];
            links.push(li);
            cur = cfg.links[li as usize].to.0 as usize;
        }
        if cur != to {
            if !self.trees.contains_key(&cur) {
                let tree = self.bfs(cur);
                self.trees.insert(cur, tree);
            }
            let via = &self.trees[&cur];
            if via[to] == u32::MAX {
                return Err(no_route());
            }
            let start = links.len();
            let mut v = to;
            while v != cur {
                let li = via[v];
                links.push(li);
                v = cfg.links[li as usize].from.0 as usize;
            }
            links[start..].reverse();
        }
        links.retain(|&li| {
            let l = &cfg.links[li as usize];
            l.rate_bps.is_some()
                || self.wifi_hop[li as usize]
                || l.delay != Dur::ZERO
                || l.delay_changes.iter().any(|&(_, d)| d != Dur::ZERO)
        });
        Ok(links.into_boxed_slice())
    }
}

/// Source routes of every flow and probe, both directions (see `Simulation::paths`), and of
/// every UDP source, by [`Router::path`].
pub(super) fn compute_paths(cfg: &SimConfig) -> Result<Vec<Box<[u32]>>, ConfigError> {
    let mut router = Router::new(cfg);
    let mut path = |from: NodeId, to: NodeId, what: &str| router.path(from, to, what);
    let mut paths = Vec::with_capacity(2 * (cfg.flows.len() + cfg.probes.len()));
    // A round trip without any rate or delay would take no time at all: packets would bounce
    // between the hosts within one instant, forever.
    let instant = |what: String| ConfigError::Invalid {
        what,
        problem: "the round trip crosses no link with a rate or a delay".into(),
    };
    for f in &cfg.flows {
        let what = format!("flow `{}`", f.name);
        let (fwd, rev) = (path(f.src, f.dst, &what)?, path(f.dst, f.src, &what)?);
        if fwd.is_empty() && rev.is_empty() {
            return Err(instant(what));
        }
        paths.push(fwd);
        paths.push(rev);
    }
    for p in &cfg.probes {
        let what = format!("probe `{}`", p.name);
        let (fwd, rev) = (path(p.src, p.dst, &what)?, path(p.dst, p.src, &what)?);
        if fwd.is_empty() && rev.is_empty() {
            return Err(instant(what));
        }
        paths.push(fwd);
        paths.push(rev);
    }
    // UDP sources send one way only; a route that takes no time hands its datagrams to the
    // receiver at once, which sends nothing back.
    for u in &cfg.udp {
        paths.push(path(u.src, u.dst, &format!("udp source `{}`", u.name))?);
    }
    Ok(paths)
}

#[cfg(test)]
mod route_tests {
    use super::*;
    use crate::config::{
        FlowConfig, LinkConfig, LossConfig, NodeConfig, NodeKind, QueueConfig, QueueLimit,
    };
    use cclab_cc::CcSpec;

    fn link(from: u32, to: u32, delay_ms: u64) -> LinkConfig {
        LinkConfig {
            name: format!("{from}->{to}"),
            from: NodeId(from),
            to: NodeId(to),
            rate_bps: Some(10_000_000),
            rate_shape: None,
            delay: Dur::from_millis(delay_ms),
            queue: QueueConfig::DropTail {
                limit: QueueLimit::Packets(100),
            },
            delay_changes: Vec::new(),
            jitter: None,
            loss: LossConfig::None,
            monitor: false,
        }
    }

    /// Routes take the fewest hops (not the least delay), links with neither rate nor delay are
    /// left out of the route, and a missing way back is an error.
    #[test]
    fn routes_are_fewest_hops() {
        let node = |name: &str, kind| NodeConfig {
            name: name.into(),
            kind,
            host: crate::config::HostConfig::default(),
        };
        let nodes = vec![
            node("a", NodeKind::Host),
            node("r1", NodeKind::Router),
            node("r2", NodeKind::Router),
            node("r3", NodeKind::Router),
            node("b", NodeKind::Host),
        ];
        let mut links = vec![
            link(0, 1, 1), // 0: a → r1
            link(1, 3, 9), // 1: r1 → r3 (slow but direct)
            link(1, 2, 1), // 2: r1 → r2
            link(2, 3, 1), // 3: r2 → r3
            link(3, 4, 1), // 4: r3 → b
            link(4, 3, 1), // 5: b → r3
            link(3, 2, 1), // 6: r3 → r2
            link(3, 1, 1), // 7: r3 → r1
            link(2, 1, 1), // 8: r2 → r1
            link(1, 0, 0), // 9: r1 → a
        ];
        links[9].rate_bps = None; // instant: left out of routes
        let mut cfg = SimConfig {
            seed: 1,
            duration: Dur::from_secs(1),
            sample_interval: Dur::from_millis(200),
            nodes,
            links,
            flows: vec![FlowConfig::bulk(
                "f",
                NodeId(0),
                NodeId(4),
                CcSpec::default_for("reno").unwrap(),
            )],
            probes: Vec::new(),
            udp: Vec::new(),
            elements: Vec::new(),
            wifi: Vec::new(),
        };
        let paths = compute_paths(&cfg).unwrap();
        assert_eq!(&*paths[0], &[0, 1, 4], "fewest hops: a→r1→r3→b");
        assert_eq!(
            &*paths[1],
            &[5, 7],
            "b→r3→r1 (→a instant); r3→r1 is one hop"
        );
        let mut instant = cfg.clone();
        for l in &mut instant.links {
            l.rate_bps = None;
            l.delay = Dur::ZERO;
        }
        assert!(
            matches!(compute_paths(&instant), Err(ConfigError::Invalid { .. })),
            "a round trip that takes no time is rejected"
        );
        cfg.links.truncate(9); // no way back to a
        match compute_paths(&cfg) {
            Err(ConfigError::NoRoute { from, to, .. }) => {
                assert_eq!((from.as_str(), to.as_str()), ("b", "a"))
            }
            other => panic!("expected NoRoute, got {other:?}"),
        }
    }
}
