//! The holes a hostile probe of `shiori serve` found (issue 31), each closed: a record or file
//! only narrows its project's groups, group names compare in one form, every response carries
//! frame protection, no stored error shows a server path, filters match shown paths only, a
//! hidden upload answers as a missing one does, an MCP session keeps to its key, and the small
//! protocol points. Run against both stores.

#[macro_use]
mod common;

use common::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

const KEYS: [(&str, &str, &str); 3] = [
    ("admin", "SHIORI_TEST_KEY_ADMIN", "admin-secret"),
    ("hr", "SHIORI_TEST_KEY_HR", "hr-secret"),
    ("sales", "SHIORI_TEST_KEY_SALES", "sales-secret"),
];

/// Records of the `hr` project; each mentions payroll so one search finds them all.
const HR_RECORDS: &str = concat!(
    r#"{"doc_id": "empty-list", "text": "The payroll calendar closes on the 25th.", "groups": []}"#,
    "\n",
    r#"{"doc_id": "empty-string", "text": "Payroll questions go to the payroll desk.", "groups": ""}"#,
    "\n",
    r#"{"doc_id": "upper-case", "text": "Payroll corrections need a signed form.", "groups": ["HR"]}"#,
    "\n",
    r#"{"doc_id": "wider", "text": "Payroll bonuses for sales staff are paid quarterly.", "groups": ["sales"]}"#,
    "\n",
    r#"{"doc_id": "misspelt", "text": "Payroll audits run every June.", "groups": ["hr", "hrr"]}"#,
    "\n",
);

const CONFIG: &str = r#"
[ingest]
sources = ["public"]

[projects.hr]
paths = ["hr"]
groups = ["hr"]

[eval]
dataset = "missing-eval-set"

[[auth.keys]]
name = "admin"
env = "SHIORI_TEST_KEY_ADMIN"
admin = true

[[auth.keys]]
name = "hr"
env = "SHIORI_TEST_KEY_HR"
groups = ["HR"]

[[auth.keys]]
name = "sales"
env = "SHIORI_TEST_KEY_SALES"
groups = ["sales"]
"#;

backend_tests!(the_probes_holes_stay_closed);

/// Held by each backend's run: the test times requests, and the other backend's run beside it
/// would load the same cores (a 548 µs median against 378 µs, on two).
static ONE_BACKEND_AT_A_TIME: Mutex<()> = Mutex::new(());

fn the_probes_holes_stay_closed(backend: Backend) {
    let _alone = ONE_BACKEND_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let store = test_store(backend);
    let work = store.work.path();
    write_file(&work.join("hr/records.jsonl"), HR_RECORDS);
    write_file(
        &work.join("public/welcome.md"),
        "# Welcome\n\nThe canteen opens at noon.\n",
    );
    append_config(&store.data, CONFIG);

    check_records_only_narrow(&store.data);
    let mut serve = command(&store.data);
    for (_, variable, value) in KEYS {
        serve.env(variable, value);
    }
    let (_serving, addr, _) = start_serving(serve);
    check_uploads_only_narrow(&addr);
    check_headers(&addr);
    check_protocol(&addr);
    check_filters(&addr);
    check_stored_errors(&addr, work);
    check_mcp_sessions(&addr);
}

