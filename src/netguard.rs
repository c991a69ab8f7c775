//! Which addresses a tenant's traffic (webhook deliveries, guests'
//! outbound HTTP) may not reach: the server's own networks (loopback,
//! private and unique-local ranges, link-local with the cloud's metadata
//! service, carrier-grade NAT, multicast, unspecified and reserved), unless
//! the server says otherwise.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is one that tenants' traffic may not reach, if it is.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// IPv6: its own special ranges, and every form that carries an IPv4
/// address (mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4,
/// Teredo) judged by the IPv4 rules first, so that no tunnel or
/// translation reaches what the IPv4 address would not.
fn forbidden_v6(v6: Ipv6Addr) -> Option<&'static str> {
    let s = v6.segments();
    let o = v6.octets();
    let v4_at = |i: usize| Ipv4Addr::new(o[i], o[i + 1], o[i + 2], o[i + 3]);
    if v6.is_unspecified() {
        return Some("the unspecified address");
    }
    if v6.is_loopback() {
        return Some("a loopback address");
    }
    // ::ffff:a.b.c.d: an IPv4 address in IPv6 clothes is judged as itself.
    if let Some(v4) = v6.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    // ::ffff:0:a.b.c.d (::ffff:0:0:0/96), IPv4-translated (SIIT, RFC
    // 2765): a stateless translator hands it to the embedded IPv4
    // address, so that is what is judged.
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return forbidden_v4(v4_at(12));
    }
    // ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291): nothing public
    // uses it, and a stack may still route it to the IPv4 address.
    if s[..6] == [0; 6] {
        return Some(forbidden_v4(v4_at(12)).unwrap_or("an IPv4-compatible address"));
    }
    // 64:ff9b::/96, the well-known NAT64 prefix: the gateway connects to
    // the embedded IPv4 address, so that is what is judged.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return forbidden_v4(v4_at(12));
    }
    // 64:ff9b:1::/48 (RFC 8215): NAT64 for the operator's own networks.
    if s[..3] == [0x64, 0xff9b, 1] {
        return Some("a local-use NAT64 address");
    }
    // 2002::/16, 6to4: a relay sends it to the IPv4 address in bits 16-48.
    if s[0] == 0x2002 {
        return Some(forbidden_v4(v4_at(2)).unwrap_or("a 6to4 address (an IPv4 tunnel)"));
    }
    // 2001::/32, Teredo: the server's IPv4 address is in bits 32-64, the
    // client's, inverted, in the last 32.
    if s[..2] == [0x2001, 0] {
        let client = Ipv4Addr::from(!u32::from(v4_at(12)));
        return Some(
            forbidden_v4(v4_at(4))
                .or_else(|| forbidden_v4(client))
                .unwrap_or("a Teredo address (an IPv4 tunnel)"),
        );
    }
    if s[0] & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address")
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if s[0] & 0xffc0 == 0xfec0 {
        Some("a site-local address")
    } else if v6.is_multicast() {
        Some("a multicast address")
    } else if s[..4] == [0x100, 0, 0, 0] {
        Some("a discard-only address")
    } else if s[..2] == [0x2001, 0xdb8] {
        Some("a documentation address")
    } else {
        None
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_unspecified() || o[0] == 0 {
        Some("an address of 'this network'")
    } else if o[0] == 100 && (o[1] & 0xc0) == 64 {
        Some("a carrier-grade NAT address")
    } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
        Some("an IETF protocol address")
    } else if o[0] == 198 && (o[1] & 0xfe) == 18 {
        Some("a benchmarking address")
    } else if matches!(o[..3], [192, 0, 2] | [198, 51, 100] | [203, 0, 113]) {
        Some("a documentation address")
    } else if ip.is_multicast() || ip.is_broadcast() || o[0] >= 240 {
        Some("a multicast or reserved address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_own_networks_are_forbidden() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            // The IPv6 forms that carry or reach IPv4 and local networks.
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff::8.8.8.8",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::1",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:0:7f00:1::1",
            "::127.0.0.1",
            "::8.8.8.8",
            "::a9fe:a9fe",
            "fec0::1",
            "feff::1",
            "100::1",
            "2001:db8::1",
        ] {
            let ip: IpAddr = bad.parse().unwrap();
            assert!(forbidden(ip).is_some(), "{bad}");
        }
        for good in [
            "93.184.216.34",
            "2606:2800:220:1::1",
            "8.8.8.8",
            "64:ff9b::808:808",
            "2001:4860:4860::8888",
        ] {
            let ip: IpAddr = good.parse().unwrap();
            assert_eq!(forbidden(ip), None, "{good}");
        }
    }

    /// A tunnel's or translation's IPv4 address is judged by the IPv4
    /// rules, and says so.
    #[test]
    fn embedded_ipv4_is_judged_as_itself() {
        let why = |s: &str| forbidden(s.parse().unwrap());
        assert_eq!(why("2002:7f00:1::1"), Some("a loopback address"));
        assert_eq!(
            why("2002:808:808::1"),
            Some("a 6to4 address (an IPv4 tunnel)")
        );
        assert_eq!(why("::a9fe:a9fe"), Some("a link-local address"));
        assert_eq!(why("64:ff9b::a00:1"), Some("a private address"));
        // Teredo: server 10.0.0.1, client 127.0.0.1 (inverted: 80ff:fffe).
        assert_eq!(why("2001:0:a00:1::1"), Some("a private address"));
        assert_eq!(
            why("2001:0:808:808:0:0:80ff:fffe"),
            Some("a loopback address")
        );
    }

    /// IPv4-translated (`::ffff:0:a.b.c.d`, SIIT): the IPv4 address it
    /// carries is judged, refused or not, and nothing else about it.
    #[test]
    fn ipv4_translated_is_judged_as_its_ipv4_address() {
        let why = |s: &str| forbidden(s.parse().unwrap());
        assert_eq!(why("::ffff:0:7f00:1"), Some("a loopback address"));
        assert_eq!(why("::ffff:0:127.0.0.1"), Some("a loopback address"));
        assert_eq!(why("::ffff:0:a00:1"), Some("a private address"));
        assert_eq!(why("::ffff:0:a9fe:a9fe"), Some("a link-local address"));
        assert_eq!(why("::ffff:0:6440:1"), Some("a carrier-grade NAT address"));
        assert_eq!(why("::ffff:0:0:0"), Some("an address of 'this network'"));
        // A public address in the same form is that public address.
        assert_eq!(why("::ffff:0:808:808"), None);
        assert_eq!(why("::ffff:0:5db8:d822"), None, "93.184.216.34");
    }
}
