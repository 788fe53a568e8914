//! `/api/conversations` and `POST /api/query` with a `conversation_id`, over real HTTP: start,
//! ask twice, read, list, delete, and 404s that name the field.

mod common;

use common::{error_code, status_and_json, TestServer};
use serde_json::{json, Value};
use shiori_server::ServerOptions;

const UNKNOWN: &str = "0123456789abcdef0123456789abcdef";

async fn delete(server: &TestServer, path: &str) -> (u16, Value) {
    status_and_json(server.client.delete(server.url(path)).send().await.unwrap()).await
}

fn assert_names_the_field(status: u16, body: &Value) {
    assert_eq!(status, 404, "{body}");
    assert_eq!(error_code(body), "not_found");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("conversation_id"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_is_started_asked_read_listed_and_deleted() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let (status, started) = server.post("/api/conversations", Value::Null).await;
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32);

    let questions = [
        "How do I connect to the office VPN?",
        "What if the tunnel keeps dropping?",
    ];
    for question in questions {
        let (status, answer) = server
            .post(
                "/api/query",
                json!({"question": question, "conversation_id": id}),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["conversation_id"], id.as_str());
    }
    let stand_alone = server.ask(questions[1]).await;
    assert!(
        stand_alone.get("conversation_id").is_none(),
        "{stand_alone}"
    );

    let (status, conversation) = server.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200, "{conversation}");
    let turns = conversation["turns"].as_array().unwrap();
    let asked: Vec<&str> = turns
        .iter()
        .map(|t| t["question"].as_str().unwrap())
        .collect();
    assert_eq!(asked, questions);
    assert_eq!(turns[1]["sources"][0]["title"], "vpn", "{conversation}");
    assert!(turns[1]["at_ms"].as_i64().unwrap() > 0);

    let (status, listed) = server.get("/api/conversations").await;
    assert_eq!(status, 200);
    assert_eq!(listed["conversations"][0]["id"], id.as_str(), "{listed}");
    assert_eq!(listed["conversations"][0]["title"], questions[0]);
    assert_eq!(listed["conversations"][0]["turns"], 2);

    let (status, deleted) = delete(&server, &format!("/api/conversations/{id}")).await;
    assert_eq!(
        (status, &deleted["deleted"]),
        (200, &json!(id)),
        "{deleted}"
    );
    let (status, body) = server.get(&format!("/api/conversations/{id}")).await;
    assert_names_the_field(status, &body);
    let (status, body) = delete(&server, &format!("/api/conversations/{id}")).await;
    assert_names_the_field(status, &body);
    let (_, listed) = server.get("/api/conversations").await;
    assert_eq!(listed["conversations"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_and_malformed_ids_are_refused() {
    let server = TestServer::start(ServerOptions::default()).await;
    let query = json!({"question": "vpn?", "conversation_id": UNKNOWN});
    let (status, body) = server.post("/api/query", query.clone()).await;
    assert_names_the_field(status, &body);
    let streamed = server
        .client
        .post(server.url("/api/query"))
        .header("accept", "text/event-stream")
        .json(&query)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(streamed).await;
    assert_names_the_field(status, &body);

    let (status, body) = server
        .post(
            "/api/query",
            json!({"question": "vpn?", "conversation_id": "../../etc"}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("conversation_id must be 32"));
    for path in [
        format!("/api/conversations/{UNKNOWN}"),
        "/api/conversations/x".into(),
    ] {
        let (status, body) = server.get(&path).await;
        assert_names_the_field(status, &body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_holds_at_most_its_turns_and_an_owner_its_conversations() {
    let server = TestServer::start(ServerOptions::default()).await;
    server.reindex().await;
    let (_, started) = server.post("/api/conversations", Value::Null).await;
    let id = started["id"].as_str().unwrap().to_string();
    let stored = shiori_store_embedded::SqliteConversations::open(&server.data_dir()).unwrap();
    let parsed = shiori_core::ConversationId::parse(&id).unwrap();
    let turn = shiori_core::Turn {
        question: "How do I connect to the office VPN?".into(),
        answer: "Install the WireGuard client.".into(),
        refused: false,
        sources: Vec::new(),
        at_ms: 1,
    };
    for _ in 0..shiori_engine::MAX_TURNS {
        use shiori_store::ConversationStore;
        assert!(stored.append_turn(&parsed, &turn).unwrap());
    }
    for accept in ["application/json", "text/event-stream"] {
        let body = json!({"question": "And from home?", "conversation_id": id});
        let request = server.client.post(server.url("/api/query")).json(&body);
        let response = request.header("accept", accept).send().await.unwrap();
        let (status, refused) = status_and_json(response).await;
        assert_eq!(status, 409, "{refused}");
        assert_eq!(error_code(&refused), "conversation_full");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("start a new conversation"), "{message}");
    }

    let mut ids = vec![id];
    for _ in 0..shiori_engine::MAX_CONVERSATIONS {
        let (status, started) = server.post("/api/conversations", Value::Null).await;
        assert_eq!(status, 201, "{started}");
        ids.push(started["id"].as_str().unwrap().to_string());
    }
    let (_, listed) = server.get("/api/conversations").await;
    let kept: Vec<&str> = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|conversation| conversation["id"].as_str().unwrap())
        .collect();
    assert_eq!(kept.len(), shiori_engine::MAX_CONVERSATIONS);
    assert!(!kept.contains(&ids[0].as_str()), "the oldest was forgotten");
    assert!(kept.contains(&ids.last().unwrap().as_str()));
}
