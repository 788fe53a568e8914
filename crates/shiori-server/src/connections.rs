//! The accept loop: HTTP/1.1 connections with a deadline on every request's headers (which is
//! also how long an idle keep-alive connection stays open) and caps on the connections open at
//! once, over all clients and per client address, so idle or slow clients cannot take the
//! server's file descriptors from the ones that ask something.

use crate::error_heads::SecureErrorHeads;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How long the loop waits after an accept error (out of file descriptors, say) before trying
/// again: at once would spin on an error that only a closing connection ends.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Deadlines and caps of the connections a server keeps.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Longest a client may take to send a request's headers, counted from when the server
    /// waits for them: a new connection, a keep-alive one after its last response, or one
    /// sending a byte at a time is closed after it.
    pub header_timeout: Duration,
    /// Connections open at once; one past it is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Connections open at once from one client address (behind a reverse proxy, every
    /// client has the proxy's address: raise it there).
    pub max_per_client: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
            max_per_client: 128,
        }
    }
}

/// 1,024, or half the open-file limit when that is lower, so that connections never take the
/// descriptors the index and the uploads need.
fn default_max_connections() -> usize {
    let soft_limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| open_files_limit(&limits));
    soft_limit.map_or(512, |limit| (limit / 2).min(1024))
}

/// The soft "Max open files" of `/proc/self/limits`.
fn open_files_limit(limits: &str) -> Option<usize> {
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Serves `router` on `listener` until `shutdown` turns true; then stops accepting, asks every
/// connection to close after its running request, and returns once they have.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    mut shutdown: watch::Receiver<bool>,
) {
    let open = Arc::new(OpenConnections::new(limits));
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopped(&mut shutdown) => break,
        };
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!("cannot accept a connection: {error}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(admitted) = open.admit(peer.ip()) else {
            tracing::debug!("connection from {} refused: too many open", peer.ip());
            continue;
        };
        let connection = serve_connection(stream, router.clone(), limits, shutdown.clone());
        connections.spawn(async move {
            connection.await;
            drop(admitted);
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

async fn serve_connection(
    stream: TcpStream,
    router: Router,
    limits: ConnectionLimits,
    mut shutdown: watch::Receiver<bool>,
) {
    // Answers are small and often streamed: Nagle's delay would hold each event back.
    let _ = stream.set_nodelay(true);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let stream = SecureErrorHeads::new(stream);
    let connection =
        builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
    tokio::pin!(connection);
    let served = tokio::select! {
        served = connection.as_mut() => served,
        () = stopped(&mut shutdown) => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = served {
        tracing::debug!("connection closed: {error}");
    }
}

/// Returns once the server stops (or its sender is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not `Send`: drop it here, not across an await.
    let _ = shutdown.wait_for(|stopping| *stopping).await;
}

/// The connections open now, over all and per client address.
struct OpenConnections {
    limits: ConnectionLimits,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// One open connection's place under the caps, given back when it closes.
struct Admitted {
    open: Arc<OpenConnections>,
    client: IpAddr,
}

impl OpenConnections {
    fn new(limits: ConnectionLimits) -> OpenConnections {
        OpenConnections {
            limits,
            counts: Mutex::new(Counts::default()),
        }
    }

    fn admit(self: &Arc<Self>, client: IpAddr) -> Option<Admitted> {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let from_client = counts.by_client.get(&client).copied().unwrap_or(0);
        if counts.total >= self.limits.max_connections || from_client >= self.limits.max_per_client
        {
            return None;
        }
        counts.total += 1;
        counts.by_client.insert(client, from_client + 1);
        Some(Admitted {
            open: Arc::clone(self),
            client,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut counts = self
            .open
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.total -= 1;
        if let Some(count) = counts.by_client.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                counts.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_connections: usize, max_per_client: usize) -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(1),
            max_connections,
            max_per_client,
        }
    }

    #[test]
    fn a_client_past_its_cap_is_refused_while_others_are_admitted() {
        let open = Arc::new(OpenConnections::new(limits(10, 2)));
        let (one, other): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let first = open.admit(one).unwrap();
        let _second = open.admit(one).unwrap();
        assert!(open.admit(one).is_none());
        assert!(open.admit(other).is_some());
        drop(first);
        assert!(
            open.admit(one).is_some(),
            "a closed connection frees its place"
        );
    }

    #[test]
    fn past_the_total_cap_every_client_is_refused_until_one_closes() {
        let open = Arc::new(OpenConnections::new(limits(2, 2)));
        let clients: Vec<IpAddr> = (1..=3).map(|n| [10, 0, 0, n].into()).collect();
        let first = open.admit(clients[0]).unwrap();
        let _second = open.admit(clients[1]).unwrap();
        assert!(open.admit(clients[2]).is_none());
        drop(first);
        assert!(open.admit(clients[2]).is_some());
        assert!(open.counts.lock().unwrap().by_client.len() <= 2);
    }

    #[test]
    fn the_open_files_limit_is_read_from_proc() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             95086                95086                processes \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(open_files_limit(limits), Some(1024));
        assert_eq!(
            open_files_limit("Max open files  unlimited unlimited files"),
            None
        );
    }
}
