//! The Linux sender host below TCP: TCP Small Queues, the host qdisc, the NIC, a virtual
//! machine's virtio-net path, and the hypervisor's CPU schedule.
//!
//! Data path of a host (the engine, `engine/`, wires it):
//!
//! ```text
//! socket ──TSQ gate──▶ qdisc ──▶ NIC (egress link: line rate, driver queue) ──▶ wire
//!   ▲                  pfifo_fast: merges with the driver queue (TCP hands packets straight
//!   │                              to the egress link; internal pacing for SK_PACING_NEEDED)
//!   │                  fq ([`fq::Fq`]): per-flow queues, EDT release, DRR; the device pulls
//!   │                              one skb whenever its transmitter is free
//!   └──── TX completions (tcp_wfree → TSQ tasklet) ◀── the device
//! ```
//!
//! - **NIC.** A host's NIC is the first link of each of its routes when that link leaves the
//!   host and has a rate: its rate is the line rate, its queue the driver queue. A host whose
//!   egress link has no rate has an infinitely fast NIC.
//! - **TX completion contract.** A device that takes a host's packets reports, for every data
//!   segment of a TCP flow, exactly one completion through the engine's `tx_complete(flow,
//!   at, bytes)`, which passes it to `Sender::tx_completed`. `at` is when the device is done
//!   with the segment and frees it (`tcp_wfree`); it is never earlier than the hand-off. A
//!   device may report a completion *in advance*, as soon as it knows the time (the analytic
//!   FIFO knows the end of serialisation at enqueue), or *when it happens* (`at` = now: the
//!   evented FIFO at the end of each transmission, a drop at any queue, an infinitely fast
//!   NIC). Advance reports of one flow may come in any order. A later device (a Wi-Fi MAC that
//!   frees an MPDU when its aggregate is acknowledged) reports the same way, at Block Ack time.
//!   The sender counts the bytes below TCP from hand-off to completion; only a throttled socket
//!   asks to be woken (at the completion that brings it back within its limit), so
//!   completions cost no event otherwise.
//! - **fq.** One instance per host, in front of the host's single egress link. Every socket of
//!   the host is paced through it (`SK_PACING_FQ`): TCP stamps each skb with its EDT and hands
//!   it over at once, within TSQ. ACKs and probe packets are flows of their own, stamped with
//!   their hand-off time. A host has at most one pending release event, at the moment the
//!   transmitter frees up or the earliest throttled flow is due.
//! - **Virtual machines** ([`virtio`]). A host with a virtio device hands its packets to the
//!   TX virtqueue instead of the NIC; the hypervisor's vhost worker moves them to the NIC
//!   (the first link) whether the guest runs or not, and the device, not the NIC, reports
//!   the TX completions.
//! - **CPU schedule** ([`cpu::CpuClock`]). While a host is descheduled nothing on it runs:
//!   sender and receiver timers, TSQ wakeups, fq releases, application starts and stops and
//!   probe sends wait, and packets arriving for it queue, all in one inbox in the order they
//!   came due. Nothing is handed to its NIC; what is already in the NIC and on the wire goes
//!   on. When the host runs again, the inbox is processed in that order at that instant, or,
//!   with [`crate::config::ResumeWork::Softirq`], the timer wheel's timers first, then packet
//!   by packet at a CPU cost each in NET_RX rounds with the other waiting work at each
//!   round's end, every data segment sent taking the same CPU time (the host is busy for it,
//!   and what comes due meanwhile waits). With share 1.0 the host never stops and the run
//!   is identical to one without a schedule (`instant`; with `softirq` it still pays for its
//!   sends).

pub mod cpu;
pub mod fq;
pub mod timing;
pub mod virtio;
