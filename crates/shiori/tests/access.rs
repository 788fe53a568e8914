//! Document-level access control end to end: `shiori serve` with three keys (admin, hr, sales)
//! over a corpus where the best answer to an HR question is an HR document. The sales key never
//! gets it through any surface, the hr key does, and sales still gets full result lists from
//! what it may read. Run against both stores.

#[macro_use]
mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, SystemTime};

const QUESTION: &str = "How many weeks of paid parental leave do employees get?";
const HR_DOC: &str = "hr/parental-leave.md";
const HR_FACT: &str = "16 weeks";
const KEYS: [(&str, &str, &str); 3] = [
    ("admin", "SHIORI_TEST_KEY_ADMIN", "admin-secret"),
    ("hr", "SHIORI_TEST_KEY_HR", "hr-secret"),
    ("sales", "SHIORI_TEST_KEY_SALES", "sales-secret"),
];

backend_tests!(
    each_key_reads_only_its_groups_documents,
    a_file_two_projects_hold_is_read_as_both_allow,
);

/// Issue 48: a file inside two projects (`company = docs`, `hr = docs/hr` with groups) is
/// read only as both allow, whichever project indexes it and however often it changes, and a
/// link out of a project's folder (`allstaff/team -> ../docs/hr`) is not followed (it is
/// reported), so the HR file never takes an open project's readers.
fn a_file_two_projects_hold_is_read_as_both_allow(backend: Backend) {
    let store = test_store(backend);
    let work = store.work.path();
    let write = |path: &str, text: &str| {
        let path = work.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "docs/handbook.md",
        "# Handbook\n\nThe office opens at nine.\n",
    );
    write(
        "docs/hr/medical.md",
        "# Medical record\n\nEmployee 42 is on medical leave for a knee operation.\n",
    );
    std::fs::create_dir_all(work.join("allstaff")).unwrap();
    std::os::unix::fs::symlink("../docs/hr", work.join("allstaff/team")).unwrap();
    append_config(
        &store.data,
        r#"
[projects.allstaff]
paths = ["allstaff"]

[projects.company]
paths = ["docs"]

[projects.hr]
paths = ["docs/hr"]
groups = ["hr"]

[[auth.keys]]
name = "staff"
env = "SHIORI_TEST_KEY_STAFF"
groups = ["staff"]

[[auth.keys]]
name = "hr"
env = "SHIORI_TEST_KEY_HR"
groups = ["hr"]
"#,
    );
    let sources = |key: &str| -> Vec<String> {
        let found = run_json(
            &store.data,
            &["search", "medical leave knee operation", "--as", key],
        );
        let hits = found["hits"].as_array().unwrap().iter();
        hits.map(|hit| hit["source"].as_str().unwrap().to_string())
            .collect()
    };
    let report = run_json(&store.data, &["index"]);
    let link = report["warnings"].as_array().unwrap().iter().find(|w| {
        w["path"] == "allstaff/team" && w["reason"].as_str().unwrap().contains("not followed")
    });
    assert!(link.is_some(), "the link out is reported: {report}");
    for round in 0..2 {
        assert_eq!(
            sources("hr").first().map(String::as_str),
            Some("docs/hr/medical.md")
        );
        let staff = sources("staff");
        assert!(
            staff.iter().all(|source| !source.contains("medical")),
            "round {round}: {staff:?}"
        );
        // An edit makes the first project by name read the file again; once its stamp is
        // older than the coarsest mtime tick, the next projects see it unchanged by size and
        // time (the groups it got must already be right).
        write(
            "docs/hr/medical.md",
            "# Medical record\n\nEmployee 42 is on medical leave for a knee operation until May.\n",
        );
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        run_json(&store.data, &["index"]);
    }
}

fn each_key_reads_only_its_groups_documents(backend: Backend) {
    let store = test_store(backend);
    write_corpus(store.work.path());
    append_config(&store.data, CONFIG);
    let mut serve = command(&store.data);
    for (_, variable, value) in KEYS {
        serve.env(variable, value);
    }
    let (_serving, addr, _) = start_serving(serve);
    let api = Api { addr: &addr };

    assert_eq!(api.post("sales", "/api/reindex", "").0, 403);
    let (status, body) = api.post("admin", "/api/reindex", "");
    assert_eq!(status, 200, "{body}");
    check_backup(&api, &store.data);

    let hr = api.query("hr", json!({"question": QUESTION}));
    assert_eq!(hr["sources"][0]["source"], HR_DOC, "{hr}");
    assert!(hr["answer"].as_str().unwrap().contains(HR_FACT), "{hr}");
    let sales = api.query("sales", json!({"question": QUESTION}));
    assert_hides_hr(&sales);

    check_uploads(&api);
    check_conversations(&api);
    check_chat_completions(&api);
    check_stats(&api);
    check_mcp(&addr);
    check_cli(&store.data);
    check_changed_project_groups(&store.data);
}

