//! What keeps a page on another site from using the server through the visitor's browser:
//! DNS rebinding (a foreign name that resolves to this server) is refused by the `Host` check,
//! and request forgery by refusing every state-changing request that a browser would send
//! cross-site without asking the server first (a CORS preflight, which the server answers only
//! for configured origins).
//!
//! A browser sends a cross-site `POST` without preflight only with a "simple" content type
//! (`text/plain`, a form, multipart) and no custom header, so a `POST` must carry
//! `Content-Type: application/json` or the [`CLIENT_HEADER`]; other methods (`DELETE`, …) are
//! always preflighted. `Origin` and `Sec-Fetch-Site`, where the browser sends them, must also
//! say the request comes from this server's own page or a configured origin.

use crate::error::ApiError;
use crate::state::SharedState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};

/// The header the page (and any client that cannot send JSON, such as a multipart upload)
/// sets to show it is not a form another site submitted.
pub const CLIENT_HEADER: &str = "x-shiori-request";

/// Refuses requests for a foreign `Host`, then forged state-changing requests.
pub async fn guard(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    // A request that names no host cannot be checked against rebinding, so it is refused
    // (HTTP/1.1 requires the header; only hand-made requests omit it).
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let Some(host) = host.or_else(|| request.uri().authority().map(|a| a.as_str())) else {
        return ApiError::BadRequest(
            "the request has no Host header: send the host and port this server is reached at"
                .into(),
        )
        .into_response();
    };
    if !host_allowed(host, state.bound_addr(), &state.options.allowed_hosts) {
        return ApiError::MisdirectedHost(host.to_string()).into_response();
    }
    let method = request.method();
    if !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        let simple_method = *method == Method::POST;
        if let Err(refusal) = check_not_forged(headers, &state.options.cors_origins, simple_method)
        {
            return refusal.into_response();
        }
    }
    next.run(request).await
}

/// The name in a `Host` header: lowercased, without its port or a trailing dot.
fn host_name(host: &str) -> String {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// `localhost`, the address the server listens on (any address when it listens on all of them,
/// a loopback one when it listens on loopback), or a configured name. A name other sites can
/// make resolve here is refused unless configured, which is what stops DNS rebinding.
fn host_allowed(host: &str, bound: Option<SocketAddr>, allowed: &[String]) -> bool {
    let name = host_name(host);
    if name == "localhost" || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name)) {
        return true;
    }
    let Ok(ip) = name.parse::<IpAddr>() else {
        return false;
    };
    match bound.map(|addr| addr.ip()) {
        Some(bound) => {
            ip == bound || bound.is_unspecified() || (bound.is_loopback() && ip.is_loopback())
        }
        None => ip.is_loopback(),
    }
}

/// `simple_method`: a `POST`, which a browser sends cross-site without preflight unless its
/// content type or headers say otherwise (`DELETE` and the rest are always preflighted).
fn check_not_forged(
    headers: &HeaderMap,
    cors_origins: &[String],
    simple_method: bool,
) -> Result<(), ApiError> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let origin = text("origin");
    let configured = origin.is_some_and(|o| cors_origins.iter().any(|c| c == o));
    if let Some(origin) = origin {
        let same_origin = text("host").is_some_and(|host| origin_is_host(origin, host));
        if !same_origin && !configured {
            return Err(ApiError::Forbidden(format!(
                "requests from the origin {origin:?} may not change anything here \
                 (allow it with --cors-origin)"
            )));
        }
    }
    let fetch_site = text("sec-fetch-site").unwrap_or("none");
    if !matches!(fetch_site, "same-origin" | "none") && !configured {
        return Err(ApiError::Forbidden(format!(
            "a {fetch_site} request may not change anything here (allow its origin with --cors-origin)"
        )));
    }
    let is_json = text("content-type").is_some_and(|value| {
        let mime = value.split(';').next().unwrap_or("").trim();
        mime.eq_ignore_ascii_case("application/json")
    });
    if !simple_method || is_json || headers.contains_key(CLIENT_HEADER) {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!(
            "a request that changes anything must send Content-Type: application/json \
             (uploads: the header {CLIENT_HEADER}: 1), which another site's page cannot send"
        )))
    }
}

