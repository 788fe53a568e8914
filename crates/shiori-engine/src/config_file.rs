//! Writing `shiori.toml`: a new one says what each table is for, and an edit of the user's file
//! (what `shiori init` run again changes) keeps everything else of it as written — comments,
//! order, and the settings left at their defaults by leaving them out.

use crate::{Config, EngineError, ModelConfig, CONFIG_FILE};
use std::collections::BTreeMap;
use std::path::Path;
use toml_edit::{DocumentMut, Item, Table};

/// What opens a new `shiori.toml`.
const HEADER: &str = "\
# Shiori's settings for this data directory, every one at its default. docs/configuration.md
# explains each; a setting removed from here takes its default. Secrets (API keys, passwords)
# are never written here: settings ending in _env name the environment variable holding them.
";

/// The comment above each table of a new `shiori.toml`.
fn table_comment(table: &str) -> Option<&'static str> {
    Some(match table {
        "store" => "Where the index lives: \"embedded\" (this folder) or \"postgres\" (url = ...).",
        "embedder" => "The model that turns chunks and questions into vectors (e5, minilm, openai, gemini).",
        "ingest" => {
            "What `shiori index` (no paths) and the page's Reindex read: sources = [\"docs\"], relative \
             to the folder holding this data directory; include / exclude globs; the size limit."
        }
        "projects" => "Named sets of sources: [projects.NAME] paths = [...], groups = [...].",
        "auth" => "API keys and the groups each may read: [[auth.keys]] name, key_env, groups.",
        "chunker" => "How documents are cut into chunks.",
        "retrieval" => "How chunks are found and when a question is refused.",
        "eval" => "The question set the page's Evaluate runs: dataset = \"...\".",
        "llm" => {
            "Chat models by name: [llm.models.NAME] provider = \"openai\" | \"anthropic\" | \
             \"gemini\" | \"azure\" | \"local\", model, base_url, api_key_env."
        }
        "pipeline" => {
            "How answers are made: default = \"extractive\" quotes the sources and needs no model."
        }
        "web_search" => "Web search for the pipelines that use it.",
        "connectors" => "Remote sources (S3, WebDAV, Git, Google Drive): credentials by variable name.",
        "telemetry" => "Traces to an OpenTelemetry collector: otlp_endpoint = \"http://127.0.0.1:4318\" (or OTEL_EXPORTER_OTLP_ENDPOINT).",
        _ => return None,
    })
}

fn config_error(path: &Path, message: String) -> EngineError {
    EngineError::Config {
        path: path.display().to_string(),
        message,
    }
}

fn write(path: &Path, text: &str) -> Result<(), EngineError> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|source| EngineError::Io {
            path: folder.display().to_string(),
            source,
        })?;
    }
    std::fs::write(path, text).map_err(|source| EngineError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// `config` as a new `shiori.toml`: every setting, each table under a comment saying what it
/// is for.
pub(crate) fn commented(config: &Config, path: &Path) -> Result<String, EngineError> {
    let text = toml::to_string_pretty(config).map_err(|e| config_error(path, e.to_string()))?;
    let mut document: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| config_error(path, e.to_string()))?;
    for (key, item) in document.iter_mut() {
        let (Some(comment), Some(table)) = (table_comment(key.get()), item.as_table_mut()) else {
            continue;
        };
        table.decor_mut().set_prefix(format!("\n# {comment}\n"));
    }
    Ok(format!("{HEADER}{document}"))
}

/// Writes `config` as a new, commented `data_dir/shiori.toml`.
pub(crate) fn save_new(config: &Config, data_dir: &Path) -> Result<(), EngineError> {
    let path = data_dir.join(CONFIG_FILE);
    write(&path, &commented(config, &path)?)
}

/// Writes the chat models `shiori init` changed (`before` → `after`) into the data
/// directory's `shiori.toml`, changing nothing else of the file.
pub fn save_chat_models(
    data_dir: &Path,
    before: &BTreeMap<String, ModelConfig>,
    after: &BTreeMap<String, ModelConfig>,
) -> Result<(), EngineError> {
    let path = data_dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| EngineError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut document: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| config_error(&path, e.to_string()))?;
    let models = models_table(&mut document, &path)?;
    for name in before.keys().filter(|name| !after.contains_key(*name)) {
        models.remove(name);
    }
    for (name, model) in after {
        if before.get(name) != Some(model) {
            models.insert(name, Item::Table(model_table(model, &path)?));
        }
    }
    write(&path, &document.to_string())
}

fn model_table(model: &ModelConfig, path: &Path) -> Result<Table, EngineError> {
    let text = toml::to_string(model).map_err(|e| config_error(path, e.to_string()))?;
    let table: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| config_error(path, e.to_string()))?;
    Ok(table.as_table().clone())
}

/// `[llm.models]`, made (as dotted headers, no empty `[llm]`) when the file has none.
fn models_table<'a>(
    document: &'a mut DocumentMut,
    path: &Path,
) -> Result<&'a mut Table, EngineError> {
    let not_a_table = |key: &str| config_error(path, format!("`{key}` is not a table"));
    let llm = document
        .entry("llm")
        .or_insert_with(|| implicit_table().into())
        .as_table_mut()
        .ok_or_else(|| not_a_table("llm"))?;
    llm.entry("models")
        .or_insert_with(|| implicit_table().into())
        .as_table_mut()
        .ok_or_else(|| not_a_table("llm.models"))
}

fn implicit_table() -> Table {
    let mut table = Table::new();
    table.set_implicit(true);
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProviderKind;

    #[test]
    fn a_new_file_comments_its_tables_and_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::default();
        save_new(&config, dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap();
        assert!(text.starts_with("# Shiori's settings"), "{text}");
        assert!(
            text.contains(
                "\n# How chunks are found and when a question is refused.\n[retrieval]\n"
            ),
            "{text}"
        );
        assert_eq!(Config::load(dir.path()).unwrap(), config);
    }

    #[test]
    fn saving_chat_models_keeps_the_rest_of_the_users_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CONFIG_FILE);
        let users = "# our settings\n[retrieval]\ntop_k = 8 # more context\n";
        std::fs::write(&path, users).unwrap();
        let none = BTreeMap::new();
        let local = BTreeMap::from([(
            "local".to_string(),
            ModelConfig::new(ProviderKind::Local, "smollm2"),
        )]);
        save_chat_models(dir.path(), &none, &local).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(users), "{text}");
        assert!(text.contains("[llm.models.local]\n"), "{text}");
        assert!(!text.contains("[llm]\n"), "{text}");
        let config = Config::load(dir.path()).unwrap();
        assert_eq!(config.llm.models, local);
        assert_eq!(config.retrieval.top_k, 8);

        save_chat_models(dir.path(), &local, &none).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(users) && !text.contains("smollm2"),
            "{text}"
        );
        assert!(Config::load(dir.path()).unwrap().llm.models.is_empty());
    }
}
