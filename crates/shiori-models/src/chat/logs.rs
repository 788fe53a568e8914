//! llama.cpp's and ggml's log lines, forwarded to `tracing` (target `llama.cpp`) at their own
//! level, except the vocabulary repairs llama.cpp makes itself on every model load: those are
//! warnings about how the GGUF was converted that nobody running it can act on, so they are
//! debug lines and a plain `ask` prints no warning.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};

use llama_cpp_sys_2::{
    ggml_log_level, GGML_LOG_LEVEL_CONT, GGML_LOG_LEVEL_DEBUG, GGML_LOG_LEVEL_ERROR,
    GGML_LOG_LEVEL_INFO, GGML_LOG_LEVEL_WARN,
};
use tracing::Level;

/// What llama.cpp's vocabulary loader warns about and then fixes itself (a control token typed
/// as a normal one, an end-of-generation list completed or trimmed): Qwen2.5 and SmolLM2 set off
/// some of these on every load.
const SELF_REPAIRED: [&str; 5] = [
    "control-looking token",
    "is not in special_eog_ids",
    "is a normal token here, removing it from EOG list",
    "special_eog_ids contains both",
    "attribute to USER_DEFINED",
];

/// The level of the line before, which a continuation (`GGML_LOG_LEVEL_CONT`) shares.
static PREVIOUS_LEVEL: AtomicU32 = AtomicU32::new(GGML_LOG_LEVEL_DEBUG);

/// Sends llama.cpp's and ggml's logs to `tracing` from now on.
pub fn forward_to_tracing() {
    // SAFETY: `forward` is a plain function that outlives every call, and it reads no user data.
    unsafe {
        llama_cpp_sys_2::llama_log_set(Some(forward), std::ptr::null_mut());
        // Set after llama's, which points ggml at its own callback too.
        llama_cpp_sys_2::ggml_log_set(Some(forward), std::ptr::null_mut());
    }
}

extern "C" fn forward(level: ggml_log_level, text: *const c_char, _user_data: *mut c_void) {
    if text.is_null() {
        return;
    }
    // SAFETY: llama.cpp passes a NUL-terminated string that lives for the call.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    let level = match level {
        GGML_LOG_LEVEL_CONT => PREVIOUS_LEVEL.load(Ordering::Relaxed),
        level => {
            PREVIOUS_LEVEL.store(level, Ordering::Relaxed);
            level
        }
    };
    let line = text.trim_end();
    if line.is_empty() {
        return;
    }
    match tracing_level(level, line) {
        Level::ERROR => tracing::error!(target: "llama.cpp", "{line}"),
        Level::WARN => tracing::warn!(target: "llama.cpp", "{line}"),
        Level::INFO => tracing::info!(target: "llama.cpp", "{line}"),
        _ => tracing::debug!(target: "llama.cpp", "{line}"),
    }
}

/// The `tracing` level of a log line llama.cpp sent at `level`.
fn tracing_level(level: ggml_log_level, line: &str) -> Level {
    match level {
        GGML_LOG_LEVEL_ERROR => Level::ERROR,
        GGML_LOG_LEVEL_WARN if SELF_REPAIRED.iter().any(|repair| line.contains(repair)) => {
            Level::DEBUG
        }
        GGML_LOG_LEVEL_WARN => Level::WARN,
        GGML_LOG_LEVEL_INFO => Level::INFO,
        _ => Level::DEBUG,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_repairs_are_debug_lines_and_real_warnings_stay() {
        let control_token = "load: control-looking token: 151662 '<|fim_pad|>' was not \
                             control-type; this is probably a bug in the model. its type will be \
                             overridden";
        let eog = "load: special_eos_id is not in special_eog_ids - the tokenizer config may be \
                   incorrect";
        for repair in [control_token, eog] {
            assert_eq!(tracing_level(GGML_LOG_LEVEL_WARN, repair), Level::DEBUG);
        }
        let degraded = "load: GENERATION QUALITY WILL BE DEGRADED!";
        assert_eq!(tracing_level(GGML_LOG_LEVEL_WARN, degraded), Level::WARN);
        assert_eq!(
            tracing_level(
                GGML_LOG_LEVEL_ERROR,
                "llama_model_load: error loading model"
            ),
            Level::ERROR
        );
        assert_eq!(
            tracing_level(GGML_LOG_LEVEL_ERROR, control_token),
            Level::ERROR,
            "only warnings are lowered"
        );
        assert_eq!(
            tracing_level(GGML_LOG_LEVEL_INFO, "print_info: n_vocab"),
            Level::INFO
        );
    }
}
