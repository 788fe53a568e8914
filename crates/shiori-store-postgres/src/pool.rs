//! Connections: one bounded pool per database address, every connection made with the same
//! TLS, time limits and search settings.

use crate::{redacted, PostgresError, PostgresOptions};
use postgres::Client;
use r2d2::{CustomizeConnection, PooledConnection};
use r2d2_postgres::PostgresConnectionManager;
use tokio_postgres_rustls::MakeRustlsConnect;

type Manager = PostgresConnectionManager<MakeRustlsConnect>;
pub(crate) type Pool = r2d2::Pool<Manager>;
pub(crate) type Connection = PooledConnection<Manager>;

/// The connection settings of `url`, with the password and time limits of `options`.
fn config(url: &str, options: &PostgresOptions) -> Result<postgres::Config, PostgresError> {
    let mut config: postgres::Config = url.parse().map_err(|source| PostgresError::Url {
        url: redacted(url),
        source,
    })?;
    if let Some(password) = &options.password {
        config.password(password);
    }
    config
        .ssl_mode(options.tls.client_mode())
        .connect_timeout(options.connect_timeout)
        .keepalives(true);
    Ok(config)
}

/// One connection to `url`, outside any pool (migrations; the real reason a pool could not
/// connect).
pub(crate) fn connect(url: &str, options: &PostgresOptions) -> Result<Client, PostgresError> {
    let mut client = config(url, options)?
        .connect(options.tls.connector()?)
        .map_err(|source| PostgresError::Connect {
            url: redacted(url),
            source,
        })?;
    SessionSettings::of(options)
        .apply(&mut client)
        .map_err(PostgresError::Query)?;
    Ok(client)
}

/// A pool of at most `options.pool_size` connections to `url`. It connects lazily; a caller
/// waits at most `connect_timeout` for a connection.
pub(crate) fn pool(url: &str, options: &PostgresOptions) -> Result<Pool, PostgresError> {
    let manager = PostgresConnectionManager::new(config(url, options)?, options.tls.connector()?);
    Ok(r2d2::Pool::builder()
        .max_size(options.pool_size.max(1))
        .min_idle(Some(0))
        .connection_timeout(options.connect_timeout)
        .connection_customizer(Box::new(SessionSettings::of(options)))
        .error_handler(Box::new(r2d2::NopErrorHandler))
        .build_unchecked(manager))
}

/// A connection from `pool`; when none can be had, the reason comes from a direct attempt
/// (r2d2 keeps only a message).
pub(crate) fn get(
    pool: &Pool,
    url: &str,
    options: &PostgresOptions,
) -> Result<Connection, PostgresError> {
    pool.get().map_err(|timeout| match connect(url, options) {
        Err(error) => error,
        Ok(_) => PostgresError::Exhausted {
            url: redacted(url),
            source: timeout,
        },
    })
}

/// What every session runs with: the HNSW search beam, filtered searches that do not come back
/// short, and the statement time limit.
#[derive(Debug, Clone)]
struct SessionSettings(String);

impl SessionSettings {
    fn of(options: &PostgresOptions) -> SessionSettings {
        SessionSettings(format!(
            "SET hnsw.ef_search = {}; SET hnsw.iterative_scan = relaxed_order; \
             SET statement_timeout = {};",
            options.hnsw.ef_search,
            options.statement_timeout.as_millis()
        ))
    }

    fn apply(&self, client: &mut Client) -> Result<(), postgres::Error> {
        client.batch_execute(&self.0)
    }
}

impl CustomizeConnection<Client, postgres::Error> for SessionSettings {
    fn on_acquire(&self, client: &mut Client) -> Result<(), postgres::Error> {
        self.apply(client)
    }
}
