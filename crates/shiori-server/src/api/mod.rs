//! The routes and the middleware around them.

mod conversations;
mod documents;
mod guard;
mod index;
mod query;
mod system;

pub use query::QueryRequest;

use crate::error::ApiError;
use crate::mcp::McpHandler;
use crate::openai;
use crate::state::SharedState;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::handler::Handler;
use axum::http::{header, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use shiori_engine::Reader;
use std::sync::Arc;

/// Every route the server answers, with auth, limits, timeouts and request metrics.
pub fn router(state: SharedState) -> Router {
    let upload_limit = DefaultBodyLimit::max(state.options.upload_limit_bytes);
    Router::new()
        .route("/", get(system::page))
        .route("/assets/app.js", get(system::script))
        .route("/assets/style.css", get(system::style))
        .route("/healthz", get(system::healthz))
        .route("/metrics", get(system::metrics))
        .route("/api/openapi.json", get(system::openapi))
        .route("/api/stats", get(system::stats))
        .route("/api/query", post(query::query))
        .route(
            "/api/conversations",
            get(conversations::list).post(conversations::start),
        )
        .route(
            "/api/conversations/{id}",
            get(conversations::get_one).delete(conversations::delete),
        )
        .route(
            "/api/reindex",
            get(index::reindex_status).post(index::reindex),
        )
        .route("/api/eval", post(index::eval))
        .route(
            "/api/documents",
            get(documents::list).post(documents::upload.layer(upload_limit)),
        )
        .route(
            "/api/documents/{id}",
            get(documents::get_one).delete(documents::delete),
        )
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1/completions", post(openai::completions))
        .route("/v1/embeddings", post(openai::embeddings))
        .nest_service("/mcp", mcp_service(&state))
        .fallback(system::not_found)
        .method_not_allowed_fallback(system::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.options.body_limit_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(middleware::from_fn_with_state(state.clone(), redact_errors))
        .layer(middleware::from_fn_with_state(state.clone(), authorize))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .with_state(state)
}

/// MCP over streamable HTTP. The `Host` and `Origin` checks are the guard's, as for every
/// route; open sessions end with the server's shutdown grace.
fn mcp_service(state: &SharedState) -> StreamableHttpService<McpHandler, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    let handler_state = state.clone();
    StreamableHttpService::new(
        move || Ok(McpHandler::new(handler_state.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// With API keys configured, `/api/...`, `/v1/...`, `/mcp` and `/metrics` need
/// `Authorization: Bearer <key>` and read as that key's [`Reader`]; the page, its assets and
/// `/healthz` stay open.
/// Without keys every request reads as the machine's owner.
async fn authorize(State(state): State<SharedState>, mut request: Request, next: Next) -> Response {
    let keys = &state.options.keys;
    let protected = PROTECTED_PREFIXES
        .iter()
        .any(|prefix| request.uri().path().starts_with(prefix));
    if keys.is_empty() || !protected {
        request.extensions_mut().insert(Reader::owner());
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match presented.and_then(|presented| keys.reader(presented)) {
        Some(reader) => {
            let reader = reader.clone();
            request.extensions_mut().insert(reader);
            next.run(request).await
        }
        None => ApiError::Unauthorized.into_response(),
    }
}

/// The routes behind the API key: Shiori's own API, the OpenAI-compatible one, MCP and the
/// metrics (which count the whole index).
const PROTECTED_PREFIXES: [&str; 4] = ["/api/", "/v1/", "/mcp", "/metrics"];

/// Answers 503 when a request outlives its budget: writes get the long one.
async fn timeout(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let is_write = request.method() != Method::GET
        && ["/api/reindex", "/api/eval", "/api/documents"]
            .iter()
            .any(|prefix| path.starts_with(prefix));
    // An answer out of time first stops its model and quotes its sources instead; only one
    // that has not ended after winding down is a 503.
    let limit = if is_write {
        state.options.write_timeout
    } else {
        state.options.request_timeout + crate::answering::WIND_DOWN
    };
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Timeout {
            seconds: limit.as_secs(),
        }
        .into_response(),
    }
}

/// Error bodies lose the source root's absolute path: a message built from an I/O error names
/// the file it failed on, and server paths never leave the server.
async fn redact_errors(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status().is_success() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let Ok(bytes) = axum::body::to_bytes(body, ERROR_BODY_LIMIT).await else {
        return ApiError::Internal("the error response could not be read".into()).into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let redacted = state.engine().shown_paths().redact(&text);
    Response::from_parts(parts, axum::body::Body::from(redacted))
}

/// Error bodies are a short JSON object; anything longer is not one of ours.
const ERROR_BODY_LIMIT: usize = 1 << 20;

/// Counts requests by route template (not raw path, so ids do not explode the label set).
async fn count(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let method = request.method().to_string();
    let response = next.run(request).await;
    state
        .metrics
        .record_request(&route, &method, response.status().as_u16());
    response
}
