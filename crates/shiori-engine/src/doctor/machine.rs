//! The machine's checks: models and the dictionary, Tesseract's language data, CPU features and
//! the kernels they select, free disk.

use super::Check;
use crate::{Config, EmbedderKind, ProviderKind};
use shiori_models::assets::{verify_assets, AssetCheck, AssetState, ShioriHome};
use shiori_models::Precision;
use std::path::{Path, PathBuf};

/// Below this much free space an index stops growing, and a rebuild or backup fails.
const MIN_FREE_BYTES: u64 = 1 << 30;

const OCR_PACKAGES: &str =
    "apt-get install tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert tesseract-ocr-osd";

/// Each fetchable asset, and each model file the configuration names by path.
pub(super) fn assets(config: &Config, home: &ShioriHome) -> Vec<Check> {
    let needed = needed_assets(config);
    let mut checks: Vec<Check> = verify_assets(home)
        .into_iter()
        .map(|asset| asset_check(asset, &needed))
        .collect();
    checks.extend(
        configured_paths(config)
            .into_iter()
            .map(|(what, path)| match path.exists() {
                true => Check::ok(what, format!("{} is there", path.display())),
                false => Check::fail(
                    what,
                    format!("{} does not exist", path.display()),
                    "fix the path in shiori.toml, or remove it to use the fetched model",
                ),
            }),
    );
    checks
}

/// The names of the assets this configuration loads (the dictionary always: without it
/// Japanese is cut into bigrams, and an index built with morphemes no longer matches).
fn needed_assets(config: &Config) -> Vec<&'static str> {
    let mut needed = vec!["ipadic (vibrato)"];
    match (config.embedder.kind, &config.embedder.path) {
        (EmbedderKind::E5, None) => needed.push("multilingual-e5-small"),
        (EmbedderKind::Minilm, None) => needed.push("all-MiniLM-L6-v2"),
        _ => {}
    }
    for model in config.llm.models.values() {
        match (model.provider, model.model.as_str()) {
            (ProviderKind::Local, "smollm2") => needed.push("SmolLM2-135M-Instruct"),
            (ProviderKind::Local, "qwen2.5-coder-0.5b") => {
                needed.push("Qwen2.5-Coder-0.5B-Instruct")
            }
            _ => {}
        }
    }
    needed
}

fn configured_paths(config: &Config) -> Vec<(String, PathBuf)> {
    let mut paths: Vec<(String, PathBuf)> = config
        .embedder
        .path
        .iter()
        .map(|path| ("embedder model".to_string(), path.clone()))
        .collect();
    for (name, model) in &config.llm.models {
        let short = ["smollm2", "qwen2.5-coder-0.5b"].contains(&model.model.as_str());
        if model.provider == ProviderKind::Local && !short {
            paths.push((format!("chat model {name}"), PathBuf::from(&model.model)));
        }
    }
    paths
}

fn asset_check(asset: AssetCheck, needed: &[&str]) -> Check {
    let name = format!("model {}", asset.name);
    let used = needed.contains(&asset.name);
    let shown = asset.path.display();
    match (asset.state, used) {
        (AssetState::Verified, _) => {
            Check::ok(name, format!("{shown}: installed, pinned checksums match"))
        }
        (AssetState::Missing, true) => Check::fail(name, format!("{shown} is missing"), asset.fix),
        (AssetState::Missing, false) => {
            Check::ok(name, "not installed; this configuration does not use it")
        }
        (AssetState::Damaged(why), true) => Check::fail(name, why, refetch(&asset.path, asset.fix)),
        (AssetState::Damaged(why), false) => {
            Check::warn(name, why, refetch(&asset.path, asset.fix))
        }
    }
}

fn refetch(path: &Path, fix: &str) -> String {
    format!("rm -r '{}' && {fix}", path.display())
}

/// Starts Tesseract with every language set a page may be read with.
pub(super) fn ocr() -> Check {
    match shiori_ocr::check_engine() {
        Ok(()) => Check::ok("ocr", "Tesseract reads jpn, jpn_vert and eng"),
        Err(error) => Check::warn(
            "ocr",
            format!("{error}: scanned PDFs and images cannot be read"),
            OCR_PACKAGES,
        ),
    }
}

