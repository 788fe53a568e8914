//! The routes and the middleware around them.

mod conversations;
mod documents;
mod guard;
mod index;
mod query;
mod system;

pub use query::QueryRequest;

use crate::error::ApiError;
use crate::state::SharedState;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::handler::Handler;
use axum::http::{header, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use sha2::{Digest, Sha256};

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
        .fallback(system::not_found)
        .method_not_allowed_fallback(system::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.options.body_limit_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(middleware::from_fn_with_state(state.clone(), authorize))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .with_state(state)
}

/// With an API key configured, `/api/...` needs `Authorization: Bearer <key>`; the page, its
/// assets, `/healthz` and `/metrics` stay open.
async fn authorize(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let Some(key) = state.options.api_key.as_deref() else {
        return next.run(request).await;
    };
    if !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match presented {
        Some(presented) if constant_time_eq(presented.as_bytes(), key.as_bytes()) => {
            next.run(request).await
        }
        _ => ApiError::Unauthorized.into_response(),
    }
}

/// Compares digests, so neither the contents nor the length of the key leak through timing.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (Sha256::digest(a), Sha256::digest(b));
    a.iter().zip(&b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Answers 503 when a request outlives its budget: writes get the long one.
async fn timeout(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let is_write = request.method() != Method::GET
        && ["/api/reindex", "/api/eval", "/api/documents"]
            .iter()
            .any(|prefix| path.starts_with(prefix));
    let limit = if is_write {
        state.options.write_timeout
    } else {
        state.options.request_timeout
    };
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Timeout {
            seconds: limit.as_secs(),
        }
        .into_response(),
    }
}

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
