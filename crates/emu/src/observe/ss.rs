//! Parser for the text printed by `ss -tinH` (iproute2): one [`SockStats`] per TCP socket.
//!
//! Contract:
//! - Input is the whole output (or any prefix cut at a line end) of `ss -tinH`, `ss -tiH` or the
//!   same with a header line; nothing is spawned here.
//! - A socket starts at an unindented line `STATE RECV-Q SEND-Q LOCAL:PORT PEER:PORT [...]`; the
//!   indented lines after it (tab or spaces) carry its `tcp_info` fields. A socket without an
//!   info line is still returned, with every info field `None`.
//! - Every field that `ss` did not print, or printed in a form that does not parse, is `None`.
//!   Unknown tokens, unknown keys inside `bbr:(...)` and lines that are neither a socket nor its
//!   info are ignored, because `ss` adds fields from version to version. No input panics.
//! - Units follow `ss`: times in milliseconds, rates in bits per second (`ss` prints them raw
//!   with `-n`, or with the 1000-based prefixes `K`, `M`, `G`, `T`; see [`parse_rate_bps`]).
//! - Addresses are kept as printed: `[::ffff:10.0.0.1]:80` stays an IPv6 (v4-mapped) address;
//!   `addr.ip().to_canonical()` turns it into the IPv4 one. A `%interface` scope is dropped.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The state and `tcp_info` of one TCP socket as `ss -ti` reports it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SockStats {
    /// Socket state as printed, e.g. `ESTAB`, `SYN-SENT`, `FIN-WAIT-1`.
    pub state: String,
    /// Local address and port.
    pub local: SocketAddr,
    /// Peer address and port.
    pub peer: SocketAddr,
    /// Congestion-control algorithm name (`cubic`, `bbr`, `reno`, ...).
    pub cc: Option<String>,
    /// Smoothed RTT (`rtt:SRTT/RTTVAR`), ms.
    pub srtt_ms: Option<f64>,
    /// RTT variation (`rtt:SRTT/RTTVAR`), ms.
    pub rttvar_ms: Option<f64>,
    /// Minimum RTT seen by the kernel (`minrtt:`), ms.
    pub min_rtt_ms: Option<f64>,
    /// Retransmission timeout (`rto:`), ms.
    pub rto_ms: Option<f64>,
    /// Sender maximum segment size (`mss:`), bytes.
    pub mss: Option<u32>,
    /// Congestion window (`cwnd:`), segments.
    pub cwnd: Option<u32>,
    /// Slow-start threshold (`ssthresh:`), segments; absent while still infinite.
    pub ssthresh: Option<u32>,
    /// Bytes sent, retransmissions included (`bytes_sent:`).
    pub bytes_sent: Option<u64>,
    /// Bytes retransmitted (`bytes_retrans:`).
    pub bytes_retrans: Option<u64>,
    /// Bytes acknowledged (`bytes_acked:`; counts the SYN, so one more than the data).
    pub bytes_acked: Option<u64>,
    /// Bytes received (`bytes_received:`).
    pub bytes_received: Option<u64>,
    /// Segments sent (`segs_out:`).
    pub segs_out: Option<u64>,
    /// Segments received (`segs_in:`).
    pub segs_in: Option<u64>,
    /// Segments sent carrying data (`data_segs_out:`).
    pub data_segs_out: Option<u64>,
    /// Segments received carrying data (`data_segs_in:`).
    pub data_segs_in: Option<u64>,
    /// Pacing rate (`pacing_rate`), bit/s; a `/max` suffix is ignored.
    pub pacing_rate_bps: Option<f64>,
    /// Most recent delivery-rate sample (`delivery_rate`), bit/s.
    pub delivery_rate_bps: Option<f64>,
    /// Segments delivered (`delivered:`).
    pub delivered: Option<u64>,
    /// Segments in flight, not yet acknowledged (`unacked:`).
    pub unacked: Option<u32>,
    /// Segments currently retransmitted and unacknowledged (`A` of `retrans:A/B`).
    pub retrans_now: Option<u32>,
    /// Retransmissions over the connection's life (`B` of `retrans:A/B`).
    pub retrans_total: Option<u64>,
    /// Segments currently marked lost (`lost:`).
    pub lost: Option<u32>,
    /// Segments currently SACKed (`sacked:`).
    pub sacked: Option<u32>,
    /// Bytes queued in the socket but not yet sent (`notsent:`).
    pub notsent_bytes: Option<u64>,
    /// BBR bottleneck-bandwidth estimate (`bbr:(bw:...)`), bit/s.
    pub bbr_bw_bps: Option<f64>,
    /// BBR minimum-RTT estimate (`bbr:(mrtt:...)`), ms.
    pub bbr_min_rtt_ms: Option<f64>,
    /// BBR pacing gain (`bbr:(pacing_gain:...)`), ratio.
    pub bbr_pacing_gain: Option<f64>,
    /// BBR cwnd gain (`bbr:(cwnd_gain:...)`), ratio.
    pub bbr_cwnd_gain: Option<f64>,
}

