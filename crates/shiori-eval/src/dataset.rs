use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EvalError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: line {line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error(
        "{0} is not a dataset: expected corpus.jsonl + queries.jsonl + qrels/test.tsv (BEIR), \
         documents.jsonl + qa.jsonl, or a docs/ folder of files + questions.jsonl"
    )]
    UnknownLayout(String),
    #[error("{0}: no query could be scored (no qrels and no unanswerable questions)")]
    NoQueries(String),
}

/// One question with what counts as a right answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EvalQuery {
    pub id: String,
    pub text: String,
    /// Relevant document ids with their grade (> 0).
    pub relevant: HashMap<String, u32>,
    /// False when nothing in the corpus answers it: the engine should refuse.
    pub answerable: bool,
    /// Answer strings that the best chunk should contain.
    pub answers: Vec<String>,
    /// Parts a right answer must all state (a question that needs two pages), each given as
    /// its alternatives; empty for most questions.
    pub answer_parts: Vec<Vec<String>>,
    /// What the question asks for (`amount`, `procedure`, `unanswerable`, …), for the report
    /// per kind.
    pub kind: Option<String>,
    /// Its place in a conversation: the earlier turns are asked before it, as its history.
    pub turn: Option<ConversationTurn>,
}

/// A question's place in a scripted conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationTurn {
    pub conversation: String,
    /// 1 for the question that opens it.
    pub turn: u32,
}

/// A corpus (a file, or a folder of files) to index plus the queries to run against it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dataset {
    pub name: String,
    pub corpus: PathBuf,
    pub queries: Vec<EvalQuery>,
    /// Queries skipped because they had neither qrels nor an unanswerable mark.
    pub skipped: usize,
    /// Set when the corpus is a folder of files, whose questions name the files they are
    /// answered in (`docs/…`) rather than document ids.
    pub files: Option<PathBuf>,
}

impl Dataset {
    /// The name its questions give the document `doc_id`: the id itself, or for a folder of
    /// files the file's path under the dataset folder (`docs/a.pdf` for `…/docs/a.pdf#p3`),
    /// so every page, slide or sheet of a file counts as the file.
    pub fn doc_key(&self, doc_id: &str) -> String {
        match &self.files {
            Some(root) => crate::files_layout::file_key(root, doc_id),
            None => doc_id.to_string(),
        }
    }
}

pub(crate) fn read(path: &Path) -> Result<String, EvalError> {
    std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Every non-blank line of a JSONL file with its 1-based line number.
pub fn json_lines(path: &Path) -> Result<Vec<(usize, Value)>, EvalError> {
    read(path)?
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line)
                .map(|value| (index + 1, value))
                .map_err(|e| EvalError::Parse {
                    path: path.display().to_string(),
                    line: index + 1,
                    message: e.to_string(),
                })
        })
        .collect()
}

pub(crate) fn string_field(value: &Value, key: &str) -> Option<String> {
    match value.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

pub(crate) fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// Reads a dataset folder in either supported layout.
pub fn load_dataset(dir: &Path) -> Result<Dataset, EvalError> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let dataset = if dir.join("corpus.jsonl").is_file() && dir.join("queries.jsonl").is_file() {
        load_beir(dir, name)?
    } else if dir.join("documents.jsonl").is_file() && dir.join("qa.jsonl").is_file() {
        load_qa(dir, name)?
    } else if dir.join("docs").is_dir() && dir.join("questions.jsonl").is_file() {
        crate::files_layout::load(dir, name)?
    } else {
        return Err(EvalError::UnknownLayout(dir.display().to_string()));
    };
    if dataset.queries.is_empty() {
        return Err(EvalError::NoQueries(dir.display().to_string()));
    }
    Ok(dataset)
}

fn load_beir(dir: &Path, name: String) -> Result<Dataset, EvalError> {
    let qrels = read_qrels(&dir.join("qrels").join("test.tsv"))?;
    let mut queries = Vec::new();
    let mut skipped = 0;
    let path = dir.join("queries.jsonl");
    for (line, value) in json_lines(&path)? {
        let parse_error = |message: &str| EvalError::Parse {
            path: path.display().to_string(),
            line,
            message: message.to_string(),
        };
        let id = string_field(&value, "_id").ok_or_else(|| parse_error("missing _id"))?;
        let text = string_field(&value, "text").ok_or_else(|| parse_error("missing text"))?;
        let metadata = value.get("metadata");
        let marked_unanswerable = metadata
            .and_then(|m| m.get("answerable"))
            .and_then(Value::as_bool)
            == Some(false);
        let relevant = qrels.get(&id).cloned().unwrap_or_default();
        if relevant.is_empty() && !marked_unanswerable {
            skipped += 1;
            continue;
        }
        queries.push(EvalQuery {
            answerable: !relevant.is_empty(),
            answers: string_list(metadata.and_then(|m| m.get("answers"))),
            id,
            text,
            relevant,
            ..EvalQuery::default()
        });
    }
    Ok(Dataset {
        name,
        corpus: dir.join("corpus.jsonl"),
        queries,
        skipped,
        files: None,
    })
}

