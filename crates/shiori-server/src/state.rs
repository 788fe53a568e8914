use crate::connections::ConnectionLimits;
use crate::error::ApiError;
use crate::mcp_sessions::McpSessions;
use crate::metrics::Metrics;
use crate::progress::ReindexProgress;
use crate::ServerError;
use arc_swap::ArcSwap;
use serde::Serialize;
use shiori_engine::{Engine, EngineError, Keyring, ProgressCounts};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Semaphore;

/// Limits and switches of a server; [`ServerOptions::default`] is safe for loopback use.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// With any key, every `/api`, `/v1` and `/mcp` route needs `Authorization: Bearer <key>`
    /// and reads as that key's reader.
    pub keys: Keyring,
    /// Largest JSON body.
    pub body_limit_bytes: usize,
    /// Largest multipart upload (all files of one request).
    pub upload_limit_bytes: usize,
    /// Longest a query or read may take before it is answered with 503.
    pub request_timeout: Duration,
    /// Longest a reindex, upload, delete or evaluation may take before the response gives up
    /// (the work itself finishes and is swapped in).
    pub write_timeout: Duration,
    /// Origins allowed to call the API from a browser; empty turns CORS off.
    pub cors_origins: Vec<String>,
    /// Host names the server answers for besides `localhost` and the address it listens on.
    pub allowed_hosts: Vec<String>,
    /// Serve a non-loopback address without an API key (refused otherwise).
    pub insecure_no_auth: bool,
    /// Queries computed at once; the rest wait their turn instead of thrashing the CPU.
    pub query_concurrency: usize,
    /// Queries that may wait for a slot; the next one is answered 503 with `Retry-After`.
    pub max_queued_queries: usize,
    /// Threads a reindex, upload or evaluation computes on: fewer than the cores, so queries
    /// always have one.
    pub index_threads: usize,
    /// Header deadline and caps on open connections.
    pub connections: ConnectionLimits,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            keys: Keyring::default(),
            body_limit_bytes: 64 * 1024,
            upload_limit_bytes: 20 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(600),
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            insecure_no_auth: false,
            query_concurrency: cores() * 2,
            max_queued_queries: cores() * 16,
            index_threads: (cores() / 2).max(1),
            connections: ConnectionLimits::default(),
        }
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// How the last write to the index ended.
#[derive(Debug, Clone, Serialize)]
pub struct LastReindex {
    pub operation: String,
    /// Seconds since the Unix epoch.
    pub finished_at: u64,
    pub ok: bool,
    pub error: Option<String>,
    pub elapsed_ms: f64,
}

pub type SharedState = Arc<AppState>;

/// What every handler shares. Queries read `serving`, which a write replaces in one atomic
/// swap, so readers never wait for the writer. The serving engine's view is pinned to one
/// committed state, so a write in progress (or one that failed half-way) is invisible to it.
pub struct AppState {
    pub serving: ArcSwap<Engine>,
    /// The store's commit count when `serving` was pinned (see [`Engine::commits`]).
    serving_commits: Mutex<Option<u64>>,
    writer: Arc<tokio::sync::Mutex<()>>,
    pub progress: Arc<ReindexProgress>,
    pub last_reindex: Mutex<Option<LastReindex>>,
    pub metrics: Metrics,
    pub query_slots: Arc<Semaphore>,
    /// Queries waiting for a slot (see [`crate::admission`]).
    pub queued: AtomicUsize,
    index_pool: rayon::ThreadPool,
    /// Turns true when the server is told to stop: running answers are cancelled.
    pub shutdown: tokio::sync::watch::Sender<bool>,
    pub options: ServerOptions,
    pub uploads_dir: PathBuf,
    pub mcp_sessions: McpSessions,
    bound: OnceLock<SocketAddr>,
}