/// An upload's `groups` field keeps it from other keys: not listed, not counted, a 404 when
/// asked for by name (as a name never uploaded is). Only an admin key uploads.
fn check_uploads(api: &Api) {
    assert_eq!(api.upload("sales", "notes.md", "Notes.", None).0, 403);
    let (status, body) = api.upload("admin", "benefits.md", UPLOAD, Some("hr"));
    assert_eq!(status, 201, "{body}");
    let (status, body) = api.upload("admin", "welcome.md", "# Welcome\n\nHello.\n", None);
    assert_eq!(status, 201, "{body}");
    let listed = |key| -> (Vec<String>, u64) {
        let (status, body) = api.get(key, "/api/documents");
        assert_eq!(status, 200, "{body}");
        let ids = body["documents"].as_array().unwrap().iter();
        let ids = ids.map(|d| d["id"].as_str().unwrap().to_string()).collect();
        (ids, body["indexed_files"].as_u64().unwrap())
    };
    let (admin_ids, admin_files) = listed("admin");
    assert_eq!(admin_ids, ["benefits.md", "welcome.md"]);
    let (sales_ids, sales_files) = listed("sales");
    assert_eq!(sales_ids, ["welcome.md"]);
    assert_eq!(
        sales_files,
        admin_files - 3,
        "two HR files and the HR upload"
    );
    assert_eq!(listed("hr").0, admin_ids);
    assert_eq!(api.get("sales", "/api/documents/benefits.md").0, 404);
    assert_eq!(api.get("sales", "/api/documents/never-uploaded.md").0, 404);
    let (status, body) = api.get("hr", "/api/documents/benefits.md");
    assert_eq!(status, 200, "{body}");
    assert!(body.to_string().contains("pension"), "{body}");
}

const UPLOAD: &str =
    "# Benefits handbook\n\nThe company matches pension contributions up to 5% of \
                      salary.\n";

/// A conversation is its key's: sales' turns never see HR documents, and no other key can read
/// or list it.
fn check_conversations(api: &Api) {
    let (status, started) = api.post("sales", "/api/conversations", "");
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap();
    let turn = api.query(
        "sales",
        json!({"question": QUESTION, "conversation_id": id}),
    );
    assert_hides_hr(&turn);
    let follow_up = api.query(
        "sales",
        json!({"question": "And is it paid in full?", "conversation_id": id}),
    );
    assert_hides_hr(&follow_up);
    let path = format!("/api/conversations/{id}");
    assert_eq!(api.get("sales", &path).0, 200);
    assert_eq!(api.get("hr", &path).0, 404);
    let (status, body) = api.post(
        "hr",
        "/api/query",
        &json!({"question": QUESTION, "conversation_id": id}).to_string(),
    );
    assert_eq!(status, 404, "{body}");
    let (_, listed) = api.get("hr", "/api/conversations");
    assert!(!listed.to_string().contains(id), "{listed}");
    let (_, listed) = api.get("sales", "/api/conversations");
    assert!(listed.to_string().contains(id), "{listed}");
}

