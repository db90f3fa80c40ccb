//! The forwarder: the real-time loop that moves packets between the hosts' TUN devices through
//! the emulated network.
//!
//! Contract: [`Forwarder::run`] reads every packet the hosts send (IPv4 only), hands it to the
//! [`EmuNet`] at the time it was read, and writes each packet the network releases into its
//! destination host's TUN device as soon as the monotonic clock reaches the release time the
//! elements computed. Between events it sleeps in `ppoll` on the TUN devices with a
//! nanosecond timeout (timer slack set to 1 µs), or spins (busy-poll mode). It measures its own
//! lateness (actual minus intended release, per packet), the CPU time it used, and the packets
//! it lost itself (pool exhausted, a write refused, a packet it could not parse), and samples
//! the monitored links' queues every sample interval.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use cclab_cc::{Dur, Time};
use cclab_sim::histogram::Histogram;
use nix::poll::{PollFd, PollFlags};
use nix::sys::time::TimeSpec;

use crate::net::EmuNet;
use crate::ns::host_of;
use crate::packet::{EmuPacket, MAX_PACKET, parse_ipv4, write_ecn};

/// Largest packet read from a TUN device (the MTU, with room to spare).
const BUF: usize = 2048;

/// How the forwarder waits between events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Wait {
    /// Sleep in `ppoll` until the next event or packet.
    #[default]
    Sleep,
    /// Spin: poll the devices without sleeping (one core fully used, lower lateness).
    BusyPoll,
}

/// What the forwarder measured of itself.
#[derive(Debug, Default)]
pub struct Timing {
    /// Actual minus intended release time of each packet written to a host, ns.
    pub lateness: Histogram,
    /// Packets read from the hosts.
    pub packets_in: u64,
    /// Packets written to the hosts.
    pub packets_out: u64,
    /// Packets lost by the forwarder itself: larger than the MTU, or the host refused the write.
    pub self_drops: u64,
    /// Packets read that were not IPv4 (ignored).
    pub not_ipv4: u64,
    /// CPU time the forwarder's thread used, s.
    pub cpu_s: f64,
    /// Wall time it ran, s.
    pub wall_s: f64,
}

/// One sample of a monitored link's queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSample {
    /// Time of the sample, s since the start.
    pub t_s: f64,
    /// Packets waiting.
    pub backlog_packets: u32,
    /// Bytes waiting.
    pub backlog_bytes: u64,
    /// Mean and maximum sojourn of the packets that started transmission since the last
    /// sample, ms.
    pub sojourn_mean_ms: Option<f64>,
    /// Maximum sojourn since the last sample, ms.
    pub sojourn_max_ms: Option<f64>,
    /// Drops since the last sample.
    pub drops: u32,
    /// CE marks since the last sample.
    pub ce_marks: u32,
    /// Throughput since the last sample, bit/s.
    pub throughput_bps: f64,
}

/// The forwarder of one run.
pub struct Forwarder {
    /// The network.
    pub net: EmuNet,
    /// The TUN device of each host, by host index.
    devices: Vec<tun_rs::SyncDevice>,
    /// How it waits.
    pub wait: Wait,
    /// Sample the monitored links every this long.
    pub sample_interval: Dur,
    /// Samples per link (indices as `net.links`; empty for unmonitored links).
    pub samples: Vec<Vec<QueueSample>>,
    /// Its own figures.
    pub timing: Timing,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("hosts", &self.devices.len())
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

/// CPU time used by the calling thread, s.
fn thread_cpu_s() -> f64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0.0, |t| {
        #[expect(
            clippy::cast_precision_loss,
            reason = "seconds of CPU time fit a double exactly"
        )]
        let s = t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9;
        s
    })
}

impl Forwarder {
    /// A forwarder for `net` over the hosts' `devices` (by host index).
    #[must_use]
    pub fn new(net: EmuNet, devices: Vec<tun_rs::SyncDevice>, sample_interval: Dur) -> Self {
        let samples = vec![Vec::new(); net.links.len()];
        Forwarder {
            net,
            devices,
            wait: Wait::Sleep,
            sample_interval,
            samples,
            timing: Timing::default(),
        }
    }

