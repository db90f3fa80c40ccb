//! The application above the socket (Linux: the writer filling `sk_write_queue`): bulk (all
//! of it, or `size` bytes, at the start), rate-limited (one MSS per write at
//! `FlowConfig::app_rate_bps`) or responding (one response per request,
//! `FlowConfig::requests`, [`crate::tcp::exchange`]), and its stop.
//!
//! Contract: `app_end` is the number of segments written so far; the transmit path
//! ([`super::xmit`]) sends up to it, and a rate-limited application's next write time joins the
//! sender's wakeup when everything written has been sent.

use super::*;

impl Sender {
    /// The application starts at `now`: it opens the connection (with a handshake: the SYN
    /// leaves, [`Sender::take_control`], and data starts when the SYN-ACK arrives,
    /// [`Sender::on_syn_ack`]) or, without one, starts writing at once
    /// ([`Sender::start_data`]).
    pub fn start(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        if self.handshake {
            // TCP Fast Open: the SYN carries the transfer when it is one segment that fits in
            // the SYN's data space (a longer first segment is not split; Linux would send its
            // first `syn_data_space` bytes in the SYN).
            self.syn_data = self.fast_open
                && self.app_rate.is_none()
                && self.total_segs == Some(1)
                && self.last_len <= super::super::handshake::syn_data_space(self.mss);
            let (h, syn) = Handshake::connect(now, self.syn_data);
            self.timer = h.deadline().map(|t| (Timer::Syn, t));
            self.connecting = Some(h);
            self.control_out = Some(syn);
            return;
        }
        self.start_data(now, out);
    }

    /// The connection is open at `now` and the application writes. A bulk application hands
    /// over everything at once (`size`, or without end); a rate-limited one writes its first
    /// segment now and the following ones at its rate ([`Sender::app_refresh`]). The
    /// controller's `init` runs now (Linux `tcp_init_transfer` → `tcp_init_congestion_control`
    /// when the connection is established).
    pub(super) fn start_data(&mut self, now: Time, out: &mut Vec<Outgoing>) {
        self.started = true;
        self.app_cap = if self.reqresp {
            // A responding application writes when a request arrives.
            self.snd_nxt
        } else if self.stopped_before_open {
            0
        } else {
            self.total_segs.unwrap_or(u64::MAX)
        };
        if self.app_rate.is_some() {
            self.app_t0 = now;
            self.app_end = 0;
            self.app_next = now;
            self.app_refresh(now);
        } else {
            self.app_end = self.app_cap;
        }
        // What `init` may read of the socket's RTT (`bbr_init`: `tp->srtt_us`, `tcp_min_rtt`).
        self.st.srtt = self.rtt.srtt();
        self.st.min_rtt = self.rtt.min_rtt();
        self.cc.init(now, &mut self.st);
        // The handshake's round trip, when the connection made one (else unknown).
        let info = cclab_cc::ConnStart {
            first_rtt: self.handshake_rtt,
            transfer_bytes: self.size,
            rcv_wnd_bytes: self.rcv_wnd,
        };
        self.cc.on_connection_start(now, &mut self.st, &info);
        self.update_pacing_rate();
        self.try_send(now, out);
    }

    /// A server whose client opened the connection ([`crate::tcp::exchange`]): the handshake's
    /// ACK arrives at `now`, `rtt` after the SYN-ACK left, and the connection is established
    /// (Linux `tcp_rcv_state_process` in `SYN_RECV`: `tcp_synack_rtt_meas` gives the first RTT
    /// sample, which seeds SRTT, RTTVAR and the RTO as RFC 6298 §2.2 says; then
    /// `tcp_init_transfer`). Nothing is written yet.
    #[cold]
    pub fn accept(&mut self, now: Time, rtt: Dur, out: &mut Vec<Outgoing>) {
        if self.started {
            return;
        }
        self.rtt.sample(now, rtt);
        self.rtt_hist.record(rtt.max(Dur(1)).as_nanos());
        self.handshake_rtt = Some(rtt);
        self.start_data(now, out);
        self.record(now, "established");
    }

