//! Engine tests that run whole simulations: the two FIFO modes agree, delay changes and
//! rate-limited applications behave as computed independently.

mod fifo_modes {
    use crate::config::{LossConfig, QueueLimit};
    use crate::engine::*;
    use crate::topology::Dumbbell;
    use cclab_cc::CcSpec;

    /// The analytic FIFO schedules at enqueue what the evented FIFO does at each transmission
    /// end; both must give the same run. Ties between an arrival and a transmission end at the
    /// same nanosecond may be ordered differently, so flows are compared on aggregates with a
    /// tolerance of 0.5 % (a tie changes at most a handful of packets' fates in 10 s).
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "a few megabytes delivered are exact in f64"
    )]
    fn analytic_and_evented_fifo_agree() {
        let mut d = Dumbbell::new(50_000_000, Dur::from_millis(10), QueueLimit::Packets(80));
        d.duration = Dur::from_secs(10);
        d.loss = LossConfig::Bernoulli { p: 0.002 };
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(3));
        d.add_flow(CcSpec::default_for("newreno").unwrap(), Dur::from_millis(7));
        d.add_ping(Dur::from_millis(100));
        let cfg = d.build();
        let a = Simulation::with_options(
            cfg.clone(),
            EngineOptions {
                analytic_fifo: true,
                ..EngineOptions::default()
            },
        )
        .unwrap()
        .run();
        let e = Simulation::with_options(
            cfg,
            EngineOptions {
                analytic_fifo: false,
                ..EngineOptions::default()
            },
        )
        .unwrap()
        .run();
        for (fa, fe) in a.flows.iter().zip(&e.flows) {
            let (ba, be) = (
                fa.summary.bytes_delivered as f64,
                fe.summary.bytes_delivered as f64,
            );
            assert!((ba / be - 1.0).abs() < 0.005, "{}: {ba} vs {be}", fa.name);
        }
        let (qa, qe) = (&a.queues[0].summary, &e.queues[0].summary);
        assert!((qa.delay_mean_ms.unwrap() / qe.delay_mean_ms.unwrap() - 1.0).abs() < 0.005);
        assert!((qa.throughput_bps / qe.throughput_bps - 1.0).abs() < 0.005);
        assert_eq!(a.probes[0].summary.answered, e.probes[0].summary.answered);
        // Exactness where no ties can occur: the series of the first second (one flow alone in
        // slow start before the second starts) are identical.
        assert_eq!(a.flows[0].series.cwnd[..3], e.flows[0].series.cwnd[..3]);
    }
}

mod change_tests {
    use crate::config::{ConfigError, QueueLimit};
    use crate::engine::*;
    use crate::topology::{BOTTLENECK, BOTTLENECK_REVERSE, Dumbbell};
    use cclab_cc::CcSpec;

    const MS: u64 = 1_000_000;

