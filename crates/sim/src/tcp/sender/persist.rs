//! The advertised window and the persist timer (Linux `tcp_ack_update_window`,
//! `tcp_may_update_window`, `tcp_ack_probe` in `net/ipv4/tcp_input.c`; `tcp_check_probe_timer`
//! in `include/net/tcp.h`; `tcp_probe_timer` in `net/ipv4/tcp_timer.c`; `tcp_send_probe0`,
//! `tcp_write_wakeup` in `net/ipv4/tcp_output.c`), for flows whose receiver advertises its
//! window ([`FlowConfig::reader`]).
//!
//! Contract: an ACK's window field updates `snd_wnd` as `tcp_may_update_window` allows (the
//! ACK advances SND.UNA, or its window is larger or zero; ACKs carry no data, so `snd_wl1`
//! never moves); new data stays within SND.UNA + `snd_wnd` in whole segments
//! (`tcp_snd_wnd_test`; Linux would send the part of a segment a smaller window allows). When
//! the window stops new data with nothing outstanding, the persist timer is armed at
//! max(RTO, `TCP_RTO_MIN`); when it fires with the window still closed it sends a zero-window
//! probe ([`Payload::WindowProbe`]), backs off (the RTO's exponential backoff, at most
//! `tcp_retries2` = 15 doublings, capped at `TCP_RTO_MAX`) and re-arms; if the window opened,
//! the data leaves and the retransmission timer takes over. An ACK arriving with nothing
//! outstanding (`tcp_ack`'s `no_queue` path) resets the backoff and clears the timer when the
//! window now admits the next segment (`tcp_ack_probe`), else re-arms it with the current
//! backoff. Probes go on without limit: Linux aborts after `tcp_retries2` unanswered probes
//! only for orphaned sockets or with `TCP_USER_TIMEOUT`, and any ACK resets the count.

use super::*;
use crate::config::ReaderConfig;
use crate::tcp::receiver::rcvbuf::RcvBuf;

/// Linux `net.ipv4.tcp_retries2` default: the most backoff doublings of the probe timer.
const TCP_RETRIES2: u32 = 15;

/// The sender's view of an advertised window.
#[derive(Clone, Copy, Debug)]
pub(super) struct AdvWnd {
    /// The peer's window scale (Linux `rx_opt.snd_wscale`).
    pub wscale: u8,
    /// Linux `snd_wnd`, bytes.
    pub snd_wnd: u64,
}

impl AdvWnd {
    /// The window a receiver with reader `r` offers in its SYN-ACK, and its scale.
    pub(super) fn new(r: &ReaderConfig, mss: u32) -> Self {
        let b = RcvBuf::new(r, mss);
        AdvWnd {
            wscale: b.rcv_wscale(),
            snd_wnd: b.initial_window(),
        }
    }
}

impl Sender {
    /// An ACK for `ack` (valid, not old) carrying window field `field`: the window update of
    /// `tcp_ack`, before its other steps (SND.UNA is still the prior one). Returns true when
    /// nothing was outstanding: the ACK is then done (`tcp_ack`'s `no_queue`: the persist
    /// timer's `tcp_ack_probe`, then the send attempt of `tcp_data_snd_check`).
    #[cold]
    #[inline(never)]
    pub(super) fn on_window_ack(
        &mut self,
        now: Time,
        ack: u64,
        field: u16,
        out: &mut Vec<Outgoing>,
    ) -> bool {
        let Some(a) = self.adv_wnd.as_mut() else {
            return false;
        };
        let nwin = u64::from(field) << a.wscale;
        // tcp_may_update_window (`ack_seq == snd_wl1` always: ACKs carry no data).
        if ack > self.snd_una || nwin > a.snd_wnd || nwin == 0 {
            a.snd_wnd = nwin;
            self.rcv_wnd_segs = Some(nwin / u64::from(self.mss));
        }
        if self.snd_nxt != self.snd_una || !self.started {
            return false;
        }
        self.ack_probe(now);
        self.try_send(now, out);
        self.record(now, "ack");
        true
    }

    /// The window admits the next new segment, and there is one.
    fn window_admits_head(&self) -> bool {
        self.snd_nxt < self.app_end
            && self
                .rcv_wnd_segs
                .is_some_and(|w| self.snd_una + w > self.snd_nxt)
    }

    /// Linux `tcp_ack_probe`.
    fn ack_probe(&mut self, now: Time) {
        if self.snd_nxt >= self.app_end {
            return;
        }
        if self.window_admits_head() {
            self.backoff = 0;
            if self.timer.is_some_and(|(k, _)| k == Timer::Probe0) {
                self.timer = None;
            }
        } else {
            self.timer = Some((Timer::Probe0, now + self.rto_interval()));
        }
    }

    /// Linux `tcp_check_probe_timer`: the window holds new data back with nothing
    /// outstanding and no timer pending: arm the persist timer at the probe base
    /// (`tcp_probe0_base`: max(RTO, `TCP_RTO_MIN`), without backoff).
    #[cold]
    #[inline(never)]
    pub(super) fn check_probe_timer(&mut self, now: Time) {
        if self.adv_wnd.is_none()
            || self.snd_nxt != self.snd_una
            || self.timer.is_some()
            || self.snd_nxt >= self.app_end
            || self.window_admits_head()
        {
            return;
        }
        let base = self.rtt.rto().max(RTO_MIN);
        self.timer = Some((Timer::Probe0, now + base));
    }

