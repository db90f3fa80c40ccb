//! Undo of spurious window reductions end to end, on a dumbbell with the network elements
//! that cause them: a delay spike longer than the RTO (a spurious timeout, RFC 5682), jitter
//! that reorders (spurious fast retransmits, RFC 2883 §4 / Linux `tcp_try_undo_dsack`), and
//! random loss (real losses, which must not be undone).

use cclab_cc::{CcSpec, Dur};
use cclab_sim::net::delay_schedule::{DelaySchedule, Spike};
use cclab_sim::net::{ElementSpec, JitterDist, Selector};
use cclab_sim::results::{FlowResult, FlowSummary};
use cclab_sim::topology::{Dumbbell, LEFT, RIGHT};
use cclab_sim::{ElementConfig, FlowConfig, LossConfig, QueueLimit, Simulation, Time};

/// A 20 Mbit/s dumbbell with 10 ms bottleneck delay and 2 ms access delay (24 ms base RTT),
/// one flow of `cc` set up by `flow`, `secs` long, with `elements` on the right router.
fn run(
    cc: &str,
    secs: u64,
    flow: impl Fn(&mut FlowConfig),
    elements: Vec<ElementConfig>,
) -> FlowResult {
    let mut d = Dumbbell::new(20_000_000, Dur::from_millis(10), QueueLimit::Packets(100));
    d.duration = Dur::from_secs(secs);
    flow(d.add_flow(CcSpec::default_for(cc).unwrap(), Dur::from_millis(2)));
    let mut cfg = d.build();
    cfg.elements = elements;
    Simulation::new(cfg).unwrap().run().flows.remove(0)
}

/// Data segments arriving at the right router in [3 s, 3.01 s) are held 400 ms more; those
/// behind them wait in order (no overtaking), so the path stalls for 400 ms: far longer than
/// the RTO (200 ms minimum + SRTT, RFC 6298 §2.4 with Linux's `TCP_RTO_MIN`), and nothing is
/// lost.
fn spike() -> Vec<ElementConfig> {
    vec![ElementConfig {
        node: RIGHT,
        spec: ElementSpec::DelaySchedule {
            schedule: DelaySchedule {
                base: Dur::ZERO,
                steps: Vec::new(),
                spikes: vec![Spike {
                    start: Time::ZERO + Dur::from_secs(3),
                    width: Dur::from_millis(10),
                    height: Dur::from_millis(400),
                }],
                oscillation: None,
            },
            reorder: false,
        },
        select: Selector {
            from: Some(LEFT),
            ..Selector::default()
        },
    }]
}

/// A 10 Mbit/s application on the 20 Mbit/s path: no queue builds, so the spike is the only
/// event; `frto` as given.
fn spiked(frto: bool) -> FlowResult {
    run(
        "cubic",
        5,
        |f| {
            f.app_rate_bps = Some(10_000_000);
            f.frto = frto;
            f.trace = true;
        },
        spike(),
    )
}

/// RFC 5682 §3.1 (Linux `tcp_process_loss` with `tcp_frto` = 2): the delay spike makes the RTO
/// fire although nothing is lost; after it, the delayed originals are acknowledged, which
/// F-RTO takes as proof that the timeout was spurious (step 3.b) and undoes it
/// (`tcp_try_undo_loss(sk, true)`): cwnd returns to at least its value before the RTO (CUBIC's
/// `undo_cwnd`: max(cwnd, prior_cwnd)), one `TCPSpuriousRTOs` and one `TCPLossUndo` are
/// counted, and only the segment at SND.UNA was retransmitted (RFC 5682 §1: no go-back-N).
/// Without F-RTO the timeout retransmits the window: every retransmission then arrives as a
/// duplicate.
#[test]
fn frto_undoes_the_timeout_of_a_delay_spike() {
    let on = spiked(true);
    let s = &on.summary;
    println!("frto on: {s:?}");
    assert_eq!(s.rto_count, 1, "{s:?}");
    assert_eq!((s.spurious_rtos, s.loss_undos), (1, 1), "{s:?}");
    let i = on.trace.iter().position(|p| p.event == "rto").unwrap();
    let before = on.trace[..i]
        .iter()
        .rev()
        .find(|p| p.event == "ack")
        .unwrap();
    let undone = on.trace[i..]
        .iter()
        .find(|p| p.event == "ack" && p.ca_state == "open")
        .unwrap();
    println!("cwnd before {} after undo {}", before.cwnd, undone.cwnd);
    assert!(undone.cwnd >= before.cwnd, "{undone:?} after {before:?}");
    assert_eq!(undone.ssthresh, before.ssthresh);
    assert_eq!(s.retransmits, 1, "{s:?}");
    assert_eq!(s.spurious_retransmits, 1, "{s:?}");

    let off = spiked(false);
    let s = &off.summary;
    println!("frto off: {}", line(s));
    assert_eq!((s.rto_count, s.spurious_rtos), (1, 0));
    assert!(s.retransmits > 1, "{s:?}");
}

