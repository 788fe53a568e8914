//! `/api/documents` over real HTTP: multipart uploads with hostile names, listing, deleting.

mod common;

use common::*;
use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};
use shiori_server::ServerOptions;

const CAFETERIA: &str = "# Cafeteria\n\nThe cafeteria on the third floor serves tonkotsu ramen every Friday at lunch.\n";

async fn upload(server: &TestServer, name: &str, bytes: Vec<u8>) -> (u16, Value) {
    upload_parts(server, "", &[(name, &bytes)]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn uploads_are_sanitised_indexed_listed_and_deleted() {
    let server = TestServer::start(ServerOptions {
        upload_limit_bytes: 64 * 1024,
        ..ServerOptions::default()
    })
    .await;
    server.reindex().await;

    let (status, body) = upload(
        &server,
        "../../lunch menu.md",
        CAFETERIA.as_bytes().to_vec(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["documents"][0]["id"], "lunch_menu.md");
    assert_eq!(body["report"]["files_indexed"], 1, "{body}");
    let uploads = server.data_dir().join("uploads");
    assert!(uploads.join("lunch_menu.md").is_file());
    assert!(!server.work.path().join("lunch menu.md").exists());
    assert!(!server.data_dir().join("lunch menu.md").exists());

    let answer = server.ask("What does the cafeteria serve on Friday?").await;
    assert!(
        answer["answer"].as_str().unwrap().contains("ramen"),
        "{answer}"
    );

    let (status, list) = server.get("/api/documents").await;
    assert_eq!(status, 200);
    assert_eq!(list["documents"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["documents"][0]["indexed"], true, "{list}");
    assert_eq!(
        list["indexed_files"], 6,
        "five fixtures and the upload: {list}"
    );

    let (status, one) = server.get("/api/documents/lunch_menu.md").await;
    assert_eq!(status, 200, "{one}");
    assert!(one["chunks"][0]["text"].as_str().unwrap().contains("ramen"));

    // A reindex keeps the upload: the uploads folder is always a source.
    let reindex = server.reindex().await;
    assert_eq!(reindex["report"]["files_removed"], 0, "{reindex}");

    let response = server
        .client
        .delete(server.url("/api/documents/lunch_menu.md"))
        .send()
        .await
        .unwrap();
    let (status, deleted) = status_and_json(response).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["report"]["files_removed"], 1, "{deleted}");
    assert!(!uploads.join("lunch_menu.md").exists());
    let after = server.ask("What does the cafeteria serve on Friday?").await;
    assert!(
        !after["answer"].as_str().unwrap().contains("ramen"),
        "{after}"
    );

    let (status, body) = server.get("/api/documents/lunch_menu.md").await;
    assert_eq!((status, error_code(&body).as_str()), (404, "not_found"));
    for hostile in ["..%2F..%2Fshiori.toml", "%2E%2E", "a%20b.md"] {
        let response = server
            .client
            .delete(server.url(&format!("/api/documents/{hostile}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{hostile}");
    }
    assert!(server.data_dir().join("shiori.toml").is_file());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_uploads_are_refused() {
    let server = TestServer::start(ServerOptions {
        upload_limit_bytes: 64 * 1024,
        ..ServerOptions::default()
    })
    .await;
    let (status, body) = upload(&server, "setup.exe", b"MZ".to_vec()).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (415, "unsupported_media_type"),
        "{body}"
    );

    let (status, body) = upload(&server, "big.txt", vec![b'a'; 100 * 1024]).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (413, "payload_too_large"),
        "{body}"
    );

    let (status, body) = upload(&server, "..", b"x".to_vec()).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );

    let form = Form::new().text("note", "no file here");
    let response = server.post_multipart("/api/documents", form).await;
    let (status, body) = status_and_json(response).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    let entries = std::fs::read_dir(server.data_dir().join("uploads"))
        .unwrap()
        .count();
    assert_eq!(entries, 0, "nothing was stored");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_uploaded_pdf_is_listed_with_its_pages_and_cited_by_page() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let pdf = shiori_ingest::samples::pdf(&[
        "Facilities\nThe gym in building C opens at 6 am.",
        "Parking\nVisitor parking is on level B2 of the north garage.",
    ])
    .unwrap();
    let (status, body) = upload(&server, "facilities.pdf", pdf).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["report"]["documents"], 2, "{body}");

    let (status, one) = server.get("/api/documents/facilities.pdf").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["document"]["indexed"], true, "{one}");
    let sources: Vec<&str> = one["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chunk| chunk["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources.len(), 2, "{one}");
    assert!(sources[1].ends_with("facilities.pdf p.2"), "{sources:?}");

    let answer = server.ask("Where is visitor parking?").await;
    assert!(
        answer["answer"].as_str().unwrap().contains("B2"),
        "{answer}"
    );
    let cited = answer["sources"][0]["source"].as_str().unwrap();
    assert!(cited.ends_with("facilities.pdf p.2"), "{answer}");
}

async fn upload_parts(server: &TestServer, query: &str, parts: &[(&str, &[u8])]) -> (u16, Value) {
    let mut form = Form::new();
    for (name, bytes) in parts {
        form = form.part(
            "file",
            Part::bytes(bytes.to_vec()).file_name(name.to_string()),
        );
    }
    let response = server
        .post_multipart(&format!("/api/documents{query}"), form)
        .await;
    status_and_json(response).await
}

#[tokio::test(flavor = "multi_thread")]
async fn same_names_conflict_unless_replaced_and_parts_must_differ() {
    let server = TestServer::start(ServerOptions::default()).await;
    let uploads = server.data_dir().join("uploads");
    let (status, body) = upload(&server, "../../etc/evil.txt", b"First version.".to_vec()).await;
    assert_eq!(status, 201, "{body}");
    for hostile in ["..\\evil.txt", "/abs/evil.txt", "evil.txt"] {
        let (status, body) = upload(&server, hostile, b"Second version.".to_vec()).await;
        assert_eq!(
            (status, error_code(&body).as_str()),
            (409, "conflict"),
            "{body}"
        );
    }
    assert_eq!(
        std::fs::read(uploads.join("evil.txt")).unwrap(),
        b"First version."
    );

    let (status, body) = upload_parts(&server, "?replace=true", &[("evil.txt", b"Third.")]).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(std::fs::read(uploads.join("evil.txt")).unwrap(), b"Third.");

    let (status, body) =
        upload_parts(&server, "", &[("dup.txt", b"one"), ("dup.txt", b"two")]).await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("dup.txt"));
    assert!(!uploads.join("dup.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_cannot_be_indexed_is_not_a_success_and_not_kept() {
    let server = TestServer::start(ServerOptions::default()).await;
    let uploads = server.data_dir().join("uploads");
    // Over the default max_file_mb of 10, under the upload limit of 20 MB.
    let over_limit = vec![b'a'; 11 * 1024 * 1024];
    let (status, body) = upload_parts(
        &server,
        "",
        &[
            ("good.md", b"# Parking\n\nParking is free on weekends."),
            ("huge.txt", &over_limit),
            ("empty.txt", b""),
        ],
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let outcome = |id: &str| {
        body["documents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["id"] == id)
            .unwrap_or_else(|| panic!("{id} missing: {body}"))
            .clone()
    };
    assert_eq!(outcome("good.md")["status"], "indexed", "{body}");
    for failed in ["huge.txt", "empty.txt"] {
        assert_eq!(outcome(failed)["status"], "failed", "{body}");
        assert!(outcome(failed)["reason"]
            .as_str()
            .is_some_and(|r| !r.is_empty()));
        assert!(!uploads.join(failed).exists(), "{failed} was kept");
    }
    assert_eq!(
        body["report"]["failures"].as_array().unwrap().len(),
        2,
        "{body}"
    );
    let marks: Vec<_> = std::fs::read_dir(&uploads)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".pending"))
        .collect();
    assert!(
        marks.is_empty(),
        "a write that ended leaves no mark: {marks:?}"
    );

    // The next upload reports only its own outcome.
    let (status, body) = upload(
        &server,
        "notes.md",
        b"# Notes\n\nThe office closes at six.".to_vec(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["report"]["failures"], json!([]), "{body}");
    let answer = server.ask("When is parking free?").await;
    assert!(
        answer["answer"].as_str().unwrap().contains("weekends"),
        "{answer}"
    );
}

/// Issue 48: an upload a write died on (the process killed mid-index, a decompression bomb)
/// is quarantined when the server next starts, instead of being read again by every write.
#[tokio::test(flavor = "multi_thread")]
async fn an_upload_a_write_died_on_is_quarantined_at_start() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    let uploads = data.join("uploads");
    std::fs::create_dir_all(&uploads).unwrap();
    write_config(&data, &[]);
    std::fs::write(uploads.join("bomb.md"), "# Bomb\n\nThe write died on this.").unwrap();
    std::fs::write(uploads.join(".bomb.md.pending"), "").unwrap();
    std::fs::write(uploads.join("fine.md"), "# Fine\n\nThis one was indexed.").unwrap();
    let home = shiori_models::assets::ShioriHome::from_env().unwrap();
    let engine = shiori_engine::Engine::open(&data, &home).unwrap();
    let _server = shiori_server::Server::new(engine, ServerOptions::default()).unwrap();
    assert!(!uploads.join("bomb.md").exists());
    assert!(!uploads.join(".bomb.md.pending").exists());
    assert!(uploads.join(".quarantine/bomb.md").is_file());
    assert!(uploads.join("fine.md").is_file());
}

/// `(value, name, groups, admin)` of the keys [`an_indexed_document_reads_as_the_key_may`]
/// serves.
const KEYS: [(&str, &str, &[&str], bool); 3] = [
    ("admin-secret", "admin", &[], true),
    ("hr-secret", "hr", &["hr"], false),
    ("sales-secret", "sales", &["sales"], false),
];

async fn get_as(server: &TestServer, key: &str, path: &str) -> (u16, Value) {
    let request = server.client.get(server.url(path)).bearer_auth(key);
    status_and_json(request.send().await.unwrap()).await
}

/// Uploads `name` as the admin key, readable only by `groups` when given.
async fn upload_as_admin(server: &TestServer, name: &str, bytes: Vec<u8>, groups: Option<&str>) {
    let mut form = Form::new();
    if let Some(groups) = groups {
        form = form.text("groups", groups.to_string());
    }
    let form = form.part("file", Part::bytes(bytes).file_name(name.to_string()));
    let response = server
        .client
        .post(server.url("/api/documents"))
        .bearer_auth("admin-secret")
        .header("x-shiori-request", "1")
        .multipart(form)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 201, "{body}");
}

fn document_path(id: &str) -> String {
    let mut path = String::from("/api/document?id=");
    for byte in id.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'/' => {
                path.push(char::from(byte));
            }
            _ => path.push_str(&format!("%{byte:02X}")),
        }
    }
    path
}

