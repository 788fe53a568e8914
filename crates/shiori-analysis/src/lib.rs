//! Analyzers that turn Japanese and English text into search terms, shared by every keyword index.
//!
//! Three analyzers, meant to be used together, each text indexed in a field per analyzer and
//! each query analysed by all of them:
//! - [`ENGLISH_ANALYZER`]: words of Latin letters and digits, lowercased, stop words dropped,
//!   Snowball-stemmed (tantivy's filters);
//! - [`JAPANESE_BIGRAM_ANALYZER`]: overlapping character bigrams plus single kana and ideographs,
//!   which needs no dictionary and alone ranks about as well as morphemes;
//! - [`JAPANESE_IPADIC_ANALYZER`]: Japanese content words from vibrato with IPADIC (built once
//!   from the mecab-ipadic sources by [`build_ipadic_dictionary`]), when a dictionary is there.
//!
//! [`register_analyzers`] makes them known to a tantivy index under stable names, which the
//! index stores in its schema.

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::tokenizer::{
    Language, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use thiserror::Error;

/// Name of the English analyzer: lowercase, Lucene's English stop words, Snowball English stemmer.
pub const ENGLISH_ANALYZER: &str = "en_stem";
/// Name of the Japanese analyzer that cuts text into IPADIC morphemes.
pub const JAPANESE_IPADIC_ANALYZER: &str = "ja_ipadic";
/// Name of the Japanese analyzer that cuts text into character bigrams.
pub const JAPANESE_BIGRAM_ANALYZER: &str = "ja_bigram";

/// Tokens longer than this (in bytes) are dropped: they are base64, hashes or URLs that only
/// bloat the term dictionary and never match a query.
const MAX_TOKEN_BYTES: usize = 40;

/// The stop words Lucene's `EnglishAnalyzer` drops (the list tantivy ships for English).
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Why a dictionary could not be built or loaded.
#[derive(Debug, Error)]
pub enum AnalysisError {
    #[error("I/O failed at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no *.csv lexicon files in {0}")]
    NoLexicon(PathBuf),
    #[error("dictionary {path} is invalid: {message}")]
    Dictionary { path: PathBuf, message: String },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> AnalysisError + '_ {
    move |source| AnalysisError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The writing system a text is mostly in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    Japanese,
    Latin,
}

/// Kana and CJK ideographs (including the iteration mark and the prolonged-sound mark).
fn is_japanese_char(c: char) -> bool {
    matches!(c,
        '\u{3005}' | '\u{3007}'            // 々 〇
        | '\u{3040}'..='\u{30FF}'          // hiragana, katakana
        | '\u{31F0}'..='\u{31FF}'          // katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'          // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'          // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'          // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}'          // half-width katakana
        | '\u{20000}'..='\u{2FFFF}') // CJK extensions B and later
}

/// Japanese when kana and ideographs make up at least a fifth of the letters: Japanese prose
/// quotes plenty of English names and code, but even a short Japanese sentence has far more than
/// that, while English text essentially never contains kana.
pub fn detect_script(text: &str) -> Script {
    let (mut letters, mut japanese) = (0usize, 0usize);
    for c in text.chars() {
        if is_japanese_char(c) {
            japanese += 1;
            letters += 1;
        } else if c.is_alphabetic() {
            letters += 1;
        }
    }
    if japanese > 0 && japanese * 5 >= letters {
        Script::Japanese
    } else {
        Script::Latin
    }
}

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

/// How Japanese text is cut into terms.
#[derive(Clone)]
pub enum JapaneseTokenization {
    /// IPADIC morphemes. vibrato's `Tokenizer` owns its dictionary and is immutable after
    /// construction, so one shared instance serves every thread; each token stream borrows it
    /// through a short-lived worker.
    Morphological(Arc<vibrato::Tokenizer>),
    /// Overlapping character bigrams: needs no dictionary, and ranks about as well.
    Bigram,
}

impl std::fmt::Debug for JapaneseTokenization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(japanese_analyzer_name(self))
    }
}