    /// A ping crosses the bottleneck (100 Mbit/s, 64-byte probes: 5120 ns of serialisation)
    /// and its reverse; with infinitely fast NICs and no other traffic nothing else adds
    /// delay, so each RTT is exact. The one-way delay steps 5 → 15 → 5 → 10 ms at 1, 2 and 3 s
    /// on both directions. The expected RTT of every probe is computed here independently:
    /// each direction gives a packet the delay in force when its serialisation ends, but not
    /// an arrival before the previous one (FIFO). Away from the changes RTT = 2·delay +
    /// 2·5120 ns; after the drop at 2 s, probes sent within 10 ms before it arrive right behind
    /// the last one that took the long way (clamped), which the test checks happened.
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "a serialisation time in nanoseconds is exact in f64"
    )]
    fn probe_rtt_follows_delay_changes_exactly() {
        let mut d = Dumbbell::new(100_000_000, Dur(5 * MS), QueueLimit::Packets(100));
        d.nic_rate_bps = None;
        d.duration = Dur::from_secs(4);
        let changes = vec![
            (Time(1_000 * MS), Dur(15 * MS)),
            (Time(2_000 * MS), Dur(5 * MS)),
            (Time(3_000 * MS), Dur(10 * MS)),
        ];
        d.bottleneck_delay_changes = changes.clone();
        d.add_ping(Dur(MS));
        let cfg = d.build();
        for l in [BOTTLENECK, BOTTLENECK_REVERSE] {
            assert_eq!(cfg.links[l.0 as usize].delay_changes, changes);
        }
        let r = Simulation::new(cfg).unwrap().run();
        let p = &r.probes[0];
        let ser = Dur::serialization(64, 100_000_000).0;
        assert_eq!(ser, 5120);
        let delay_at = |t: u64| {
            changes
                .iter()
                .rev()
                .find(|&&(c, _)| c.0 <= t)
                .map_or(5 * MS, |&(_, d)| d.0)
        };
        // Per direction: (transmitter free at, last arrival).
        let mut state = [(0u64, 0u64); 2];
        let mut cross = |dir: usize, t: u64| {
            let (free, last) = &mut state[dir];
            let end = t.max(*free) + ser;
            *free = end;
            *last = (end + delay_at(end)).max(*last);
            *last
        };
        assert!(p.rtt_ms.len() > 3_900, "{} answered", p.rtt_ms.len());
        let (mut clamped, mut plain) = (0, 0);
        for (k, (&t_s, &rtt)) in p.t_s.iter().zip(&p.rtt_ms).enumerate() {
            let sent = k as u64 * MS;
            assert_eq!(t_s, Time(sent).as_secs_f64());
            let there = cross(0, sent);
            let back = cross(1, there);
            let want = back - sent;
            assert_eq!(rtt, Dur(want).as_millis_f64(), "probe sent at {sent} ns");
            let d = delay_at(sent);
            if want == 2 * d + 2 * ser {
                plain += 1;
            } else {
                clamped += 1;
            }
        }
        // Exact RTTs in the steady parts: 10, 30, 10 and 20 ms (+ 10.24 µs).
        let at = |ms: usize| p.rtt_ms[ms];
        let ser_ms = 2.0 * ser as f64 * 1e-6;
        for (ms, base) in [(500, 10.0), (1_500, 30.0), (2_500, 10.0), (3_500, 20.0)] {
            assert!((at(ms) - base - ser_ms).abs() < 1e-9, "{ms} ms: {}", at(ms));
        }
        // Sent in the 15 ms before the changes at 1 s (rise: nothing to clamp, the delay is
        // the one at each end of serialisation) and 2 s (drop: clamped behind the packets
        // still on the long path).
        assert!(clamped >= 10, "{clamped} clamped, {plain} plain");
    }

    /// Both FIFO modes give the same run with delay changes (analytic mode looks ahead to the
    /// end of each serialisation): the tolerance of `analytic_and_evented_fifo_agree`.
    #[test]
    #[expect(
        clippy::cast_precision_loss,
        reason = "a few megabytes delivered are exact in f64"
    )]
    fn fifo_modes_agree_with_delay_changes() {
        let mut d = Dumbbell::new(50_000_000, Dur::from_millis(10), QueueLimit::Packets(80));
        d.duration = Dur::from_secs(10);
        d.bottleneck_delay_changes = vec![
            (Time::from_secs_f64(3.0), Dur::from_millis(2)),
            (Time::from_secs_f64(6.0), Dur::from_millis(20)),
        ];
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(3));
        d.add_flow(CcSpec::default_for("bbr3").unwrap(), Dur::from_millis(7));
        d.add_ping(Dur::from_millis(10));
        let cfg = d.build();
        let run = |analytic_fifo| {
            Simulation::with_options(
                cfg.clone(),
                EngineOptions {
                    analytic_fifo,
                    ..EngineOptions::default()
                },
            )
            .unwrap()
            .run()
        };
        let (a, e) = (run(true), run(false));
        for (fa, fe) in a.flows.iter().zip(&e.flows) {
            let (ba, be) = (
                fa.summary.bytes_delivered as f64,
                fe.summary.bytes_delivered as f64,
            );
            assert!((ba / be - 1.0).abs() < 0.005, "{}: {ba} vs {be}", fa.name);
        }
        let (pa, pe) = (&a.probes[0].summary, &e.probes[0].summary);
        assert_eq!(pa.answered, pe.answered);
        let (ma, me) = (pa.rtt_mean_ms.unwrap(), pe.rtt_mean_ms.unwrap());
        assert!((ma / me - 1.0).abs() < 0.005, "{ma} vs {me}");
    }

    /// Bad delay changes and application rates are configuration errors, not panics.
    #[test]
    fn bad_delay_changes_and_app_rates_are_rejected() {
        let mut d = Dumbbell::new(10_000_000, Dur::from_millis(10), QueueLimit::Packets(50));
        d.duration = Dur::from_secs(5);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        let s = Time::from_secs_f64;
        let ms = Dur::from_millis;
        for (changes, why) in [
            (
                vec![(s(2.0), ms(5)), (s(1.0), ms(6))],
                "strictly increasing",
            ),
            (
                vec![(s(1.0), ms(5)), (s(1.0), ms(6))],
                "strictly increasing",
            ),
            (vec![(s(6.0), ms(5))], "after the end"),
            (vec![(s(1.0), Dur::from_secs(11))], "exceeds the maximum"),
        ] {
            d.bottleneck_delay_changes = changes;
            match Simulation::new(d.build()) {
                Err(ConfigError::Invalid { problem, .. }) => {
                    assert!(problem.contains(why), "{problem}")
                }
                other => panic!("{why}: expected an error, got {:?}", other.map(|_| ())),
            }
        }
        d.bottleneck_delay_changes = vec![(Time::ZERO, ms(1)), (s(5.0), Dur::from_secs(10))];
        assert!(
            Simulation::new(d.build()).is_ok(),
            "the limits are inclusive"
        );
        d.flows[0].flow.app_rate_bps = Some(0);
        assert!(matches!(
            Simulation::new(d.build()),
            Err(ConfigError::Invalid { .. })
        ));
    }

    fn app_path(secs: u64) -> Dumbbell {
        let rtt = Dur::from_millis(20);
        let bdp = Dumbbell::bdp_bytes(100_000_000, rtt) / 1500;
        let mut d = Dumbbell::new(
            100_000_000,
            Dur::from_millis(10),
            QueueLimit::Packets(
                u32::try_from(bdp).expect("a 100 Mbit/s x 20 ms BDP is 166 packets"),
            ),
        );
        d.duration = Dur::from_secs(secs);
        d
    }

    /// Segments a 10 Mbit/s application has written by `t` s: ⌈(t·10⁹ + 1)·10⁷ / (1448·8·10⁹)⌉.
    fn written_10m(t_ns: u64) -> u64 {
        u64::try_from((u128::from(t_ns + 1) * 10_000_000).div_ceil(1448 * 8 * 1_000_000_000))
            .expect("the quotient is below t_ns + 1, a u64")
    }

    /// A 10 Mbit/s application on a 100 Mbit/s path: TCP delivers what it writes, so the
    /// goodput over 10 s is 10 Mbit/s less the last RTT's worth in flight (≈ 0.2 %), within
    /// 1 %, whatever the controller. Nothing is lost (the application never fills the buffer).
    #[test]
    fn rate_limited_application_delivers_its_rate() {
        for cc in ["cubic", "bbr3", "bbr1"] {
            let mut d = app_path(10);
            d.add_flow(CcSpec::default_for(cc).unwrap(), Dur::ZERO)
                .app_rate_bps = Some(10_000_000);
            let r = Simulation::new(d.build()).unwrap().run();
            let s = &r.flows[0].summary;
            assert!(
                (s.goodput_bps / 10e6 - 1.0).abs() < 0.01,
                "{cc}: {} bit/s",
                s.goodput_bps
            );
            let written = written_10m(10_000 * MS);
            assert!(s.segments_sent <= written, "{cc}: sent {}", s.segments_sent);
            assert!(s.bytes_delivered >= (written - 40) * 1448, "{cc}");
            assert_eq!(s.retransmits, 0, "{cc}");
            // Every 200 ms sample after the first second carries 10 Mbit/s ± 2 segments, except
            // that BBRv3's ProbeRTT (cwnd = BDP/2 for 200 ms, every 5 s) holds data back, which
            // leaves in the next sample: that pair averages 10 Mbit/s.
            let (g, state) = (&r.flows[0].series.goodput_bps, &r.flows[0].series.state);
            let tol = 2.0 * 1448.0 * 8.0 / 0.2;
            let mut i = 5;
            while i < g.len() {
                let (v, n) = if state[i] == "ProbeRTT" && i + 1 < g.len() {
                    ((g[i] + g[i + 1]) / 2.0, 2)
                } else {
                    (g[i], 1)
                };
                assert!((v - 10e6).abs() <= tol, "{cc} sample {i}: {v}");
                i += n;
            }
        }
    }

    /// `app_rate_bps` combines with `size` (the transfer ends when `size` bytes are written
    /// and delivered) and with `stop` (what was written by then is delivered, nothing after).
    #[test]
    fn rate_limited_application_with_size_and_stop() {
        let mut d = app_path(10);
        let f = d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::ZERO);
        f.app_rate_bps = Some(10_000_000);
        f.size = Some(1_000_000);
        let f = d.add_flow(CcSpec::default_for("bbr3").unwrap(), Dur::ZERO);
        f.app_rate_bps = Some(10_000_000);
        f.start = Time::from_secs_f64(1.0);
        f.stop = Some(Time::from_secs_f64(6.0));
        let r = Simulation::new(d.build()).unwrap().run();
        // 1 MB = 691 segments; the last is written at 690·1448·8/10⁷ s = 0.7993 s and arrives
        // one way (10 ms + serialisations) later.
        let s = &r.flows[0].summary;
        assert_eq!(s.bytes_delivered, 1_000_000);
        let fct = s.fct_s.unwrap();
        assert!((0.809..0.812).contains(&fct), "fct {fct}");
        // Stopped after 5 s of writing: exactly what was written by then.
        let s = &r.flows[1].summary;
        assert_eq!(s.bytes_delivered, written_10m(5_000 * MS) * 1448);
        assert_eq!(s.segments_sent, written_10m(5_000 * MS));
    }
}

