//! Many servers on one database: two `shiori serve` processes on one PostgreSQL primary with a
//! streaming replica (both started by the test) answer as one service. A conversation started
//! on one continues on the other, an upload to one is read, under the same access rules,
//! through the other, two reindexes at once store every chunk once, searches keep working from
//! the replica when the primary stops, and a request the database cannot serve is a 503 with
//! `Retry-After`, never a hang.

mod common;

use common::*;
use serde_json::{json, Value};
use shiori_store_postgres::test_server::TestServer;
use std::time::{Duration, Instant};

const KEYS: [(&str, &str); 2] = [
    ("SHIORI_TEST_KEY_ADMIN", "admin-secret"),
    ("SHIORI_TEST_KEY_SALES", "sales-secret"),
];
const QUESTION: &str = "How long is the verification link valid after I sign up?";
const UPLOAD: &str =
    "# Benefits handbook\n\nThe company matches pension contributions up to 5% of salary.\n";

/// One server's API as one key calls it.
struct Api {
    addr: String,
    key: &'static str,
}

impl Api {
    fn send(&self, method: &str, path: &str, kind: &str, body: &str) -> (u16, String, Value) {
        let auth = format!("Authorization: Bearer {}", self.key);
        let headers = [auth.as_str(), kind, "X-Shiori-Request: 1"];
        let (status, head, text) = http_with_head(&self.addr, method, path, &headers, body);
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, head, value)
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let (status, _, body) = self.send("GET", path, "Accept: application/json", "");
        (status, body)
    }

    fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let (status, _, body) = self.send(
            "POST",
            path,
            "Content-Type: application/json",
            &body.to_string(),
        );
        (status, body)
    }

    fn query(&self, body: Value) -> Value {
        let (status, answer) = self.post("/api/query", body);
        assert_eq!(status, 200, "{answer}");
        answer
    }

    fn upload(&self, name: &str, text: &str, groups: &str) -> (u16, Value) {
        let boundary = "shiori-test-boundary";
        let body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"groups\"\r\n\r\n{groups}\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
             Content-Type: text/markdown\r\n\r\n{text}\r\n--{boundary}--\r\n"
        );
        let kind = format!("Content-Type: multipart/form-data; boundary={boundary}");
        let (status, _, body) = self.send("POST", "/api/documents", &kind, &body);
        (status, body)
    }

    fn chunks(&self) -> u64 {
        let (status, stats) = self.get("/api/stats");
        assert_eq!(status, 200, "{stats}");
        stats["chunks"].as_u64().unwrap()
    }
}