impl JapaneseTokenization {
    /// Loads a dictionary written by [`build_ipadic_dictionary`]; falls back to bigrams when no
    /// path is given or nothing is there. A file that exists but cannot be read is an error,
    /// since silently switching analyzers would make the caller rebuild its index.
    pub fn load(dictionary_path: Option<&Path>) -> Result<Self, AnalysisError> {
        let Some(path) = dictionary_path.filter(|p| p.is_file()) else {
            return Ok(Self::Bigram);
        };
        let file = fs::File::open(path).map_err(io_error(path))?;
        let dictionary = vibrato::Dictionary::read(BufReader::new(file)).map_err(|e| {
            AnalysisError::Dictionary {
                path: path.to_path_buf(),
                message: e.to_string(),
            }
        })?;
        Ok(Self::Morphological(Arc::new(vibrato::Tokenizer::new(
            dictionary,
        ))))
    }
}

/// The tokenizer name a Japanese field is indexed with; stored in the index schema, so a change
/// of analyzer can be detected when an index is reopened.
pub fn japanese_analyzer_name(japanese: &JapaneseTokenization) -> &'static str {
    match japanese {
        JapaneseTokenization::Morphological(_) => JAPANESE_IPADIC_ANALYZER,
        JapaneseTokenization::Bigram => JAPANESE_BIGRAM_ANALYZER,
    }
}

/// Registers [`ENGLISH_ANALYZER`], [`JAPANESE_BIGRAM_ANALYZER`] and, with a dictionary,
/// [`JAPANESE_IPADIC_ANALYZER`] on `index`. Must be called on every open, before indexing or
/// searching, since tantivy does not persist tokenizers.
pub fn register_analyzers(index: &tantivy::Index, japanese: &JapaneseTokenization) {
    let manager = index.tokenizers();
    manager.register(ENGLISH_ANALYZER, english_analyzer());
    manager.register(
        JAPANESE_BIGRAM_ANALYZER,
        TextAnalyzer::from(BigramTokenizer),
    );
    if let JapaneseTokenization::Morphological(tokenizer) = japanese {
        manager.register(
            JAPANESE_IPADIC_ANALYZER,
            TextAnalyzer::from(MorphemeTokenizer {
                tokenizer: Arc::clone(tokenizer),
            }),
        );
    }
}

fn english_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(LatinWordTokenizer)
        .filter(StopWordFilter::remove(
            ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_string()),
        ))
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Folds full-width ASCII (Ａ, １) to ASCII and lowercases, so that the forms Japanese text
/// mixes freely match each other.
fn normalize_char(c: char) -> char {
    let c = match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        _ => c,
    };
    // Lowercasing can expand (İ → i̇); the first char is the letter that matters for matching.
    c.to_lowercase().next().unwrap_or(c)
}

fn normalized(text: &str) -> String {
    text.chars().map(normalize_char).collect()
}

/// A token stream over tokens computed up front: vibrato's worker borrows the tokenizer, which a
/// tantivy stream cannot hold alongside it, and n-grams are simpler to emit in one pass.
struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    // tantivy reads the token only after `advance` returned true, so `next >= 1` here.
    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// Appends a token unless it is too long to be a useful term.
fn push_token(tokens: &mut Vec<Token>, text: String, from: usize, to: usize) {
    if text.len() > MAX_TOKEN_BYTES {
        return;
    }
    tokens.push(Token {
        offset_from: from,
        offset_to: to,
        position: tokens.len(),
        text,
        position_length: 1,
    });
}

/// The maximal runs of chars accepted by `member`, as byte ranges into `text`.
fn runs<'a>(
    text: &'a str,
    member: impl Fn(char) -> bool + 'a,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, _) = chars.by_ref().find(|(_, c)| member(*c))?;
        let mut end = text.len();
        while let Some(&(offset, c)) = chars.peek() {
            if !member(c) {
                end = offset;
                break;
            }
            chars.next();
        }
        Some((start, end))
    })
}

