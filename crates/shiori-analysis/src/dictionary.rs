use std::fs;
use std::path::Path;

use crate::error::{io_error, AnalysisError};
// Only for the intra-doc link to `JapaneseTokenization::load`.
#[cfg(doc)]
use crate::JapaneseTokenization;

/// Builds a vibrato dictionary from the mecab-ipadic sources (as installed by Debian's
/// `mecab-ipadic` package at `/usr/share/mecab/dic/ipadic`) and writes it to `output`.
///
/// The sources are EUC-JP; they are decoded to UTF-8 and every `*.csv` is concatenated into one
/// lexicon. The file is written beside `output` and renamed into place, so a crash never leaves
/// a truncated dictionary that a later [`JapaneseTokenization::load`] would fail on.
pub fn build_ipadic_dictionary(ipadic_dir: &Path, output: &Path) -> Result<(), AnalysisError> {
    let mut csv_paths = Vec::new();
    for entry in fs::read_dir(ipadic_dir).map_err(io_error(ipadic_dir))? {
        let path = entry.map_err(io_error(ipadic_dir))?.path();
        if path.extension().is_some_and(|ext| ext == "csv") {
            csv_paths.push(path);
        }
    }
    if csv_paths.is_empty() {
        return Err(AnalysisError::NoLexicon(ipadic_dir.to_path_buf()));
    }
    // A fixed order makes the built dictionary identical from run to run.
    csv_paths.sort();
    let mut lexicon = String::new();
    for path in &csv_paths {
        lexicon.push_str(&read_euc_jp(path)?);
        if !lexicon.ends_with('\n') {
            lexicon.push('\n');
        }
    }
    let matrix = read_euc_jp(&ipadic_dir.join("matrix.def"))?;
    let char_def = read_euc_jp(&ipadic_dir.join("char.def"))?;
    let unk_def = read_euc_jp(&ipadic_dir.join("unk.def"))?;
    let dictionary = vibrato::SystemDictionaryBuilder::from_readers(
        lexicon.as_bytes(),
        matrix.as_bytes(),
        char_def.as_bytes(),
        unk_def.as_bytes(),
    )
    .map_err(|e| AnalysisError::Dictionary {
        path: ipadic_dir.to_path_buf(),
        message: e.to_string(),
    })?;

    let mut partial_name = output.file_name().unwrap_or_default().to_os_string();
    partial_name.push(format!(".partial-{}", std::process::id()));
    let partial = output.with_file_name(partial_name);
    let written = write_dictionary(&dictionary, &partial)
        .and_then(|()| fs::rename(&partial, output).map_err(io_error(output)));
    if written.is_err() {
        // Best effort: the error being returned matters more than a leftover temp file.
        let _ = fs::remove_file(&partial);
    }
    written
}

fn read_euc_jp(path: &Path) -> Result<String, AnalysisError> {
    let bytes = fs::read(path).map_err(io_error(path))?;
    let (text, _, had_errors) = encoding_rs::EUC_JP.decode(&bytes);
    if had_errors {
        return Err(AnalysisError::Dictionary {
            path: path.to_path_buf(),
            message: "not valid EUC-JP".to_string(),
        });
    }
    Ok(text.into_owned())
}

fn write_dictionary(dictionary: &vibrato::Dictionary, path: &Path) -> Result<(), AnalysisError> {
    let file = fs::File::create(path).map_err(io_error(path))?;
    let mut writer = std::io::BufWriter::new(file);
    dictionary
        .write(&mut writer)
        .map_err(|e| AnalysisError::Dictionary {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let file = writer
        .into_inner()
        .map_err(|e| io_error(path)(e.into_error()))?;
    // Flush to disk before the rename makes the file visible under its final name.
    file.sync_all().map_err(io_error(path))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{japanese_analyzer_name, JapaneseTokenization, JAPANESE_IPADIC_ANALYZER};

    const IPADIC_DIR: &str = "/usr/share/mecab/dic/ipadic";

    /// Builds the dictionary into a fresh temp dir; panics where mecab-ipadic is not installed.
    pub(crate) fn build_ipadic() -> (tempfile::TempDir, JapaneseTokenization) {
        assert!(
            Path::new(IPADIC_DIR).join("matrix.def").is_file(),
            "{IPADIC_DIR} is missing: apt-get install mecab-ipadic (as .ci/run does)"
        );
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("no temp dir: {e}"),
        };
        let output = dir.path().join("ipadic.dic");
        if let Err(e) = build_ipadic_dictionary(Path::new(IPADIC_DIR), &output) {
            panic!("building the dictionary failed: {e}");
        }
        match JapaneseTokenization::load(Some(&output)) {
            Ok(japanese) => (dir, japanese),
            Err(e) => panic!("loading the dictionary failed: {e}"),
        }
    }

    #[test]
    fn dictionary_round_trip() {
        let (dir, japanese) = build_ipadic();
        assert_eq!(japanese_analyzer_name(&japanese), JAPANESE_IPADIC_ANALYZER);
        // Only the final file is left: the partial one was renamed into place.
        let names: Vec<_> = fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["ipadic.dic"]);
    }

    #[test]
    fn build_reports_a_missing_source() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let result = build_ipadic_dictionary(dir.path(), &dir.path().join("out.dic"));
        assert!(matches!(result, Err(AnalysisError::NoLexicon(_))));
    }
}
