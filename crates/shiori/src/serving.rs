//! `shiori serve` and `shiori mcp`: the server's options from the command line.

use crate::cli::{Cli, McpArgs, ServeArgs};
use crate::open_engine;
use anyhow::Result;
use shiori_engine::{Engine, Keyring};
use shiori_models::assets::ShioriHome;
use shiori_server::{ConnectionLimits, Server, ServerOptions};
use std::time::Duration;

/// `shiori mcp`: the MCP server on stdin/stdout.
pub fn mcp(cli: &Cli, home: &ShioriHome, args: &McpArgs) -> Result<()> {
    let McpArgs { timeout_secs } = args;
    let engine = open_engine(cli, home)?;
    let options = ServerOptions {
        request_timeout: answer_time_limit(&engine, *timeout_secs),
        ..ServerOptions::default()
    };
    Server::new(engine, options)?.run_mcp_stdio()?;
    Ok(())
}

/// `shiori serve`: the HTTP API, `/v1`, `/mcp` and the page.
pub fn serve(cli: &Cli, home: &ShioriHome, args: &ServeArgs) -> Result<()> {
    let ServeArgs {
        addr,
        cors_origins,
        allowed_hosts,
        insecure_no_auth,
        body_limit_kb,
        upload_limit_mb,
        timeout_secs,
        query_concurrency,
        max_queued_queries,
        index_threads,
        header_timeout_secs,
        max_connections,
        max_connections_per_client,
    } = args;
    let engine = open_engine(cli, home)?;
    let defaults = ServerOptions::default();
    let options = ServerOptions {
        keys: Keyring::load(&engine.config.auth)?,
        body_limit_bytes: body_limit_kb * 1024,
        upload_limit_bytes: upload_limit_mb * 1024 * 1024,
        request_timeout: answer_time_limit(&engine, *timeout_secs),
        cors_origins: cors_origins.clone(),
        allowed_hosts: allowed_hosts.clone(),
        insecure_no_auth: *insecure_no_auth,
        query_concurrency: query_concurrency.unwrap_or(defaults.query_concurrency),
        max_queued_queries: max_queued_queries.unwrap_or(defaults.max_queued_queries),
        index_threads: index_threads.unwrap_or(defaults.index_threads),
        connections: ConnectionLimits {
            header_timeout: Duration::from_secs(*header_timeout_secs),
            max_connections: max_connections.unwrap_or(defaults.connections.max_connections),
            max_per_client: *max_connections_per_client,
        },
        ..defaults
    };
    let protected = !options.keys.is_empty();
    Server::new(engine, options)?.run(*addr, |bound| {
        let auth = if protected { " (API key required)" } else { "" };
        eprintln!("shiori serving http://{bound}/{auth}");
    })?;
    Ok(())
}

/// `--timeout-secs`, else the limit the configured models need.
fn answer_time_limit(engine: &Engine, timeout_secs: Option<u64>) -> Duration {
    timeout_secs.map_or_else(
        || shiori_engine::answer_time_limit(&engine.config),
        Duration::from_secs,
    )
}