/// Jitter of up to 8 ms that lets packets overtake, against 0.6 ms between packets: original
/// transmissions arrive up to about 13 places late.
fn reordering() -> Vec<ElementConfig> {
    vec![ElementConfig {
        node: RIGHT,
        spec: ElementSpec::Jitter {
            dist: JitterDist::Uniform {
                base: Dur::ZERO,
                spread: Dur::from_millis(8),
            },
            correlation: 0.0,
            reorder: true,
        },
        select: Selector::default(),
    }]
}

/// The reordering makes RACK retransmit segments that were only late (with the static
/// reordering window of min_RTT/4 ≈ 6 ms, below the 8 ms of jitter); the receiver DSACKs the
/// second copies (RFC 2883 §4) and the sender undoes the episodes whose every retransmission
/// was DSACKed (`tcp_try_undo_dsack`) or that needed none (`tcp_try_undo_recovery`). An undo
/// ends one episode, so there are no more undos than episodes; with undo off there are none,
/// and the undone reductions leave the flow more of its window: more goodput.
#[test]
fn reordering_recoveries_are_undone_by_dsacks() {
    for cc in ["cubic", "newreno"] {
        let on = run(cc, 10, |f| f.rack_reo_adapt = false, reordering()).summary;
        let off = run(
            cc,
            10,
            |f| {
                f.undo = false;
                f.rack_reo_adapt = false;
            },
            reordering(),
        )
        .summary;
        println!("{cc} undo on: {}", line(&on));
        println!("{cc} undo off: {}", line(&off));
        assert!(on.dsack_undos > 0, "{on:?}");
        assert!(
            on.full_undos + on.partial_undos + on.dsack_undos <= on.fast_recoveries,
            "{on:?}"
        );
        assert_eq!(
            off.full_undos + off.partial_undos + off.dsack_undos + off.loss_undos,
            0
        );
        assert!(on.goodput_bps > off.goodput_bps, "{on:?} {off:?}");
    }
}

/// RFC 8985 §6.2 step 4 (Linux `tcp_rack_update_reo_wnd`): with the same reordering, the
/// window widens by min_RTT/4 per round trip with DSACKs, up to SRTT (≥ 24 ms, the base RTT),
/// so after a few round trips it exceeds the 8 ms of jitter and RACK stops marking late
/// segments lost; a static window of min_RTT/4 ≈ 6 ms keeps marking them. The adaptive
/// window leaves at most a few spurious retransmissions (those before it widened); the
/// static one many times more.
#[test]
fn rack_window_adapts_to_reordering() {
    for cc in ["cubic", "newreno"] {
        let adaptive = run(cc, 10, |_| {}, reordering()).summary;
        let fixed = run(cc, 10, |f| f.rack_reo_adapt = false, reordering()).summary;
        println!("{cc} adaptive: {}", line(&adaptive));
        println!("{cc} static: {}", line(&fixed));
        assert!(adaptive.spurious_retransmits <= 10, "{adaptive:?}");
        assert!(
            fixed.spurious_retransmits >= 5 * adaptive.spurious_retransmits,
            "{fixed:?}"
        );
    }
}

fn line(s: &FlowSummary) -> String {
    format!(
        "goodput {:.2} Mb/s retrans {} spurious {} recoveries {} rtos {} undos full {} partial {} dsack {} loss {} spurious_rtos {}",
        s.goodput_bps / 1e6,
        s.retransmits,
        s.spurious_retransmits,
        s.fast_recoveries,
        s.rto_count,
        s.full_undos,
        s.partial_undos,
        s.dsack_undos,
        s.loss_undos,
        s.spurious_rtos
    )
}

/// Random loss without reordering or duplication: every retransmission of a fast recovery
/// repairs a real loss, so no DSACK ever reports one and nothing is undone (no false undo).
#[test]
fn real_losses_are_not_undone() {
    for cc in ["cubic", "newreno", "bbr3"] {
        let s = run(
            cc,
            10,
            |_| {},
            vec![ElementConfig {
                node: RIGHT,
                spec: ElementSpec::Loss {
                    model: LossConfig::Bernoulli { p: 0.01 },
                },
                select: Selector {
                    from: Some(LEFT),
                    ..Selector::default()
                },
            }],
        )
        .summary;
        println!("{cc}: {}", line(&s));
        assert!(s.fast_recoveries > 10, "{s:?}");
    }
}
