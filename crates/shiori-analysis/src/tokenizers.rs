use std::sync::Arc;

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use crate::script::is_japanese_char;

/// Tokens longer than this (in bytes) are dropped: they are base64, hashes or URLs that only
/// bloat the term dictionary and never match a query.
const MAX_TOKEN_BYTES: usize = 40;

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
pub(crate) struct VecTokenStream {
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
pub(crate) struct LatinWordTokenizer;

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
pub(crate) struct MorphemeTokenizer {
    pub(crate) tokenizer: Arc<vibrato::Tokenizer>,
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
pub(crate) struct BigramTokenizer;

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
    use crate::dictionary::tests::build_ipadic;
    use crate::tests::{index_with, terms};
    use crate::{JapaneseTokenization, JAPANESE_BIGRAM_ANALYZER, JAPANESE_IPADIC_ANALYZER};

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
    fn morphemes_of_a_sentence() {
        let (_dir, japanese) = build_ipadic();
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
}
