//! The real all-MiniLM-L6-v2 for tests, loaded once per test binary.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::assets::ShioriHome;
use crate::{E5Embedder, MiniLmEmbedder};

/// `$SHIORI_MINILM_DIR`, else `SHIORI_HOME`'s model folder. Panics (never skips) when the model
/// is absent: CI fetches it first, and a skipped model test would hide a broken set-up.
pub(crate) fn minilm_dir() -> PathBuf {
    let dir = std::env::var_os("SHIORI_MINILM_DIR")
        .map(PathBuf::from)
        .or_else(|| ShioriHome::from_env().ok().map(|home| home.minilm_dir()))
        .filter(|dir| dir.join("model.safetensors").is_file());
    match dir {
        Some(dir) => dir,
        None => panic!(
            "all-MiniLM-L6-v2 not found in $SHIORI_MINILM_DIR or $SHIORI_HOME: \
             run `shiori models fetch` first"
        ),
    }
}

/// The real all-MiniLM-L6-v2 with the fastest arithmetic of this CPU, loaded once per test
/// binary.
pub(crate) fn minilm() -> &'static MiniLmEmbedder {
    static MODEL: OnceLock<MiniLmEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = minilm_dir();
        match MiniLmEmbedder::load(&dir) {
            Ok(model) => model,
            Err(e) => panic!("cannot load all-MiniLM-L6-v2 from {}: {e}", dir.display()),
        }
    })
}

/// `$SHIORI_E5_MODEL`, else `SHIORI_HOME`'s multilingual-e5-small file. Panics when absent, as
/// [`minilm`] does.
pub(crate) fn e5_path() -> PathBuf {
    let path = std::env::var_os("SHIORI_E5_MODEL")
        .map(PathBuf::from)
        .or_else(|| ShioriHome::from_env().ok().map(|home| home.e5_model()))
        .filter(|path| path.is_file());
    match path {
        Some(path) => path,
        None => panic!(
            "multilingual-e5-small not found in $SHIORI_E5_MODEL or $SHIORI_HOME: \
             run `shiori models fetch` first"
        ),
    }
}

/// The real multilingual-e5-small, loaded once per test binary.
pub(crate) fn e5() -> &'static E5Embedder {
    static MODEL: OnceLock<E5Embedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let path = e5_path();
        match E5Embedder::load(&path) {
            Ok(model) => model,
            Err(e) => panic!(
                "cannot load multilingual-e5-small from {}: {e}",
                path.display()
            ),
        }
    })
}
