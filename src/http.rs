//! Outbound HTTP clients (the CLI's, the benchmarks', webhook deliveries):
//! every one is built here, once the process's TLS provider (rustls with
//! ring) is installed; reqwest refuses to build one before.

use std::sync::Once;

/// A client builder, the TLS provider installed.
pub fn client() -> reqwest::ClientBuilder {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        // Another provider installed first (a library's) serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    #[allow(clippy::disallowed_methods)]
    reqwest::Client::builder()
}

/// A client with reqwest's defaults.
pub fn default_client() -> reqwest::Client {
    client()
        .build()
        .unwrap_or_else(|e| panic!("an HTTP client with default settings cannot be built: {e}"))
}
