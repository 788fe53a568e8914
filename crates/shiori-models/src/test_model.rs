//! The real all-MiniLM-L6-v2 for tests, loaded once per test binary.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::assets::ShioriHome;
use crate::MiniLmEmbedder;

/// `$SHIORI_MINILM_DIR`, else `SHIORI_HOME`'s model folder. Panics (never skips) when the model
/// is absent: CI fetches it first, and a skipped model test would hide a broken set-up.
pub(crate) fn minilm() -> &'static MiniLmEmbedder {
    static MODEL: OnceLock<MiniLmEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = std::env::var_os("SHIORI_MINILM_DIR")
            .map(PathBuf::from)
            .or_else(|| ShioriHome::from_env().ok().map(|home| home.minilm_dir()))
            .filter(|dir| dir.join("model.safetensors").is_file());
        let Some(dir) = dir else {
            panic!(
                "all-MiniLM-L6-v2 not found in $SHIORI_MINILM_DIR or $SHIORI_HOME: \
                 run `shiori models fetch` first"
            );
        };
        match MiniLmEmbedder::load(&dir) {
            Ok(model) => model,
            Err(e) => panic!("cannot load all-MiniLM-L6-v2 from {}: {e}", dir.display()),
        }
    })
}
