//! Real IP packets as the network elements see them.
//!
//! Contract: [`parse_ipv4`] reads what the elements need from an IPv4 header (RFC 791) and the
//! ports of a TCP or UDP header behind it (RFC 9293, RFC 768), and refuses anything else
//! (IPv6, truncated or malformed headers) with `None`. [`EmuPacket`] carries the packet's bytes
//! (at most [`MAX_PACKET`], the TUN devices' MTU) by value: the elements forget the packets they
//! drop, so nothing outside them may hold a packet's buffer. A CE mark set by a queue discipline
//! is written back into the header by [`write_ecn`] before the packet leaves, with the header
//! checksum recomputed (RFC 1071).

use cclab_cc::Time;
use cclab_sim::net::{FlowKey, NetPacket};
use cclab_sim::packet::Ecn;

/// Largest IP packet the emulator carries: the TUN devices' MTU (`ns::MTU`).
pub const MAX_PACKET: usize = 1500;

/// A real IP packet while the elements hold it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EmuPacket {
    /// The packet's bytes (the first `len`).
    pub data: [u8; MAX_PACKET],
    /// Length of the IP packet, bytes.
    pub len: u16,
    /// The ECN field, as the elements left it.
    pub ecn: Ecn,
    /// The DSCP.
    pub dscp: u8,
    /// The 5-tuple's key.
    pub key: FlowKey,
    /// Host (index into the scenario's hosts) that sent it.
    pub src: u16,
    /// Host it is addressed to.
    pub dst: u16,
    /// Its route (index into the emulated network's route table).
    pub route: u32,
    /// The next link of the route it enters.
    pub hop: u16,
    /// When it was read from its host's TUN device.
    pub read_at: Time,
}

impl std::fmt::Debug for EmuPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmuPacket")
            .field("len", &self.len)
            .field("src", &self.src)
            .field("dst", &self.dst)
            .field("ecn", &self.ecn)
            .field("route", &self.route)
            .field("hop", &self.hop)
            .finish_non_exhaustive()
    }
}

impl EmuPacket {
    /// The packet's bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.data[..usize::from(self.len)]
    }
}

impl NetPacket for EmuPacket {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        u32::from(self.len)
    }
    #[inline]
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    #[inline]
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn;
    }
    #[inline]
    fn dscp(&self) -> u8 {
        self.dscp
    }
    #[inline]
    fn flow_key(&self) -> FlowKey {
        self.key
    }
}

/// The fields of an IPv4 packet the emulator routes and classifies by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// IANA protocol number.
    pub proto: u8,
    /// Source port (TCP, UDP), 0 for other protocols.
    pub sport: u16,
    /// Destination port (TCP, UDP), 0 for other protocols.
    pub dport: u16,
    /// The ECN field (RFC 3168 §5).
    pub ecn: Ecn,
    /// The DSCP (RFC 2474).
    pub dscp: u8,
}

impl Ipv4Info {
    /// The flow key of the 5-tuple (addresses IPv4-mapped, as [`FlowKey::from_tuple`]).
    #[must_use]
    pub fn key(&self) -> FlowKey {
        let mapped = |a: [u8; 4]| (0xffff_u128 << 32) | u128::from(u32::from_be_bytes(a));
        FlowKey::from_tuple(
            mapped(self.src),
            mapped(self.dst),
            self.sport,
            self.dport,
            self.proto,
        )
    }
}

/// The ECN field of a TOS byte (its two low bits, RFC 3168 §5).
#[must_use]
pub fn ecn_of(tos: u8) -> Ecn {
    match tos & 0b11 {
        0b00 => Ecn::NotEct,
        0b10 => Ecn::Ect0,
        0b01 => Ecn::Ect1,
        _ => Ecn::Ce,
    }
}

/// The two ECN bits of `ecn`.
#[must_use]
pub fn ecn_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0b00,
        Ecn::Ect0 => 0b10,
        Ecn::Ect1 => 0b01,
        Ecn::Ce => 0b11,
    }
}

