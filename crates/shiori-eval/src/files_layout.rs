//! The layout of a real-document dev set: a `docs/` folder of files as a company keeps them
//! (Markdown with front matter, HTML, PDF, Office) and `questions.jsonl`, one question a line:
//!
//! ```json
//! {"id": "en-001", "question": "…", "kind": "amount", "answers": ["$2,000"],
//!  "gold_files": ["docs/people/benefits.md"], "answerable": true}
//! ```
//!
//! `answers_all` (`[["part 1", "or this"], ["part 2"]]`) lists parts a right answer must all
//! state; `conversation` and `turn` make the line a turn of a scripted conversation, asked after
//! the earlier turns of the same conversation.

use crate::dataset::{json_lines, string_field, string_list, ConversationTurn, EvalError};
use crate::{Dataset, EvalQuery};
use serde_json::Value;
use std::path::Path;

/// The folder of a dev set's files, and the prefix its questions give them.
pub(crate) const DOCS: &str = "docs";

pub(crate) fn load(dir: &Path, name: String) -> Result<Dataset, EvalError> {
    let path = dir.join("questions.jsonl");
    let mut queries = Vec::new();
    for (line, value) in json_lines(&path)? {
        let parse_error = |message: String| EvalError::Parse {
            path: path.display().to_string(),
            line,
            message,
        };
        let query = question(&value).map_err(parse_error)?;
        if let Some(missing) = query.relevant.keys().find(|file| !dir.join(file).is_file()) {
            return Err(parse_error(format!("gold file {missing} does not exist")));
        }
        queries.push(query);
    }
    Ok(Dataset {
        name,
        corpus: dir.join(DOCS),
        queries,
        skipped: 0,
        files: Some(dir.join(DOCS)),
    })
}

fn question(value: &Value) -> Result<EvalQuery, String> {
    let id = string_field(value, "id").ok_or("missing id")?;
    let text = string_field(value, "question").ok_or("missing question")?;
    let gold = string_list(value.get("gold_files"));
    let answerable = match value.get("answerable") {
        None => !gold.is_empty(),
        Some(flag) => flag.as_bool().ok_or("answerable is not true or false")?,
    };
    if answerable && gold.is_empty() {
        return Err(format!("{id}: an answerable question needs gold_files"));
    }
    let answer_parts = match value.get("answers_all") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(parts)) => parts.iter().map(|part| string_list(Some(part))).collect(),
        Some(_) => return Err(format!("{id}: answers_all is not a list of lists")),
    };
    let turn = match (string_field(value, "conversation"), value.get("turn")) {
        (None, None) => None,
        (Some(conversation), Some(turn)) => Some(ConversationTurn {
            conversation,
            turn: turn
                .as_u64()
                .and_then(|turn| u32::try_from(turn).ok())
                .filter(|&turn| turn >= 1)
                .ok_or_else(|| format!("{id}: turn is not a number from 1"))?,
        }),
        _ => return Err(format!("{id}: conversation and turn go together")),
    };
    Ok(EvalQuery {
        relevant: gold.into_iter().map(|file| (file, 1)).collect(),
        answers: string_list(value.get("answers")),
        kind: string_field(value, "kind"),
        id,
        text,
        answerable,
        answer_parts,
        turn,
    })
}

/// The `docs/…` path of the file a document of `root` came from. Its id is the file's path,
/// as the walk of `root` found it or as shown (`docs/…`, or relative to `root`), a page, slide
/// or sheet adding `#part`; an id of no file under `root` is kept as it is.
pub(crate) fn file_key(root: &Path, doc_id: &str) -> String {
    let stored_root = root.to_string_lossy();
    let inside = doc_id
        .strip_prefix(stored_root.as_ref())
        .or_else(|| doc_id.strip_prefix(DOCS))
        .unwrap_or(doc_id)
        .trim_start_matches(['/', '\\']);
    let file = match inside.split_once('#') {
        Some((file, _part)) if root.join(file).is_file() => file,
        _ => inside,
    };
    match root.join(file).is_file() {
        true => format!("{DOCS}/{}", file.replace('\\', "/")),
        false => doc_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_dataset;

    fn dev_set(questions: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("docs/hr")).unwrap();
        std::fs::write(dir.path().join("docs/hr/leave.md"), "# Leave\n20 days.").unwrap();
        std::fs::write(dir.path().join("docs/plan.pdf"), "%PDF").unwrap();
        std::fs::write(dir.path().join("questions.jsonl"), questions).unwrap();
        dir
    }

    #[test]
    fn reads_questions_parts_kinds_and_turns() {
        let dir = dev_set(concat!(
            r#"{"id":"a","question":"How many days?","kind":"count","answers":["20 days"],"gold_files":["docs/hr/leave.md"]}"#,
            "\n",
            r#"{"id":"b","question":"Leave and plan?","kind":"two_page","answers_all":[["20 days"],["Pro","pro plan"]],"gold_files":["docs/hr/leave.md","docs/plan.pdf"],"conversation":"c1","turn":2}"#,
            "\n",
            r#"{"id":"c","question":"Parking?","kind":"unanswerable","answerable":false,"gold_files":[]}"#,
            "\n",
        ));
        let dataset = load_dataset(dir.path()).unwrap();
        assert_eq!(dataset.corpus, dir.path().join("docs"));
        let [a, b, c] = &dataset.queries[..] else {
            panic!("three questions")
        };
        assert_eq!(a.kind.as_deref(), Some("count"));
        assert!(a.answerable && a.relevant.contains_key("docs/hr/leave.md"));
        assert_eq!(b.answer_parts, [vec!["20 days"], vec!["Pro", "pro plan"]]);
        assert_eq!(
            b.turn,
            Some(ConversationTurn {
                conversation: "c1".into(),
                turn: 2
            })
        );
        assert!(!c.answerable && c.relevant.is_empty());
    }

    #[test]
    fn names_the_line_of_a_missing_gold_file_or_a_bad_turn() {
        let dir = dev_set(r#"{"id":"a","question":"q?","gold_files":["docs/nope.md"]}"#);
        let error = load_dataset(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("line 1") && error.contains("docs/nope.md"),
            "{error}"
        );
        let dir = dev_set(r#"{"id":"a","question":"q?","answerable":false,"conversation":"c"}"#);
        let error = load_dataset(dir.path()).unwrap_err().to_string();
        assert!(error.contains("go together"), "{error}");
        let dir = dev_set(r#"{"id":"a","question":"q?","answerable":true}"#);
        let error = load_dataset(dir.path()).unwrap_err().to_string();
        assert!(error.contains("needs gold_files"), "{error}");
    }

    #[test]
    fn pages_of_a_file_count_as_the_file() {
        let dir = dev_set("");
        let root = dir.path().join("docs");
        let id = |inside: &str| format!("{}/{inside}", root.display());
        assert_eq!(file_key(&root, &id("plan.pdf#p3")), "docs/plan.pdf");
        assert_eq!(file_key(&root, &id("hr/leave.md")), "docs/hr/leave.md");
        assert_eq!(
            file_key(&root, "hr/leave.md"),
            "docs/hr/leave.md",
            "as shown"
        );
        assert_eq!(file_key(&root, "plan.pdf#p1"), "docs/plan.pdf");
        assert_eq!(file_key(&root, "docs/plan.pdf#p1"), "docs/plan.pdf");
        assert_eq!(file_key(&root, "elsewhere/x.md"), "elsewhere/x.md");
    }
}
