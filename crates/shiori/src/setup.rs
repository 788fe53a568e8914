//! The commands that set things up or look at them: `shiori init`, `migrate`, `stats`,
//! `embed`, `doctor` and `models`.

use crate::cli::{Cli, EmbedArgs, FetchSet, InitArgs, MigrateArgs, ModelsAction};
use crate::{open_engine, output, progress};
use anyhow::{bail, Result};
use shiori_core::Access;
use shiori_engine::{
    adopt_installed_chat_model, drop_adopted_chat_model, init_store, migrate_store,
    save_chat_models, Config, EmbedAs, Status,
};
use shiori_models::assets::{self, ShioriHome};

/// `shiori init`: writes `shiori.toml` with the defaults and brings the store's schema up to date.
pub fn init(cli: &Cli, home: &ShioriHome, args: &InitArgs) -> Result<()> {
    let InitArgs { no_chat_model } = args;
    let written = cli.data_dir.join(shiori_engine::CONFIG_FILE).is_file();
    let mut config = Config::load(&cli.data_dir)?;
    let models = config.llm.models.clone();
    let (chat_model, dropped) = if *no_chat_model {
        (None, Some(drop_adopted_chat_model(&mut config)))
    } else {
        (adopt_installed_chat_model(&mut config, home), None)
    };
    // The user's file is edited where init changed it, and otherwise left as they wrote it.
    match written {
        false => config.save(&cli.data_dir)?,
        true if config.llm.models != models => {
            save_chat_models(&cli.data_dir, &models, &config.llm.models)?
        }
        true => {}
    }
    let store = init_store(&config)?;
    let mut report =
        serde_json::json!({"data_dir": cli.data_dir, "store": store, "chat_model": chat_model});
    if let Some(dropped) = &dropped {
        report["removed_chat_model"] = serde_json::json!(dropped.removed);
        report["kept_chat_models"] = serde_json::json!(dropped.kept);
    }
    output::print(cli.json, &report, || {
        let answers = match (chat_model, &dropped) {
            (Some(name), _) => format!("; the local model {name} answers with --pipeline basic (the default quotes the sources)"),
            (None, Some(dropped)) => output::dropped_chat_models(dropped),
            (None, None) => String::new(),
        };
        let migrations = match store.schema_version {
            Some(version) => format!(
                "; database schema at version {version} ({} migration(s) applied); BM25: {}",
                store.migrations_applied.len(),
                store.keyword_index.as_deref().unwrap_or_default()
            ),
            None => String::new(),
        };
        format!(
            "initialised {}{migrations}{answers}",
            cli.data_dir.display()
        )
    })
}

/// `shiori migrate`: copies the embedded store into PostgreSQL.
pub fn migrate(cli: &Cli, home: &ShioriHome, args: &MigrateArgs) -> Result<()> {
    let MigrateArgs { from, to } = args;
    let config = Config::load(&cli.data_dir)?;
    let target = config.store.postgres(Some(to))?;
    let report = migrate_store(from, &target, home, &progress::Bar::for_cli(cli.json))?;
    output::print(cli.json, &report, || {
        format!(
            "copied {} file(s), {} chunk(s) with their {} vectors in {:.1} s; BM25: {}",
            report.files,
            report.chunks_added,
            report.embedder,
            report.elapsed_ms / 1000.0,
            report.keyword_index
        )
    })
}

/// `shiori embed`: the configured embedder's vectors for texts.
pub fn embed(cli: &Cli, home: &ShioriHome, args: &EmbedArgs) -> Result<()> {
    let EmbedArgs { texts, query } = args;
    let engine = open_engine(cli, home)?;
    let embed_as = if *query {
        EmbedAs::Query
    } else {
        EmbedAs::Passage
    };
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = engine.embed(&texts, embed_as)?;
    let value = serde_json::json!({
        "model": engine.embedder().model_id(),
        "vectors": vectors,
    });
    output::print(cli.json, &value, || output::vectors(&vectors))
}

/// `shiori stats`: counts and settings of the data directory.
pub fn stats(cli: &Cli, home: &ShioriHome) -> Result<()> {
    let engine = open_engine(cli, home)?;
    let stats = engine.stats(&Access::Everything)?;
    output::print(cli.json, &stats, || output::stats(&stats))
}

/// `shiori doctor`: every check, then a failure (exit 1) when one failed, for scripts.
pub fn doctor(cli: &Cli, home: &ShioriHome) -> Result<()> {
    let diagnosis = shiori_engine::diagnose(&cli.data_dir, home);
    output::print(cli.json, &diagnosis, || output::diagnosis(&diagnosis))?;
    let failed = diagnosis.checks.iter().filter(|c| c.status == Status::Fail);
    match failed.count() {
        0 => Ok(()),
        count => bail!("{count} check(s) failed; run the fix commands above"),
    }
}

/// `shiori models fetch|list`.
pub fn models(cli: &Cli, home: &ShioriHome, action: &ModelsAction) -> Result<()> {
    match action {
        ModelsAction::Fetch { set } => {
            let mut log = |line: &str| eprintln!("{line}");
            let mut fetched = serde_json::Map::new();
            if matches!(set, FetchSet::Default | FetchSet::All) {
                let e5 = assets::fetch_e5(home, &mut log)?;
                let minilm = assets::fetch_minilm(home, &mut log)?;
                let dictionary = assets::fetch_ipadic(home, &mut log)?;
                let smollm2 = assets::fetch_smollm2(home, &mut log)?;
                fetched.insert("e5".into(), serde_json::json!(e5));
                fetched.insert("minilm".into(), serde_json::json!(minilm));
                fetched.insert("ipadic".into(), serde_json::json!(dictionary));
                fetched.insert("smollm2".into(), serde_json::json!(smollm2));
            }
            if matches!(set, FetchSet::QwenCoder | FetchSet::All) {
                let qwen = assets::fetch_qwen(home, &mut log)?;
                fetched.insert("qwen2.5-coder-0.5b".into(), serde_json::json!(qwen));
            }
            output::print(cli.json, &fetched, || {
                format!("models ready under {}", home.0.display())
            })
        }
        ModelsAction::List => {
            let assets = assets::list_assets(home);
            output::print(cli.json, &assets, || output::assets(&assets))
        }
    }
}