impl SockStats {
    /// A socket with its header fields and no `tcp_info` yet.
    fn new(state: String, local: SocketAddr, peer: SocketAddr) -> Self {
        Self {
            state,
            local,
            peer,
            cc: None,
            srtt_ms: None,
            rttvar_ms: None,
            min_rtt_ms: None,
            rto_ms: None,
            mss: None,
            cwnd: None,
            ssthresh: None,
            bytes_sent: None,
            bytes_retrans: None,
            bytes_acked: None,
            bytes_received: None,
            segs_out: None,
            segs_in: None,
            data_segs_out: None,
            data_segs_in: None,
            pacing_rate_bps: None,
            delivery_rate_bps: None,
            delivered: None,
            unacked: None,
            retrans_now: None,
            retrans_total: None,
            lost: None,
            sacked: None,
            notsent_bytes: None,
            bbr_bw_bps: None,
            bbr_min_rtt_ms: None,
            bbr_pacing_gain: None,
            bbr_cwnd_gain: None,
        }
    }
}

/// Parses the output of `ss -tinH` into one entry per socket, in the order printed.
///
/// Lines that are neither a socket header nor an indented info line following one are skipped,
/// as are sockets whose addresses do not parse (e.g. listeners with peer `*:*`).
#[must_use]
pub fn parse_ss(text: &str) -> Vec<SockStats> {
    let mut socks = Vec::new();
    // Whether the last header line parsed, so indented lines belong to `socks.last_mut()`.
    let mut in_socket = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let (true, Some(sock)) = (in_socket, socks.last_mut()) {
                parse_info_line(sock, line);
            }
            continue;
        }
        match parse_header_line(line) {
            Some(sock) => {
                socks.push(sock);
                in_socket = true;
            }
            None => in_socket = false,
        }
    }
    socks
}

/// Parses a rate as `ss` prints it: `123bps`, `9.5Kbps`, `2.8Mbps`, `1.2Gbps`, `1Tbps`
/// (1000-based prefixes; `k` accepted for `K`), or a bare number, into bit/s.
///
/// Returns `None` for anything else, and for negative or non-finite values.
#[must_use]
pub fn parse_rate_bps(s: &str) -> Option<f64> {
    let s = s.trim();
    let s = s.strip_suffix("bps").unwrap_or(s);
    let (number, scale) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1e3),
        b'M' => (&s[..s.len() - 1], 1e6),
        b'G' => (&s[..s.len() - 1], 1e9),
        b'T' => (&s[..s.len() - 1], 1e12),
        _ => (s, 1.0),
    };
    parse_nonneg_f64(number).map(|v| v * scale)
}

/// Parses `STATE RECV-Q SEND-Q LOCAL PEER [...]`, also with a leading `Netid` column.
fn parse_header_line(line: &str) -> Option<SockStats> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    // The addresses follow the state and the two queue lengths.
    let i = (3..tokens.len().saturating_sub(1))
        .find(|&i| tokens[i - 2].parse::<u64>().is_ok() && tokens[i - 1].parse::<u64>().is_ok())?;
    let local = parse_sock_addr(tokens[i])?;
    let peer = parse_sock_addr(tokens[i + 1])?;
    Some(SockStats::new(tokens[i - 3].to_owned(), local, peer))
}

