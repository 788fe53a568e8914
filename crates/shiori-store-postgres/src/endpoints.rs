//! Where each statement runs: writes, migrations and the advisory locks on the primary; reads
//! spread over the read replicas that are up, within the lag bound, and have replayed
//! everything this store wrote (or saw written when it opened), else on the primary. A read
//! that a replica fails to answer for want of a connection is run again on the next one, and
//! finally on the primary, so a replica going away loses no query. The replicas' health is
//! checked by a thread of the store's own, so no query waits for a check.

use crate::pool::{self, Connection, Pool};
use crate::{redacted, PostgresError, PostgresOptions};
use postgres::types::PgLsn;
use postgres::Client;
use shiori_store::ReplicaStatus;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How often the replicas' health is checked: a replica coming back or catching up serves
/// again within a second.
const HEALTH_INTERVAL: Duration = Duration::from_secs(1);

/// Longest a read waits for a replica's connection before the next endpoint takes it: a
/// replica that cannot hand one over at once is gone or busy, and either way another answers
/// sooner.
const REPLICA_WAIT: Duration = Duration::from_millis(250);

pub(crate) struct Endpoints(Arc<Shared>);

struct Shared {
    options: PostgresOptions,
    primary: Pool,
    replicas: Vec<Replica>,
    /// Where the next read starts in `replicas`.
    next: AtomicUsize,
    /// The primary's WAL position every read must see: where it was when this store opened,
    /// then after each of its writes.
    must_see: AtomicU64,
}

struct Replica {
    url: String,
    pool: Pool,
    /// `None` until first checked.
    health: Mutex<Option<State>>,
}

#[derive(Clone)]
enum State {
    Up { replayed: u64, lag_ms: u64 },
    Skipped(String),
}

impl State {
    /// Whether a replica in this state may serve a store that must see `must_see`.
    fn serves(&self, must_see: u64) -> bool {
        matches!(self, State::Up { replayed, .. } if *replayed >= must_see)
    }
}

impl Endpoints {
    /// Pools for the primary and every replica, and the thread that checks the replicas;
    /// fails, with the reason, when the primary cannot be reached.
    pub(crate) fn open(options: &PostgresOptions) -> Result<Endpoints, PostgresError> {
        let replicas = options
            .replica_urls
            .iter()
            .map(|url| {
                Ok(Replica {
                    url: url.clone(),
                    pool: pool::pool(url, options)?,
                    health: Mutex::new(None),
                })
            })
            .collect::<Result<Vec<_>, PostgresError>>()?;
        let shared = Arc::new(Shared {
            options: options.clone(),
            primary: pool::pool(&options.url, options)?,
            replicas,
            next: AtomicUsize::new(0),
            must_see: AtomicU64::new(0),
        });
        let endpoints = Endpoints(shared);
        endpoints.wrote()?;
        if !endpoints.0.replicas.is_empty() {
            let watched = Arc::downgrade(&endpoints.0);
            std::thread::Builder::new()
                .name("shiori-replica-health".into())
                .spawn(move || watch(watched))
                .map_err(PostgresError::Thread)?;
        }
        Ok(endpoints)
    }

    /// A connection to the primary.
    pub(crate) fn primary(&self) -> Result<Connection, PostgresError> {
        let shared = &self.0;
        pool::get(&shared.primary, &shared.options.url, &shared.options)
    }

    /// Records that this store wrote: its reads from now on need a replica that replayed it.
    /// Without replicas nothing is asked, so a store whose `url` is itself a standby (reads
    /// only) still opens.
    pub(crate) fn wrote(&self) -> Result<(), PostgresError> {
        if self.0.replicas.is_empty() {
            return Ok(());
        }
        let position = current_position(&mut *self.primary()?)?;
        self.0.must_see.fetch_max(position, Ordering::SeqCst);
        Ok(())
    }

    /// Runs the read `work` on a usable replica, or on the primary when none is.
    pub(crate) fn read<T>(
        &self,
        work: impl Fn(&mut Client) -> Result<T, PostgresError>,
    ) -> Result<T, PostgresError> {
        let shared = &self.0;
        let count = shared.replicas.len();
        let start = shared.next.fetch_add(1, Ordering::Relaxed);
        let must_see = shared.must_see.load(Ordering::SeqCst);
        for replica in (0..count).map(|i| &shared.replicas[(start + i) % count]) {
            if !replica.usable(must_see) {
                continue;
            }
            let outcome = replica
                .pool
                .get_timeout(REPLICA_WAIT.min(shared.options.connect_timeout))
                .map_err(|source| PostgresError::NoConnection {
                    url: redacted(&replica.url),
                    source,
                })
                .and_then(|mut connection| work(&mut connection));
            match outcome {
                Err(error) if error.is_unavailable() => {
                    replica.record(State::Skipped(format!("unreachable: {error}")));
                }
                done => return done,
            }
        }
        work(&mut *self.primary()?)
    }