/// Splits text into words of letters and digits, normalized; kana and ideographs end a word and
/// are dropped, so "Rustの本" yields "rust" rather than one unsearchable mixed token.
#[derive(Clone)]
struct LatinWordTokenizer;

impl Tokenizer for LatinWordTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        let mut tokens = Vec::new();
        for (start, end) in runs(text, |c| c.is_alphanumeric() && !is_japanese_char(c)) {
            push_token(&mut tokens, normalized(&text[start..end]), start, end);
        }
        VecTokenStream { tokens, next: 0 }
    }
}

/// Cuts text into IPADIC morphemes and keeps the Japanese content words, in their dictionary
/// (base) form so that 行きました matches 行く.
#[derive(Clone)]
struct MorphemeTokenizer {
    tokenizer: Arc<vibrato::Tokenizer>,
}

/// Parts of speech that carry no topic: particles (は, の), auxiliary verbs (です, た) and
/// symbols. Dropping them keeps the most frequent grammar words out of BM25.
const FUNCTION_POS: &[&str] = &["助詞", "助動詞", "記号"];

impl Tokenizer for MorphemeTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        let mut worker = self.tokenizer.new_worker();
        worker.reset_sentence(text);
        worker.tokenize();
        let mut tokens = Vec::with_capacity(worker.num_tokens());
        for token in worker.token_iter() {
            let surface = token.surface();
            // Latin words and numbers are left to the English and bigram analyzers, which an
            // index pairs this one with: counting them here too would weigh them twice.
            if !surface.chars().any(is_japanese_char) {
                continue;
            }
            // IPADIC features: POS, 3 POS subdivisions, conjugation type and form, base form,
            // reading, pronunciation. Unknown words have fewer fields or "*" as base form.
            let mut feature = token.feature().split(',');
            if feature
                .next()
                .is_some_and(|pos| FUNCTION_POS.contains(&pos))
            {
                continue;
            }
            let base = feature
                .nth(5)
                .filter(|base| *base != "*" && !base.is_empty())
                .unwrap_or(surface);
            let range = token.range_byte();
            push_token(&mut tokens, normalized(base), range.start, range.end);
        }
        VecTokenStream { tokens, next: 0 }
    }
}

/// Cuts each run of letters and digits into overlapping character bigrams, and also emits every
/// kana and ideograph alone (a run of one character is just that unigram).
///
/// Bigrams across scripts are kept on purpose: "1964年" yields "4年", which matches the year in a
/// question better than "1964" alone. The unigrams let one-character words (県, 川) match.
#[derive(Clone)]
struct BigramTokenizer;

