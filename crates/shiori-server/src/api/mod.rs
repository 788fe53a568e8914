//! The routes and the middleware around them.

mod backup;
mod conversations;
mod documents;
mod guard;
pub(crate) mod headers;
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
use tracing::Instrument;

/// Every route the server answers, with auth, limits, timeouts and request metrics.
pub fn router(state: SharedState) -> Router {
    let upload_limit = DefaultBodyLimit::max(state.options.upload_limit_bytes);
    Router::new()
        .route("/", get(system::page))
        .route("/assets/app.js", get(system::script))
        .route("/assets/style.css", get(system::style))
        .route("/favicon.svg", get(system::favicon))
        .route("/favicon.ico", get(system::favicon))
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
        .route("/api/backup", post(backup::backup))
        .route(
            "/api/documents",
            get(documents::list).post(documents::upload.layer(upload_limit)),
        )
        .route(
            "/api/documents/{id}",
            get(documents::get_one).delete(documents::delete),
        )
        .route("/api/document", get(documents::indexed))
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1/completions", post(openai::completions))
        .route("/v1/embeddings", post(openai::embeddings))
        .nest_service("/mcp", mcp_service(&state))
        .fallback(system::not_found)
        .method_not_allowed_fallback(system::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.options.body_limit_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            bind_mcp_sessions,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), authorize))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .layer(middleware::from_fn(headers::secure_headers))
        .with_state(state)
}

/// MCP over streamable HTTP. The `Host` and `Origin` checks are the guard's, as for every
/// route; open sessions end with the server's shutdown grace.
fn mcp_service(state: &SharedState) -> StreamableHttpService<McpHandler, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    let handler_state = state.clone();
    StreamableHttpService::new(
        move || Ok(McpHandler::new(handler_state.clone())),
        state.mcp_sessions.transport(),
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
        .and_then(bearer_token);
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
        && ["/api/reindex", "/api/eval", "/api/documents", "/api/backup"]
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

/// The credentials of an `Authorization: Bearer <key>` value; the scheme's name is
/// case-insensitive (RFC 7235).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// An MCP session belongs to the key that opened it: a request naming another key's session is
/// answered as if the session did not exist, so a leaked session id reads nothing another key
/// may read.
async fn bind_mcp_sessions(
    State(state): State<SharedState>,
    request: Request,
    next: Next,
) -> Response {
    if !request.uri().path().starts_with("/mcp") {
        return next.run(request).await;
    }
    let key = request
        .extensions()
        .get::<Reader>()
        .and_then(|reader| reader.owner.clone());
    let session = request
        .headers()
        .get(MCP_SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    if let Some(session) = &session {
        if !state.mcp_sessions.belongs_to(session, key.as_deref()) {
            return ApiError::NotFound(format!("no MCP session {session:?}")).into_response();
        }
    }
    let closing = request.method() == Method::DELETE;
    let response = next.run(request).await;
    match session {
        Some(session) if closing && response.status().is_success() => {
            state.mcp_sessions.close(&session);
        }
        None => {
            let opened = response
                .headers()
                .get(MCP_SESSION_HEADER)
                .and_then(|value| value.to_str().ok());
            if let Some(opened) = opened {
                state.mcp_sessions.open(opened, key).await;
            }
        }
        Some(_) => {}
    }
    response
}

/// The header in which MCP's streamable HTTP transport names a session.
const MCP_SESSION_HEADER: &str = "mcp-session-id";

/// Counts requests by route template (not raw path, so ids do not explode the label set).
async fn count(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let method = request.method().to_string();
    // The root of the request's trace: every span of the work it starts is under it.
    let span = tracing::info_span!(
        "request",
        otel.name = %format!("{method} {route}"),
        http.request.method = %method,
        http.route = %route,
        http.response.status_code = tracing::field::Empty,
    );
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status().as_u16();
    span.record("http.response.status_code", i64::from(status));
    state.metrics.record_request(&route, &method, status);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for value in ["Bearer k", "bearer k", "BEARER k", "Bearer  k"] {
            assert_eq!(bearer_token(value), Some("k"), "{value}");
        }
        for value in ["Basic k", "Bearerk", "Bearer"] {
            assert_eq!(bearer_token(value), None, "{value}");
        }
    }
}
