//! The process-wide llama.cpp state: its backend (initialised once per process) and the models
//! loaded from it, each kept for the life of the process so every engine, request and session
//! shares one copy of the weights.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::{send_logs_to_tracing, LogOptions};

use crate::ModelLoadError;

/// llama.cpp's backend; its logs go to `tracing`.
pub fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init().map_err(|e| format!("llama.cpp did not start: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
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