/// Empty `groups` keep the project's, `HR` is `hr`, a record asking for another group than its
/// project allows is read by admin keys only, and the index run says what it narrowed and which
/// group no key has.
fn check_records_only_narrow(data: &Path) {
    let report = run_json(data, &["index"]);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("wider") && warnings.contains("narrowed"),
        "{report}"
    );
    assert!(warnings.contains("\\\"hrr\\\""), "{report}");
    assert!(!warnings.contains("upper-case"), "{report}");
    let found = |reader: Option<&str>| -> Vec<String> {
        let mut args = vec!["search", "payroll", "--top-k", "20", "--mode", "bm25"];
        if let Some(reader) = reader {
            args.extend(["--as", reader]);
        }
        let mut ids: Vec<String> = run_json(data, &args)["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["doc_id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(found(Some("sales")), Vec::<String>::new());
    assert_eq!(
        found(Some("hr")),
        ["empty-list", "empty-string", "misspelt", "upper-case"]
    );
    assert_eq!(
        found(None),
        [
            "empty-list",
            "empty-string",
            "misspelt",
            "upper-case",
            "wider"
        ]
    );
}

/// An upload with `groups=hr` whose record says `"groups": []` stays the hr key's.
fn check_uploads_only_narrow(addr: &str) {
    let (status, _, body) = upload(addr, "admin", "leak.jsonl", LEAK, "hr");
    assert_eq!(status, 201, "{body}");
    assert_eq!(get(addr, "sales", "/api/documents/leak.jsonl").0, 404);
    let (status, _, body) = get(addr, "hr", "/api/documents/leak.jsonl");
    assert_eq!(status, 200, "{body}");
    let question =
        json!({"question": "When are the leaked salaries paid?", "pipeline": "extractive"});
    let (status, _, body) = post(addr, "sales", "/api/query", &question.to_string());
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("leak.jsonl"), "{body}");
    check_hidden_answers_like_missing(addr);
}

const LEAK: &str =
    "{\"doc_id\": \"leak\", \"text\": \"Leaked salaries are paid on Fridays.\", \"groups\": []}\n";

/// The 404 for an upload the key may not read takes as long as the one for a name never
/// uploaded: medians of interleaved requests differ by less than a tenth (and noise) in one of
/// up to three rounds. A side channel (an extra lookup for hidden names) shows in every round;
/// a busy machine (the database on the same two cores) only in some.
fn check_hidden_answers_like_missing(addr: &str) {
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let (hidden, missing) = hidden_and_missing_medians(addr);
        if (hidden - missing).abs() < missing * 0.1 + 40.0 {
            return;
        }
        rounds.push(format!("hidden {hidden:.0} µs, missing {missing:.0} µs"));
    }
    panic!("{}", rounds.join("; "));
}

