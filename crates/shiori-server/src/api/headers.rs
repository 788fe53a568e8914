//! The headers every response carries, whatever route (or error) produced it: the page may not
//! be framed by another site (a framed page turns a visitor's clicks into the framer's
//! requests, which the forgery guard cannot tell from the page's own), content types are not
//! sniffed, and no URL of this server leaks to the sites its page links to.

use axum::extract::Request;
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The page loads its script, style and data from this server only, has no inline code, and
/// may be framed by no page at all (`frame-ancestors` is what current browsers obey;
/// `X-Frame-Options` is for the older ones).
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// Every header [`secure_headers`] sets, with its value.
pub const SECURITY_HEADERS: [(HeaderName, &str); 4] = [
    (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "no-referrer"),
];

/// Adds [`SECURITY_HEADERS`] to every response.
pub async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
