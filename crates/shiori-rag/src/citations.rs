//! `[n]` markers in generated answers: which point at real sources, and which were made up.

use shiori_core::{Citation, Source};

/// The citations of an answer checked against its numbered sources.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedCitations {
    /// The answer with markers that point at no source removed.
    pub answer: String,
    /// One per distinct valid number, in order of first use.
    pub citations: Vec<Citation>,
    /// Numbers cited that have no source, in order of first use.
    pub fabricated: Vec<usize>,
}

/// Finds `[n]` and `[n, m]` markers; keeps those within `1..=sources.len()`.
pub fn check_citations(answer: &str, sources: &[Source]) -> CheckedCitations {
    let mut checked = CheckedCitations {
        answer: String::with_capacity(answer.len()),
        citations: Vec::new(),
        fabricated: Vec::new(),
    };
    let mut rest = answer;
    while let Some(open) = rest.find('[') {
        checked.answer.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(numbers) = after
            .find(']')
            .and_then(|close| parse_numbers(&after[..close]).map(|numbers| (numbers, close)))
        else {
            checked.answer.push('[');
            rest = after;
            continue;
        };
        let (numbers, close) = numbers;
        let mut kept = Vec::new();
        for number in numbers {
            match sources.get(number.wrapping_sub(1)) {
                Some(source) if number >= 1 => {
                    kept.push(number.to_string());
                    if !checked.citations.iter().any(|c| c.number == number) {
                        checked.citations.push(Citation::of(number, source));
                    }
                }
                _ if !checked.fabricated.contains(&number) => checked.fabricated.push(number),
                _ => {}
            }
        }
        if !kept.is_empty() {
            checked.answer.push_str(&format!("[{}]", kept.join(", ")));
        } else if checked.answer.ends_with(' ') {
            checked.answer.pop();
        }
        rest = &after[close + 1..];
    }
    checked.answer.push_str(rest);
    checked
}

/// `"1"`, `"1, 2"`, `"1,2"` → numbers; anything else is not a citation.
fn parse_numbers(inside: &str) -> Option<Vec<usize>> {
    let numbers: Option<Vec<usize>> = inside
        .split(',')
        .map(|part| part.trim().parse::<usize>().ok())
        .collect();
    numbers.filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(count: usize) -> Vec<Source> {
        (1..=count)
            .map(|i| Source {
                doc_id: format!("doc{i}"),
                chunk_id: format!("doc{i}#0"),
                title: format!("Doc {i}"),
                source: format!("doc{i}.md"),
                score: 1.0,
                text: String::new(),
            })
            .collect()
    }

    #[test]
    fn keeps_real_citations_and_catches_fabricated_ones() {
        let checked = check_citations(
            "Storage is 100 GB [1]. Blocks are 50 GB [2, 3]. Refunds take a week [7].",
            &sources(3),
        );
        assert_eq!(checked.fabricated, vec![7]);
        let numbers: Vec<usize> = checked.citations.iter().map(|c| c.number).collect();
        assert_eq!(numbers, vec![1, 2, 3]);
        assert_eq!(checked.citations[1].doc_id, "doc2");
        assert_eq!(
            checked.answer,
            "Storage is 100 GB [1]. Blocks are 50 GB [2, 3]. Refunds take a week."
        );
    }

    #[test]
    fn leaves_other_brackets_alone() {
        let checked = check_citations("See [the guide] and [0] or [1,9] [x", &sources(1));
        assert_eq!(checked.fabricated, vec![0, 9]);
        assert_eq!(checked.answer, "See [the guide] and or [1] [x");
    }
}