    /// A responding application writes a response of `bytes` (> 0) payload bytes at `now`
    /// (a request arrived): its segments follow those already written, the last one carrying
    /// the rest (`bytes` mod mss, or a full segment). Earlier responses are acknowledged by
    /// then as a rule (the request carries the client's ACK of the previous one); if that ACK
    /// was lost, a retransmission of an earlier response's short last segment is sent at full
    /// size (a simplification of the segment-counted sequence space).
    #[cold]
    pub fn write_response(&mut self, now: Time, bytes: u64, out: &mut Vec<Outgoing>) {
        let mss = u64::from(self.mss);
        let n = bytes.div_ceil(mss).max(1);
        let end = self.app_end + n;
        self.total_segs = Some(end);
        self.last_len = saturating_u32((bytes - (n - 1) * mss).max(1));
        self.app_end = end;
        self.app_cap = end;
        self.try_send(now, out);
    }

    /// The connection is open and the application has started (`tcp_init_transfer` ran).
    #[must_use]
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// The responding application's writes so far end at this segment.
    #[must_use]
    pub fn written_end(&self) -> u64 {
        self.app_end
    }

    /// The sender of a new connection of the same flow for `cfg` (a non-persistent
    /// request/response workload, [`crate::tcp::exchange`]): everything starts afresh
    /// (controller, window, RTT estimator, scoreboard) except that the initial sequence number
    /// continues this connection's sequence space (segments and ACKs of the old connection
    /// still in the network are old to the new one), the bytes this socket's host still holds
    /// below TCP stay accounted (their TX completions are reported to the new sender), and the
    /// counters, RTT histogram, timeout times and trace accumulate.
    #[cold]
    #[must_use]
    pub fn reopen(&mut self, cfg: &FlowConfig, cc_seed: u64) -> Sender {
        let mut s = Sender::with_host(cfg, cc_seed, self.host);
        let base = self.app_end.max(self.snd_nxt);
        s.snd_una = base;
        s.snd_nxt = base;
        s.app_end = base;
        s.app_cap = base;
        s.rack_end = base;
        s.fack = base;
        s.below_tcp = self.below_tcp;
        s.completions = std::mem::take(&mut self.completions);
        s.counters = self.counters;
        s.min_cwnd_before = self.min_cwnd();
        s.rtt_hist = std::mem::take(&mut self.rtt_hist);
        s.rto_times = std::mem::take(&mut self.rto_times);
        if let (Some(old), Some(new)) = (self.trace.take(), &mut s.trace) {
            *new = old;
        }
        s
    }

    /// The application stops handing data to TCP at `now`; what was handed over is still
    /// delivered. A bulk application counts as having handed over what TCP has sent (its
    /// unsent data is dropped), a rate-limited one what it has written by `now`.
    pub fn stop_app(&mut self, now: Time) {
        if self.reqresp {
            // A responding application answers every request it gets; its client stops
            // asking ([`crate::tcp::exchange`]).
            return;
        }
        if !self.started {
            // Nothing was written yet (the connection is still opening).
            self.stopped_before_open = true;
            return;
        }
        if self.app_rate.is_some() {
            self.app_refresh(now);
        } else {
            self.app_end = self.app_end.min(self.snd_nxt);
        }
        self.app_cap = self.app_end;
        self.app_next = Time::MAX;
    }

    /// A rate-limited application's writes up to `now`: segment `k` is written at
    /// `app_t0 + ⌊k·mss·8·10⁹ / rate⌋` ns, so by `now` = `app_t0 + Δ` the written segments are
    /// those with `k·mss·8·10⁹ < (Δ + 1)·rate`, i.e. `⌈(Δ + 1)·rate / (mss·8·10⁹)⌉` of them,
    /// capped by `app_cap`. Returns at once before the next write is due (and always for
    /// bulk applications, whose `app_next` is `Time::MAX`).
    #[inline]
    pub(super) fn app_refresh(&mut self, now: Time) {
        if now < self.app_next {
            return;
        }
        let Some(rate) = self.app_rate else {
            return;
        };
        let seg_bits_ns = u128::from(self.mss) * 8 * 1_000_000_000;
        let elapsed = u128::from(now.saturating_since(self.app_t0).as_nanos());
        let written = ((elapsed + 1) * u128::from(rate)).div_ceil(seg_bits_ns);
        let written = u64::try_from(written).unwrap_or(u64::MAX).min(self.app_cap);
        self.app_end = written;
        self.app_next = if written < self.app_cap {
            let at = u128::from(written) * seg_bits_ns / u128::from(rate);
            self.app_t0 + Dur(u64::try_from(at).unwrap_or(u64::MAX))
        } else {
            Time::MAX
        };
    }
}
