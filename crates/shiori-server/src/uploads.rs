//! Uploaded documents live as files in `<data_dir>/uploads/`, an always-indexed source. Their
//! names are sanitised so that no upload can land anywhere else.

use crate::error::ApiError;
use std::path::{Path, PathBuf};

pub const UPLOADS_DIR: &str = "uploads";
/// Leaves room under the usual 255-byte name limit for the temporary name's affixes.
const MAX_NAME_BYTES: usize = 200;

/// A safe file name for an upload: the last path component, with every character that is not a
/// letter, digit, `.`, `-` or `_` replaced by `_`, and no leading dots (so neither `..` nor
/// hidden files). The result must keep an extension a loader understands.
pub fn sanitize_name(raw: &str) -> Result<String, ApiError> {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = last
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = cleaned.trim_start_matches('.');
    let name: String = if trimmed.len() > MAX_NAME_BYTES {
        // Keep the extension when cutting a long name.
        let extension = Path::new(trimmed)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        let mut budget = MAX_NAME_BYTES.saturating_sub(extension.len() + 1);
        let stem: String = trimmed
            .chars()
            .take_while(|c| {
                let fits = c.len_utf8() <= budget;
                budget = budget.saturating_sub(c.len_utf8());
                fits
            })
            .collect();
        format!("{stem}.{extension}")
    } else {
        trimmed.to_string()
    };
    if name.is_empty() || name.chars().all(|c| c == '_' || c == '.') {
        return Err(ApiError::BadRequest(format!(
            "the file name {raw:?} has nothing usable in it"
        )));
    }
    if !shiori_ingest::is_supported(Path::new(&name)) {
        return Err(ApiError::UnsupportedMediaType(format!(
            "a supported document type (.txt, .md, .html, .csv, .jsonl, .pdf, .docx, .xlsx, .pptx, \
             .png, .jpg, .jpeg, .tif, .tiff, .webp); \
             {raw:?} is not one"
        )));
    }
    Ok(name)
}

/// An id from a URL names an upload only if it is already sanitised.
pub fn checked_id(id: &str) -> Result<String, ApiError> {
    match sanitize_name(id) {
        Ok(name) if name == id => Ok(name),
        _ => Err(ApiError::NotFound(format!("no uploaded document {id:?}"))),
    }
}

/// Where uploads a write died on are moved at start: hidden, so no walk takes them.
pub const QUARANTINE_DIR: &str = ".quarantine";

/// The marker kept beside an upload while a write indexes it: one still there when a server
/// starts means the write died on that file (a decompression bomb, say), which every later
/// write would otherwise read again.
fn pending_marker(uploads: &Path, name: &str) -> PathBuf {
    uploads.join(format!(".{name}.pending"))
}

/// Marks `names` as being indexed.
pub fn mark_pending<'a>(
    uploads: &Path,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), ApiError> {
    for name in names {
        let marker = pending_marker(uploads, name);
        std::fs::write(&marker, b"")
            .map_err(|e| ApiError::Internal(format!("{}: {e}", marker.display())))?;
    }
    Ok(())
}

/// Clears the marks of `names` once their write ended, indexed or not.
pub fn clear_pending<'a>(uploads: &Path, names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        // A marker already gone is what this wants.
        let _ = std::fs::remove_file(pending_marker(uploads, name));
    }
}

/// Moves each upload still marked as being indexed (with its groups file) into
/// [`QUARANTINE_DIR`], so a file a write died on is not read again by every later write;
/// returns their names for the report.
pub fn quarantine_leftovers(uploads: &Path) -> std::io::Result<Vec<String>> {
    let mut moved = Vec::new();
    for entry in std::fs::read_dir(uploads)? {
        let marker = entry?.file_name().to_string_lossy().into_owned();
        let Some(name) = marker
            .strip_prefix('.')
            .and_then(|rest| rest.strip_suffix(".pending"))
        else {
            continue;
        };
        let quarantine = uploads.join(QUARANTINE_DIR);
        std::fs::create_dir_all(&quarantine)?;
        let upload = uploads.join(name);
        let beside = shiori_engine::groups_file(&upload);
        for file in std::iter::once(upload).chain(beside) {
            if let Some(file_name) = file.file_name().filter(|_| file.exists()) {
                std::fs::rename(&file, quarantine.join(file_name))?;
            }
        }
        std::fs::remove_file(uploads.join(&marker))?;
        moved.push(name.to_string());
    }
    moved.sort();
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_a_write_died_on_is_quarantined_with_its_groups() {
        let uploads = tempfile::tempdir().unwrap();
        let dir = uploads.path();
        std::fs::write(dir.join("bomb.pdf"), b"%PDF").unwrap();
        std::fs::write(dir.join(".bomb.pdf.groups"), b"hr").unwrap();
        std::fs::write(dir.join("fine.md"), b"# Fine").unwrap();
        mark_pending(dir, ["bomb.pdf", "fine.md"]).unwrap();
        clear_pending(dir, ["fine.md"]);
        assert_eq!(quarantine_leftovers(dir).unwrap(), ["bomb.pdf"]);
        let quarantine = dir.join(QUARANTINE_DIR);
        assert!(quarantine.join("bomb.pdf").is_file());
        assert!(quarantine.join(".bomb.pdf.groups").is_file());
        assert!(!dir.join("bomb.pdf").exists() && !dir.join(".bomb.pdf.pending").exists());
        assert!(dir.join("fine.md").is_file());
        assert!(quarantine_leftovers(dir).unwrap().is_empty(), "once");
    }

    #[test]
    fn keeps_names_inside_the_uploads_folder() {
        assert_eq!(sanitize_name("notes.md").unwrap(), "notes.md");
        assert_eq!(sanitize_name("../../etc/passwd.txt").unwrap(), "passwd.txt");
        assert_eq!(
            sanitize_name("..\\..\\boot.ini.txt").unwrap(),
            "boot.ini.txt"
        );
        assert_eq!(sanitize_name("...hidden.md").unwrap(), "hidden.md");
        assert_eq!(
            sanitize_name("my report (v2).md").unwrap(),
            "my_report__v2_.md"
        );
        assert_eq!(sanitize_name("社内規定.md").unwrap(), "社内規定.md");
        assert!(sanitize_name("..").is_err());
        assert!(sanitize_name("/").is_err());
        assert!(sanitize_name("").is_err());
    }

    #[test]
    fn rejects_types_no_loader_reads_and_cuts_long_names() {
        let error = sanitize_name("tool.exe").unwrap_err();
        assert_eq!(
            error.status(),
            axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        for long in [
            format!("{}.md", "a".repeat(300)),
            format!("{}.md", "規".repeat(300)),
        ] {
            let name = sanitize_name(&long).unwrap();
            assert!(name.ends_with(".md") && name.len() <= 200, "{name}");
        }
    }

    #[test]
    fn url_ids_must_already_be_clean() {
        assert_eq!(checked_id("notes.md").unwrap(), "notes.md");
        assert!(checked_id("../notes.md").is_err());
        assert!(checked_id("a b.md").is_err());
    }
}
