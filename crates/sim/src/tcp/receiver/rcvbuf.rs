//! The receive buffer, the advertised window, and a receiving application that reads at a
//! limited rate ([`crate::config::ReaderConfig`], opt-in per flow).
//!
//! Contract: a [`Receiver`] built [`Receiver::with_reader`] holds a [`RcvBuf`]; every ACK it
//! sends then carries a window field ([`crate::packet::SackBlocks::window`]) chosen as Linux
//! does, its timer ([`Receiver::delack_deadline`]) includes the application's next read, and
//! a read may send an ACK ([`Receiver::on_delack_timer`]). Receivers without one are unchanged.
//!
//! The rules (Linux v6.6+; the function of each is named where it is used):
//! - Buffer space to window: `tcp_win_from_space` = `space · scaling_ratio >> 8`
//!   (`TCP_RMEM_TO_WIN_SCALE`, `include/net/tcp.h`); `scaling_ratio` replaced
//!   `tcp_adv_win_scale` in 6.6 and starts at `TCP_DEFAULT_SCALING_RATIO` (128, half the
//!   buffer). Linux then measures it per skb as `len / truesize` (`tcp_measure_rcv_mss`); skb
//!   truesize is not modelled, so it stays 128 and the window's free space is
//!   `tcp_win_from_space(sk_rcvbuf)` minus the payload bytes held (in order, unread, and out of
//!   order): `tcp_space` with `sk_rmem_alloc` = payload / ratio.
//! - Initial window, scale and clamp (`tcp_openreq_init_rwin`, `tcp_select_initial_window`,
//!   `tcp_init_buffer_space`): `window_clamp` = `tcp_full_space`; the window scale is the
//!   smallest that fits max(`tcp_rmem[2]`, `rmem_max`) (7 with the defaults) or, for a locked
//!   buffer, the full space; the SYN-ACK's window is the full space rounded down to the MSS and
//!   at most 65535, and `rcv_ssthresh` starts there.
//! - `rcv_ssthresh` grows by 2·MSS for each arriving segment while the free space and the clamp
//!   allow (`tcp_grow_window`; its `icsk_ack.quick |= 1` puts the receiver in quick-ACK mode for
//!   one ACK).
//! - The window of each ACK (`tcp_select_window` / `__tcp_select_window`,
//!   `net/ipv4/tcp_output.c`, `tcp_shrink_window` = 0): with less than half the full space free
//!   the free space is rounded down to the window scale and is 0 below an MSS or 1/16 of the
//!   full space (and quick-ACK mode ends); it is capped by `rcv_ssthresh`; with a window scale
//!   it is rounded up to the scale's unit, without one the MSS rounding applies; and the window
//!   offered is never shrunk: below the current one's remainder, the remainder (rounded up to
//!   the scale) is offered again.
//! - The ACK decision (`__tcp_ack_snd_check`, `net/ipv4/tcp_input.c`): two full segments
//!   unacknowledged send an ACK at once only if nothing is unread (`SO_RCVLOWAT` = 1) or the
//!   window the ACK would offer is no smaller than the one offered last (the right edge
//!   advances); otherwise the delayed-ACK timer or a read sends it.
//! - After each read (`tcp_cleanup_rbuf`, `net/ipv4/tcp.c`): with an ACK scheduled, one is sent
//!   if two full segments are unacknowledged; otherwise, if the window left is at most half the
//!   clamp and the window `__tcp_select_window` would offer now is non-zero and at least twice
//!   what is left, a window update is sent.
//! - A zero-window probe ([`crate::packet::Payload::WindowProbe`]) is answered at once with an
//!   ACK (`tcp_send_dupack` for a segment below the window).
//!
//! Simplifications: sequence numbers count segments of `mss` bytes, so every segment held counts
//! `mss` bytes (a sized transfer's short last segment too) and the small-segment ACK rules
//! (`ICSK_ACK_PUSHED`) never apply; data beyond the buffer is accepted (Linux would prune and
//! drop: a sender that honours the window never sends it); receive-buffer auto-tuning
//! (`tcp_rcv_space_adjust`, `tcp_moderate_rcvbuf`) and memory pressure are not modelled, so
//! an unlocked buffer stays at `tcp_rmem[1]`.