fn check_chat_completions(api: &Api) {
    let body = json!({"model": "shiori", "messages": [{"role": "user", "content": QUESTION}]});
    let completion = |key| {
        let (status, body) = api.post(key, "/v1/chat/completions", &body.to_string());
        assert_eq!(status, 200, "{body}");
        body["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let sales = completion("sales");
    assert!(
        !sales.contains(HR_FACT) && !sales.contains(HR_DOC),
        "{sales}"
    );
    let hr = completion("hr");
    assert!(hr.contains(HR_FACT), "{hr}");
}

/// Counts leave out what a key may not read: three HR files (one an upload) with four HR
/// documents (one of them a record in a public file), one sales file. The metrics count the
/// whole index, so only the admin key reads them.
fn check_stats(api: &Api) {
    assert_eq!(api.get("sales", "/metrics").0, 403);
    let (status, metrics) = api.get("admin", "/metrics");
    assert_eq!(status, 200, "{metrics}");
    let counts = |key| {
        let (status, stats) = api.get(key, "/api/stats");
        assert_eq!(status, 200, "{stats}");
        ["files", "documents", "chunks"].map(|field| stats[field].as_u64().unwrap())
    };
    let [files, documents, chunks] = counts("admin");
    let [sales_files, sales_documents, sales_chunks] = counts("sales");
    let [hr_files, hr_documents, _] = counts("hr");
    assert_eq!((sales_files, sales_documents), (files - 3, documents - 4));
    assert_eq!((hr_files, hr_documents), (files - 1, documents - 1));
    assert!(sales_chunks < chunks);
    // Writes are an admin's: when one ran (an hr-only upload), what it did and how much it
    // wrote is not told to other keys (issue 48).
    let (_, stats) = api.get("sales", "/api/stats");
    assert!(stats.get("last_reindex").is_none(), "{stats}");
    assert!(stats.get("reindex").is_none(), "{stats}");
    assert_eq!(api.get("sales", "/api/reindex").0, 403);
    let (_, stats) = api.get("admin", "/api/stats");
    assert_eq!(stats["last_reindex"]["operation"], "upload", "{stats}");
    assert_eq!(api.get("admin", "/api/reindex").0, 200);
}

/// Only an admin key backs up; the backup lands in the data directory's `backups/`, named by
/// the server, with its manifest (on PostgreSQL: the data directory's own files).
fn check_backup(api: &Api, data: &std::path::Path) {
    for key in ["sales", "hr"] {
        let (status, body) = api.post(key, "/api/backup", "");
        assert_eq!(status, 403, "{key}: {body}");
    }
    assert!(!data.join("backups").exists());
    let (status, body) = api.post("admin", "/api/backup", "");
    assert_eq!(status, 200, "{body}");
    let name = body["name"].as_str().unwrap();
    assert!(
        data.join("backups")
            .join(name)
            .join("manifest.json")
            .is_file(),
        "{body}"
    );
}

fn check_mcp(addr: &str) {
    let url = format!("http://{addr}/mcp");
    let report = |key: &str| -> Value {
        let secret = secret(key);
        let printed = run_python_client("mcp_access.py", &[&url, secret, QUESTION, "5", HR_DOC]);
        serde_json::from_str(printed.trim()).unwrap_or_else(|e| panic!("{e}: {printed}"))
    };
    let sales = report("sales");
    for seen in [
        "search",
        "ask_sources",
        "ask_answer",
        "documents",
        "resources",
    ] {
        let text = sales[seen].to_string();
        assert!(!text.contains("hr/") && !text.contains(HR_FACT), "{sales}");
    }
    assert_eq!(
        sales["search"].as_array().unwrap().len(),
        5,
        "top_k stays full"
    );
    assert_eq!(sales["readable"][HR_DOC], false, "{sales}");
    let hr = report("hr");
    assert_eq!(hr["search"][0], HR_DOC, "{hr}");
    assert_eq!(hr["readable"][HR_DOC], true, "{hr}");
    assert!(hr["documents"].to_string().contains(HR_DOC), "{hr}");
}

/// `--as` shows what a key would see; without it a local command reads everything.
fn check_cli(data: &Path) {
    let hits = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["search", QUESTION, "--top-k", "5"];
        args.extend_from_slice(extra);
        run_json(data, &args)["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["source"].as_str().unwrap().to_string())
            .collect()
    };
    let sales = hits(&["--as", "sales"]);
    assert_eq!(sales.len(), 5, "{sales:?}");
    assert!(
        sales.iter().all(|source| !source.starts_with("hr/")),
        "{sales:?}"
    );
    assert_eq!(hits(&["--as", "hr"])[0], HR_DOC);
    assert_eq!(hits(&[])[0], HR_DOC);
    let unknown = run(data, &["search", QUESTION, "--as", "nobody"]);
    assert!(!unknown.status.success());
}

/// Giving a project other groups re-indexes its unchanged files with them.
fn check_changed_project_groups(data: &Path) {
    let question = "How much discount may sales representatives grant?";
    let first_hit = |key: &str| -> String {
        let found = run_json(data, &["search", question, "--top-k", "1", "--as", key]);
        found["hits"][0]["source"].as_str().unwrap().to_string()
    };
    assert_eq!(first_hit("sales"), "sales/discounts.md");
    assert_ne!(first_hit("hr"), "sales/discounts.md");
    append_config(data, "[projects.sales]\ngroups = [\"hr\"]\n");
    run_json(data, &["index"]);
    assert_ne!(first_hit("sales"), "sales/discounts.md");
    assert_eq!(first_hit("hr"), "sales/discounts.md");
}

fn assert_hides_hr(answer: &Value) {
    let sources = answer["sources"].to_string();
    assert!(!sources.contains("hr/"), "{answer}");
    assert!(!sources.contains("salary-bands"), "{answer}");
    assert!(
        !answer["answer"].as_str().unwrap().contains(HR_FACT),
        "{answer}"
    );
}

const CONFIG: &str = r#"
[ingest]
sources = ["public"]

[projects.hr]
paths = ["hr"]
groups = ["hr"]

[projects.sales]
paths = ["sales"]
groups = ["sales"]

[[auth.keys]]
name = "admin"
env = "SHIORI_TEST_KEY_ADMIN"
admin = true

[[auth.keys]]
name = "hr"
env = "SHIORI_TEST_KEY_HR"
groups = ["hr"]

[[auth.keys]]
name = "sales"
env = "SHIORI_TEST_KEY_SALES"
groups = ["sales"]
"#;

/// The fixture corpus as public documents, an HR and a sales project, and a JSONL file whose
/// records name their own groups.
fn write_corpus(work: &Path) {
    copy_fixtures(&work.join("public"));
    let files = [
        (
            HR_DOC,
            "# Parental leave\n\nEmployees receive 16 weeks of paid parental leave after the \
             birth or adoption of a child. Parental leave is paid in full and can be split into \
             two blocks within the first year.\n",
        ),
        (
            "hr/salary-review.md",
            "# Salary review\n\nSalaries are reviewed every April. Managers propose raises to \
             HR by the end of March.\n",
        ),
        (
            "sales/discounts.md",
            "# Discount approval\n\nSales representatives may grant up to 15% discount; larger \
             discounts need the sales director's approval.\n",
        ),
        (
            "public/records.jsonl",
            concat!(
                r#"{"doc_id": "salary-bands", "title": "Salary bands", "text": "Engineering salary bands range from level 1 to level 6.", "groups": ["hr"]}"#,
                "\n",
                r#"{"doc_id": "office-wifi", "title": "Office Wi-Fi", "text": "The office Wi-Fi network is called kumo-guest."}"#,
                "\n"
            ),
        ),
    ];
    for (path, text) in files {
        let path = work.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        // Written long before they are indexed, as a company's files are: the indexer does not
        // read them again for being too fresh to trust their modification time.
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(an_hour_ago).unwrap();
    }
}

fn secret(key: &str) -> &'static str {
    KEYS.iter()
        .find(|(name, _, _)| *name == key)
        .map(|(_, _, value)| *value)
        .unwrap()
}

/// The server's HTTP API as one key calls it.
struct Api<'a> {
    addr: &'a str,
}

