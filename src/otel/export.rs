//! Where traces are sent, as `--otlp-endpoint` and `--otlp-protocol`
//! say, and the batch processor and OTLP exporter that send them.

use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::{BatchConfigBuilder, SpanData, SpanExporter, SpanProcessor};
use opentelemetry_sdk::Resource;
use std::time::Duration;

/// How spans travel to the collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OtlpProtocol {
    /// OTLP over HTTP, protobuf bodies (a collector's port 4318).
    #[default]
    Http,
    /// OTLP over gRPC (a collector's port 4317).
    Grpc,
}

/// Where spans go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtlpEndpoint {
    /// A collector: for HTTP the traces URL (a base URL with no path gets
    /// `/v1/traces`), for gRPC its address.
    Collector {
        url: url::Url,
        protocol: OtlpProtocol,
    },
    /// Spans are made and batched, then dropped: what tracing costs the
    /// server without a collector's, for benchmarks.
    Drop,
}

#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    #[error("--otlp-endpoint {0:?} is not a URL: {1}; give e.g. http://127.0.0.1:4318")]
    Url(String, url::ParseError),
    #[error("--otlp-endpoint {0:?} is not http:// or https://")]
    Scheme(String),
    #[error("--otlp-endpoint {0:?}: gRPC is sent in the clear here; for a collector behind TLS use --otlp-protocol http with an https:// endpoint")]
    GrpcTls(String),
    #[error("cannot set up the OTLP exporter: {0}")]
    Build(String),
}

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// Spans held for export; past them new spans are dropped (and counted
/// by the processor), so a collector that is slow or away never holds up
/// a job.
const MAX_QUEUED_SPANS: usize = 65_536;
/// How often a batch goes out when it is not full (`OTEL_BSP_SCHEDULE_DELAY`
/// overrides it).
const SCHEDULED_DELAY: Duration = Duration::from_secs(1);

impl OtlpEndpoint {
    /// Reads `--otlp-endpoint` and `--otlp-protocol`.
    pub fn parse(s: &str, protocol: OtlpProtocol) -> Result<OtlpEndpoint, OtlpError> {
        let mut url = url::Url::parse(s).map_err(|e| OtlpError::Url(s.to_owned(), e))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(OtlpError::Scheme(s.to_owned()));
        }
        if protocol == OtlpProtocol::Grpc && url.scheme() == "https" {
            return Err(OtlpError::GrpcTls(s.to_owned()));
        }
        if protocol == OtlpProtocol::Http && matches!(url.path(), "" | "/") {
            url.set_path("/v1/traces");
        }
        Ok(OtlpEndpoint::Collector { url, protocol })
    }
}

/// A batch processor sending to the endpoint's exporter.
pub(super) fn processor(endpoint: &OtlpEndpoint) -> Result<Box<dyn SpanProcessor>, OtlpError> {
    let batch = BatchConfigBuilder::default()
        .with_max_queue_size(MAX_QUEUED_SPANS)
        .with_scheduled_delay(
            std::env::var("OTEL_BSP_SCHEDULE_DELAY")
                .ok()
                .and_then(|v| v.parse().ok())
                .map(Duration::from_millis)
                .unwrap_or(SCHEDULED_DELAY),
        )
        .build();
    let resource = Resource::builder_empty()
        .with_service_name("taskbox")
        .build();
    let mut p: Box<dyn SpanProcessor> = match endpoint {
        OtlpEndpoint::Drop => Box::new(
            BatchSpanProcessor::builder(Dropped, Tokio)
                .with_batch_config(batch)
                .build(),
        ),
        OtlpEndpoint::Collector { url, protocol } => {
            let exporter = match protocol {
                OtlpProtocol::Http => opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_http_client(
                        crate::http::client()
                            .timeout(EXPORT_TIMEOUT)
                            .build()
                            .map_err(|e| OtlpError::Build(e.to_string()))?,
                    )
                    .with_endpoint(url.as_str())
                    .with_timeout(EXPORT_TIMEOUT)
                    .build(),
                OtlpProtocol::Grpc => opentelemetry_otlp::SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(url.as_str())
                    .with_timeout(EXPORT_TIMEOUT)
                    .build(),
            }
            .map_err(|e| OtlpError::Build(e.to_string()))?;
            Box::new(
                BatchSpanProcessor::builder(exporter, Tokio)
                    .with_batch_config(batch)
                    .build(),
            )
        }
    };
    p.set_resource(&resource);
    Ok(p)
}

/// An exporter that drops every batch.
#[derive(Debug)]
struct Dropped;

impl SpanExporter for Dropped {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        drop(batch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_read_and_bad_ones_refused() {
        let base = OtlpEndpoint::parse("http://127.0.0.1:4318", OtlpProtocol::Http).unwrap();
        let OtlpEndpoint::Collector { url, .. } = base else {
            panic!()
        };
        assert_eq!(url.as_str(), "http://127.0.0.1:4318/v1/traces");
        let full =
            OtlpEndpoint::parse("https://c.example/otlp/traces", OtlpProtocol::Http).unwrap();
        let OtlpEndpoint::Collector { url, .. } = full else {
            panic!()
        };
        assert_eq!(url.path(), "/otlp/traces");
        let grpc = OtlpEndpoint::parse("http://127.0.0.1:4317", OtlpProtocol::Grpc).unwrap();
        let OtlpEndpoint::Collector { url, .. } = grpc else {
            panic!()
        };
        assert_eq!(url.path(), "/");
        assert!(matches!(
            OtlpEndpoint::parse("127.0.0.1:4318", OtlpProtocol::Http),
            Err(OtlpError::Url(..) | OtlpError::Scheme(..))
        ));
        assert!(matches!(
            OtlpEndpoint::parse("ftp://x/", OtlpProtocol::Http),
            Err(OtlpError::Scheme(..))
        ));
        assert!(matches!(
            OtlpEndpoint::parse("https://c.example:4317", OtlpProtocol::Grpc),
            Err(OtlpError::GrpcTls(..))
        ));
        assert!(matches!(
            OtlpEndpoint::parse("not a url", OtlpProtocol::Grpc),
            Err(OtlpError::Url(..))
        ));
    }
}
