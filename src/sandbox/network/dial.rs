//! One connection for one guest request: the host resolves the name
//! itself, checks every address it got, and connects to those very
//! addresses (no second lookup to race: a name that answers a public
//! address to the check and 127.0.0.1 to the connect gets nowhere), then
//! speaks TLS for https with the name as the server name.

use super::Outbound;
use crate::sandbox::capture::{Level, LogBuffer, Source};
use std::io;
use std::net::{IpAddr, SocketAddr};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use wasmtime_wasi_http::Error;

/// A connection, plain or TLS.
pub trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Where a request goes: a name or an IP address (no brackets), a port,
/// and whether it is https.
pub struct Target<'a> {
    pub host: &'a str,
    pub port: u16,
    pub tls: bool,
}

/// Resolves, checks and connects by `until`. A refusal is written to the
/// attempt's log in words, since the guest only sees an error code.
pub async fn dial(
    outbound: &Outbound,
    to: &Target<'_>,
    until: Instant,
    log: &LogBuffer,
) -> Result<Box<dyn Stream>, Error> {
    let addrs = resolve(to, until).await?;
    if !outbound.config.allow_private {
        for a in &addrs {
            if let Some(why) = crate::netguard::forbidden(a.ip()) {
                log.line(
                    Level::Warn,
                    Source::Host,
                    &format!(
                        "outbound request to {}:{} refused: it resolves to {}, {why}; guests may not reach the server's own networks (the server's --outbound-allow-private allows it)",
                        to.host,
                        to.port,
                        a.ip()
                    ),
                );
                return Err(Error::DestinationIpProhibited);
            }
        }
    }
    let tcp = connect(&addrs, until).await?;
    let _ = tcp.set_nodelay(true);
    if !to.tls {
        return Ok(Box::new(tcp));
    }
    let config = outbound.tls().map_err(|e| {
        log.line(Level::Error, Source::Host, &e);
        Error::ConfigurationError
    })?;
    let name = match to.host.parse::<IpAddr>() {
        Ok(ip) => rustls::pki_types::ServerName::from(ip),
        Err(_) => rustls::pki_types::ServerName::try_from(to.host.to_owned())
            .map_err(|_| Error::HttpRequestUriInvalid)?,
    };
    let tls = tokio_rustls::TlsConnector::from(config);
    match tokio::time::timeout_at(until, tls.connect(name, tcp)).await {
        Err(_) => Err(Error::ConnectionTimeout),
        Ok(Err(e)) => Err(tls_error(&e)),
        Ok(Ok(stream)) => Ok(Box::new(stream)),
    }
}

/// The addresses to connect to: an IP address as it is, a name resolved.
async fn resolve(to: &Target<'_>, until: Instant) -> Result<Vec<SocketAddr>, Error> {
    if let Ok(ip) = to.host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, to.port)]);
    }
    let found = tokio::time::timeout_at(until, tokio::net::lookup_host((to.host, to.port)))
        .await
        .map_err(|_| Error::DnsTimeout)?
        .map_err(|e| Error::DnsError {
            rcode: Some(e.to_string()),
            info_code: None,
        })?;
    let addrs: Vec<SocketAddr> = found.collect();
    if addrs.is_empty() {
        return Err(Error::DestinationNotFound);
    }
    Ok(addrs)
}

/// Tries each address in turn until one answers, all by `until`.
async fn connect(addrs: &[SocketAddr], until: Instant) -> Result<TcpStream, Error> {
    let mut last = Error::DestinationUnavailable;
    for a in addrs {
        match tokio::time::timeout_at(until, TcpStream::connect(a)).await {
            Err(_) => return Err(Error::ConnectionTimeout),
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = connect_error(e),
        }
    }
    Err(last)
}

fn connect_error(e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
        io::ErrorKind::TimedOut => Error::ConnectionTimeout,
        io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable => {
            Error::DestinationUnavailable
        }
        _ => Error::Connect(e),
    }
}

/// A failed handshake, told apart as far as the guest's error codes go.
fn tls_error(e: &io::Error) -> Error {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidCertificate(_)) => Error::TlsCertificateError,
        Some(rustls::Error::AlertReceived(alert)) => Error::TlsAlertReceived {
            alert_id: Some(u8::from(*alert)),
            alert_message: Some(format!("{alert:?}")),
        },
        _ => Error::TlsProtocolError,
    }
}
