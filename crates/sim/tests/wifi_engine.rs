//! Wi-Fi in whole runs: TCP over a BSS (engine `wifi.rs` with the MAC of `wifi/mac.rs`).

use cclab_cc::{CcSpec, Dur};
use cclab_sim::access::{Access, Direction};
use cclab_sim::wifi::mac::{MacConfig, StationConfig};
use cclab_sim::wifi::phy::{Band, Phy, Standard};
use cclab_sim::{FlowConfig, NodeId, QueueLimit, Results, Simulation};

fn he80() -> Phy {
    Phy::new(Standard::He, Band::Ghz5, 11, 2, 80, 800).expect("valid HE PHY")
}

fn hybrid(cc: &str, shift: u8, dir: Direction) -> Results {
    let mut a = Access::new(
        1_000_000_000,
        1_000_000_000,
        Dur::from_micros(500),
        QueueLimit::Packets(1000),
        QueueLimit::Packets(1000),
    );
    a.duration = Dur::from_secs(3);
    a.wifi = Some(MacConfig::new(vec![StationConfig::new(he80())]));
    a.client_host.pacing_shift = shift;
    a.server_host.pacing_shift = shift;
    let f = FlowConfig::bulk(
        "f",
        NodeId(0),
        NodeId(0),
        CcSpec::default_for(cc).expect("known"),
    );
    a.add_flow(f, 0, dir);
    Simulation::new(a.build().expect("builds"))
        .expect("valid")
        .run()
}

#[test]
fn explore() {
    for cc in ["cubic", "bbr3"] {
        for shift in [7u8, 8, 10] {
            let r = hybrid(cc, shift, Direction::Upload);
            let w = &r.wifi[0];
            eprintln!(
                "{cc} shift {shift}: goodput {:.1} Mbit/s, sta mean ampdu {:.1}, ap {:.1}, busy {:.3}, rtt p50 {:?}",
                r.flows[0].summary.goodput_bps / 1e6,
                w.nodes[1].mean_ampdu,
                w.nodes[0].mean_ampdu,
                w.busy_share,
                r.flows[0].summary.rtt_p50_ms
            );
        }
    }
}