use cclab_cc::{Dur, Time};

use super::Receiver;
use crate::config::{ReaderConfig, TCP_RMEM_DEFAULT, TCP_RMEM_MAX};
use crate::packet::{Payload, SackBlocks};

/// Linux `TCP_RMEM_TO_WIN_SCALE` (`include/net/tcp.h`).
pub const TCP_RMEM_TO_WIN_SCALE: u32 = 8;
/// Linux `TCP_DEFAULT_SCALING_RATIO` = `1 << (TCP_RMEM_TO_WIN_SCALE - 1)`: the window is half
/// the buffer space.
pub const TCP_DEFAULT_SCALING_RATIO: u8 = 128;
/// Linux `TCP_MAX_WSCALE` (RFC 7323 §2.3).
pub const TCP_MAX_WSCALE: u8 = 14;
/// Linux `net.core.rmem_max` default (`SK_RMEM_MAX`, 212992 bytes).
pub const RMEM_MAX: u64 = 212_992;

/// Linux `__tcp_win_from_space`: the window `space` bytes of buffer hold.
#[must_use]
pub fn win_from_space(scaling_ratio: u8, space: u64) -> u64 {
    (space * u64::from(scaling_ratio)) >> TCP_RMEM_TO_WIN_SCALE
}

/// Linux `tcp_select_initial_window`'s window scale: the smallest shift that brings `space`
/// within 65535, at most [`TCP_MAX_WSCALE`].
#[must_use]
pub fn wscale_for(space: u64) -> u8 {
    let mut space = space;
    let mut ws = 0;
    while space > u64::from(u16::MAX) && ws < TCP_MAX_WSCALE {
        space >>= 1;
        ws += 1;
    }
    ws
}

/// The receive buffer and the reading application of one flow.
#[derive(Clone, Debug)]
pub struct RcvBuf {
    /// Linux `icsk_ack.rcv_mss` (= the sender's MSS: every segment is full-sized).
    mss: u64,
    /// Linux `sk_rcvbuf`.
    rcvbuf: u64,
    scaling_ratio: u8,
    /// Linux `rx_opt.rcv_wscale`.
    rcv_wscale: u8,
    /// Linux `window_clamp`.
    window_clamp: u64,
    /// Linux `rcv_wnd`: the window last offered, bytes from `rcv_wup`.
    rcv_wnd: u64,
    /// Linux `rcv_wup`: `rcv_nxt` (bytes) when the window was last offered.
    rcv_wup: u64,
    /// Linux `rcv_ssthresh`.
    rcv_ssthresh: u64,
    /// Linux `copied_seq`: bytes the application has read.
    copied: u64,
    rate_bps: u64,
    chunk: u64,
    /// The application's next read; `None`: blocked in `read` on an empty buffer.
    next_read: Option<Time>,
    /// Counters.
    pub counters: RcvBufCounters,
}

/// What the receive buffer model counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcvBufCounters {
    /// Bytes the application read.
    pub bytes_read: u64,
    /// Reads that returned data.
    pub reads: u64,
    /// ACKs a read sent because two segments were unacknowledged (`tcp_cleanup_rbuf`).
    pub read_acks: u64,
    /// Window updates a read sent because the window at least doubled (`tcp_cleanup_rbuf`).
    pub window_updates: u64,
    /// ACKs sent offering a zero window (Linux `TCPToZeroWindowAdv` counts the transitions).
    pub zero_window_acks: u64,
    /// Zero-window probes answered.
    pub probes_answered: u64,
}

