//! A task's `network.allow` list: which hosts and ports its guests may call,
//! parsed once when the task is defined and matched against each request.

use std::fmt;
use std::net::IpAddr;

/// Most entries one allowlist may have.
pub const MAX_PATTERNS: usize = 64;
/// Longest host name (RFC 1035), and so the longest pattern's host.
const MAX_HOST_LEN: usize = 253;

/// One entry: a host (exact, `*.suffix`, an IP address, or `*` for any)
/// and an optional port. Without a port only the scheme's default port is
/// allowed (80 for http, 443 for https), so `api.example.com` does not open
/// `api.example.com:22`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: HostMatch,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    Any,
    Exact(String),
    /// `*.stripe.com` kept as `.stripe.com`: any name under it, at any
    /// depth, but not `stripe.com` itself.
    Under(String),
    Ip(IpAddr),
}

/// A parsed allowlist. Empty allows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist(Vec<HostPattern>);

impl Allowlist {
    /// Parses every entry, naming each one that is wrong.
    pub fn parse(entries: &[String]) -> Result<Allowlist, Vec<String>> {
        let mut problems = Vec::new();
        if entries.len() > MAX_PATTERNS {
            problems.push(format!(
                "network.allow has {} entries; at most {MAX_PATTERNS} are allowed (use `*.domain` for many hosts of one domain)",
                entries.len()
            ));
        }
        let mut patterns = Vec::with_capacity(entries.len());
        for e in entries {
            match HostPattern::parse(e) {
                Ok(p) => patterns.push(p),
                Err(why) => problems.push(format!(
                    "network.allow entry {:?} {why}",
                    e.chars().take(80).collect::<String>()
                )),
            }
        }
        if problems.is_empty() {
            Ok(Allowlist(patterns))
        } else {
            Err(problems)
        }
    }

