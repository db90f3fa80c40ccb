//! Print the sampled series of a small scenario (debugging aid): `cargo run --release -p cclab-sim --example trace`.
use cclab_cc::{CcSpec, Dur};
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flows: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let buf: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(333);
    let cc = args.get(3).cloned().unwrap_or_else(|| "cubic".into());
    let rate: u64 = std::env::var("RATE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000_000);
    let mut d = Dumbbell::new(rate, Dur::from_millis(20), QueueLimit::Packets(buf));
    d.duration = Dur::from_secs(args.get(4).and_then(|s| s.parse().ok()).unwrap_or(30));
    let spec = match cc.as_str() {
        "cubic++" => CcSpec::Cubic {
            slow_start: cclab_cc::SlowStartKind::HyStartPlusPlus,
            fast_convergence: true,
            tcp_friendliness: true,
        },
        "cubic-nofc" => CcSpec::Cubic {
            slow_start: cclab_cc::SlowStartKind::HyStart,
            fast_convergence: false,
            tcp_friendliness: true,
        },
        "cubic-std" => CcSpec::Cubic {
            slow_start: cclab_cc::SlowStartKind::Standard,
            fast_convergence: true,
            tcp_friendliness: true,
        },
        other => CcSpec::default_for(other).unwrap(),
    };
    for i in 0..flows {
        d.add_flow(spec.clone(), Dur::ZERO).start = cclab_cc::Time(
            i as u64
                * std::env::var("OFF")
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(500_000_000u64),
        );
    }
    let r = Simulation::new(d.build()).unwrap().run();
    let q = &r.queues[0];
    for i in 0..q.series.t_s.len() {
        print!(
            "{:6.1} q={:4} ",
            q.series.t_s[i], q.series.backlog_packets[i]
        );
        for f in &r.flows {
            let s = &f.series;
            print!(
                "| {:6.1}M cw={:5} ss={:>5} rtt={:5.1} L={:3} {:10} ",
                s.goodput_bps[i] / 1e6,
                s.cwnd[i],
                s.ssthresh[i].map_or("-".into(), |x| x.to_string()),
                s.srtt_ms[i].unwrap_or(0.0),
                s.losses[i],
                s.state[i]
            );
        }
        println!();
    }
    for f in &r.flows {
        println!("{:?}", f.summary);
    }
    println!("{:?}", q.summary);
    println!("{:?}", r.engine);
}