/// The CPU features the kernels dispatch on, and what runs as a result.
pub(super) fn cpu() -> Check {
    let features = cpu_features();
    let has = |name: &str| features.iter().any(|(feature, on)| *feature == name && *on);
    let shown: Vec<String> = features
        .iter()
        .map(|(name, on)| format!("{name} {}", if *on { "yes" } else { "no" }))
        .collect();
    // What `[embedder] precision` unset gives, from the same choice the embedders make.
    let fastest = Precision::fastest();
    let kernels = format!(
        "embedders: {} dense layers by default ({})",
        fastest.name(),
        fastest.kernel_name()
    );
    let detail = format!(
        "{}; {kernels}; llama.cpp runs the kernels of the CPU this binary was built on",
        shown.join(", ")
    );
    match has("avx2") {
        true => Check::ok("cpu", detail),
        false => Check::warn(
            "cpu",
            detail,
            "run on a CPU with AVX2 and FMA (x86-64-v3) for usable speed",
        ),
    }
}

#[cfg(target_arch = "x86_64")]
fn cpu_features() -> Vec<(&'static str, bool)> {
    vec![
        ("avx2", is_x86_feature_detected!("avx2")),
        ("fma", is_x86_feature_detected!("fma")),
        ("avx512f", is_x86_feature_detected!("avx512f")),
        ("avx512bf16", is_x86_feature_detected!("avx512bf16")),
        ("avx512vnni", is_x86_feature_detected!("avx512vnni")),
        ("avxvnni", is_x86_feature_detected!("avxvnni")),
    ]
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_features() -> Vec<(&'static str, bool)> {
    Vec::new()
}

/// Free space on the file system that holds (or will hold) the data directory.
pub(super) fn disk(data_dir: &Path) -> Check {
    // A relative data directory's last ancestor is "", which is the working directory.
    let dir = data_dir
        .ancestors()
        .find(|dir| dir.exists())
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match rustix::fs::statvfs(dir) {
        Ok(stats) => {
            let free = stats.f_bavail.saturating_mul(stats.f_frsize);
            let detail = format!(
                "{:.1} GiB free for {}",
                free as f64 / f64::from(1 << 30),
                dir.display()
            );
            match free >= MIN_FREE_BYTES {
                true => Check::ok("disk", detail),
                false => Check::fail(
                    "disk",
                    detail,
                    "free disk space, or move --data-dir to a larger disk",
                ),
            }
        }
        Err(error) => Check::warn(
            "disk",
            format!("cannot measure free space: {error}"),
            "check the data directory's file system",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelConfig;

    #[test]
    fn the_assets_needed_follow_the_configuration() {
        let mut config = Config::default();
        assert_eq!(
            needed_assets(&config),
            ["ipadic (vibrato)", "multilingual-e5-small"]
        );
        config.embedder.kind = EmbedderKind::Minilm;
        let local = ModelConfig::new(ProviderKind::Local, "smollm2");
        config.llm.models.insert("local".into(), local);
        let own = ModelConfig::new(ProviderKind::Local, "/models/own.gguf");
        config.llm.models.insert("own".into(), own);
        assert_eq!(
            needed_assets(&config),
            [
                "ipadic (vibrato)",
                "all-MiniLM-L6-v2",
                "SmolLM2-135M-Instruct"
            ]
        );
        let paths = configured_paths(&config);
        assert_eq!(
            paths,
            [(
                "chat model own".to_string(),
                PathBuf::from("/models/own.gguf")
            )]
        );
    }

    #[test]
    fn a_missing_model_the_configuration_loads_fails_with_its_fix() {
        let home = tempfile::tempdir().unwrap();
        let checks = assets(&Config::default(), &ShioriHome(home.path().to_path_buf()));
        let e5 = checks
            .iter()
            .find(|c| c.name == "model multilingual-e5-small")
            .unwrap();
        assert_eq!(e5.status, super::super::Status::Fail);
        assert_eq!(e5.fix.as_deref(), Some("shiori models fetch"));
        let qwen = checks.iter().find(|c| c.name.contains("Qwen")).unwrap();
        assert_eq!(
            qwen.status,
            super::super::Status::Ok,
            "not loaded, not needed"
        );
    }
}
