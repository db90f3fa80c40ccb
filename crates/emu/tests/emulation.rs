//! The emulator on real packets: a ping returns at twice the one-way delay, a rate-limited
//! link passes its rate, a loss element loses its share, and the hosts' namespaces are gone
//! after the run.
//!
//! These tests need root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and /dev/net/tun; without them
//! each test says why it is skipped and passes. They run one at a time (a lock), since they
//! measure real time on a shared machine.

use std::sync::Mutex;

use cclab_cc::{CcSpec, Dur};
use cclab_emu::{EmuOptions, EmuRun, emulate};
use cclab_sim::net::LossConfig;
use cclab_sim::topology::Dumbbell;
use cclab_sim::{QueueLimit, SimConfig};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Whether this machine can emulate; prints why not.
fn can_emulate(test: &str) -> bool {
    match cclab_emu::ns::check_privileges() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped {test}: {e}");
            false
        }
    }
}

fn run(cfg: &SimConfig) -> EmuRun {
    emulate(cfg, &EmuOptions::default()).expect("the emulation runs")
}

/// Every reply of a ping across a path of one-way delay d takes at least 2d plus the
/// serialisations (the forwarder never releases a packet early), and the median exceeds it by
/// no more than twice the forwarder's p99 lateness plus 0.5 ms for the kernels' ICMP and TUN
/// paths and the forwarder's wake-up on reading (measured here: about 0.1 ms).
#[test]
fn a_ping_returns_at_twice_the_delay() {
    if !can_emulate("a_ping_returns_at_twice_the_delay") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(20), QueueLimit::Packets(100));
    d.add_ping(Dur::from_millis(50));
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(3);
    let r = run(&cfg);
    let p = &r.results.probes[0];
    assert!(p.summary.answered >= 40, "answered {}", p.summary.answered);
    // 64-byte ICMP payload + 8 + 20 = 92 bytes each way at 20 Mbit/s.
    let floor = 40.0 + 2.0 * 92.0 * 8.0 / 20e6 * 1e3;
    let min = p.rtt_ms.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        min >= floor - 0.01,
        "a reply came back early: {min} ms < {floor} ms"
    );
    let p50 = p.summary.rtt_p50_ms.unwrap();
    let allowance = 2.0 * r.report.lateness_ms[1] + 0.5;
    assert!(
        p50 - floor <= allowance,
        "median {p50:.3} ms, floor {floor:.3} ms, allowance {allowance:.3} ms"
    );
}

/// A kernel CUBIC flow through a 20 Mbit/s bottleneck: while the queue is backlogged the link
/// sends at 20 Mbit/s within 2 %, and the receiver gets 20 Mbit/s × 1448/1500 (payload of a
/// full segment with TCP timestamps over its IP packet) within 2 %.
#[test]
fn a_rate_limited_link_passes_its_rate() {
    if !can_emulate("a_rate_limited_link_passes_its_rate") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(5), QueueLimit::Packets(200));
    d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(6);
    cfg.sample_interval = Dur::from_millis(100);
    let r = run(&cfg);
    let q = &r.results.queues[0];
    let s = &q.series;
    let busy: Vec<f64> = (1..s.t_s.len())
        .filter(|&i| s.t_s[i] > 2.0 && s.backlog_packets[i] > 0 && s.backlog_packets[i - 1] > 0)
        .map(|i| s.throughput_bps[i])
        .collect();
    assert!(
        busy.len() >= 20,
        "the queue was backlogged in {} samples",
        busy.len()
    );
    let link = busy.iter().sum::<f64>() / busy.len() as f64;
    assert!(
        (link / 20e6 - 1.0).abs() < 0.02,
        "link throughput {:.3} Mbit/s",
        link / 1e6
    );
    let f = &r.results.flows[0].series;
    let late: Vec<f64> = (0..f.t_s.len())
        .filter(|&i| f.t_s[i] > 2.0)
        .map(|i| f.goodput_bps[i])
        .collect();
    let goodput = late.iter().sum::<f64>() / late.len() as f64;
    let expect = 20e6 * 1448.0 / 1500.0;
    assert!(
        (goodput / expect - 1.0).abs() < 0.02,
        "goodput {:.3} Mbit/s, expected {:.3}",
        goodput / 1e6,
        expect / 1e6
    );
}

