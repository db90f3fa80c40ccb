//! Middleboxes: elements on a node's forwarding path.
//!
//! Contract: [`Simulation::add_element`] puts an element ([`AnyElement`]) on a node, behind
//! the ones already there. A packet that arrives at the node over a link of its route (not one
//! the node itself sends) goes through the node's elements in order before it takes the next
//! link of its route (or is consumed, at its destination host). An element may hand a packet
//! on at once, later (it asks for a wake-up, which the engine keeps as one `Event::Element`
//! addressed to the element, stale ones skipped), several times or never. The element sees the
//! packet at the time it reaches the node, also when the NIC hands a packet on without an
//! arrival event (cut-through), because nothing else can happen before that time. Nodes without
//! elements cost one predictable branch per hop. A chain is walked with an explicit stack, not
//! recursion, so a chain of any length runs in a fixed call depth.
//!
//! An element may have a [`Selector`] ([`Simulation::select_for`]): a packet it does not match
//! (by the neighbour it came from, its kind, its flow) goes straight to the next element of the
//! chain, as if the element were not there. Elements without one (all-matching) cost one
//! branch.

use cclab_cc::Time;

use super::{Event, Simulation, id32};
use crate::config::NodeId;
use crate::net::{AnyElement, Element, Output, Selector};
use crate::packet::Packet;

/// `Simulation::node_first` of a node without elements, and the end of a chain.
pub(super) const NO_ELEMENT: u32 = u32::MAX;

/// An element on a node and its place in the node's chain.
#[derive(Debug)]
pub(super) struct NodeElement {
    elem: AnyElement<Packet>,
    /// The next element of the node's chain.
    next: u32,
    /// The pending wake-up (events at other times are stale).
    wake: Option<Time>,
    /// Which packets it acts on (`None`: all).
    select: Option<Box<Selector>>,
    /// Transport data segments given to it and handed on by it.
    data_in: u64,
    data_out: u64,
}

/// Index of an element added with [`Simulation::add_element`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementId(pub u32);

impl Simulation {
    /// Put `elem` on `node`'s forwarding path, after the elements already there. Call before
    /// [`Simulation::run`].
    ///
    /// # Panics
    /// If `node` does not exist.
    pub fn add_element(&mut self, node: NodeId, elem: AnyElement<Packet>) -> ElementId {
        let id = id32(self.elements.len());
        self.elements.push(NodeElement {
            elem,
            next: NO_ELEMENT,
            wake: None,
            select: None,
            data_in: 0,
            data_out: 0,
        });
        let n = node.0 as usize;
        match self.node_last[n] {
            NO_ELEMENT => self.node_first[n] = id,
            last => self.elements[last as usize].next = id,
        }
        self.node_last[n] = id;
        self.has_elements = true;
        self.has_hooks = true;
        ElementId(id)
    }

    /// Let element `id` act only on the packets `select` matches (the others pass it by).
    pub fn select_for(&mut self, id: ElementId, select: Selector) {
        self.elements[id.0 as usize].select = (!select.is_all()).then(|| Box::new(select));
    }

    /// The element `id` (e.g. to read its counters after a run).
    #[must_use]
    pub fn element(&self, id: ElementId) -> &AnyElement<Packet> {
        &self.elements[id.0 as usize].elem
    }

    /// `pkt` reached the node at the end of link `hop - 1` of its route: into the node's first
    /// element, if it has one (true).
    #[inline(never)]
    pub(super) fn enter_node(&mut self, pkt: &Packet, hop: u32) -> bool {
        let l = self.paths[pkt.route as usize][hop as usize - 1];
        let node = self.cfg.links[l as usize].to.0 as usize;
        let first = self.node_first[node];
        if first == NO_ELEMENT {
            return false;
        }
        self.element_enter(first, Packet { hop, ..*pkt });
        true
    }

    /// `pkt` goes to element `id` of its node's chain, or past it (and the ones after it) while
    /// their selectors do not take it.
    fn element_enter(&mut self, id: u32, pkt: Packet) {
        match self.taker(id, &pkt) {
            NO_ELEMENT => self.forward_past_elements(&pkt, pkt.hop),
            id => self.element_run(id, Some(pkt)),
        }
    }

    /// The first element from `id` on along the chain whose selector takes `pkt`
    /// (`NO_ELEMENT`: none does).
    fn taker(&self, mut id: u32, pkt: &Packet) -> u32 {
        while id != NO_ELEMENT {
            let e = &self.elements[id as usize];
            match &e.select {
                Some(sel) if !sel.matches(pkt, self.came_from(pkt)) => id = e.next,
                _ => return id,
            }
        }
        NO_ELEMENT
    }

    /// The node at the near end of the link `pkt` arrived over (`pkt.hop - 1` of its route).
    fn came_from(&self, pkt: &Packet) -> NodeId {
        let l = self.paths[pkt.route as usize][pkt.hop as usize - 1];
        self.cfg.links[l as usize].from
    }

    /// Run element `id` at `now` with `pkt`, then for as long as it hands packets on; arm its
    /// wake-up. A packet it hands on goes through the rest of the chain before it is asked for
    /// the next (depth first, as calls would go), but the chain is walked with
    /// `Simulation::element_stack`, not recursion: the stack depth does not grow with the
    /// length of a chain. (Forwarding past the chain may reach another node's chain at once,
    /// a cut-through NIC; that nests one `element_run` per node, as many as a route has hops.)
    fn element_run(&mut self, id: u32, pkt: Option<Packet>) {
        let now = self.now;
        let base = self.element_stack.len();
        self.element_stack.push((id, pkt));
        while self.element_stack.len() > base {
            let top = self.element_stack.len() - 1;
            let (id, pkt) = {
                let frame = &mut self.element_stack[top];
                (frame.0, frame.1.take())
            };
            let e = &mut self.elements[id as usize];
            if let Some(p) = &pkt {
                e.data_in += u64::from(p.is_data());
            }
            match e.elem.process(now, pkt) {
                Output::Packet(p) => {
                    e.data_out += u64::from(p.is_data());
                    let next = e.next;
                    match self.taker(next, &p) {
                        NO_ELEMENT => self.forward_past_elements(&p, p.hop),
                        next => self.element_stack.push((next, Some(p))),
                    }
                }
                Output::Wake(t) => {
                    if e.wake.is_none_or(|w| t < w) {
                        e.wake = Some(t);
                        self.schedule(t, Event::Element(id));
                    }
                    self.element_stack.pop();
                }
                Output::Idle => {
                    self.element_stack.pop();
                }
            }
        }
    }

    /// Element `id`'s wake-up event.
    pub(super) fn element_wake(&mut self, id: u32) {
        let e = &mut self.elements[id as usize];
        if e.wake != Some(self.now) {
            return; // stale
        }
        e.wake = None;
        self.element_run(id, None);
    }

    /// Data segments elements dropped: given to them (or made by them) and neither handed on
    /// nor held.
    pub(super) fn elements_data_dropped(&self) -> u64 {
        self.elements
            .iter()
            .map(|e| e.data_in + e.elem.data_made() - e.data_out - e.elem.held_data() as u64)
            .sum()
    }

    /// Data segments held by elements.
    pub(super) fn elements_data_inside(&self) -> u64 {
        self.elements
            .iter()
            .map(|e| e.elem.held_data() as u64)
            .sum()
    }
}
