use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a source could not be listed or an object fetched. Messages name the source or object
/// (never a credential).
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    #[error("{url:?} is not a source Shiori reads: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("{0}")]
    Config(String),
    #[error("{what}: the server answered HTTP {status}{detail}")]
    Status {
        what: String,
        status: u16,
        retry_after: Option<Duration>,
        detail: String,
    },
    /// Shown with the causes inside (an HTTP client's "error sending request" alone does not
    /// say that the connection was refused or a redirect went to another server).
    #[error("{what}: {}", with_causes(cause.as_ref()))]
    Transport {
        what: String,
        /// A failure that may pass (a refused or dropped connection, a timeout).
        transient: bool,
        cause: BoxError,
    },
    #[error("{what}: {message}")]
    Protocol { what: String, message: String },
    #[error("{what} is over the {limit}-byte limit ([ingest] max_file_mb){size}")]
    TooLarge {
        what: String,
        limit: u64,
        /// `" (N bytes)"` when the size is known.
        size: String,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// `error: its cause: the cause's cause …`, each said once.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut shown = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !shown.contains(&said) {
            shown = format!("{shown}: {said}");
        }
        cause = inner.source();
    }
    shown
}

impl ConnectorError {
    pub(crate) fn transport(
        what: impl Into<String>,
        transient: bool,
        source: impl Into<BoxError>,
    ) -> ConnectorError {
        ConnectorError::Transport {
            what: what.into(),
            transient,
            cause: source.into(),
        }
    }

    pub(crate) fn protocol(what: impl Into<String>, message: impl Into<String>) -> ConnectorError {
        ConnectorError::Protocol {
            what: what.into(),
            message: message.into(),
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> ConnectorError {
        ConnectorError::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn too_large(what: impl Into<String>, limit: u64, size: Option<u64>) -> Self {
        ConnectorError::TooLarge {
            what: what.into(),
            limit,
            size: size.map_or(String::new(), |size| format!(" ({size} bytes)")),
        }
    }
}

impl shiori_llm::Retryable for ConnectorError {
    fn transient(&self) -> Option<Option<Duration>> {
        match self {
            ConnectorError::Status {
                status: 408 | 425 | 429 | 500..=599,
                retry_after,
                ..
            } => Some(*retry_after),
            ConnectorError::Transport {
                transient: true, ..
            } => Some(None),
            _ => None,
        }
    }
}
