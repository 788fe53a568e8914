//! Where logs and traces go. Logs: stderr, filtered by `SHIORI_LOG` (default `warn`), always.
//! Traces: to an OpenTelemetry collector over OTLP/HTTP (protobuf), only when one is configured
//! — `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (read by the exporter
//! itself, with the SDK's other `OTEL_*` settings), else `[telemetry] otlp_endpoint` in
//! `shiori.toml`. Off, the spans of the crates cost one disabled-callsite check each.

use crate::cli::Cli;
use crate::output;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use std::io::IsTerminal;
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The crates whose spans make a trace: the engine's own, not the libraries under it (the
/// exporter's HTTP client among them, whose spans would trace the export itself).
const TRACED_CRATES: [&str; 11] = [
    "shiori",
    "shiori_server",
    "shiori_engine",
    "shiori_retrieve",
    "shiori_rag",
    "shiori_llm",
    "shiori_models",
    "shiori_store_embedded",
    "shiori_store_postgres",
    "shiori_connectors",
    "shiori_ingest",
];

/// Flushes the spans not yet sent when the command ends.
pub struct Telemetry(Option<SdkTracerProvider>);

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.0.take() {
            if let Err(error) = provider.shutdown() {
                eprintln!("warning: the last traces were not sent: {error}");
            }
        }
    }
}

/// Installs the log and trace layers for the command `cli` runs.
pub fn init(cli: &Cli) -> Telemetry {
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(|| output::LogWriter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(EnvFilter::try_from_env("SHIORI_LOG").unwrap_or_else(|_| "warn".into()));
    let provider = match tracer_provider(cli) {
        Ok(provider) => provider,
        Err(error) => {
            eprintln!("warning: traces are off: {error}");
            None
        }
    };
    let traces = provider.as_ref().map(|provider| {
        let targets = TRACED_CRATES.iter().fold(Targets::new(), |targets, name| {
            targets.with_target(*name, LevelFilter::INFO)
        });
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("shiori"))
            .with_filter(targets)
    });
    tracing_subscriber::registry()
        .with(logs)
        .with(traces)
        .init();
    Telemetry(provider)
}

/// The provider exporting to the configured collector; `None` when none is configured.
fn tracer_provider(cli: &Cli) -> Result<Option<SdkTracerProvider>, String> {
    let from_env = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
    let configured = shiori_engine::Config::load(&cli.data_dir)
        .ok()
        .and_then(|config| config.telemetry.otlp_endpoint);
    if !from_env && configured.is_none() {
        return Ok(None);
    }
    let client = reqwest::blocking::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|error| error.to_string())?;
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(http_client::Blocking(client));
    // The variables win: the exporter reads them itself when no endpoint is given here.
    if let (false, Some(base)) = (from_env, configured) {
        exporter = exporter.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
    }
    let exporter = exporter.build().map_err(|error| error.to_string())?;
    let resource = Resource::builder().with_service_name("shiori").build();
    Ok(Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build(),
    ))
}

mod http_client {
    //! The exporter's HTTP client: the workspace's reqwest, blocking, which is right on the
    //! batch processor's own thread (outside any async runtime).

    use bytes::Bytes;
    use opentelemetry_http::{HttpClient, HttpError, Request, Response};

    #[derive(Debug)]
    pub(super) struct Blocking(pub(super) reqwest::blocking::Client);

    #[async_trait::async_trait]
    impl HttpClient for Blocking {
        async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
            let (head, body) = request.into_parts();
            let mut outgoing = self
                .0
                .request(head.method, head.uri.to_string())
                .body(body.to_vec());
            for (name, value) in &head.headers {
                outgoing = outgoing.header(name, value);
            }
            let reply = outgoing.send()?;
            let status = reply.status();
            let body = reply.bytes()?;
            Ok(http::Response::builder().status(status).body(body)?)
        }
    }
}