/// Medians of 150 interleaved requests for a hidden and for a missing upload, in µs.
fn hidden_and_missing_medians(addr: &str) -> (f64, f64) {
    let mut hidden = Vec::new();
    let mut missing = Vec::new();
    for _ in 0..150 {
        for (path, times) in [
            ("/api/documents/leak.jsonl", &mut hidden),
            ("/api/documents/never-uploaded.jsonl", &mut missing),
        ] {
            let started = Instant::now();
            assert_eq!(get(addr, "sales", path).0, 404);
            times.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    (median(&mut hidden), median(&mut missing))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Every response, the page, an API answer or an error, forbids framing and sniffing.
fn check_headers(addr: &str) {
    for (key, path) in [
        ("admin", "/"),
        ("admin", "/api/stats"),
        ("admin", "/api/nothing-here"),
        ("sales", "/metrics"),
    ] {
        let (_, headers, _) = get(addr, key, path);
        for expected in [
            "content-security-policy: ",
            "frame-ancestors 'none'",
            "x-frame-options: DENY",
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
        ] {
            assert!(
                headers.contains(expected),
                "{path}: {expected} in {headers}"
            );
        }
    }
}

/// `bearer` in any case is the Bearer scheme; a request without `Host` is refused; two-stage
/// search of an unknown project is the caller's error, named.
fn check_protocol(addr: &str) {
    let request = |authorization: &str| {
        exchange(
            addr,
            &format!(
                "GET /api/stats HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {authorization}\r\n\
                 Connection: close\r\n\r\n"
            ),
        )
        .0
    };
    assert_eq!(request("bearer hr-secret"), 200);
    assert_eq!(request("BEARER hr-secret"), 200);
    assert_eq!(request("Basic hr-secret"), 401);
    let (status, _, body) = exchange(addr, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("Host"), "{body}");

    let question = json!({
        "question": "When does the payroll calendar close?",
        "filters": {"projects": ["nope"]},
        "two_stage": true,
    });
    let (status, _, body) = post(addr, "hr", "/api/query", &question.to_string());
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("unknown project \\\"nope\\\""), "{body}");
    assert!(
        !body.contains("configured"),
        "the projects are not listed: {body}"
    );
}

/// `source_prefix` and document ids match shown paths only: an absolute one is refused before
/// it is compared with anything, so the answer says nothing about the server's folders.
fn check_filters(addr: &str) {
    let cwd = std::env::current_dir().unwrap();
    for filters in [
        json!({"source_prefix": "/"}),
        json!({"source_prefix": cwd.display().to_string()}),
        json!({"doc_ids": ["/etc/passwd"]}),
    ] {
        let question = json!({"question": "payroll", "filters": filters});
        let (status, _, body) = post(addr, "admin", "/api/query", &question.to_string());
        assert_eq!(status, 400, "{filters}: {body}");
        assert!(body.contains("absolute path"), "{body}");
    }
    let shown = json!({"question": "When does the payroll calendar close?", "pipeline": "extractive",
        "filters": {"source_prefix": "hr/"}});
    let (status, _, body) = post(addr, "hr", "/api/query", &shown.to_string());
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("hr/records.jsonl"), "{body}");
}

/// A failed evaluation's error, kept and shown by `/api/stats`, names no server folder.
fn check_stored_errors(addr: &str, work: &Path) {
    let (status, _, body) = post(addr, "admin", "/api/eval", "{}");
    assert!(status >= 400, "{body}");
    let (status, _, stats) = get(addr, "admin", "/api/stats");
    assert_eq!(status, 200, "{stats}");
    let stats: Value = serde_json::from_str(&stats).unwrap();
    let error = stats["last_reindex"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("missing-eval-set"), "{stats}");
    let work = work.canonicalize().unwrap();
    assert!(!error.contains(&*work.to_string_lossy()), "{error}");
    assert!(!body.contains(&*work.to_string_lossy()), "{body}");
}

/// A session another key opened is answered as one that does not exist.
fn check_mcp_sessions(addr: &str) {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}});
    let (status, headers, body) = mcp(addr, "hr", None, &initialize);
    assert_eq!(status, 200, "{body}");
    let session = headers
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("no session in {headers}"))
        .trim()
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = mcp(addr, "hr", Some(&session), &initialized);
    assert!(status < 300, "{status}: {body}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"});
    let (status, _, body) = mcp(addr, "sales", Some(&session), &list);
    assert_eq!(status, 404, "{body}");
    let (status, _, body) = mcp(addr, "hr", Some(&session), &list);
    assert_eq!(status, 200, "{body}");
}

fn mcp(addr: &str, key: &str, session: Option<&str>, message: &Value) -> (u16, String, String) {
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    let body = message.to_string();
    exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n{session}\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            secret(key),
            body.len()
        ),
    )
}

fn secret(key: &str) -> &'static str {
    KEYS.iter()
        .find(|(name, _, _)| *name == key)
        .map(|(_, _, value)| *value)
        .unwrap()
}

fn get(addr: &str, key: &str, path: &str) -> (u16, String, String) {
    exchange(
        addr,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
             Connection: close\r\n\r\n",
            secret(key)
        ),
    )
}

fn post(addr: &str, key: &str, path: &str, body: &str) -> (u16, String, String) {
    exchange(
        addr,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            secret(key),
            body.len()
        ),
    )
}

fn upload(addr: &str, key: &str, name: &str, text: &str, groups: &str) -> (u16, String, String) {
    let boundary = "shiori-probe";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"groups\"\r\n\r\n{groups}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: application/jsonl\r\n\r\n{text}\r\n--{boundary}--\r\n"
    );
    exchange(
        addr,
        &format!(
            "POST /api/documents HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
             X-Shiori-Request: 1\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            secret(key),
            body.len()
        ),
    )
}

/// Sends a raw request; returns the status, the header lines (names lowercased) and the body.
fn exchange(addr: &str, request: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .get(9..12)
        .unwrap_or_else(|| panic!("empty reply to {request}"))
        .parse()
        .unwrap();
    let headers = head
        .lines()
        .skip(1)
        .map(|line| match line.split_once(':') {
            Some((name, value)) => format!("{}:{value}", name.to_ascii_lowercase()),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    (status, headers, body.to_string())
}

fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