    /// Whether a request to `host` (a name or an IP address, IPv6 with or
    /// without brackets) on `port` may go out; `default_port` is its
    /// scheme's.
    pub fn allows(&self, host: &str, port: u16, default_port: u16) -> bool {
        let host = normalize(host);
        let ip = host.parse::<IpAddr>().ok();
        self.0.iter().any(|p| {
            let port_ok = p.port.map_or(port == default_port, |want| want == port);
            port_ok
                && match &p.host {
                    HostMatch::Any => true,
                    HostMatch::Exact(name) => ip.is_none() && *name == host,
                    HostMatch::Under(suffix) => {
                        ip.is_none() && host.len() > suffix.len() && host.ends_with(suffix.as_str())
                    }
                    HostMatch::Ip(want) => ip == Some(*want),
                }
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Lower case, no brackets around an IPv6 address, no trailing dot.
fn normalize(host: &str) -> String {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

impl HostPattern {
    /// Parses `host`, `host:port`, `*.domain[:port]`, `*[:port]`, an IPv4
    /// address or `[IPv6]`, each with an optional port. Says why not.
    pub fn parse(entry: &str) -> Result<HostPattern, String> {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err("is empty".into());
        }
        if entry.contains("://") || entry.contains('/') {
            return Err("must be a host with an optional port, without a scheme or path (e.g. `api.example.com` or `hooks.example.org:8443`)".into());
        }
        let (host, port) = split_port(entry)?;
        let host = normalize(host);
        let matcher = if host == "*" {
            HostMatch::Any
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            HostMatch::Ip(ip)
        } else if let Some(domain) = host.strip_prefix("*.") {
            check_name(domain)?;
            HostMatch::Under(format!(".{domain}"))
        } else {
            check_name(&host)?;
            HostMatch::Exact(host)
        };
        Ok(HostPattern {
            host: matcher,
            port,
        })
    }
}

/// `host:port`, `[v6]:port`, `[v6]`, a bare IPv6 address or a host alone.
fn split_port(entry: &str) -> Result<(&str, Option<u16>), String> {
    let parse_port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("has port {p:?}; a port is a number from 1 to 65535"))
    };
    if let Some(rest) = entry.strip_prefix('[') {
        let (v6, after) = rest.split_once(']').ok_or("opens `[` without closing it")?;
        return match after {
            "" => Ok((v6, None)),
            p => match p.strip_prefix(':') {
                Some(p) => Ok((v6, Some(parse_port(p)?))),
                None => Err("has text after `]` that is not `:port`".into()),
            },
        };
    }
    if entry.parse::<IpAddr>().is_ok() {
        return Ok((entry, None));
    }
    match entry.rsplit_once(':') {
        Some((host, p)) => Ok((host, Some(parse_port(p)?))),
        None => Ok((entry, None)),
    }
}

/// A DNS name: labels of `a-z 0-9 -`, not starting or ending with `-`, 1
/// to 63 bytes each, at most 253 in all. (`_` is allowed too: some
/// service names carry it.)
fn check_name(name: &str) -> Result<(), String> {
    let bad = || {
        Err(format!(
            "is not a host name: use letters, digits, '-' and '.' (a wildcard only as a leading `*.`), at most {MAX_HOST_LEN} characters"
        ))
    };
    if name.is_empty() || name.len() > MAX_HOST_LEN {
        return bad();
    }
    for label in name.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !ok {
            return bad();
        }
    }
    Ok(())
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostMatch::Any => write!(f, "*")?,
            HostMatch::Exact(h) => write!(f, "{h}")?,
            HostMatch::Under(s) => write!(f, "*{s}")?,
            HostMatch::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]")?,
            HostMatch::Ip(ip) => write!(f, "{ip}")?,
        }
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Allowlist {
        Allowlist::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn exact_hosts_take_only_the_default_port_unless_one_is_named() {
        let l = list(&["api.example.com", "hooks.example.org:8443"]);
        assert!(l.allows("api.example.com", 443, 443));
        assert!(l.allows("API.Example.com.", 80, 80));
        assert!(!l.allows("api.example.com", 22, 443));
        assert!(!l.allows("evil.api.example.com", 443, 443));
        assert!(!l.allows("example.com", 443, 443));
        assert!(l.allows("hooks.example.org", 8443, 443));
        assert!(!l.allows("hooks.example.org", 443, 443));
    }

    #[test]
    fn a_wildcard_covers_names_under_the_domain_but_not_the_domain() {
        let l = list(&["*.stripe.com"]);
        assert!(l.allows("api.stripe.com", 443, 443));
        assert!(l.allows("a.b.stripe.com", 443, 443));
        assert!(!l.allows("stripe.com", 443, 443));
        assert!(!l.allows("evilstripe.com", 443, 443));
        assert!(!l.allows("stripe.com.evil.net", 443, 443));
    }

    #[test]
    fn ip_addresses_match_only_themselves() {
        let l = list(&["127.0.0.1:8080", "[::1]:9000"]);
        assert!(l.allows("127.0.0.1", 8080, 80));
        assert!(!l.allows("127.0.0.2", 8080, 80));
        assert!(l.allows("[::1]", 9000, 80));
        assert!(l.allows("::1", 9000, 80));
        assert!(!l.allows("localhost", 8080, 80));
        let any = list(&["*"]);
        assert!(any.allows("anything.example", 443, 443));
        assert!(!any.allows("anything.example", 8443, 443));
        assert!(!Allowlist::default().allows("example.com", 443, 443));
    }

    #[test]
    fn bad_entries_are_each_named() {
        let bad = [
            "",
            "https://x.com",
            "x.com/path",
            "x.com:0",
            "x.com:http",
            "a..b",
            "-a.com",
            "*.*.com",
            "[::1",
            "[::1]x",
        ];
        let err =
            Allowlist::parse(&bad.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err();
        assert_eq!(err.len(), bad.len(), "{err:#?}");
        let many: Vec<String> = (0..=MAX_PATTERNS).map(|i| format!("h{i}.com")).collect();
        assert!(Allowlist::parse(&many).unwrap_err()[0].contains("at most"));
    }

    #[test]
    fn patterns_print_as_written() {
        for p in [
            "api.example.com",
            "*.stripe.com:8443",
            "127.0.0.1:80",
            "[::1]:9",
            "*",
        ] {
            assert_eq!(HostPattern::parse(p).unwrap().to_string(), p);
        }
    }
}
