//! Which addresses a tenant's traffic (webhook deliveries, guests'
//! outbound HTTP) may not reach: the server's own networks (loopback,
//! private and unique-local ranges, link-local with the cloud's metadata
//! service, carrier-grade NAT, multicast, unspecified and reserved), unless
//! the server says otherwise.

use std::net::{IpAddr, Ipv4Addr};

/// Why an address is one that tenants' traffic may not reach, if it is.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => {
            // An IPv4 address in IPv6 clothes is judged as itself.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden_v4(v4);
            }
            let s = v6.segments();
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let o = v6.octets();
                return forbidden_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            }
            if v6.is_unspecified() {
                Some("the unspecified address")
            } else if v6.is_loopback() {
                Some("a loopback address")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else if v6.is_multicast() {
                Some("a multicast address")
            } else {
                None
            }
        }
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
        ] {
            let ip: IpAddr = bad.parse().unwrap();
            assert!(forbidden(ip).is_some(), "{bad}");
        }
        for good in ["93.184.216.34", "2606:2800:220:1::1", "8.8.8.8"] {
            let ip: IpAddr = good.parse().unwrap();
            assert_eq!(forbidden(ip), None, "{good}");
        }
    }
}