impl RcvBuf {
    /// The buffer of a passive opener (the flow's receiver) for segments of `mss` bytes.
    #[must_use]
    pub fn new(cfg: &ReaderConfig, mss: u32) -> Self {
        let mss = u64::from(mss.max(1));
        let locked = cfg.rcvbuf.is_some();
        let rcvbuf = cfg.rcvbuf.unwrap_or(TCP_RMEM_DEFAULT);
        let scaling_ratio = TCP_DEFAULT_SCALING_RATIO;
        let full = win_from_space(scaling_ratio, rcvbuf);
        // `tcp_openreq_init_rwin`: a locked buffer clamps the window to its full space; else
        // the clamp is the largest scaled window until `tcp_init_buffer_space` lowers it.
        let clamp0 = if locked {
            full
        } else {
            u64::from(u16::MAX) << TCP_MAX_WSCALE
        };
        let rcv_wscale = wscale_for(TCP_RMEM_MAX.max(RMEM_MAX).min(clamp0));
        let space = full.min(clamp0);
        let space = if space > mss {
            space / mss * mss
        } else {
            space
        };
        let rcv_wnd = space.min(u64::from(u16::MAX));
        let window_clamp = clamp0.min(u64::from(u16::MAX) << rcv_wscale).min(full);
        RcvBuf {
            mss,
            rcvbuf,
            scaling_ratio,
            rcv_wscale,
            window_clamp,
            rcv_wnd,
            rcv_wup: 0,
            rcv_ssthresh: rcv_wnd.min(window_clamp),
            copied: 0,
            rate_bps: cfg.rate_bps.max(1),
            chunk: cfg.chunk.max(1),
            next_read: None,
            counters: RcvBufCounters::default(),
        }
    }

    /// The window scale this receiver announces (the sender shifts the window field by it).
    #[must_use]
    pub fn rcv_wscale(&self) -> u8 {
        self.rcv_wscale
    }

    /// The window of the SYN-ACK, bytes (not scaled, RFC 7323 §2.2): the sender's first
    /// `snd_wnd`.
    #[must_use]
    pub fn initial_window(&self) -> u64 {
        self.rcv_wnd
    }

    /// Linux `window_clamp`, bytes.
    #[must_use]
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// Linux `rcv_ssthresh`, bytes.
    #[must_use]
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// Linux `rcv_wnd`: the window offered last, bytes.
    #[must_use]
    pub fn rcv_wnd(&self) -> u64 {
        self.rcv_wnd
    }

    /// Bytes the application has read (Linux `copied_seq`).
    #[must_use]
    pub fn copied(&self) -> u64 {
        self.copied
    }

    /// Linux `tcp_full_space`.
    fn full_space(&self) -> u64 {
        win_from_space(self.scaling_ratio, self.rcvbuf)
    }

    /// Linux `tcp_space` with `held` payload bytes in the buffer.
    fn space(&self, held: u64) -> u64 {
        self.full_space().saturating_sub(held)
    }