/// Read an IPv4 packet's header (and its TCP/UDP ports); `None` if `buf` is not a whole,
/// well-formed IPv4 packet.
#[must_use]
pub fn parse_ipv4(buf: &[u8]) -> Option<Ipv4Info> {
    let first = *buf.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(first & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?]));
    if ihl < 20 || total < ihl || total > buf.len() {
        return None;
    }
    let tos = buf[1];
    let proto = buf[9];
    let src = [buf[12], buf[13], buf[14], buf[15]];
    let dst = [buf[16], buf[17], buf[18], buf[19]];
    // Ports only in the first fragment (fragment offset 0).
    let first_fragment = u16::from_be_bytes([buf[6], buf[7]]) & 0x1fff == 0;
    let (sport, dport) = if matches!(proto, 6 | 17) && first_fragment && total >= ihl + 4 {
        (
            u16::from_be_bytes([buf[ihl], buf[ihl + 1]]),
            u16::from_be_bytes([buf[ihl + 2], buf[ihl + 3]]),
        )
    } else {
        (0, 0)
    };
    Some(Ipv4Info {
        src,
        dst,
        proto,
        sport,
        dport,
        ecn: ecn_of(tos),
        dscp: tos >> 2,
    })
}

/// Write `ecn` into the IPv4 header at the start of `buf` and recompute the header checksum;
/// false (nothing written) if `buf` holds no IPv4 header.
pub fn write_ecn(buf: &mut [u8], ecn: Ecn) -> bool {
    let Some(&first) = buf.first() else {
        return false;
    };
    let ihl = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || ihl < 20 || buf.len() < ihl {
        return false;
    }
    let tos = (buf[1] & !0b11) | ecn_bits(ecn);
    if tos == buf[1] {
        return true;
    }
    buf[1] = tos;
    buf[10] = 0;
    buf[11] = 0;
    let sum = checksum(&buf[..ihl]);
    buf[10..12].copy_from_slice(&sum.to_be_bytes());
    true
}

/// The Internet checksum of `bytes` (RFC 1071: one's complement of the one's complement sum
/// of 16-bit words).
#[must_use]
pub fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for w in bytes.chunks(2) {
        let word = u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "folded to 16 bits by the loop above"
    )]
    let folded = sum as u16;
    !folded
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 60-byte IPv4/TCP packet 10.77.0.1:40000 → 10.77.0.2:5201 with TOS `tos` and a valid
    /// header checksum.
    pub(crate) fn tcp_packet(tos: u8) -> Vec<u8> {
        let mut p = vec![0u8; 60];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&60u16.to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 77, 0, 1]);
        p[16..20].copy_from_slice(&[10, 77, 0, 2]);
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&5201u16.to_be_bytes());
        let sum = checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        p
    }

    #[test]
    fn reads_addresses_ports_ecn_and_dscp() {
        // DSCP 46 (EF), ECT(0).
        let p = tcp_packet((46 << 2) | 0b10);
        let h = parse_ipv4(&p).unwrap();
        assert_eq!(h.src, [10, 77, 0, 1]);
        assert_eq!(h.dst, [10, 77, 0, 2]);
        assert_eq!((h.proto, h.sport, h.dport), (6, 40000, 5201));
        assert_eq!((h.ecn, h.dscp), (Ecn::Ect0, 46));
    }

    /// The two directions of a connection have different keys; the key is that of the
    /// IPv4-mapped 5-tuple.
    #[test]
    fn keys_follow_the_five_tuple() {
        let h = parse_ipv4(&tcp_packet(0)).unwrap();
        let back = Ipv4Info {
            src: h.dst,
            dst: h.src,
            sport: h.dport,
            dport: h.sport,
            ..h
        };
        assert_ne!(h.key(), back.key());
        assert_eq!(h.key(), parse_ipv4(&tcp_packet(0b10)).unwrap().key());
    }

    #[test]
    fn refuses_what_is_not_a_whole_ipv4_packet() {
        let p = tcp_packet(0);
        assert!(parse_ipv4(&p[..40]).is_none(), "truncated");
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert!(parse_ipv4(&v6).is_none());
        let mut short_ihl = p.clone();
        short_ihl[0] = 0x44;
        assert!(parse_ipv4(&short_ihl).is_none());
        assert!(parse_ipv4(&[]).is_none());
    }

    /// A CE mark is written into the header and the checksum still verifies (a header whose
    /// checksum field is right sums to zero, RFC 1071).
    #[test]
    fn ce_mark_is_written_back_with_a_valid_checksum() {
        let mut p = tcp_packet((10 << 2) | 0b10);
        assert_eq!(checksum(&p[..20]), 0);
        assert!(write_ecn(&mut p, Ecn::Ce));
        let h = parse_ipv4(&p).unwrap();
        assert_eq!((h.ecn, h.dscp), (Ecn::Ce, 10));
        assert_eq!(checksum(&p[..20]), 0);
    }
}
