//! Queue disciplines on packets that are not the simulator's: anything that implements
//! `NetPacket` (wire size, ECN, DSCP, flow key), as an emulator's IP packets would.

#![warn(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use cclab_cc::Time;
use cclab_sim::net::{FlowKey, NetPacket, PROTO_TCP, PROTO_UDP};
use cclab_sim::packet::Ecn;
use cclab_sim::queue::{Budget, DualPi2, DualPi2Params, FqCodel, FqCodelParams, Qdisc, Tally};

/// A bare IP packet: a length, the ECN and DSCP bits, and its 5-tuple.
#[derive(Clone, Copy, Debug, PartialEq)]
struct IpPacket {
    len: u32,
    ecn: Ecn,
    dscp: u8,
    src: u128,
    sport: u16,
    proto: u8,
    id: u32,
}

impl NetPacket for IpPacket {
    fn wire_bytes(&self) -> u32 {
        self.len
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn;
    }
    fn dscp(&self) -> u8 {
        self.dscp
    }
    fn flow_key(&self) -> FlowKey {
        FlowKey::from_tuple(self.src, 0xc0a8_0001, self.sport, 443, self.proto)
    }
}

fn ip(src: u128, sport: u16, proto: u8, id: u32) -> IpPacket {
    IpPacket {
        len: 1200,
        ecn: Ecn::NotEct,
        dscp: 0,
        src,
        sport,
        proto,
        id,
    }
}

/// FQ-CoDel separates flows by their 5-tuple: a bulk of 20 packets of one TCP connection
/// queued before 2 packets of a UDP flow (same addresses and ports) does not delay the UDP
/// packets behind it: they leave right after the first TCP quantum (DRR, 1514-byte quantum:
/// two 1200-byte packets), as a new flow.
#[test]
fn fq_codel_classifies_by_five_tuple() {
    let mut q: FqCodel<IpPacket> = FqCodel::new(&FqCodelParams::default(), 7);
    let mut rng = cclab_sim::rng::stream(1, 2);
    let mut tally = Tally::default();
    for id in 0..20 {
        assert!(q.enqueue(Time::ZERO, ip(1, 5000, PROTO_TCP, id), &mut rng, &mut tally));
    }
    for id in 100..102 {
        assert!(q.enqueue(Time::ZERO, ip(1, 5000, PROTO_UDP, id), &mut rng, &mut tally));
    }
    let mut out = Vec::new();
    let all = Budget {
        frames: 22,
        ..Budget::ONE
    };
    assert_eq!(
        q.dequeue_batch(Time(1), all, &mut rng, &mut tally, &mut out),
        22
    );
    let ids: Vec<u32> = out.iter().map(|d| d.pkt.id).collect();
    let udp_at: Vec<usize> = (0..ids.len()).filter(|&i| ids[i] >= 100).collect();
    assert!(udp_at[1] <= 5, "UDP packets served at {udp_at:?}: {ids:?}");
    assert_eq!(tally.drops(), 0);
}

/// DualPI2 reads only the ECN field: ECT(1) goes to the L queue (class 1), Not-ECT to C.
#[test]
fn dualpi2_classifies_by_ecn_field() {
    let mut q: DualPi2<IpPacket> = DualPi2::new(&DualPi2Params::default());
    let mut rng = cclab_sim::rng::stream(1, 2);
    let mut tally = Tally::default();
    let mut l4s = ip(2, 6000, PROTO_TCP, 1);
    l4s.ecn = Ecn::Ect1;
    q.enqueue(Time::ZERO, ip(1, 5000, PROTO_TCP, 0), &mut rng, &mut tally);
    q.enqueue(Time::ZERO, l4s, &mut rng, &mut tally);
    assert_eq!((q.class_backlog(0), q.class_backlog(1)), (1, 1));
    let mut classes = Vec::new();
    while let Some(d) = q.dequeue(Time(1), &mut rng, &mut tally) {
        classes.push((d.pkt.id, d.class));
    }
    classes.sort_unstable();
    assert_eq!(classes, vec![(0, 0), (1, 1)]);
}