    /// Linux `tcp_receive_window`: what is left of the window offered last, `rcv_nxt` bytes
    /// received in order.
    fn receive_window(&self, rcv_nxt: u64) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt)
    }

    /// Linux `__tcp_select_window` with `held` payload bytes in the buffer: the window the
    /// free space allows, and whether quick-ACK mode ends (`icsk_ack.quick = 0`).
    fn free_window(&self, held: u64) -> (u64, bool) {
        let unit = 1u64 << self.rcv_wscale;
        let allowed = self.full_space();
        let full = self.window_clamp.min(allowed);
        let mut mss = self.mss;
        if mss > full {
            mss = full;
            if mss == 0 {
                return (0, false);
            }
        }
        let mut free = self.space(held);
        let mut end_quick = false;
        if free < full / 2 {
            end_quick = true;
            free = free / unit * unit;
            if free < allowed >> 4 || free < mss {
                return (0, true);
            }
        }
        free = free.min(self.rcv_ssthresh);
        let window = if self.rcv_wscale > 0 {
            free.div_ceil(unit) * unit
        } else {
            // Without a scale: keep the current offer when within one MSS of the free space,
            // else the largest multiple of the MSS (signed arithmetic as in Linux).
            let (w, f, m) = (
                self.rcv_wnd.cast_signed(),
                free.cast_signed(),
                mss.cast_signed(),
            );
            if w <= f - m || w > f {
                free / mss * mss
            } else if mss == full && free > self.rcv_wnd + full / 2 {
                free
            } else {
                self.rcv_wnd
            }
        };
        (window, end_quick)
    }

    /// Linux `tcp_select_window`: the window field of an ACK sent with `rcv_nxt` bytes
    /// received in order and `held` bytes in the buffer; the offer is never shrunk. Records the
    /// offer (`rcv_wnd`, `rcv_wup`). Returns the field and whether quick-ACK mode ends.
    fn select_window(&mut self, rcv_nxt: u64, held: u64) -> (u16, bool) {
        let cur = self.receive_window(rcv_nxt);
        let (mut new, end_quick) = self.free_window(held);
        if new < cur {
            let unit = 1u64 << self.rcv_wscale;
            new = cur.div_ceil(unit) * unit;
        }
        self.rcv_wnd = new;
        self.rcv_wup = rcv_nxt;
        let field = new.min(u64::from(u16::MAX) << self.rcv_wscale) >> self.rcv_wscale;
        (u16::try_from(field).unwrap_or(u16::MAX), end_quick)
    }

    /// Linux `tcp_grow_window` for a segment arriving with `held` bytes now in the buffer;
    /// true when `rcv_ssthresh` grew (Linux then sets `icsk_ack.quick |= 1`).
    fn grow_window(&mut self, held: u64) -> bool {
        let room = self.window_clamp.min(self.space(held));
        if room <= self.rcv_ssthresh {
            return false;
        }
        self.rcv_ssthresh += (room - self.rcv_ssthresh).min(2 * self.mss);
        true
    }

    /// The application reads at `now` from `unread` in-order bytes: at most a chunk, then it
    /// sleeps for as long as those bytes take at its rate; an empty buffer blocks it. Returns
    /// the bytes read.
    fn read(&mut self, now: Time, unread: u64) -> u64 {
        let n = unread.min(self.chunk);
        if n == 0 {
            self.next_read = None;
            return 0;
        }
        self.copied += n;
        self.counters.bytes_read += n;
        self.counters.reads += 1;
        let ns = u128::from(n) * 8 * 1_000_000_000 / u128::from(self.rate_bps);
        self.next_read = Some(now + Dur(u64::try_from(ns).unwrap_or(u64::MAX)));
        n
    }
}

impl Receiver {
    /// The same receiver with a receive buffer and a reading application `cfg`, for segments
    /// of `mss` bytes ([`RcvBuf`]).
    #[must_use]
    pub fn with_reader(self, cfg: &ReaderConfig, mss: u32) -> Self {
        Receiver {
            rcvbuf: Some(Box::new(RcvBuf::new(cfg, mss))),
            ..self
        }
    }

    /// The receive buffer model, if the flow has one.
    #[must_use]
    pub fn rcvbuf(&self) -> Option<&RcvBuf> {
        self.rcvbuf.as_deref()
    }

    /// `rcv_nxt` in bytes.
    fn rb_rcv_nxt(&self, b: &RcvBuf) -> u64 {
        self.rcv_nxt * b.mss
    }

    /// Payload bytes in the buffer: in order and unread, and out of order.
    fn rb_held(&self, b: &RcvBuf) -> u64 {
        let ofo: u64 = self.ooo.iter().map(|r| r.end - r.start).sum();
        self.rb_rcv_nxt(b).saturating_sub(b.copied) + ofo * b.mss
    }

    /// A data segment (not an old duplicate) was queued at `now`: `tcp_grow_window`, and a
    /// reader blocked on the empty buffer wakes. Call before the ACK decision.
    #[cold]
    #[inline(never)]
    pub(super) fn rb_on_arrival(&mut self, now: Time) {
        let Some(mut b) = self.rcvbuf.take() else {
            return;
        };
        let held = self.rb_held(&b);
        if b.grow_window(held) {
            self.quickacks |= 1;
        }
        if b.next_read.is_none() && self.rb_rcv_nxt(&b) > b.copied {
            b.next_read = Some(now);
        }
        self.rcvbuf = Some(b);
    }