    fn sample(&mut self, t: Time) {
        let interval_s = self.sample_interval.as_secs_f64();
        for (li, link) in self.net.links.iter_mut().enumerate() {
            if !link.cfg.monitor {
                continue;
            }
            let (backlog_packets, backlog_bytes) = (link.backlog_packets(), link.backlog_bytes());
            let st = &mut link.stats;
            let (sum, n, max) = st.interval_sojourn;
            #[expect(
                clippy::cast_precision_loss,
                reason = "sojourn sums are far below 2^52 ns"
            )]
            let mean = (n > 0).then(|| sum as f64 / n as f64 * 1e-6);
            #[expect(clippy::cast_precision_loss, reason = "ns fit a double exactly")]
            let max_ms = (n > 0).then_some(max as f64 * 1e-6);
            #[expect(
                clippy::cast_precision_loss,
                reason = "bytes per interval fit a double"
            )]
            let bps = st.interval_bytes as f64 * 8.0 / interval_s;
            self.samples[li].push(QueueSample {
                t_s: t.as_secs_f64(),
                backlog_packets,
                backlog_bytes,
                sojourn_mean_ms: mean,
                sojourn_max_ms: max_ms,
                drops: u32::try_from(st.interval_drops).unwrap_or(u32::MAX),
                ce_marks: u32::try_from(st.interval_marks).unwrap_or(u32::MAX),
                throughput_bps: bps,
            });
            st.interval_sojourn = (0, 0, 0);
            st.interval_bytes = 0;
            st.interval_drops = 0;
            st.interval_marks = 0;
        }
    }

    /// Forward until `until` (time since `start`) or until `stop` is set; `start` is the
    /// instant the run's time 0 stands for.
    pub fn run(&mut self, start: Instant, until: Time, stop: &Arc<AtomicBool>) {
        let _ = nix::sys::prctl::set_timerslack(1_000);
        let cpu0 = thread_cpu_s();
        let clock = || Time(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX));
        let mut out: Vec<(EmuPacket, Time)> = Vec::new();
        let mut next_sample = Time::ZERO + self.sample_interval;
        let mut buf = [0u8; BUF];
        loop {
            let now = clock();
            if now >= until || stop.load(Ordering::Relaxed) {
                break;
            }
            // Read everything the hosts have sent.
            for h in 0..self.devices.len() {
                while let Ok(n) = self.devices[h].recv(&mut buf) {
                    self.timing.packets_in += 1;
                    let read_at = clock();
                    if n > MAX_PACKET {
                        self.timing.self_drops += 1;
                        continue;
                    }
                    let Some(info) = parse_ipv4(&buf[..n]) else {
                        self.timing.not_ipv4 += 1;
                        continue;
                    };
                    let Some(dst) = host_of(info.dst) else {
                        self.net.unroutable += 1;
                        continue;
                    };
                    let mut data = [0u8; MAX_PACKET];
                    data[..n].copy_from_slice(&buf[..n]);
                    let pkt = EmuPacket {
                        data,
                        len: u16::try_from(n).unwrap_or(u16::MAX),
                        ecn: info.ecn,
                        dscp: info.dscp,
                        key: info.key(),
                        src: u16::try_from(h).unwrap_or(u16::MAX),
                        dst,
                        route: 0,
                        hop: 0,
                        read_at,
                    };
                    self.net.arrive(read_at, pkt, &mut out);
                }
            }
            let now = clock();
            while next_sample <= now {
                self.net.advance(next_sample, &mut out);
                self.sample(next_sample);
                next_sample += self.sample_interval;
            }
            self.net.advance(now, &mut out);
            for (mut pkt, due) in out.drain(..) {
                let len = usize::from(pkt.len);
                let ecn = pkt.ecn;
                write_ecn(&mut pkt.data[..len], ecn);
                let dev = &self.devices[usize::from(pkt.dst)];
                match dev.send(pkt.bytes()) {
                    Ok(_) => {
                        self.timing.packets_out += 1;
                        self.timing
                            .lateness
                            .record(clock().saturating_since(due).as_nanos());
                    }
                    Err(_) => self.timing.self_drops += 1,
                }
            }
            let next = self
                .net
                .next_event()
                .unwrap_or(Time::MAX)
                .min(next_sample)
                .min(until);
            if self.wait == Wait::Sleep {
                let now = clock();
                if next > now {
                    // Wake for the next event, a packet, or at least every 50 ms to see `stop`.
                    let wait = next.saturating_since(now).min(Dur::from_millis(50));
                    let ts =
                        TimeSpec::from_duration(std::time::Duration::from_nanos(wait.as_nanos()));
                    let mut fds: Vec<PollFd<'_>> = self
                        .devices
                        .iter()
                        .map(|d| PollFd::new(d.as_fd(), PollFlags::POLLIN))
                        .collect();
                    let _ = nix::poll::ppoll(&mut fds, Some(ts), None);
                }
            }
        }
        self.timing.cpu_s = thread_cpu_s() - cpu0;
        self.timing.wall_s = start.elapsed().as_secs_f64();
    }
}
