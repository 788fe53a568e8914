//! Slow and idle clients over real TCP: connections that send no headers, half of them, or
//! nothing after a response are closed after the header deadline, and thousands of idle
//! connections from one address do not keep a request from another from being answered.

mod common;

use common::TestServer;
use shiori_server::{ConnectionLimits, ServerOptions};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const HEALTH_REQUEST: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";

async fn start(connections: ConnectionLimits) -> (TestServer, SocketAddr) {
    let server = TestServer::start(ServerOptions {
        connections,
        ..ServerOptions::default()
    })
    .await;
    let addr = server.url.trim_start_matches("http://").parse().unwrap();
    (server, addr)
}

/// Reads until the server closes `stream`; fails the test if it is still open after `limit`.
async fn closed_by_server(stream: &mut TcpStream, limit: Duration, what: &str) -> Vec<u8> {
    let mut received = Vec::new();
    let reading = async {
        let mut buffer = [0_u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    };
    if tokio::time::timeout(limit, reading).await.is_err() {
        panic!("the {what} connection was still open after {limit:?}");
    }
    received
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_waiting_for_headers_are_closed_after_the_deadline() {
    let (_server, addr) = start(ConnectionLimits {
        header_timeout: Duration::from_secs(1),
        ..ConnectionLimits::default()
    })
    .await;
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut half_headers = TcpStream::connect(addr).await.unwrap();
    half_headers
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .unwrap();
    let mut kept_alive = TcpStream::connect(addr).await.unwrap();
    kept_alive.write_all(HEALTH_REQUEST).await.unwrap();

    let limit = Duration::from_secs(15);
    closed_by_server(&mut silent, limit, "silent").await;
    closed_by_server(&mut half_headers, limit, "half-sent headers").await;
    let answered = closed_by_server(&mut kept_alive, limit, "idle keep-alive").await;
    assert!(
        answered.starts_with(b"HTTP/1.1 200"),
        "the request before the idle time was answered: {}",
        String::from_utf8_lossy(&answered)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_thousand_idle_connections_do_not_keep_a_request_from_being_answered() {
    let open_files = std::fs::read_to_string("/proc/self/limits").unwrap();
    let soft_limit: usize = open_files
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|limit| limit.parse().ok())
        .unwrap();
    assert!(
        soft_limit >= 4_500,
        "this test opens 2,000 connections: raise the open-file limit (ulimit -n) above 4,500"
    );
    let (server, addr) = start(ConnectionLimits::default()).await;
    let mut idle = Vec::new();
    for _ in 0..2_000 {
        let socket = TcpSocket::new_v4().unwrap();
        // Another loopback address: another client to the server.
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        idle.push(socket.connect(addr).await.unwrap());
    }
    let response = server
        .client
        .get(server.url("/healthz"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // Past its cap, the idle client's connections were closed as soon as they were accepted.
    let mut reads = tokio::task::JoinSet::new();
    for mut stream in idle.split_off(1_000) {
        reads.spawn(async move {
            let mut byte = [0_u8; 1];
            let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut byte)).await;
            matches!(read, Ok(Ok(0) | Err(_)))
        });
    }
    let closed = reads
        .join_all()
        .await
        .into_iter()
        .filter(|closed| *closed)
        .count();
    assert_eq!(
        closed, 1_000,
        "connections past the per-client cap are closed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reply_hyper_makes_to_oversized_headers_carries_the_security_headers() {
    let (_server, addr) = start(ConnectionLimits::default()).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let oversized = format!(
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    // The server may close before reading all of it; what it answered is still there.
    let _ = stream.write_all(oversized.as_bytes()).await;
    let reply = closed_by_server(&mut stream, Duration::from_secs(15), "oversized").await;
    let reply = String::from_utf8_lossy(&reply).to_ascii_lowercase();
    assert!(reply.starts_with("http/1.1 431"), "{reply}");
    for header in [
        "content-security-policy:",
        "x-frame-options: deny",
        "x-content-type-options: nosniff",
    ] {
        assert!(reply.contains(header), "{header} missing: {reply}");
    }
}
