//! A scripted HTTP server for tests: it listens on 127.0.0.1, records every request and answers
//! each with whatever the test's handler returns, so a test can speak any provider's wire protocol
//! (OpenAI, Anthropic, Gemini, Tavily, …) over a real socket. It runs its own tokio runtime on a
//! background thread, so blocking HTTP clients can call it from the test thread.

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::Router;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// The raw query string, without `?`.
    pub query: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    pub body: String,
    pub at: Instant,
}

impl Recorded {
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_lowercase()).map(String::as_str)
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Sent after `body`, one piece per `pace` (see [`Reply::paced_sse`]).
    pub pieces: Vec<String>,
    pub pace: Duration,
}

impl Reply {
    pub fn json(value: serde_json::Value) -> Reply {
        Reply::status(200, value.to_string()).header("content-type", "application/json")
    }

    pub fn status(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.into(),
            pieces: Vec::new(),
            pace: Duration::ZERO,
        }
    }

    /// A server-sent-event stream that sends one event every `pace`, as a model generating
    /// tokens does; [`MockServer::streams`] tells when each went out and whether the client
    /// hung up before the last.
    pub fn paced_sse<S: AsRef<str>>(events: &[S], pace: Duration) -> Reply {
        Reply {
            pieces: events
                .iter()
                .map(|event| format!("data: {}\n\n", event.as_ref()))
                .collect(),
            pace,
            ..Reply::status(200, "").header("content-type", "text/event-stream")
        }
    }

    /// A server-sent-event stream: one `data:` line per event.
    pub fn sse<S: AsRef<str>>(events: &[S]) -> Reply {
        let body: String = events
            .iter()
            .map(|event| format!("data: {}\n\n", event.as_ref()))
            .collect();
        Reply::status(200, body).header("content-type", "text/event-stream")
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// How one paced reply went out.
#[derive(Debug, Clone, Default)]
pub struct Streamed {
    /// When each piece was handed to the connection.
    pub sent: Vec<Instant>,
    /// Pieces the reply had.
    pub planned: usize,
    /// When the server found the client gone, before the last piece.
    pub hung_up: Option<Instant>,
}

struct Shared {
    handler: Box<Handler>,
    requests: Mutex<Vec<Recorded>>,
    streams: Mutex<Vec<Streamed>>,
}

/// A running server; dropping it shuts it down.
pub struct MockServer {
    url: String,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server on a free port that answers every request with `handler`.
    pub fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> MockServer {
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            requests: Mutex::new(Vec::new()),
            streams: Mutex::new(Vec::new()),
        });
        let (shutdown, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let (ready, ready_rx) = std::sync::mpsc::channel();
        let state = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("tokio runtime for the mock server");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind 127.0.0.1:0");
                let address = listener.local_addr().expect("local address");
                ready.send(address).expect("report the address");
                let app = Router::new().fallback(handle).with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = shutdown_rx.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        let address = ready_rx.recv().expect("the mock server started");
        MockServer {
            url: format!("http://{address}"),
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared
            .requests
            .lock()
            .map(|requests| requests.clone())
            .unwrap_or_default()
    }

    /// Every paced reply so far, in the order they started.
    pub fn streams(&self) -> Vec<Streamed> {
        self.shared
            .streams
            .lock()
            .map(|streams| streams.clone())
            .unwrap_or_default()
    }

    /// The requests whose path is `path`.
    pub fn requests_to(&self, path: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|request| request.path == path)
            .collect()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A handler that answers with `replies` in turn, repeating the last one when they run out.
pub fn sequence(replies: Vec<Reply>) -> impl Fn(&Recorded) -> Reply + Send + Sync {
    let next = AtomicUsize::new(0);
    move |_| {
        let index = next.fetch_add(1, Ordering::SeqCst);
        replies
            .get(index)
            .or(replies.last())
            .cloned()
            .unwrap_or_else(|| Reply::status(500, "no reply scripted"))
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let at = Instant::now();
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, 64 << 20).await.unwrap_or_default();
    let recorded = Recorded {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or_default().to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    value.to_str().unwrap_or_default().to_string(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        at,
    };
    if let Ok(mut requests) = shared.requests.lock() {
        requests.push(recorded.clone());
    }
    let handler_state = Arc::clone(&shared);
    let reply = tokio::task::spawn_blocking(move || (handler_state.handler)(&recorded))
        .await
        .unwrap_or_else(|_| Reply::status(500, "the mock handler panicked"));
    let body = if reply.pieces.is_empty() {
        Body::from(reply.body)
    } else {
        paced_body(&shared, reply.body, reply.pieces, reply.pace)
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    for (name, value) in reply.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// A body that sends `first`, then each of `pieces` after `pace`, recording in `shared.streams`
/// when each went out and when the client turned out to be gone.
fn paced_body(shared: &Arc<Shared>, first: String, pieces: Vec<String>, pace: Duration) -> Body {
    let index = match shared.streams.lock() {
        Ok(mut streams) => {
            streams.push(Streamed {
                planned: pieces.len(),
                ..Streamed::default()
            });
            streams.len() - 1
        }
        Err(_) => usize::MAX,
    };
    let record = {
        let shared = Arc::clone(shared);
        move |update: &dyn Fn(&mut Streamed)| {
            if let Some(stream) = shared
                .streams
                .lock()
                .ok()
                .as_mut()
                .and_then(|streams| streams.get_mut(index))
            {
                update(stream);
            }
        }
    };
    // A one-slot channel: a send fails soon after the connection drops the body.
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(1);
    tokio::spawn(async move {
        if sender.send(Ok(first)).await.is_err() {
            return;
        }
        for piece in pieces {
            tokio::time::sleep(pace).await;
            if sender.send(Ok(piece)).await.is_err() {
                record(&|stream| stream.hung_up = Some(Instant::now()));
                return;
            }
            record(&|stream| stream.sent.push(Instant::now()));
        }
    });
    Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver))
}
