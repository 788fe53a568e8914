//! The HTTP face of Shiori (`shiori serve`): an axum API over one data directory's `Engine`
//! (query with streaming, reindex, evaluation, uploads, stats, metrics, OpenAPI), the web page
//! embedded in the binary, and the safety around them (API key, limits, timeouts, opt-in CORS).
//! Queries are answered by a serving engine that a write replaces atomically, so a reindex
//! never blocks them and a failed one leaves the previous index serving.

mod admission;
mod answering;
mod api;
mod connections;
mod error;
mod error_heads;
mod freshness;
mod json;
mod mcp;
mod mcp_sessions;
mod metrics;
mod openai;
mod progress;
mod state;
mod uploads;

pub use api::QueryRequest;
pub use connections::ConnectionLimits;
pub use error::ApiError;
pub use state::ServerOptions;

use axum::http::{HeaderValue, Method};
use axum::Router;
use shiori_engine::{Engine, EngineError};
use state::{AppState, SharedState};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// Longest the server takes to stop once signalled, requests running or not.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(4);
use tower_http::cors::CorsLayer;

#[derive(Debug, Error)]
pub enum ServerError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("cannot start the indexing threads: {0}")]
    ThreadPool(#[from] rayon::ThreadPoolBuildError),
    #[error("invalid CORS origin {0:?}")]
    CorsOrigin(String),
    #[error("MCP over stdio: {0}")]
    Mcp(String),
    #[error(
        "refusing to serve {0} without an API key: anyone who reaches it could read and change \
         the index. Set SHIORI_API_KEY, listen on 127.0.0.1, or pass --insecure-no-auth"
    )]
    Unprotected(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// A server over one opened engine.
pub struct Server {
    state: SharedState,
    cors: Option<CorsLayer>,
}

impl Server {
    /// Prepares the server; creates `<data_dir>/uploads/`.
    pub fn new(engine: Engine, options: ServerOptions) -> Result<Server, ServerError> {
        let cors = if options.cors_origins.is_empty() {
            None
        } else {
            let origins = options
                .cors_origins
                .iter()
                .map(|origin| {
                    HeaderValue::from_str(origin)
                        .map_err(|_| ServerError::CorsOrigin(origin.clone()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(
                CorsLayer::new()
                    .allow_origin(origins)
                    .allow_methods([Method::GET, Method::POST, Method::DELETE])
                    .allow_headers([
                        axum::http::header::AUTHORIZATION,
                        axum::http::header::CONTENT_TYPE,
                        axum::http::header::ACCEPT,
                    ]),
            )
        };
        Ok(Server {
            state: Arc::new(AppState::new(engine, options)?),
            cors,
        })
    }

    pub fn router(&self) -> Router {
        let router = api::router(Arc::clone(&self.state));
        match &self.cors {
            Some(cors) => router.layer(cors.clone()),
            None => router,
        }
    }

    /// Serves on `listener` until Ctrl-C or SIGTERM; then cancels running answers, lets their
    /// requests end, and stops after [`SHUTDOWN_GRACE`] at the latest.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> Result<(), ServerError> {
        self.state.listening_on(listener.local_addr()?);
        let stopping = Arc::new(tokio::sync::Notify::new());
        tokio::spawn({
            let (state, stopping) = (Arc::clone(&self.state), Arc::clone(&stopping));
            async move {
                shutdown_signal().await;
                state.shutdown.send_replace(true);
                stopping.notify_one();
            }
        });
        tokio::spawn(freshness::follow_commits(Arc::clone(&self.state)));
        let serving = connections::serve(
            listener,
            self.router(),
            self.state.options.connections,
            self.state.shutdown.subscribe(),
        );
        tokio::select! {
            () = serving => {}
            () = async {
                stopping.notified().await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } => {}
        }
        Ok(())
    }

    /// Serves MCP over stdin and stdout (`shiori mcp`) until the client closes them.
    pub fn run_mcp_stdio(self) -> Result<(), ServerError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let handler = mcp::McpHandler::new(Arc::clone(&self.state));
        let state = Arc::clone(&self.state);
        runtime.block_on(async move {
            tokio::spawn(freshness::follow_commits(state));
            let running = rmcp::ServiceExt::serve(handler, rmcp::transport::stdio())
                .await
                .map_err(|error| ServerError::Mcp(error.to_string()))?;
            running
                .waiting()
                .await
                .map_err(|error| ServerError::Mcp(error.to_string()))?;
            Ok::<_, ServerError>(())
        })?;
        runtime.shutdown_timeout(Duration::from_millis(500));
        Ok(())
    }

    /// Binds `addr` and serves on a runtime of its own; `on_listening` hears the bound address.
    pub fn run(
        self,
        addr: SocketAddr,
        on_listening: impl FnOnce(SocketAddr),
    ) -> Result<(), ServerError> {
        let options = &self.state.options;
        if !addr.ip().is_loopback() && options.keys.is_empty() && !options.insecure_no_auth {
            return Err(ServerError::Unprotected(addr));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let served = runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| ServerError::Bind { addr, source })?;
            on_listening(listener.local_addr()?);
            self.serve(listener).await
        });
        // An answer still computing (a retrieval, say) is not waited for.
        runtime.shutdown_timeout(Duration::from_millis(500));
        served
    }
}

async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            // Without a SIGTERM handler, Ctrl-C still stops the server gracefully.
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