impl AppState {
    pub fn new(engine: Engine, options: ServerOptions) -> Result<AppState, ServerError> {
        let uploads_dir = engine.data_dir().join(crate::uploads::UPLOADS_DIR);
        let io_error = |source| EngineError::Io {
            path: uploads_dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&uploads_dir).map_err(io_error)?;
        // Indexed paths are canonical; the uploads folder must compare equal to them.
        let uploads_dir = uploads_dir.canonicalize().map_err(io_error)?;
        for name in crate::uploads::quarantine_leftovers(&uploads_dir).map_err(io_error)? {
            tracing::warn!(
                "the upload {name} was being indexed when the server stopped; it is moved to \
                 uploads/{}/ and not indexed (upload it again once it is fixed, or delete it)",
                crate::uploads::QUARANTINE_DIR
            );
        }
        let commits = pin(&engine)?;
        let index_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.index_threads.max(1))
            .thread_name(|i| format!("shiori-index-{i}"))
            .build()?;
        Ok(AppState {
            serving: ArcSwap::from_pointee(engine),
            serving_commits: Mutex::new(commits),
            writer: Arc::new(tokio::sync::Mutex::new(())),
            progress: Arc::new(ReindexProgress::default()),
            last_reindex: Mutex::new(None),
            metrics: Metrics::default(),
            query_slots: Arc::new(Semaphore::new(options.query_concurrency.max(1))),
            queued: AtomicUsize::new(0),
            index_pool,
            shutdown: tokio::sync::watch::Sender::new(false),
            options,
            uploads_dir,
            mcp_sessions: McpSessions::default(),
            bound: OnceLock::new(),
        })
    }

    /// Records the address the server listens on, which the `Host` check accepts.
    pub fn listening_on(&self, addr: SocketAddr) {
        // A second listener keeps the first address; the server serves one.
        let _ = self.bound.set(addr);
    }

    pub fn bound_addr(&self) -> Option<SocketAddr> {
        self.bound.get().copied()
    }

    pub fn engine(&self) -> Arc<Engine> {
        self.serving.load_full()
    }

    /// Runs `work` on a second engine opened on the same data directory, then swaps a freshly
    /// opened reader in. Queries keep using the old engine throughout; if `work` fails, the old
    /// engine stays. One write at a time: a second gets 409. The catch-up with other
    /// processes' commits ([`AppState::catch_up`]) holds the same lock for a moment; a write
    /// that meets it waits instead.
    pub async fn write<T: Send + 'static>(
        self: &Arc<Self>,
        operation: &str,
        work: impl FnOnce(&mut Engine, &ProgressCounts) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let guard = match Arc::clone(&self.writer).try_lock_owned() {
            Ok(guard) => guard,
            Err(_) if !self.progress.snapshot().running => {
                Arc::clone(&self.writer).lock_owned().await
            }
            Err(_) => {
                return Err(ApiError::Conflict(
                    "another reindex, upload, delete or evaluation is running; retry when it \
                     ends"
                        .into(),
                ))
            }
        };
        let state = Arc::clone(self);
        let operation = operation.to_string();
        let task = tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let running = Running::begin(&state.progress, &operation);
            // Embedding and index building run on the writer's own, smaller thread pool.
            let outcome = state.index_pool.install(|| state.write_blocking(work));
            drop(running);
            let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            state.metrics.record_write(&operation, outcome.is_ok());
            if let Ok(mut last) = state.last_reindex.lock() {
                *last = Some(LastReindex {
                    operation,
                    finished_at: SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs()),
                    ok: outcome.is_ok(),
                    error: outcome
                        .as_ref()
                        .err()
                        .map(|error| state.engine().shown_paths().redact(&error.to_string())),
                    elapsed_ms,
                });
            }
            drop(guard);
            outcome
        });
        task.await?
    }

    fn write_blocking<T>(
        &self,
        work: impl FnOnce(&mut Engine, &ProgressCounts) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let serving = self.engine();
        let mut writer = serving.reopen()?;
        let result = work(&mut writer, self.progress.counts())?;
        // The writer holds tantivy's writer lock; release it before a reader opens.
        drop(writer);
        self.serve_latest(&serving)?;
        Ok(result)
    }

    /// Serves the index's latest commit when another process (`shiori index`, a second
    /// server) committed since the serving engine was pinned; `true` when it swapped. Skipped
    /// while a write of this server runs: that write swaps in its own result.
    pub(crate) fn catch_up(&self) -> Result<bool, ApiError> {
        let Ok(_writing) = self.writer.try_lock() else {
            return Ok(false);
        };
        let serving = self.engine();
        let latest = serving.commits()?;
        if latest == *self.serving_commits.lock().map_err(|_| poisoned())? {
            return Ok(false);
        }
        self.serve_latest(&serving)?;
        Ok(true)
    }

    /// Opens the data directory again, pinned at its latest commit, and swaps it in.
    fn serve_latest(&self, serving: &Engine) -> Result<(), ApiError> {
        let fresh = serving.reopen()?;
        let commits = pin(&fresh)?;
        self.serving.store(Arc::new(fresh));
        *self.serving_commits.lock().map_err(|_| poisoned())? = commits;
        Ok(())
    }
}

/// Pins `engine`'s view and returns the commit count it was pinned at, read first: a commit
/// in between leaves the view newer than the count, which costs one needless reopen, never a
/// missed one.
fn pin(engine: &Engine) -> Result<Option<u64>, EngineError> {
    let commits = engine.commits()?;
    engine.pin_snapshot()?;
    Ok(commits)
}

fn poisoned() -> ApiError {
    ApiError::Internal("the serving engine's state is poisoned".into())
}

/// Marks a write as running until dropped, even if the write panics.
struct Running<'a>(&'a ReindexProgress);

impl<'a> Running<'a> {
    fn begin(progress: &'a ReindexProgress, operation: &str) -> Running<'a> {
        progress.begin(operation);
        Running(progress)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.end();
    }
}