    /// The window clause of `__tcp_ack_snd_check`'s "more than one full segment" rule: true
    /// without a buffer model, when nothing is unread, or when the window an ACK would offer
    /// is no smaller than the one offered last.
    #[cold]
    #[inline(never)]
    pub(super) fn rb_window_advances(&mut self) -> bool {
        let Some(b) = self.rcvbuf.as_deref() else {
            return true;
        };
        let held = self.rb_held(b);
        if self.rb_rcv_nxt(b) <= b.copied {
            return true;
        }
        let (w, end_quick) = b.free_window(held);
        if end_quick {
            self.quickacks = 0;
        }
        w >= b.rcv_wnd
    }

    /// Put the window (`tcp_select_window`) into the ACK being made.
    #[cold]
    #[inline(never)]
    pub(super) fn rb_stamp(&mut self, sack: &mut SackBlocks) {
        let Some(mut b) = self.rcvbuf.take() else {
            return;
        };
        let held = self.rb_held(&b);
        let (field, end_quick) = b.select_window(self.rb_rcv_nxt(&b), held);
        if end_quick {
            self.quickacks = 0;
        }
        if field == 0 {
            b.counters.zero_window_acks += 1;
        }
        sack.set_window(field);
        self.rcvbuf = Some(b);
    }

    /// The application's next read, with the receiver's other deadline `t`.
    #[cold]
    #[inline(never)]
    pub(super) fn rb_deadline(&self, t: Option<Time>) -> Option<Time> {
        match self.rcvbuf.as_deref().and_then(|b| b.next_read) {
            None => t,
            Some(r) => Some(t.map_or(r, |t| t.min(r))),
        }
    }

    /// Run the application's read if due at `now`, then `tcp_cleanup_rbuf`: the ACK it sends,
    /// if any.
    pub(super) fn rb_read_due(&mut self, now: Time) -> Option<Payload> {
        let b = self.rcvbuf.as_deref_mut()?;
        if b.next_read.is_none_or(|t| t > now) {
            return None;
        }
        let unread = (self.rcv_nxt * b.mss).saturating_sub(b.copied);
        let copied = b.read(now, unread);
        self.cleanup_rbuf(copied)
    }

    /// Linux `tcp_cleanup_rbuf` after the application read `copied` bytes.
    fn cleanup_rbuf(&mut self, copied: u64) -> Option<Payload> {
        let b = self.rcvbuf.as_deref()?;
        let ack_scheduled = self.unacked > 0 || self.compressed_ack > 0 || self.delack_at.is_some();
        // "Once-per-two-segments ACK was not sent by tcp_input.c" (the `ICSK_ACK_PUSHED` rules
        // for small segments never apply here).
        if ack_scheduled && self.unacked >= self.ack_every {
            if let Some(b) = self.rcvbuf.as_deref_mut() {
                b.counters.read_acks += 1;
            }
            return Some(self.make_ack());
        }
        if copied == 0 {
            return None;
        }
        let now_wnd = b.receive_window(self.rb_rcv_nxt(b));
        if 2 * now_wnd > b.window_clamp {
            return None;
        }
        let held = self.rb_held(b);
        let (new, end_quick) = b.free_window(held);
        if end_quick {
            self.quickacks = 0;
        }
        if new == 0 || new < 2 * now_wnd {
            return None;
        }
        if let Some(b) = self.rcvbuf.as_deref_mut() {
            b.counters.window_updates += 1;
        }
        Some(self.make_ack())
    }

