//! The data directory's checks: its configuration, the store, the server's keys, the model
//! providers' keys and the connectors' credentials. Keys are looked for, never shown.

use super::{variable_set, Check, Loaded};
use crate::config::ProjectPath;
use crate::{Config, EmbedderKind, ProviderKind, StoreKind, CONFIG_FILE};
use shiori_connectors::SourceUrl;
use std::path::Path;

pub(super) fn config(data_dir: &Path) -> Loaded {
    if !data_dir.join(CONFIG_FILE).is_file() {
        let check = Check::warn(
            "config",
            format!("no {CONFIG_FILE} in the data directory: the defaults apply"),
            "shiori init",
        );
        return (Config::default(), vec![check]);
    }
    match Config::load(data_dir) {
        Ok(config) => (
            config,
            vec![Check::ok("config", format!("{CONFIG_FILE} loads"))],
        ),
        Err(error) => {
            let check = Check::fail(
                "config",
                error.to_string(),
                format!("correct {CONFIG_FILE} (docs/configuration.md)"),
            );
            (Config::default(), vec![check])
        }
    }
}

pub(super) fn store(data_dir: &Path, config: &Config) -> Vec<Check> {
    match config.store.kind {
        StoreKind::Embedded => vec![embedded_store(data_dir)],
        StoreKind::Postgres => vec![postgres_store(config)],
    }
}

fn embedded_store(data_dir: &Path) -> Check {
    let inspection = match shiori_store_embedded::inspect(data_dir) {
        Ok(Some(inspection)) => inspection,
        Ok(None) => {
            return Check::warn("store", "no index yet", "shiori index PATH");
        }
        Err(error) => {
            return Check::fail(
                "store",
                format!("cannot read the index: {error}"),
                "shiori restore BACKUP into a new data directory",
            )
        }
    };
    let version = inspection.schema_version.unwrap_or_default();
    let detail = format!(
        "schema version {version}, {} chunk(s), {} commit(s)",
        inspection.chunks, inspection.commits
    );
    if inspection.integrity != "ok" {
        return Check::fail(
            "store",
            format!("{detail}; SQLite integrity check: {}", inspection.integrity),
            "shiori restore BACKUP into a new data directory",
        );
    }
    match inspection.derived_stale {
        None => Check::ok(
            "store",
            format!("{detail}; derived indexes match their checksums"),
        ),
        Some(why) => Check::warn(
            "store",
            format!("{detail}; {why}: they are rebuilt the next time the index opens"),
            "shiori stats",
        ),
    }
}

fn postgres_store(config: &Config) -> Check {
    let options = match config.store.postgres(None) {
        Ok(options) => options,
        Err(error) => return Check::fail("store", error.to_string(), "set [store] url"),
    };
    let health = match shiori_store_postgres::inspect(&options) {
        Ok(health) => health,
        Err(error) => {
            return Check::fail(
                "store",
                format!("PostgreSQL is not reachable: {error}"),
                format!(
                    "start the database, check [store] url and {}",
                    config.store.password_env
                ),
            )
        }
    };
    let wanted = shiori_store_postgres::schema_version();
    let extension = |extension: &str| {
        health
            .extensions
            .iter()
            .find(|(name, _)| name == extension)
            .map(|(_, version)| version.as_str())
    };
    let vector = extension("vector");
    let detail = format!(
        "PostgreSQL reachable, schema version {} (this build: {wanted}), pgvector {}, {}",
        health.schema_version,
        vector.unwrap_or("missing"),
        extension("pg_textsearch").map_or(
            "no pg_textsearch (BM25 in SQL: slow past ~100,000 chunks; see docs/postgres.md)"
                .to_string(),
            |version| format!("pg_textsearch {version}")
        )
    );
    if health.schema_version < wanted || vector.is_none() {
        return Check::fail(
            "store",
            detail,
            "shiori init (creates the extension, migrates)",
        );
    }
    Check::ok("store", detail)
}