/// `query-id  corpus-id  score` per line, tab separated, an optional header; grade 0 rows are
/// judged not relevant and dropped.
fn read_qrels(path: &Path) -> Result<HashMap<String, HashMap<String, u32>>, EvalError> {
    let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
    for (index, line) in read(path)?.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if line.trim().is_empty() {
            continue;
        }
        let parse_error = |message: String| EvalError::Parse {
            path: path.display().to_string(),
            line: index + 1,
            message,
        };
        let [query, doc, grade] = fields[..] else {
            return Err(parse_error(format!(
                "expected 3 tab-separated fields, got {}",
                fields.len()
            )));
        };
        let grade: u32 = match grade.parse() {
            Ok(grade) => grade,
            Err(_) if index == 0 => continue,
            Err(_) => {
                return Err(parse_error(format!(
                    "score {grade:?} is not a whole number"
                )))
            }
        };
        if grade > 0 {
            qrels
                .entry(query.to_string())
                .or_default()
                .insert(doc.to_string(), grade);
        }
    }
    Ok(qrels)
}

fn load_qa(dir: &Path, name: String) -> Result<Dataset, EvalError> {
    let path = dir.join("qa.jsonl");
    let mut queries = Vec::new();
    for (line, value) in json_lines(&path)? {
        let text = string_field(&value, "question").ok_or_else(|| EvalError::Parse {
            path: path.display().to_string(),
            line,
            message: "missing question".to_string(),
        })?;
        let id = string_field(&value, "id").unwrap_or_else(|| format!("q{line}"));
        let mut gold = string_list(value.get("gold_doc_ids"));
        gold.extend(string_field(&value, "gold_doc_id"));
        queries.push(EvalQuery {
            id,
            text,
            answerable: !gold.is_empty(),
            relevant: gold.into_iter().map(|doc| (doc, 1)).collect(),
            answers: string_list(value.get("answers")),
            ..EvalQuery::default()
        });
    }
    Ok(Dataset {
        name,
        corpus: dir.join("documents.jsonl"),
        queries,
        skipped: 0,
        files: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_beir_with_and_without_header_and_graded_qrels() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\":\"d1\",\"text\":\"x\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            concat!(
                "{\"_id\":\"q1\",\"text\":\"a?\",\"metadata\":{\"answers\":[\"x\"]}}\n",
                "{\"_id\":\"q2\",\"text\":\"b?\",\"metadata\":{\"answerable\":false}}\n",
                "{\"_id\":\"q3\",\"text\":\"c?\"}\n",
                "{\"_id\":4,\"text\":\"d?\"}\n",
            ),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        for qrels in ["query-id\tcorpus-id\tscore\n", ""] {
            std::fs::write(
                dir.path().join("qrels/test.tsv"),
                format!("{qrels}q1\td1\t2\nq1\td2\t0\nq3\td1\t0\n4\td1\t1\n"),
            )
            .unwrap();
            let dataset = load_dataset(dir.path()).unwrap();
            let ids: Vec<&str> = dataset.queries.iter().map(|q| q.id.as_str()).collect();
            assert_eq!(ids, ["q1", "q2", "4"]);
            assert_eq!(dataset.skipped, 1, "q3 has only grade-0 rows");
            assert_eq!(
                dataset.queries[0].relevant,
                HashMap::from([("d1".to_string(), 2)])
            );
            assert_eq!(dataset.queries[0].answers, ["x"]);
            assert!(!dataset.queries[1].answerable);
        }
    }

    #[test]
    fn reads_documents_and_qa_layout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("documents.jsonl"), "").unwrap();
        std::fs::write(
            dir.path().join("qa.jsonl"),
            concat!(
                "{\"id\":\"a\",\"question\":\"q?\",\"gold_doc_id\":\"d1\",\"answers\":[\"x\"]}\n",
                "{\"question\":\"r?\",\"gold_doc_id\":null}\n"
            ),
        )
        .unwrap();
        let dataset = load_dataset(dir.path()).unwrap();
        assert_eq!(dataset.corpus, dir.path().join("documents.jsonl"));
        assert!(dataset.queries[0].answerable);
        assert_eq!(dataset.queries[1].id, "q2");
        assert!(!dataset.queries[1].answerable);
    }

    #[test]
    fn names_the_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("documents.jsonl"), "").unwrap();
        std::fs::write(
            dir.path().join("qa.jsonl"),
            "{\"question\":\"ok\"}\n{oops\n",
        )
        .unwrap();
        let error = load_dataset(dir.path()).unwrap_err().to_string();
        assert!(error.contains("qa.jsonl: line 2"), "{error}");
        assert!(load_dataset(&dir.path().join("missing")).is_err());
    }
}
