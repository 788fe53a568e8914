//! The process-wide llama.cpp state: its backend (initialised once per process) and the models
//! loaded from it, each kept for the life of the process so every engine, request and session
//! shares one copy of the weights.

use std::collections::HashMap;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::LlamaCppError;

use super::logs;
use crate::ModelLoadError;

/// llama.cpp failed to start, for the life of the process.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("llama.cpp did not start: {0}")]
pub struct BackendUnavailable(#[source] &'static LlamaCppError);

/// llama.cpp's backend; its logs go to `tracing`.
pub fn backend() -> Result<&'static LlamaBackend, BackendUnavailable> {
    static BACKEND: OnceLock<Result<LlamaBackend, LlamaCppError>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            logs::forward_to_tracing();
            LlamaBackend::init()
        })
        .as_ref()
        .map_err(BackendUnavailable)
}

/// The model at `path`, loaded (memory-mapped) the first time it is asked for.
pub fn model(path: &Path) -> Result<&'static LlamaModel, ModelLoadError> {
    static MODELS: OnceLock<Mutex<HashMap<PathBuf, &'static LlamaModel>>> = OnceLock::new();
    let key = path.canonicalize().map_err(|source| ModelLoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut models = MODELS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(model) = models.get(&key) {
        return Ok(model);
    }
    let backend = backend().map_err(|e| ModelLoadError::invalid(path, e))?;
    let model =
        LlamaModel::load_from_file(backend, &key, &LlamaModelParams::default()).map_err(|e| {
            ModelLoadError::invalid(path, format!("llama.cpp cannot load this GGUF: {e}"))
        })?;
    // Loaded once per process and shared by every context made from it, for as long as the
    // process runs.
    let model: &'static LlamaModel = Box::leak(Box::new(model));
    models.insert(key, model);
    Ok(model)
}

/// Generation is bound by memory bandwidth: one thread per physical core is as fast as
/// llama.cpp gets, and hyper-threads only contend.
pub fn default_threads() -> usize {
    num_cpus::get_physical().max(1)
}

/// The CPU features ggml's kernels were compiled for, e.g. `AVX2 FMA AVX512 AVX512_VNNI` (the
/// build picks them, not the CPU that runs them), so a speed figure can name what it ran on.
/// Called through a loaded model only, so the backend is up.
pub(super) fn kernel_features() -> &'static str {
    static FEATURES: OnceLock<String> = OnceLock::new();
    FEATURES.get_or_init(|| {
        // SAFETY: llama.cpp returns a NUL-terminated string it keeps in a static buffer, which
        // this copies at once. Only this `OnceLock` ever calls it, so no second call rewrites the
        // buffer while it is read.
        let info = unsafe { CStr::from_ptr(llama_cpp_sys_2::llama_print_system_info()) };
        enabled_features(&info.to_string_lossy())
    })
}

/// The names llama.cpp's system info marks `= 1` (`CPU : SSE3 = 1 | AVX = 1 | … |`).
fn enabled_features(info: &str) -> String {
    let names: Vec<&str> = info
        .split('|')
        .filter_map(|item| {
            let (name, value) = item.split_once('=')?;
            let name = name.rsplit(':').next()?.trim();
            (value.trim() == "1").then_some(name)
        })
        .collect();
    names.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_features_the_system_info_marks_on() {
        let info = "CPU : SSE3 = 1 | AVX = 1 | AVX512 = 0 | AVX512_VNNI = 1 | OPENMP = 1 | ";
        assert_eq!(enabled_features(info), "SSE3 AVX AVX512_VNNI OPENMP");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn this_build_reports_the_kernels_it_has() {
        backend().unwrap();
        let features = kernel_features();
        assert!(
            features.split(' ').any(|name| name == "AVX2"),
            "an x86-64-v3 or native build has AVX2 kernels: {features}"
        );
    }
}