impl Tokenizer for BigramTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        let mut tokens = Vec::new();
        for (start, end) in runs(text, char::is_alphanumeric) {
            let chars: Vec<(usize, char)> = text[start..end]
                .char_indices()
                .map(|(offset, c)| (start + offset, normalize_char(c)))
                .collect();
            let end_of = |i: usize| chars.get(i + 1).map_or(end, |(offset, _)| *offset);
            for (i, &(from, c)) in chars.iter().enumerate() {
                if chars.len() == 1 || is_japanese_char(c) {
                    push_token(&mut tokens, c.to_string(), from, end_of(i));
                }
                if let Some(&(_, next)) = chars.get(i + 1) {
                    push_token(&mut tokens, [c, next].iter().collect(), from, end_of(i + 1));
                }
            }
        }
        VecTokenStream { tokens, next: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IPADIC_DIR: &str = "/usr/share/mecab/dic/ipadic";

    fn terms(index: &tantivy::Index, analyzer: &str, text: &str) -> Vec<String> {
        let Some(mut analyzer) = index.tokenizers().get(analyzer) else {
            panic!("analyzer {analyzer} not registered");
        };
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push(token.text.clone());
        }
        out
    }

    fn index_with(japanese: &JapaneseTokenization) -> tantivy::Index {
        let index = tantivy::Index::create_in_ram(tantivy::schema::Schema::builder().build());
        register_analyzers(&index, japanese);
        index
    }

    #[test]
    fn detects_script() {
        assert_eq!(
            detect_script("梅雨は東アジアの気象現象である。"),
            Script::Japanese
        );
        assert_eq!(
            detect_script("The rainy season in East Asia."),
            Script::Latin
        );
        assert_eq!(
            detect_script("Rust の async/await と tokio の runtime について説明します"),
            Script::Japanese
        );
        assert_eq!(
            detect_script("Tokyo (東京) is the capital of Japan and its largest city."),
            Script::Latin
        );
        assert_eq!(detect_script(""), Script::Latin);
        assert_eq!(detect_script("12345 !!"), Script::Latin);
    }

    #[test]
    fn bigrams_of_a_compound() {
        let index = index_with(&JapaneseTokenization::Bigram);
        assert_eq!(
            terms(&index, JAPANESE_BIGRAM_ANALYZER, "関西国際空港"),
            [
                "関", "関西", "西", "西国", "国", "国際", "際", "際空", "空", "空港", "港"
            ]
        );
        // Runs end at punctuation; full-width Latin is folded; digits pair with the counter.
        assert_eq!(
            terms(&index, JAPANESE_BIGRAM_ANALYZER, "「Ｒｕｓｔ」と空、2024年"),
            ["ru", "us", "st", "と", "と空", "空", "20", "02", "24", "4年", "年"]
        );
    }

    #[test]
    fn english_stems_and_drops_stop_words() {
        let index = index_with(&JapaneseTokenization::Bigram);
        assert_eq!(
            terms(&index, ENGLISH_ANALYZER, "The Running of the Bulls?"),
            ["run", "bull"]
        );
        // Kana and ideographs end a word instead of gluing onto it.
        assert_eq!(
            terms(&index, ENGLISH_ANALYZER, "Ｔｏｋｉｏのruntimesを使う"),
            ["tokio", "runtim"]
        );
    }

    #[test]
    fn missing_dictionary_falls_back_to_bigrams() -> Result<(), AnalysisError> {
        let japanese = JapaneseTokenization::load(Some(Path::new("/nonexistent/ipadic.dic")))?;
        assert_eq!(japanese_analyzer_name(&japanese), JAPANESE_BIGRAM_ANALYZER);
        let japanese = JapaneseTokenization::load(None)?;
        assert_eq!(japanese_analyzer_name(&japanese), JAPANESE_BIGRAM_ANALYZER);
        Ok(())
    }

    /// Builds the dictionary into a fresh temp dir, or `None` (with a note) where mecab-ipadic
    /// is not installed.
    fn build_ipadic() -> Option<(tempfile::TempDir, JapaneseTokenization)> {
        if !Path::new(IPADIC_DIR).join("matrix.def").is_file() {
            eprintln!("note: {IPADIC_DIR} missing (apt-get install mecab-ipadic); test skipped");
            return None;
        }
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("no temp dir: {e}"),
        };
        let output = dir.path().join("ipadic.dic");
        if let Err(e) = build_ipadic_dictionary(Path::new(IPADIC_DIR), &output) {
            panic!("building the dictionary failed: {e}");
        }
        match JapaneseTokenization::load(Some(&output)) {
            Ok(japanese) => Some((dir, japanese)),
            Err(e) => panic!("loading the dictionary failed: {e}"),
        }
    }

    #[test]
    fn dictionary_round_trip() {
        let Some((dir, japanese)) = build_ipadic() else {
            return;
        };
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
    fn morphemes_of_a_sentence() {
        let Some((_dir, japanese)) = build_ipadic() else {
            return;
        };
        let index = index_with(&japanese);
        assert_eq!(
            terms(
                &index,
                JAPANESE_IPADIC_ANALYZER,
                "東京の国際空港に行きました。"
            ),
            ["東京", "国際", "空港", "行く"]
        );
        // Particles and Latin words are dropped: the English and bigram analyzers cover Latin.
        assert_eq!(
            terms(
                &index,
                JAPANESE_IPADIC_ANALYZER,
                "Ｒｕｓｔで書かれた検索エンジン"
            ),
            ["書く", "れる", "検索", "エンジン"]
        );
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