#[test]
fn two_servers_on_one_database_with_a_replica_answer_as_one_service() {
    let primary = TestServer::start().unwrap_or_else(|e| panic!("{e}"));
    let url = primary.create_database("shiori").unwrap();
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let docs = work.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::copy(
        sample_faq_dir().join("documents.jsonl"),
        docs.join("faq.jsonl"),
    )
    .unwrap();
    append_config(
        &data,
        &format!(
            "[store]\nkind = \"postgres\"\nurl = \"{url}\"\nconnect_timeout_ms = 2000\n\n\
             [ingest]\nsources = [\"{}\"]\n",
            docs.display()
        ),
    );
    run_json(&data, &["init", "--no-chat-model"]);
    let replica = primary.replica().unwrap();
    append_config(
        &data,
        &format!(
            "[store]\nreplica_urls = [\"{}\"]\n\n[[auth.keys]]\nname = \"admin\"\n\
             env = \"SHIORI_TEST_KEY_ADMIN\"\nadmin = true\n\n[[auth.keys]]\nname = \"sales\"\n\
             env = \"SHIORI_TEST_KEY_SALES\"\ngroups = [\"sales\"]\n",
            replica.url("shiori")
        ),
    );
    index(&data, &docs);
    replica.wait_for_replay(&url).unwrap();

    let start = || {
        let mut serve = command(&data);
        for (variable, value) in KEYS {
            serve.env(variable, value);
        }
        start_serving(serve)
    };
    let (_a, a_addr, _) = start();
    let (_b, b_addr, _) = start();
    let api = |addr: &str, key| Api {
        addr: addr.to_string(),
        key,
    };
    let (admin_a, admin_b) = (api(&a_addr, "admin-secret"), api(&b_addr, "admin-secret"));
    let sales_b = api(&b_addr, "sales-secret");
    wait_until_replica_serves(&admin_a);
    let (status, stats) = sales_b.get("/api/stats");
    assert_eq!(status, 200, "{stats}");
    assert!(
        stats.get("replicas").is_none(),
        "addresses for admins only: {stats}"
    );

    let first = |answer: &Value| answer["sources"][0]["doc_id"].clone();
    let on_a = admin_a.query(json!({"question": QUESTION}));
    assert_eq!(
        first(&on_a),
        first(&admin_b.query(json!({"question": QUESTION})))
    );

    // A conversation started on one server continues on the other.
    let (status, started) = admin_a.post("/api/conversations", json!({}));
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap();
    admin_a.query(json!({"question": QUESTION, "conversation_id": id}));
    admin_b.query(json!({"question": "And for digital goods?", "conversation_id": id}));
    let (status, conversation) = admin_a.get(&format!("/api/conversations/{id}"));
    assert_eq!(status, 200, "{conversation}");
    assert_eq!(
        conversation["turns"].as_array().unwrap().len(),
        2,
        "{conversation}"
    );

    // An upload to one server is read through the other, under the same access rules.
    let (status, body) = admin_a.upload("benefits.md", UPLOAD, "hr");
    assert_eq!(status, 201, "{body}");
    let (status, body) = admin_b.get("/api/documents/benefits.md");
    assert_eq!(status, 200, "{body}");
    assert!(body.to_string().contains("pension"), "{body}");
    assert_eq!(sales_b.get("/api/documents/benefits.md").0, 404);
    let pension = json!({"question": "Does the company match pension contributions?"});
    let hidden = sales_b.query(pension.clone());
    assert!(
        !hidden["sources"].to_string().contains("benefits"),
        "{hidden}"
    );
    let shown = admin_b.query(pension);
    assert!(shown["sources"].to_string().contains("benefits"), "{shown}");

    // Two reindexes at once, one per server, store every chunk once.
    let chunks = admin_a.chunks();
    std::fs::write(
        docs.join("new.md"),
        "# Office plants\n\nThe ficus is watered on Fridays.\n",
    )
    .unwrap();
    std::thread::scope(|scope| {
        let reindexes = [&admin_a, &admin_b]
            .map(|api| scope.spawn(move || api.post("/api/reindex", json!({}))));
        for reindex in reindexes {
            let (status, body) = reindex.join().unwrap();
            assert_eq!(status, 200, "{body}");
        }
    });
    assert_eq!(admin_a.chunks(), chunks + 1);
    assert_eq!(admin_b.chunks(), chunks + 1);

    // Without the primary, searches go on from the replica; writes are 503 with Retry-After.
    primary.stop().unwrap();
    let answer = admin_b.query(json!({"question": QUESTION}));
    assert_eq!(first(&answer), first(&on_a));
    let started = Instant::now();
    let (status, head, body) = admin_b.send(
        "POST",
        "/api/conversations",
        "Content-Type: application/json",
        "{}",
    );
    assert_eq!(status, 503, "{body}");
    assert!(head.to_lowercase().contains("retry-after: 5"), "{head}");
    assert_eq!(body["error"]["code"], "database_unavailable", "{body}");
    assert!(
        !body.to_string().contains("127.0.0.1"),
        "no address in a body: {body}"
    );

    // Without any database, a search is a 503 too, in bounded time.
    replica.stop().unwrap();
    let (status, head, body) = admin_a.send(
        "POST",
        "/api/query",
        "Content-Type: application/json",
        &json!({"question": QUESTION}).to_string(),
    );
    assert_eq!(status, 503, "{body}");
    assert!(head.to_lowercase().contains("retry-after: 5"), "{head}");
    assert!(started.elapsed() < Duration::from_secs(30), "bounded wait");
}

fn wait_until_replica_serves(admin: &Api) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, stats) = admin.get("/api/stats");
        assert_eq!(status, 200, "{stats}");
        if stats["replicas"][0]["serving"] == json!(true) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the replica never served: {stats}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