fn texts(body: &Value) -> Vec<&str> {
    body["chunks"]
        .as_array()
        .unwrap_or_else(|| panic!("no chunks: {body}"))
        .iter()
        .map(|chunk| chunk["text"].as_str().unwrap())
        .collect()
}

/// `GET /api/document` reads any indexed document, by anything a source shows of it, as the
/// request's key may: an upload kept for one group is a 404 for another key, worded as for an
/// id nothing was indexed under; a PDF's page is that page, its file every page.
#[tokio::test(flavor = "multi_thread")]
async fn an_indexed_document_reads_as_the_key_may() {
    let keys = KEYS.map(|(value, name, groups, admin)| {
        let key = shiori_engine::KeyConfig {
            name: name.to_string(),
            env: format!("SHIORI_TEST_KEY_{name}"),
            groups: groups.iter().map(|group| group.to_string()).collect(),
            admin,
        };
        (value.to_string(), key)
    });
    let server = TestServer::start(ServerOptions {
        keys: shiori_engine::Keyring::from_keys(keys),
        ..ServerOptions::default()
    })
    .await;
    let response = server
        .client
        .post(server.url("/api/reindex"))
        .bearer_auth("admin-secret")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let benefits =
        "# Benefits handbook\n\n## Pension\n\nThe company matches pension contributions \
                    up to 5% of salary.\n";
    upload_as_admin(&server, "benefits.md", benefits.into(), Some("hr")).await;
    let pdf = shiori_ingest::samples::pdf(&[
        "Facilities\nThe gym in building C opens at 6 am.",
        "Parking\nVisitor parking is on level B2 of the north garage.",
    ])
    .unwrap();
    upload_as_admin(&server, "facilities.pdf", pdf, None).await;

    let (status, listed) = get_as(&server, "hr-secret", "/api/documents/benefits.md").await;
    assert_eq!(status, 200, "{listed}");
    let id = listed["chunks"][0]["doc_id"].as_str().unwrap().to_string();
    let (status, hr) = get_as(&server, "hr-secret", &document_path(&id)).await;
    assert_eq!(status, 200, "{hr}");
    assert!(texts(&hr)[0].contains("pension"), "{hr}");
    assert_eq!(
        hr["chunks"][0]["title"], "Benefits handbook › Pension",
        "the page reads a passage's section off its title: {hr}"
    );
    let (status, sales) = get_as(&server, "sales-secret", &document_path(&id)).await;
    assert_eq!((status, error_code(&sales).as_str()), (404, "not_found"));
    let (status, never) = get_as(&server, "hr-secret", &document_path("never.md")).await;
    assert_eq!(status, 404, "{never}");
    assert_eq!(
        sales["error"]["message"]
            .as_str()
            .unwrap()
            .replace(&id, "ID"),
        never["error"]["message"]
            .as_str()
            .unwrap()
            .replace("never.md", "ID"),
        "a document the key may not read is told apart from none"
    );
    let (status, _) = server.get(&document_path(&id)).await;
    assert_eq!(status, 401);

    let (status, vpn) = get_as(&server, "sales-secret", &document_path("corpus/vpn.txt")).await;
    assert_eq!(status, 200, "{vpn}");
    assert!(texts(&vpn).concat().contains("WireGuard"), "{vpn}");
    let chunk_id = vpn["chunks"][0]["chunk_id"].as_str().unwrap();
    let (_, by_chunk) = get_as(&server, "sales-secret", &document_path(chunk_id)).await;
    assert_eq!(by_chunk["chunks"], vpn["chunks"]);

    let (_, pages) = get_as(&server, "sales-secret", "/api/documents/facilities.pdf").await;
    let page_two = pages["chunks"][1]["source"].as_str().unwrap().to_string();
    let file = page_two
        .strip_suffix(" p.2")
        .unwrap_or_else(|| panic!("{pages}"));
    let (status, whole) = get_as(&server, "sales-secret", &document_path(file)).await;
    assert_eq!(status, 200, "{whole}");
    assert_eq!(texts(&whole).len(), 2, "every page of the file: {whole}");
    let (_, page) = get_as(&server, "sales-secret", &document_path(&page_two)).await;
    let page = texts(&page);
    assert!(page.len() == 1 && page[0].contains("B2"), "{page:?}");

    // A stored absolute path is refused as a wrong guess is, so neither tells where the
    // server keeps its files (issue 48).
    let stored = server.corpus_dir().canonicalize().unwrap().join("vpn.txt");
    let guessed = server.corpus_dir().join("nothing-here.txt");
    for absolute in [stored, guessed] {
        let path = document_path(&absolute.display().to_string());
        let (status, body) = get_as(&server, "admin-secret", &path).await;
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{body}"
        );
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("id: an absolute path"));
    }

    let (status, body) = get_as(&server, "sales-secret", "/api/document").await;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    let work = server.work.path().display().to_string();
    for body in [&hr, &vpn, &whole] {
        assert!(!body.to_string().contains(&work), "{body}");
    }
}