/// The server's API keys: each configured key's variable must hold its value.
pub(super) fn keys(config: &Config) -> Vec<Check> {
    if config.auth.keys.is_empty() {
        let detail = match variable_set(crate::LEGACY_KEY_VARIABLE) {
            true => "one admin key from SHIORI_API_KEY",
            false => "no API keys: the server answers anyone who reaches it",
        };
        return vec![Check::ok("keys", detail)];
    }
    config
        .auth
        .keys
        .iter()
        .map(|key| {
            let name = format!("key {}", key.name);
            match variable_set(&key.env) {
                true => Check::ok(name, format!("{} is set", key.env)),
                false => Check::fail(
                    name,
                    format!("{} is not set: the server refuses to start", key.env),
                    format!(
                        "export {}=… (or put it in the service's environment file)",
                        key.env
                    ),
                ),
            }
        })
        .collect()
}

/// The providers' API keys: the embedding API's, each chat model's and the web search's.
pub(super) fn providers(config: &Config) -> Vec<Check> {
    let mut wanted: Vec<(String, String)> = Vec::new();
    let embedder = &config.embedder;
    let embedder_key = match embedder.kind {
        EmbedderKind::Openai => Some("OPENAI_API_KEY"),
        EmbedderKind::Gemini => Some("GEMINI_API_KEY"),
        EmbedderKind::E5 | EmbedderKind::Minilm => None,
    };
    if let Some(default) = embedder_key {
        let variable = embedder.api_key_env.as_deref().unwrap_or(default);
        wanted.push(("embedder".into(), variable.into()));
    }
    for (name, model) in &config.llm.models {
        let default = match model.provider {
            ProviderKind::Local => continue,
            ProviderKind::Openai => "OPENAI_API_KEY",
            ProviderKind::Azure => "AZURE_OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Gemini => "GEMINI_API_KEY",
        };
        let variable = model.api_key_env.as_deref().unwrap_or(default);
        wanted.push((format!("chat model {name}"), variable.into()));
    }
    if let Some(search) = &config.web_search {
        if let Some(variable) = &search.api_key_env {
            wanted.push(("web search".into(), variable.clone()));
        }
    }
    wanted
        .into_iter()
        .map(|(what, variable)| match variable_set(&variable) {
            true => Check::ok(what, format!("{variable} is set")),
            // A local OpenAI-compatible server (Ollama, llama.cpp) may need no key.
            false => Check::warn(
                what,
                format!("{variable} is not set: calls are sent without a key"),
                format!("export {variable}=…"),
            ),
        })
        .collect()
}

/// Each remote source's credentials.
pub(super) fn connectors(config: &Config) -> Vec<Check> {
    let remote = config
        .projects
        .iter()
        .flat_map(|(name, project)| project.paths.iter().map(move |path| (name, path)))
        .filter_map(|(name, path)| match path {
            ProjectPath::Remote(url) => Some((name, url)),
            ProjectPath::Local(_) => None,
        });
    remote
        .map(|(name, url)| source_check(config, name, url))
        .collect()
}

fn source_check(config: &Config, project: &str, url: &SourceUrl) -> Check {
    let what = format!("source {url} ({project})");
    match url {
        SourceUrl::S3 { .. } => {
            let keys = variable_set("AWS_ACCESS_KEY_ID") && variable_set("AWS_SECRET_ACCESS_KEY");
            match keys || variable_set("AWS_PROFILE") {
                true => Check::ok(what, "S3 credentials in the environment"),
                false => Check::warn(
                    what,
                    "no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE: only a public \
                     bucket or the default profile can be listed",
                    "export AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=…",
                ),
            }
        }
        SourceUrl::WebDav { .. } => {
            let webdav = &config.connectors.webdav;
            match variable_set(&webdav.username_env) && variable_set(&webdav.password_env) {
                true => Check::ok(what, format!("{} is set", webdav.username_env)),
                false => Check::warn(
                    what,
                    "no WebDAV credentials: the folder is read anonymously",
                    format!("export {}=… {}=…", webdav.username_env, webdav.password_env),
                ),
            }
        }
        SourceUrl::Git { .. } => Check::ok(what, "read with the remote's own access"),
        SourceUrl::Drive { .. } => drive_check(config, what),
    }
}

fn drive_check(config: &Config, what: String) -> Check {
    let file = config
        .connectors
        .gdrive
        .credentials
        .clone()
        .or_else(|| std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").map(Into::into));
    match file {
        Some(file) if file.is_file() => Check::ok(what, "Drive credentials file is there"),
        _ => Check::fail(
            what,
            "no Drive credentials file",
            "set [connectors.gdrive] credentials or GOOGLE_APPLICATION_CREDENTIALS",
        ),
    }
}