    /// The persist timer fired (Linux `tcp_probe_timer` → `tcp_send_probe0`).
    pub(super) fn send_probe0(&mut self, now: Time) {
        if self.adv_wnd.is_none() {
            return;
        }
        let idle = self.snd_nxt == self.snd_una && self.snd_nxt < self.app_end;
        if !idle || self.window_admits_head() {
            // Nothing to probe for, or `tcp_write_wakeup` sends the segment (the caller's
            // send attempt does): data is then outstanding and the probe timer not needed.
            if idle {
                self.backoff = 0;
            }
            return;
        }
        // `tcp_xmit_probe_skb`: a segment without data below the window.
        self.control_out = Some(Payload::WindowProbe);
        self.counters.window_probes += 1;
        if self.backoff < TCP_RETRIES2 {
            self.backoff += 1;
        }
        self.timer = Some((Timer::Probe0, now + self.rto_interval()));
    }

    /// The send window, bytes (`snd_wnd`), for a flow whose receiver advertises it.
    #[must_use]
    pub fn snd_wnd(&self) -> Option<u64> {
        self.adv_wnd.map(|a| a.snd_wnd)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::data_seqs;
    use super::*;
    use crate::config::NodeId;
    use crate::packet::SackBlocks;
    use cclab_cc::CcSpec;

    fn sender() -> Sender {
        let mut cfg = FlowConfig::bulk(
            "f",
            NodeId(0),
            NodeId(1),
            CcSpec::default_for("newreno").unwrap(),
        );
        cfg.mss = 1000;
        cfg.reader = Some(ReaderConfig {
            rate_bps: 1_000_000,
            chunk: 1000,
            rcvbuf: Some(40_000),
        });
        Sender::new(&cfg, 1)
    }

    fn ack(n: u64, wnd: u16) -> Payload {
        let mut sack = SackBlocks::default();
        sack.set_window(wnd);
        Payload::Ack {
            ack: n,
            sack,
            dsack: false,
            tsecr: Time::ZERO,
            ece: false,
            ce_count: 0,
        }
    }

    /// (The 40 000-byte buffer has no window scale: the window field is in bytes.)
    /// The window closes with everything acknowledged: the persist timer probes with
    /// backoff; the ACK to a probe that opens the window lets the data go.
    #[test]
    fn zero_window_is_probed_with_backoff_and_reopens() {
        let mut s = sender();
        assert_eq!(s.snd_wnd(), Some(20_000));
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(data_seqs(&out), (0..10).collect::<Vec<_>>(), "IW 10");
        out.clear();
        // Everything acknowledged, window 0.
        let t1 = Time::ZERO + Dur::from_millis(100);
        s.on_ack(t1, &ack(10, 0), &mut out);
        assert!(out.is_empty());
        let (k, due) = s.timer.unwrap();
        assert_eq!(k, Timer::Probe0);
        let base = s.rto().max(RTO_MIN);
        assert_eq!(due, t1 + base);
        // It fires: a probe, the timer backs off.
        s.on_timer(due, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.take_control(), Some(Payload::WindowProbe));
        let (_, due2) = s.timer.unwrap();
        assert_eq!(due2, due + Dur(base.0 * 2));
        s.on_timer(due2, &mut out);
        assert_eq!(s.take_control(), Some(Payload::WindowProbe));
        let (_, due3) = s.timer.unwrap();
        assert_eq!(due3, due2 + Dur(base.0 * 4));
        assert_eq!(s.counters.window_probes, 2);
        // The answer to a probe still offers 0: the timer is re-armed with the backoff.
        let t = due2 + Dur::from_millis(50);
        s.on_ack(t, &ack(10, 0), &mut out);
        assert_eq!(s.timer, Some((Timer::Probe0, t + Dur(base.0 * 4))));
        // A window update of 3 segments: they leave, the RTO timer takes over.
        let t = t + Dur::from_millis(1);
        s.on_ack(t, &ack(10, 3000), &mut out);
        assert_eq!(data_seqs(&out), vec![10, 11, 12]);
        assert!(matches!(s.timer, Some((Timer::Rto | Timer::Probe, _))));
        assert_eq!(s.backoff, 0);
    }

    /// `tcp_may_update_window`: a duplicate ACK with a smaller non-zero window does not
    /// shrink `snd_wnd`; one advancing SND.UNA does.
    #[test]
    fn window_updates_follow_tcp_may_update_window() {
        let mut s = sender();
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let t = Time::ZERO + Dur::from_millis(100);
        s.on_ack(t, &ack(2, 10_000), &mut out);
        assert_eq!(s.snd_wnd(), Some(10_000));
        assert_eq!(s.snd_nxt(), 12, "new data up to SND.UNA + 10 segments");
        s.on_ack(t, &ack(2, 5000), &mut out);
        assert_eq!(
            s.snd_wnd(),
            Some(10_000),
            "smaller window on a duplicate: ignored"
        );
        s.on_ack(t, &ack(2, 12_000), &mut out);
        assert_eq!(s.snd_wnd(), Some(12_000), "larger: taken");
        assert_eq!(s.snd_nxt(), 14);
        s.on_ack(t, &ack(3, 5000), &mut out);
        assert_eq!(s.snd_wnd(), Some(5000), "SND.UNA advances: taken");
        assert_eq!(s.snd_nxt(), 14, "nothing new beyond SND.UNA + 5");
    }
}