    /// Every replica as last checked.
    pub(crate) fn replica_status(&self) -> Vec<ReplicaStatus> {
        let must_see = self.0.must_see.load(Ordering::SeqCst);
        self.0
            .replicas
            .iter()
            .map(|replica| {
                let health = replica.health();
                let serving = health.as_ref().is_some_and(|state| state.serves(must_see));
                let (lag_ms, reason) = match health {
                    Some(State::Up { lag_ms, .. }) if serving => (Some(lag_ms), None),
                    Some(State::Up { lag_ms, .. }) => (
                        Some(lag_ms),
                        Some("has not yet replayed this server's last write".to_string()),
                    ),
                    Some(State::Skipped(reason)) => (None, Some(reason)),
                    None => (None, Some("not checked yet".to_string())),
                };
                ReplicaStatus {
                    name: redacted(&replica.url),
                    serving,
                    lag_ms,
                    reason,
                }
            })
            .collect()
    }
}

/// Checks every replica each [`HEALTH_INTERVAL`] until the store is dropped.
fn watch(shared: Weak<Shared>) {
    while let Some(shared) = shared.upgrade() {
        for replica in &shared.replicas {
            replica.check(&shared.options);
        }
        drop(shared);
        std::thread::sleep(HEALTH_INTERVAL);
    }
}

impl Replica {
    fn health(&self) -> Option<State> {
        self.health.lock().ok().and_then(|health| health.clone())
    }

    /// Whether reads may go here: reachable, within the lag bound, and past `must_see`.
    fn usable(&self, must_see: u64) -> bool {
        self.health().is_some_and(|state| state.serves(must_see))
    }

    fn check(&self, options: &PostgresOptions) {
        let bound = options.max_replica_lag.as_millis() as u64;
        let state = match pool::get(&self.pool, &self.url, options)
            .and_then(|mut connection| replay_state(&mut connection))
        {
            Err(error) => State::Skipped(format!("unreachable: {error}")),
            Ok((_, lag_ms)) if lag_ms > bound => State::Skipped(format!(
                "lagging {lag_ms} ms behind the primary (bound {bound} ms)"
            )),
            Ok((replayed, lag_ms)) => State::Up { replayed, lag_ms },
        };
        self.record(state);
    }

    /// Stores a check's outcome, logging when the replica starts or stops serving.
    fn record(&self, state: State) {
        let Ok(mut slot) = self.health.lock() else {
            return;
        };
        let was_up = matches!(*slot, Some(State::Up { .. }));
        match &state {
            State::Skipped(reason) if was_up || slot.is_none() => {
                tracing::warn!(replica = %redacted(&self.url), "reads skip this replica: {reason}");
            }
            State::Up { .. } if !was_up => {
                tracing::info!(replica = %redacted(&self.url), "reads go to this replica");
            }
            _ => {}
        }
        *slot = Some(state);
    }
}

/// The primary's current WAL position.
fn current_position(client: &mut Client) -> Result<u64, PostgresError> {
    let position: PgLsn = client.query_one("SELECT pg_current_wal_lsn()", &[])?.get(0);
    Ok(u64::from(position))
}

/// A replica's replayed WAL position and how far behind the primary its replay is. A standby
/// that has replayed all it received is not behind, however old its last transaction (an idle
/// primary sends nothing new); a server that is not a standby is never behind.
fn replay_state(client: &mut Client) -> Result<(u64, u64), PostgresError> {
    let row = client.query_one(
        "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                     ELSE pg_current_wal_lsn() END,
                CASE WHEN NOT pg_is_in_recovery()
                       OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                     ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())
                                   * 1000, 0) END::BIGINT",
        &[],
    )?;
    let replayed: Option<PgLsn> = row.get(0);
    let lag_ms: i64 = row.get(1);
    Ok((replayed.map_or(0, u64::from), lag_ms.max(0) as u64))
}