mod trace_bound {
    use crate::config::QueueLimit;
    use crate::engine::*;
    use crate::results::TracePoint;
    use crate::topology::Dumbbell;
    use cclab_cc::CcSpec;

    /// Two traced flows for 2 s; flow 1 untraced.
    fn traced() -> SimConfig {
        let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
        d.duration = Dur::from_secs(2);
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2))
            .trace = true;
        d.add_flow(CcSpec::default_for("cubic").unwrap(), Dur::from_millis(2));
        d.build()
    }

    /// A traced flow keeps its first rows up to its limit and counts the others; everything
    /// else about the run is unchanged (before the bound, the trace grew without limit: 5 GB
    /// after 16 s of a 1 Gbit/s flow).
    #[test]
    fn a_trace_keeps_its_first_rows_up_to_its_limit() {
        let full = Simulation::new(traced()).unwrap().run();
        let rows = full.flows[0].trace.len();
        assert!(rows > 500, "{rows}");
        assert_eq!(full.engine.trace_rows_dropped, 0);
        let mut sim = Simulation::new(traced()).unwrap();
        sim.flows[0].sender.set_trace_limit(300);
        let cut = sim.run();
        assert_eq!(cut.flows[0].trace[..], full.flows[0].trace[..300]);
        assert_eq!(cut.engine.trace_rows_dropped, (rows - 300) as u64);
        assert_eq!(cut.flows[1], full.flows[1]);
        assert_eq!(cut.flows[0].summary, full.flows[0].summary);
    }

    /// A run's traced flows share [`MAX_TRACE_ROWS`], and the bound holds a trace in well under
    /// a gigabyte.
    #[test]
    fn traced_flows_share_the_run_bound() {
        let mut cfg = traced();
        cfg.flows[1].trace = true;
        let sim = Simulation::new(cfg).unwrap();
        assert!(
            sim.flows
                .iter()
                .all(|f| f.sender.trace_limit() == Some(MAX_TRACE_ROWS / 2))
        );
        assert!(MAX_TRACE_ROWS * std::mem::size_of::<TracePoint>() < 1 << 30);
    }
}