    /// A zero-window probe arrived at `now`: answered at once with an ACK carrying the
    /// window (Linux `tcp_send_dupack` for a segment below the window; no DSACK, it has no
    /// data).
    pub fn on_window_probe(&mut self, _now: Time) -> Option<Payload> {
        let b = self.rcvbuf.as_deref_mut()?;
        b.counters.probes_answered += 1;
        Some(self.make_ack())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;

    const MSS: u32 = 1000;

    /// The window field and the cumulative ACK of an ACK.
    fn wnd_of(p: Option<Payload>) -> (u64, u16) {
        match p {
            Some(Payload::Ack { ack, sack, .. }) => (ack, sack.window().expect("a window")),
            other => panic!("expected an ACK, got {other:?}"),
        }
    }

    fn reader(rate_bps: u64, chunk: u64, rcvbuf: u64) -> Receiver {
        let mut r = Receiver::new(2, Dur::from_millis(40)).with_reader(
            &ReaderConfig {
                rate_bps,
                chunk,
                rcvbuf: Some(rcvbuf),
            },
            MSS,
        );
        r.quickacks = 0;
        r
    }

    #[test]
    fn initial_window_scale_and_clamp_follow_linux() {
        // Default buffer (tcp_rmem[1] = 128 KiB, not locked): full space 64 KiB, window scale
        // 7 from tcp_rmem[2] = 6 MiB, the SYN-ACK's window 65 segments of 1000 bytes.
        let b = RcvBuf::new(&ReaderConfig::at_rate(1_000_000), MSS);
        assert_eq!(b.rcv_wscale(), 7);
        assert_eq!(b.window_clamp(), 65_536);
        assert_eq!(b.initial_window(), 65_000);
        assert_eq!(b.rcv_ssthresh(), 65_000);
        // A locked 1 MB buffer: full space 500 000 bytes, scale from it (3).
        let b = RcvBuf::new(
            &ReaderConfig {
                rcvbuf: Some(1_000_000),
                ..ReaderConfig::at_rate(1_000_000)
            },
            MSS,
        );
        assert_eq!(b.rcv_wscale(), 3);
        assert_eq!(b.window_clamp(), 500_000);
        // The SYN-ACK's window is not scaled: at most 65535 (`tcp_select_initial_window`).
        assert_eq!(b.initial_window(), 65_535);
        assert_eq!(win_from_space(128, 1000), 500);
        assert_eq!(wscale_for(65_535), 0);
        assert_eq!(wscale_for(65_536), 1);
    }

    /// A hand-driven receiver: a 40 000-byte buffer (20 000 bytes of window, 20 segments, no
    /// window scale), a reader of 8 Mbit/s (1000 bytes per ms) reading 4000 bytes at a time.
    /// The window closes as the buffer fills; a read sends a window update only once the
    /// window at least doubles (`tcp_cleanup_rbuf`), and the offer never shrinks.
    #[test]
    fn window_updates_follow_tcp_cleanup_rbuf() {
        let mut r = reader(8_000_000, 4000, 40_000);
        let ms = |n: u64| Time(n * 1_000_000);
        {
            let b = r.rcvbuf().unwrap();
            assert_eq!(
                (b.rcv_wscale(), b.window_clamp(), b.initial_window()),
                (0, 20_000, 20_000)
            );
        }
        // Segment 0 arrives: the reader wakes at once (it was blocked on the empty buffer).
        assert!(r.on_data(ms(0), 0, ms(0), Ecn::NotEct, false).is_none());
        assert_eq!(r.delack_deadline(), Some(ms(0)));
        // It reads the 1000 bytes: an ACK is scheduled but only one segment is unacked, and
        // the window left (19 000) is more than half the clamp: nothing is sent.
        assert!(r.on_delack_timer(ms(0)).is_none());
        assert_eq!(r.rcvbuf().unwrap().copied(), 1000);
        assert_eq!(r.delack_deadline(), Some(ms(1)), "next read after 1 ms");
        // Segment 1 (the reader sleeps until 1 ms): two segments unacked, but with one unread
        // the window an ACK would offer (19 000) is smaller than the 20 000 offered: no ACK
        // now (`__tcp_ack_snd_check`: the right edge would not advance).
        let a = r.on_data(ms(0) + Dur(1), 1, ms(0), Ecn::NotEct, false);
        assert!(a.is_none());
        // The delayed-ACK timer is armed (40 ms) and the read is due at 1 ms.
        assert_eq!(r.delack_deadline(), Some(ms(1)));
        // Read at 1 ms: 1000 bytes; two segments unacked and an ACK scheduled → ACK.
        assert_eq!(wnd_of(r.on_delack_timer(ms(1))), (2, 20_000));
        // Fill the buffer: segments 2..=21 arrive at 1 ms + k µs; the reader is blocked.
        assert_eq!(r.rcvbuf().unwrap().next_read, Some(ms(2)));
        let mut acks = Vec::new();
        for s in 2..22u64 {
            if let Some(a) = r.on_data(ms(1) + Dur(s), s, ms(0), Ecn::NotEct, false) {
                acks.push(wnd_of(Some(a)));
            }
        }
        // The free space shrinks with every arrival, so the right edge never advances: no ACK.
        assert!(acks.is_empty(), "{acks:?}");
        // The read at 2 ms takes 4000 bytes with 20 segments unacked: an ACK
        // (`tcp_cleanup_rbuf`'s first rule). 16 000 bytes held: 4000 free, below half of
        // 20 000 but at least an MSS and 1/16: the window is 4000 (nothing is left of the
        // previous offer, 2000 + 20 000 − 22 000 = 0, so nothing to keep).
        assert_eq!(wnd_of(r.on_delack_timer(ms(2))), (22, 4000));
        let c = r.rcvbuf().unwrap().counters;
        assert_eq!((c.read_acks, c.window_updates), (2, 0));
        // Reads at 6, 10, 14 ms: nothing unacked; the window left is 4000 ≤ half the clamp;
        // the free window is 8000 at 6 ms (≥ 2 × 4000): update.
        assert_eq!(wnd_of(r.on_delack_timer(ms(6))), (22, 8000));
        // At 10 ms: 12 000 free, window left 8000: 12 000 < 16 000, no update.
        assert!(r.on_delack_timer(ms(10)).is_none());
        // At 14 ms: 16 000 free ≥ 2 × 8000: update.
        assert_eq!(wnd_of(r.on_delack_timer(ms(14))), (22, 16_000));
        let c = r.rcvbuf().unwrap().counters;
        assert_eq!((c.window_updates, c.reads), (2, 6));
        // At 18 ms: window left 16 000 > half the clamp: no update even though 20 000 free.
        assert!(r.on_delack_timer(ms(18)).is_none());
        // The buffer is empty now: the reader blocks.
        assert!(r.on_delack_timer(ms(22)).is_none());
        assert_eq!(r.rcvbuf().unwrap().next_read, None);
    }

    /// A zero window: the buffer fills while the reader sleeps; arrivals send no ACK (the
    /// right edge would not advance), the delayed ACK offers 0, a probe is answered with the
    /// current window, and the window reopens only once the free space reaches 1/16 of the
    /// buffer's window (`__tcp_select_window`).
    #[test]
    fn zero_window_is_offered_and_probes_are_answered() {
        // 20 000 bytes of window, a reader of 8 kbit/s (1000 bytes per second), 1000-byte reads.
        let mut r = reader(8_000, 1000, 40_000);
        let us = |n: u64| Time(n * 1000);
        assert!(r.on_data(us(0), 0, us(0), Ecn::NotEct, false).is_none());
        // The reader reads segment 0 at once, then sleeps a second.
        assert!(r.on_delack_timer(us(0)).is_none());
        assert_eq!(r.read_deadline(), Some(Time(1_000_000_000)));
        for s in 1..=20u64 {
            assert!(
                r.on_data(us(s), s, us(0), Ecn::NotEct, false).is_none(),
                "segment {s}"
            );
        }
        let due = Time::ZERO + Dur::from_millis(40);
        assert_eq!(r.delack_deadline(), Some(due));
        assert_eq!(wnd_of(r.on_delack_timer(due)), (21, 0));
        assert_eq!(wnd_of(r.on_window_probe(us(50_000))), (21, 0));
        // At 1 s the reader frees 1000 bytes: below 1/16 of 20 000, the window stays shut.
        assert!(r.on_delack_timer(Time(1_000_000_000)).is_none());
        // At 2 s, 2000 bytes free: a window update (2000 ≥ 2 × 0).
        assert_eq!(wnd_of(r.on_delack_timer(Time(2_000_000_000))), (21, 2000));
        let c = r.rcvbuf().unwrap().counters;
        assert_eq!(
            (c.zero_window_acks, c.probes_answered, c.window_updates),
            (2, 1, 1)
        );
    }
}