/// Parses `1.2.3.4:80`, `[::1]:80`, `[::ffff:1.2.3.4]:80`, with an optional `%iface` scope.
fn parse_sock_addr(s: &str) -> Option<SocketAddr> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        // `ss` prints a scope either inside the brackets or between `]` and `:`.
        let (_, port) = after.rsplit_once(':')?;
        (host, port)
    } else {
        s.rsplit_once(':')?
    };
    let host = host.split_once('%').map_or(host, |(h, _)| h);
    let port: u16 = port.parse().ok()?;
    let ip = if host.contains(':') {
        IpAddr::V6(host.parse::<Ipv6Addr>().ok()?)
    } else {
        IpAddr::V4(host.parse::<Ipv4Addr>().ok()?)
    };
    Some(SocketAddr::new(ip, port))
}

/// Bare flags `ss` may print before the congestion-control name.
const FLAGS: &[&str] = &[
    "ts",
    "sack",
    "ecn",
    "ecnseen",
    "ecn_low",
    "fastopen",
    "bidir",
    "app_limited",
];

/// Keys printed after the congestion-control name: the name is looked for only before them.
const AFTER_CC: &[&str] = &["wscale", "rto", "rtt", "mss", "cwnd", "send"];

/// Fills `sock` from one indented line of `tcp_info` fields.
fn parse_info_line(sock: &mut SockStats, line: &str) {
    let mut tokens = line.split_whitespace();
    let mut cc_window_open = sock.cc.is_none();
    while let Some(token) = tokens.next() {
        let Some((key, v)) = token.split_once(':') else {
            // A bare word: a flag, the algorithm's name, or a key whose value is the next token.
            if AFTER_CC.contains(&token) {
                cc_window_open = false;
            }
            match token {
                "send" => {
                    tokens.next();
                }
                "pacing_rate" => sock.pacing_rate_bps = tokens.next().and_then(first_rate),
                "delivery_rate" => sock.delivery_rate_bps = tokens.next().and_then(first_rate),
                _ if cc_window_open && !FLAGS.contains(&token) && is_cc_name(token) => {
                    sock.cc = Some(token.to_owned());
                    cc_window_open = false;
                }
                _ => {}
            }
            continue;
        };
        if AFTER_CC.contains(&key) {
            cc_window_open = false;
        }
        match key {
            "rtt" => {
                let (srtt, rttvar) = v.split_once('/').unwrap_or((v, ""));
                sock.srtt_ms = parse_nonneg_f64(srtt);
                sock.rttvar_ms = parse_nonneg_f64(rttvar);
            }
            "minrtt" => sock.min_rtt_ms = parse_nonneg_f64(v),
            "rto" => sock.rto_ms = parse_nonneg_f64(v),
            "mss" => sock.mss = v.parse().ok(),
            "cwnd" => sock.cwnd = v.parse().ok(),
            "ssthresh" => sock.ssthresh = v.parse().ok(),
            "bytes_sent" => sock.bytes_sent = v.parse().ok(),
            "bytes_retrans" => sock.bytes_retrans = v.parse().ok(),
            "bytes_acked" => sock.bytes_acked = v.parse().ok(),
            "bytes_received" => sock.bytes_received = v.parse().ok(),
            "segs_out" => sock.segs_out = v.parse().ok(),
            "segs_in" => sock.segs_in = v.parse().ok(),
            "data_segs_out" => sock.data_segs_out = v.parse().ok(),
            "data_segs_in" => sock.data_segs_in = v.parse().ok(),
            "delivered" => sock.delivered = v.parse().ok(),
            "unacked" => sock.unacked = v.parse().ok(),
            "retrans" => {
                // Old kernels print only the current count.
                let (now, total) = v.split_once('/').unwrap_or((v, ""));
                sock.retrans_now = now.parse().ok();
                sock.retrans_total = total.parse().ok();
            }
            "lost" => sock.lost = v.parse().ok(),
            "sacked" => sock.sacked = v.parse().ok(),
            "notsent" => sock.notsent_bytes = v.parse().ok(),
            "bbr" => parse_bbr(sock, v),
            _ => {}
        }
    }
}

