//! Chunks that end where the topic changes: adjacent sentences whose embeddings are less similar
//! than a threshold go to different chunks.

use super::recursive;
use super::token::sentences;
use shiori_core::EmbedError;

/// Embeds passages into unit vectors (cosine = dot product).
pub(super) type EmbedPassages<'a> = dyn Fn(&[&str]) -> Result<Vec<Vec<f32>>, EmbedError> + 'a;

/// Groups consecutive sentences while each one's cosine similarity to the one before is at
/// least `threshold` and the group stays within `max` chars; sentences longer than `max` are cut
/// first. The pieces keep the text between their sentences.
pub(super) fn split(
    text: &str,
    max: usize,
    threshold: f32,
    embed: &EmbedPassages<'_>,
) -> Result<Vec<String>, EmbedError> {
    let mut units: Vec<&str> = Vec::new();
    for sentence in sentences(text) {
        if sentence.chars().count() <= max {
            units.push(sentence);
        } else {
            let mut from = 0;
            for part in recursive::split(sentence, max) {
                if let Some(offset) = sentence[from..].find(part.as_str()) {
                    let start = from + offset;
                    from = start + part.len();
                    units.push(&sentence[start..from]);
                }
            }
        }
    }
    if units.len() <= 1 {
        return Ok(units.into_iter().map(str::to_owned).collect());
    }
    let vectors = embed(&units)?;
    if vectors.len() != units.len() {
        return Err(EmbedError::inference(format!(
            "{} vectors for {} sentences",
            vectors.len(),
            units.len()
        )));
    }

    let mut pieces = Vec::new();
    let mut start = 0;
    for next in 1..=units.len() {
        let ends_here = next == units.len() || {
            let similarity = dot(&vectors[next - 1], &vectors[next]);
            let chars = span(text, units[start], units[next]).chars().count();
            similarity < threshold || chars > max
        };
        if ends_here {
            pieces.push(span(text, units[start], units[next - 1]).to_owned());
            start = next;
        }
    }
    Ok(pieces)
}

/// The text from the start of `first` to the end of `last`, both slices of `text`.
fn span<'t>(text: &'t str, first: &'t str, last: &'t str) -> &'t str {
    let start = first.as_ptr() as usize - text.as_ptr() as usize;
    let end = last.as_ptr() as usize - text.as_ptr() as usize + last.len();
    &text[start..end]
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit vector per topic word, so similarity is 1 within a topic and 0 across topics.
    fn by_topic(texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let topic = ["cat", "rain", "tax"]
                    .iter()
                    .position(|word| text.contains(word))
                    .unwrap_or(3);
                let mut vector = vec![0.0; 4];
                vector[topic] = 1.0;
                vector
            })
            .collect())
    }

    #[test]
    fn splits_where_the_topic_changes() {
        let text = "The cat sleeps. The cat purrs.\nHeavy rain tonight. More rain tomorrow. \
                    File the tax form.";
        assert_eq!(
            split(text, 200, 0.5, &by_topic).unwrap(),
            [
                "The cat sleeps. The cat purrs.",
                "Heavy rain tonight. More rain tomorrow.",
                "File the tax form."
            ]
        );
    }

    #[test]
    fn a_long_topic_is_cut_at_the_size_limit() {
        let text = "The cat one. The cat two. The cat three.";
        let pieces = split(text, 26, 0.5, &by_topic).unwrap();
        assert_eq!(pieces, ["The cat one. The cat two.", "The cat three."]);
        let long_sentence = "the cat ".repeat(10);
        let pieces = split(&long_sentence, 20, 0.5, &by_topic).unwrap();
        assert!(pieces.iter().all(|p| p.chars().count() <= 20), "{pieces:?}");
    }

    #[test]
    fn one_sentence_needs_no_embedding() {
        let refuse = |_: &[&str]| Err(EmbedError::inference("not called"));
        assert_eq!(
            split("Just one.", 100, 0.5, &refuse).unwrap(),
            ["Just one."]
        );
        assert!(split("One. Two.", 100, 0.5, &refuse).is_err());
    }
}
