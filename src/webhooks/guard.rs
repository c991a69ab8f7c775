//! Where a webhook may send: its URL comes from a tenant, so a delivery
//! must not reach the server's own network (loopback, link-local with the
//! cloud's metadata service, private ranges) unless the server says so
//! (`--webhook-allow-private`). The URL is checked when the webhook is
//! made, and every delivery resolves its host again through a resolver
//! that drops such addresses (a name that resolved to a public address
//! yesterday may resolve to 127.0.0.1 today), and follows no redirects.

use crate::netguard::forbidden;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Longest webhook URL.
pub const MAX_URL_LEN: usize = 2048;

/// Checks a webhook URL's form: http or https, a host, no credentials,
/// at most `MAX_URL_LEN` bytes; and, unless private targets are allowed,
/// a host that is not a forbidden address. Answers the parsed URL.
pub fn check_url(url: &str, allow_private: bool) -> Result<Url, String> {
    if url.len() > MAX_URL_LEN {
        return Err(format!("url is longer than {MAX_URL_LEN} bytes"));
    }
    let parsed = Url::parse(url).map_err(|e| format!("url {url:?} is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "url must be http:// or https://, not {}://",
            parsed.scheme()
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(
            "url must not carry a user or password; the delivery's signature authenticates it"
                .into(),
        );
    }
    let Some(host) = parsed.host() else {
        return Err("url has no host".into());
    };
    if !allow_private {
        let ip = match host {
            url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
            url::Host::Domain(d) if d.eq_ignore_ascii_case("localhost") => {
                Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
            }
            url::Host::Domain(_) => None,
        };
        if let Some(why) = ip.and_then(forbidden) {
            return Err(refusal(url, why));
        }
    }
    Ok(parsed)
}

fn refusal(url: &str, why: &str) -> String {
    format!(
        "url {url:?} is {why}; webhooks may not reach the server's own network (the server's --webhook-allow-private allows it)"
    )
}

/// Resolves the URL's host now and refuses it when any of its addresses is
/// forbidden (or it has none): what a tenant is told when it makes the
/// webhook. Deliveries check again (`GuardedResolver`).
pub async fn check_resolves(url: &Url, allow_private: bool) -> Result<(), String> {
    if allow_private {
        return Ok(());
    }
    let Some(url::Host::Domain(host)) = url.host() else {
        return Ok(());
    };
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("the host {host:?} of the url does not resolve: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("the host {host:?} of the url has no address"));
    }
    for a in addrs {
        if let Some(why) = forbidden(a.ip()) {
            return Err(refusal(url.as_str(), &format!("a name for {why}")));
        }
    }
    Ok(())
}

/// The deliveries' resolver: the system's, without forbidden addresses.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| forbidden(a.ip()).is_none())
                .collect();
            if allowed.is_empty() {
                let why = all
                    .first()
                    .and_then(|a| forbidden(a.ip()))
                    .unwrap_or("an address that cannot be resolved");
                return Err(
                    format!("{host} resolves to {why}, which webhooks may not reach").into(),
                );
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Whether the host of `url` is an address (not a name) that is forbidden:
/// the resolver is not asked about those.
pub fn literal_forbidden(url: &Url) -> Option<&'static str> {
    match url.host()? {
        url::Host::Ipv4(v4) => forbidden(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => forbidden(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_for_form_and_target() {
        assert!(check_url("https://example.com/hook", false).is_ok());
        for (bad, says) in [
            ("ftp://example.com/", "http://"),
            ("https://user:pw@example.com/", "password"),
            ("http://127.0.0.1:8080/", "loopback"),
            ("http://localhost/", "loopback"),
            ("http://[::1]/", "loopback"),
            ("http://169.254.169.254/latest/meta-data", "link-local"),
            ("not a url", "not a URL"),
        ] {
            let err = check_url(bad, false).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(check_url("http://127.0.0.1:8080/", true).is_ok());
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(check_url(&long, false).is_err());
    }
}