/// Whether a bare word looks like a congestion-control module name (`cubic`, `bbr`, `dctcp`).
fn is_cc_name(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_alphabetic())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses the inside of `bbr:(bw:9.5Mbps,mrtt:40.1,pacing_gain:1.25,cwnd_gain:2)`.
fn parse_bbr(sock: &mut SockStats, value: &str) {
    let Some(inner) = value.strip_prefix('(') else {
        return;
    };
    let inner = inner.strip_suffix(')').unwrap_or(inner);
    for item in inner.split(',') {
        match item.split_once(':') {
            Some(("bw", v)) => sock.bbr_bw_bps = parse_rate_bps(v),
            Some(("mrtt", v)) => sock.bbr_min_rtt_ms = parse_nonneg_f64(v),
            Some(("pacing_gain", v)) => sock.bbr_pacing_gain = parse_nonneg_f64(v),
            Some(("cwnd_gain", v)) => sock.bbr_cwnd_gain = parse_nonneg_f64(v),
            _ => {}
        }
    }
}

/// Parses `RATE` or `RATE/MAX_RATE` (the form `pacing_rate` takes when a maximum is set).
fn first_rate(token: &str) -> Option<f64> {
    parse_rate_bps(token.split('/').next().unwrap_or(token))
}

/// Parses a finite, non-negative decimal number.
fn parse_nonneg_f64(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured on this lab's host (iproute2 6.1.0, Linux 6.18): a python3 client on
    /// 127.0.0.1 sending with `TCP_CONGESTION = bbr`, `ss -tinH` while data flowed. The
    /// receiver line keeps the trailing spaces `ss` printed.
    const BBR_LOOPBACK: &str = concat!(
        "ESTAB 0      4048896 127.0.0.1:41080 127.0.0.1:45678\n",
        "\t bbr wscale:10,10 rto:204 rtt:1.206/0.169 mss:47616 pmtu:65535 rcvmss:536 advmss:65483 cwnd:12 ssthresh:8 bytes_sent:1909248 bytes_acked:1909249 segs_out:44 segs_in:41 data_segs_out:42 bbr:(bw:685103024bps,mrtt:0.021,pacing_gain:1.25,cwnd_gain:2) send 3790328358bps lastrcv:504 pacing_rate 847814992bps delivery_rate 685122296bps delivered:43 busy:504ms rwnd_limited:504ms(100.0%) rcv_space:65495 rcv_ssthresh:65495 notsent:4048896 minrtt:0.021\n",
        "ESTAB 91136  0       127.0.0.1:45678 127.0.0.1:41080\n",
        "\t bbr wscale:10,10 rto:200 rtt:0.025/0.012 ato:52 mss:32768 pmtu:65535 rcvmss:47616 advmss:65483 cwnd:10 bytes_received:1909248 segs_out:40 segs_in:44 data_segs_in:42 bbr:(bw:0bps,mrtt:0.025) send 104857600000bps lastsnd:504 pacing_rate 299667438136bps delivered:1 app_limited rcv_rtt:0.781 rcv_space:65483 rcv_ssthresh:94833 minrtt:0.025 snd_wnd:65536                    \n",
        "\n",
    );

    /// Same host, `ss -tiH` (no `-n`, so rates carry unit prefixes), a cubic sender.
    const CUBIC_HUMAN_RATES: &str = concat!(
        "ESTAB 0      2620416 127.0.0.1:32928 127.0.0.1:45681\n",
        "\t cubic wscale:10,10 rto:204 rtt:1.192/0.175 mss:47616 pmtu:65535 rcvmss:536 advmss:65483 cwnd:10 bytes_sent:1909248 bytes_acked:1909249 segs_out:44 segs_in:41 data_segs_out:42 send 3.2Gbps lastsnd:8 lastrcv:504 lastack:8 pacing_rate 6.39Gbps delivery_rate 693Mbps delivered:43 busy:504ms rwnd_limited:504ms(100.0%) rcv_space:65495 rcv_ssthresh:65495 notsent:2620416 minrtt:0.026\n",
    );

    /// Same host, `ss -tinH`, python3 sockets on `::1` and on `::ffff:127.0.0.1` (info lines cut).
    const IPV6: &str = concat!(
        "ESTAB 0      4144128 [::1]:57984 [::1]:45680\n",
        "\t bbr wscale:10,10 rto:204 rtt:1.231/0.189 mss:47616 cwnd:12 ssthresh:8 bytes_sent:1814016\n",
        "ESTAB 0      2620416 [::ffff:127.0.0.1]:40216 [::ffff:127.0.0.1]:45691\n",
        "\t cubic wscale:10,10 rto:204 rtt:1.127/0.013 mss:47616 cwnd:10\n",
    );

    /// The example of the fields `ss` prints on a lossy path (written by hand after the
    /// iproute2 format: loopback does not lose packets).
    const LOSSY: &str = concat!(
        "ESTAB 0 0 10.77.0.1:45678 10.77.0.2:5201\n",
        "\t cubic wscale:7,7 rto:240 rtt:40.512/1.2 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:10 ssthresh:20 bytes_sent:123 bytes_retrans:12 bytes_acked:100 bytes_received:1 segs_out:10 segs_in:8 data_segs_out:9 send 2.8Mbps lastsnd:4 lastrcv:4 lastack:4 pacing_rate 5.7Mbps delivery_rate 1.2Mbps delivered:9 busy:20ms unacked:5 retrans:0/3 lost:1 sacked:2 reordering:4 rcv_space:14480 rcv_ssthresh:64088 notsent:1000 minrtt:40.1 snd_wnd:65536\n",
    );

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn bbr_sender_and_receiver_from_real_capture() {
        let socks = parse_ss(BBR_LOOPBACK);
        assert_eq!(socks.len(), 2);

        let tx = &socks[0];
        assert_eq!(tx.state, "ESTAB");
        assert_eq!(tx.local, addr("127.0.0.1:41080"));
        assert_eq!(tx.peer, addr("127.0.0.1:45678"));
        assert_eq!(tx.cc.as_deref(), Some("bbr"));
        assert_eq!(tx.srtt_ms, Some(1.206));
        assert_eq!(tx.rttvar_ms, Some(0.169));
        assert_eq!(tx.min_rtt_ms, Some(0.021));
        assert_eq!(tx.rto_ms, Some(204.0));
        assert_eq!(tx.mss, Some(47616));
        assert_eq!(tx.cwnd, Some(12));
        assert_eq!(tx.ssthresh, Some(8));
        assert_eq!(tx.bytes_sent, Some(1_909_248));
        assert_eq!(tx.bytes_retrans, None);
        assert_eq!(tx.bytes_acked, Some(1_909_249));
        assert_eq!(tx.bytes_received, None);
        assert_eq!(tx.segs_out, Some(44));
        assert_eq!(tx.segs_in, Some(41));
        assert_eq!(tx.data_segs_out, Some(42));
        assert_eq!(tx.data_segs_in, None);
        assert_eq!(tx.pacing_rate_bps, Some(847_814_992.0));
        assert_eq!(tx.delivery_rate_bps, Some(685_122_296.0));
        assert_eq!(tx.delivered, Some(43));
        assert_eq!(tx.unacked, None);
        assert_eq!(tx.retrans_now, None);
        assert_eq!(tx.retrans_total, None);
        assert_eq!(tx.lost, None);
        assert_eq!(tx.sacked, None);
        assert_eq!(tx.notsent_bytes, Some(4_048_896));
        assert_eq!(tx.bbr_bw_bps, Some(685_103_024.0));
        assert_eq!(tx.bbr_min_rtt_ms, Some(0.021));
        assert_eq!(tx.bbr_pacing_gain, Some(1.25));
        assert_eq!(tx.bbr_cwnd_gain, Some(2.0));

        let rx = &socks[1];
        assert_eq!(rx.local, addr("127.0.0.1:45678"));
        assert_eq!(rx.peer, addr("127.0.0.1:41080"));
        assert_eq!(rx.cc.as_deref(), Some("bbr"));
        assert_eq!(rx.srtt_ms, Some(0.025));
        assert_eq!(rx.rttvar_ms, Some(0.012));
        assert_eq!(rx.ssthresh, None);
        assert_eq!(rx.bytes_received, Some(1_909_248));
        assert_eq!(rx.data_segs_in, Some(42));
        assert_eq!(rx.pacing_rate_bps, Some(299_667_438_136.0));
        assert_eq!(rx.delivery_rate_bps, None);
        assert_eq!(rx.delivered, Some(1));
        assert_eq!(rx.notsent_bytes, None);
        // Older BBR output without gains: the gains stay unknown.
        assert_eq!(rx.bbr_bw_bps, Some(0.0));
        assert_eq!(rx.bbr_min_rtt_ms, Some(0.025));
        assert_eq!(rx.bbr_pacing_gain, None);
        assert_eq!(rx.bbr_cwnd_gain, None);
    }

    #[test]
    fn prefixed_rates_from_real_capture() {
        let socks = parse_ss(CUBIC_HUMAN_RATES);
        assert_eq!(socks.len(), 1);
        let s = &socks[0];
        assert_eq!(s.cc.as_deref(), Some("cubic"));
        assert_eq!(s.pacing_rate_bps, Some(6.39e9));
        assert_eq!(s.delivery_rate_bps, Some(693e6));
        assert_eq!(s.bbr_bw_bps, None);
        assert_eq!(s.min_rtt_ms, Some(0.026));
    }

    #[test]
    fn ipv6_and_v4_mapped_addresses() {
        let socks = parse_ss(IPV6);
        assert_eq!(socks.len(), 2);
        assert_eq!(socks[0].local, addr("[::1]:57984"));
        assert_eq!(socks[0].peer, addr("[::1]:45680"));
        assert_eq!(socks[0].cc.as_deref(), Some("bbr"));
        assert_eq!(socks[0].bytes_sent, Some(1_814_016));
        assert_eq!(socks[1].local, addr("[::ffff:127.0.0.1]:40216"));
        assert_eq!(socks[1].peer.ip().to_canonical(), addr("127.0.0.1:1").ip());
        assert_eq!(socks[1].peer.port(), 45691);
        assert_eq!(socks[1].cc.as_deref(), Some("cubic"));
        assert_eq!(socks[1].cwnd, Some(10));
    }

    #[test]
    fn loss_fields() {
        let socks = parse_ss(LOSSY);
        assert_eq!(socks.len(), 1);
        let s = &socks[0];
        assert_eq!(s.local, addr("10.77.0.1:45678"));
        assert_eq!(s.peer, addr("10.77.0.2:5201"));
        assert_eq!(s.srtt_ms, Some(40.512));
        assert_eq!(s.rttvar_ms, Some(1.2));
        assert_eq!(s.rto_ms, Some(240.0));
        assert_eq!(s.mss, Some(1448));
        assert_eq!(s.ssthresh, Some(20));
        assert_eq!(s.bytes_retrans, Some(12));
        assert_eq!(s.bytes_received, Some(1));
        assert_eq!(s.pacing_rate_bps, Some(5.7e6));
        assert_eq!(s.delivery_rate_bps, Some(1.2e6));
        assert_eq!(s.unacked, Some(5));
        assert_eq!(s.retrans_now, Some(0));
        assert_eq!(s.retrans_total, Some(3));
        assert_eq!(s.lost, Some(1));
        assert_eq!(s.sacked, Some(2));
        assert_eq!(s.notsent_bytes, Some(1000));
        assert_eq!(s.min_rtt_ms, Some(40.1));
    }

    #[test]
    fn cc_name_after_flags_and_bbr_with_unknown_keys() {
        let text = "ESTAB 0 0 10.0.0.1:1 10.0.0.2:2\n    ts sack ecn ecnseen bbr wscale:7,7 \
                    rtt:10/5 bbr:(bw:9.5Mbps,mrtt:40.1,pacing_gain:1.25,cwnd_gain:2,\
                    version:3,inflight_hi:100) pacing_rate 5.7Mbps/10Mbps\n";
        let s = &parse_ss(text)[0];
        assert_eq!(s.cc.as_deref(), Some("bbr"));
        assert_eq!(s.srtt_ms, Some(10.0));
        assert_eq!(s.bbr_bw_bps, Some(9.5e6));
        assert_eq!(s.bbr_min_rtt_ms, Some(40.1));
        assert_eq!(s.bbr_pacing_gain, Some(1.25));
        assert_eq!(s.bbr_cwnd_gain, Some(2.0));
        assert_eq!(s.pacing_rate_bps, Some(5.7e6));
    }

    #[test]
    fn header_variants() {
        // Netid column, column header, scoped addresses, a listener, a socket without info.
        let text = "State Recv-Q Send-Q Local Address:Port Peer Address:Port\n\
                    tcp ESTAB 0 0 [fe80::1%eth0]:22 [fe80::2]%eth0:5000\n\
                    LISTEN 0 128 0.0.0.0:22 0.0.0.0:*\n\
                    \t cubic cwnd:99\n\
                    SYN-SENT 0 1 10.0.0.1%veth0:40000 10.0.0.2:80\n";
        let socks = parse_ss(text);
        assert_eq!(socks.len(), 2);
        assert_eq!(socks[0].state, "ESTAB");
        assert_eq!(socks[0].local, addr("[fe80::1]:22"));
        assert_eq!(socks[0].peer, addr("[fe80::2]:5000"));
        // The listener's info line is not given to the socket before it.
        assert_eq!(socks[0].cwnd, None);
        assert_eq!(socks[1].state, "SYN-SENT");
        assert_eq!(socks[1].local, addr("10.0.0.1:40000"));
        assert_eq!(socks[1].cc, None);
    }

    #[test]
    fn malformed_values_are_none() {
        let text = "ESTAB 0 0 10.0.0.1:1 10.0.0.2:2\n\t reno rtt:abc/ cwnd:-1 mss:99999999999 \
                    retrans:x/7 minrtt:nan rto:inf bbr:junk pacing_rate delivery_rate 5Xbps\n";
        let s = &parse_ss(text)[0];
        assert_eq!(s.cc.as_deref(), Some("reno"));
        assert_eq!((s.srtt_ms, s.rttvar_ms), (None, None));
        assert_eq!((s.cwnd, s.mss), (None, None));
        assert_eq!((s.retrans_now, s.retrans_total), (None, Some(7)));
        assert_eq!((s.min_rtt_ms, s.rto_ms), (None, None));
        assert_eq!(s.bbr_bw_bps, None);
        // `pacing_rate` took `delivery_rate` as its value, which is not a rate.
        assert_eq!(s.pacing_rate_bps, None);
    }

    #[test]
    fn rate_units() {
        assert_eq!(parse_rate_bps("123bps"), Some(123.0));
        assert_eq!(parse_rate_bps("9.5Kbps"), Some(9500.0));
        assert_eq!(parse_rate_bps("9.5kbps"), Some(9500.0));
        assert_eq!(parse_rate_bps("2.8Mbps"), Some(2.8e6));
        assert_eq!(parse_rate_bps("1.2Gbps"), Some(1.2e9));
        assert_eq!(parse_rate_bps("1Tbps"), Some(1e12));
        assert_eq!(parse_rate_bps("685103024"), Some(685_103_024.0));
        // `%.3g` may switch to exponent notation.
        assert_eq!(parse_rate_bps("1e+03Mbps"), Some(1e9));
        for bad in [
            "", "bps", "Mbps", "-1Mbps", "nanbps", "infGbps", "1.2Xbps", "1..2Mbps", "€",
        ] {
            assert_eq!(parse_rate_bps(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn garbage_gives_nothing_and_never_panics() {
        for text in [
            "",
            "\n\n",
            "\t cubic cwnd:10\n",
            "hello world\n",
            "ESTAB 0 0 x y\n",
            "[]:[]:\n",
        ] {
            assert!(parse_ss(text).is_empty(), "{text:?}");
        }
        // Every prefix and every single-byte corruption of the real captures.
        let all = [BBR_LOOPBACK, CUBIC_HUMAN_RATES, IPV6, LOSSY].concat();
        for end in 0..all.len() {
            if all.is_char_boundary(end) {
                let _ = parse_ss(&all[..end]);
            }
        }
        let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let mut bytes = all.as_bytes().to_vec();
            let pos = usize::try_from(rng >> 33).unwrap() % bytes.len();
            const ALPHABET: &[u8] = b"[]:/(),% \t\n0x-.*";
            bytes[pos] = ALPHABET[usize::try_from(rng % 16).unwrap() % ALPHABET.len()];
            let _ = parse_ss(&String::from_utf8_lossy(&bytes));
        }
    }
}