impl Api<'_> {
    fn send(&self, key: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
        self.send_as(key, method, path, "Content-Type: application/json", body)
    }

    fn send_as(&self, key: &str, method: &str, path: &str, kind: &str, body: &str) -> (u16, Value) {
        let auth = format!("Authorization: Bearer {}", secret(key));
        let headers = [auth.as_str(), kind, "X-Shiori-Request: 1"];
        let (status, text) = http(self.addr, method, path, &headers, body);
        let value = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()));
        (status, value)
    }

    fn get(&self, key: &str, path: &str) -> (u16, Value) {
        self.send(key, "GET", path, "")
    }

    fn post(&self, key: &str, path: &str, body: &str) -> (u16, Value) {
        self.send(key, "POST", path, body)
    }

    /// A multipart upload of one file, with a `groups` field when given.
    fn upload(&self, key: &str, name: &str, text: &str, groups: Option<&str>) -> (u16, Value) {
        let boundary = "shiori-test-boundary";
        let mut body = String::new();
        if let Some(groups) = groups {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"groups\"\r\n\r\n{groups}\r\n"
            ));
        }
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: text/markdown\r\n\r\n{text}\r\n--{boundary}--\r\n"
        ));
        let kind = format!("Content-Type: multipart/form-data; boundary={boundary}");
        self.send_as(key, "POST", "/api/documents", &kind, &body)
    }

    fn query(&self, key: &str, body: Value) -> Value {
        let (status, answer) = self.post(key, "/api/query", &body.to_string());
        assert_eq!(status, 200, "{answer}");
        answer
    }
}
