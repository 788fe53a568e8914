//! hyper answers a request it cannot read (headers past its buffer: `431`; a malformed head:
//! `400`) on its own, before any route or middleware runs. This stream adds the security
//! headers every other response carries to such a head as it is written.

use crate::api::headers::SECURITY_HEADERS;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection's stream, with hyper's own error heads completed.
pub(crate) struct SecureErrorHeads<S> {
    inner: S,
    /// An error head with the headers added, still to be written, and the length of the
    /// caller's buffer it stands for.
    pending: Option<(Vec<u8>, usize)>,
}

impl<S> SecureErrorHeads<S> {
    pub(crate) fn new(inner: S) -> Self {
        SecureErrorHeads {
            inner,
            pending: None,
        }
    }
}

/// `bytes` with the security headers after the status line, when they open an error response
/// that lacks them (every response the routes make carries them).
fn completed(bytes: &[u8]) -> Option<Vec<u8>> {
    // Checked first: every write of every response passes here, bodies and streams included.
    if !bytes.starts_with(b"HTTP/1.1 4") && !bytes.starts_with(b"HTTP/1.1 5") {
        return None;
    }
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
    if head.contains("content-security-policy:") {
        return None;
    }
    let line_end = bytes.windows(2).position(|w| w == b"\r\n")? + 2;
    let mut out = bytes[..line_end].to_vec();
    for (name, value) in SECURITY_HEADERS {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out.extend_from_slice(&bytes[line_end..]);
    Some(out)
}

impl<S: AsyncWrite + Unpin> AsyncWrite for SecureErrorHeads<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buffer: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.pending.is_none() {
            match completed(buffer) {
                Some(head) => self.pending = Some((head, buffer.len())),
                None => return Pin::new(&mut self.inner).poll_write(cx, buffer),
            }
        }
        let this = &mut *self;
        while let Some((left, _)) = this.pending.as_mut().filter(|(left, _)| !left.is_empty()) {
            let written = ready!(Pin::new(&mut this.inner).poll_write(cx, left))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            left.drain(..written);
        }
        let stood_for = this.pending.take().map_or(0, |(_, length)| length);
        Poll::Ready(Ok(stood_for))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for SecureErrorHeads<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_error_head_without_the_headers_is_completed() {
        let hyper_431 =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        let completed_head = String::from_utf8(completed(hyper_431).unwrap()).unwrap();
        assert!(completed_head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(completed_head.contains("content-security-policy: default-src 'self'"));
        assert!(completed_head.ends_with("content-length: 0\r\n\r\n"));
        let routed = b"HTTP/1.1 404 Not Found\r\ncontent-security-policy: x\r\n\r\n{}";
        assert_eq!(completed(routed), None);
        assert_eq!(completed(b"HTTP/1.1 200 OK\r\n\r\n"), None);
        assert_eq!(completed(b"1a\r\ndata: HTTP/1.1 404\r\n\r\n"), None);
    }
}