/// Pings across a link that loses 10 % (Bernoulli) of what it sends: the share left
/// unanswered is 0.10 ± 0.03 (about 1,200 pings: the standard deviation is 0.009, so the
/// bound is over 3 σ), and it is exactly what the link's loss model counted (give or take
/// the pings still in flight at the end).
#[test]
fn a_loss_link_loses_its_share() {
    if !can_emulate("a_loss_link_loses_its_share") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(1), QueueLimit::Packets(100));
    d.loss = LossConfig::Bernoulli { p: 0.1 };
    d.add_ping(Dur::from_millis(4));
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(5);
    let r = run(&cfg);
    let p = &r.results.probes[0];
    assert!(p.sent >= 1000, "sent {}", p.sent);
    let lost = p.sent - p.summary.answered;
    #[expect(clippy::cast_precision_loss, reason = "small counts")]
    let share = lost as f64 / p.sent as f64;
    assert!(
        (share - 0.1).abs() < 0.03,
        "lost {lost} of {} ({share:.3})",
        p.sent
    );
    let counted = r.results.queues[0].summary.link_losses;
    assert!(
        counted.abs_diff(lost) <= 2,
        "the loss model counted {counted}, the pings missed {lost}"
    );
}

/// Inodes of the network namespaces some task of this machine is in.
fn namespaces_in_use() -> std::collections::BTreeSet<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::BTreeSet::new();
    for p in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        for t in std::fs::read_dir(p.path().join("task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(m) = std::fs::metadata(t.path().join("ns/net")) {
                out.insert(m.ino());
            }
        }
    }
    out
}

/// The hosts' namespaces exist during the run and no task is in any of them afterwards.
#[test]
fn the_namespaces_are_gone_after_the_run() {
    if !can_emulate("the_namespaces_are_gone_after_the_run") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = namespaces_in_use();
    let mut d = Dumbbell::new(10_000_000, Dur::from_millis(5), QueueLimit::Packets(100));
    d.add_ping(Dur::from_millis(100));
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(1);
    let r = run(&cfg);
    let ours: Vec<u64> = r.report.hosts.iter().map(|h| h.netns_inode).collect();
    assert_eq!(ours.len(), 2);
    assert!(ours.iter().all(|i| !before.contains(i)), "fresh namespaces");
    let after = namespaces_in_use();
    assert!(
        ours.iter().all(|i| !after.contains(i)),
        "a task is still in a host's namespace"
    );
}

/// Busy-poll mode forwards as the sleeping mode does: the pings come back at twice the delay
/// (the same bounds as above), and the report says the forwarder spun.
#[test]
fn busy_poll_forwards_the_same_way() {
    if !can_emulate("busy_poll_forwards_the_same_way") {
        return;
    }
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.add_ping(Dur::from_millis(50));
    let mut cfg = d.build();
    cfg.duration = Dur::from_secs(2);
    let opts = EmuOptions {
        wait: cclab_emu::forward::Wait::BusyPoll,
        ..EmuOptions::default()
    };
    let r = emulate(&cfg, &opts).expect("the emulation runs");
    assert!(r.report.busy_poll);
    // Spinning keeps the forwarder's core busy.
    assert!(
        r.report.forwarder_cpu_share > 0.5,
        "CPU share {}",
        r.report.forwarder_cpu_share
    );
    let p = &r.results.probes[0];
    assert!(p.summary.answered >= 25, "answered {}", p.summary.answered);
    let floor = 20.0 + 2.0 * 92.0 * 8.0 / 20e6 * 1e3;
    let min = p.rtt_ms.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        min >= floor - 0.01,
        "a reply came back early: {min} ms < {floor} ms"
    );
    let p50 = p.summary.rtt_p50_ms.unwrap();
    assert!(
        p50 - floor <= 2.0 * r.report.lateness_ms[1] + 0.5,
        "median {p50:.3} ms, floor {floor:.3} ms"
    );
}