/// Whether `origin` (`scheme://host[:port]`) names the same host and port as `host`.
fn origin_is_host(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false;
    };
    let default_port = match scheme {
        "http" => "80",
        "https" => "443",
        _ => return false,
    };
    let with_port = |authority: &str| {
        if authority.ends_with(']') || !authority.contains(':') {
            format!("{authority}:{default_port}")
        } else {
            authority.to_string()
        }
    };
    with_port(authority).eq_ignore_ascii_case(&with_port(host))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn bound(addr: &str) -> Option<SocketAddr> {
        addr.parse().ok()
    }

    #[test]
    fn hosts_are_this_server_or_configured_names() {
        let loopback = bound("127.0.0.1:8000");
        for host in [
            "localhost:8000",
            "LOCALHOST",
            "127.0.0.1:8000",
            "127.0.0.2",
            "[::1]:8000",
        ] {
            assert!(host_allowed(host, loopback, &[]), "{host}");
        }
        for host in [
            "attacker.example",
            "attacker.example:8000",
            "10.0.0.5:8000",
            "localhost.evil",
        ] {
            assert!(!host_allowed(host, loopback, &[]), "{host}");
        }
        let names = ["rag.internal".to_string()];
        assert!(host_allowed("RAG.internal.:443", loopback, &names));
        let all = bound("0.0.0.0:8000");
        assert!(host_allowed("192.168.1.20:8000", all, &[]));
        assert!(!host_allowed("intranet.example", all, &[]));
        let one = bound("192.168.1.20:8000");
        assert!(host_allowed("192.168.1.20:8000", one, &[]));
        assert!(!host_allowed("192.168.1.21:8000", one, &[]));
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn simple_cross_site_requests_are_refused() {
        let forged = [
            headers(&[("content-type", "text/plain")]),
            headers(&[("content-type", "multipart/form-data; boundary=x")]),
            headers(&[("content-type", "application/x-www-form-urlencoded")]),
            headers(&[]),
            headers(&[
                ("host", "127.0.0.1:8000"),
                ("origin", "http://evil.example"),
                ("content-type", "application/json"),
            ]),
            headers(&[
                ("sec-fetch-site", "cross-site"),
                ("content-type", "application/json"),
            ]),
            headers(&[
                ("host", "127.0.0.1:8000"),
                ("origin", "null"),
                (CLIENT_HEADER, "1"),
            ]),
        ];
        for request in &forged {
            assert!(check_not_forged(request, &[], true).is_err(), "{request:?}");
        }
    }

    #[test]
    fn the_page_tools_and_configured_origins_pass() {
        let allowed = [
            headers(&[("content-type", "application/json; charset=utf-8")]),
            headers(&[(CLIENT_HEADER, "1")]),
            headers(&[
                ("host", "127.0.0.1:8000"),
                ("origin", "http://127.0.0.1:8000"),
                ("sec-fetch-site", "same-origin"),
                (CLIENT_HEADER, "1"),
            ]),
            headers(&[
                ("host", "localhost"),
                ("origin", "http://localhost:80"),
                ("content-type", "application/json"),
            ]),
        ];
        for request in &allowed {
            assert!(check_not_forged(request, &[], true).is_ok(), "{request:?}");
        }
        assert!(
            check_not_forged(&headers(&[]), &[], false).is_ok(),
            "a DELETE from a tool"
        );
        let from_app = headers(&[
            ("host", "127.0.0.1:8000"),
            ("origin", "https://app.example"),
            ("sec-fetch-site", "cross-site"),
            ("content-type", "application/json"),
        ]);
        assert!(check_not_forged(&from_app, &["https://app.example".into()], true).is_ok());
    }
}
