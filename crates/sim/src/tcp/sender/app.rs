//! The application above the socket (Linux: the writer filling `sk_write_queue`): bulk (all
//! of it, or `size` bytes, at the start) or rate-limited (one MSS per write at
//! `FlowConfig::app_rate_bps`), and its stop.
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
        self.app_cap = if self.stopped_before_open {
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

    /// The application stops handing data to TCP at `now`; what was handed over is still
    /// delivered. A bulk application counts as having handed over what TCP has sent (its
    /// unsent data is dropped), a rate-limited one what it has written by `now`.
    pub fn stop_app(&mut self, now: Time) {
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
