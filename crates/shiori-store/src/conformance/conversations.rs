//! What every [`ConversationStore`] backend must do; run by this crate's tests on SQLite and by
//! `shiori-store-postgres`'s on PostgreSQL.

use crate::ConversationStore;
use shiori_core::{ConversationId, Turn, TurnSource};

pub fn turn(question: &str, at_ms: i64) -> Turn {
    Turn {
        question: question.to_string(),
        answer: format!("answer to {question}"),
        refused: false,
        sources: vec![TurnSource {
            doc_id: "faq-009".to_string(),
            chunk_id: "faq-009#0".to_string(),
            title: "API rate limits".to_string(),
            source: "faq.jsonl#L9".to_string(),
        }],
        at_ms,
    }
}

/// Creates, appends (also from several threads at once), reads, lists and deletes.
pub fn check_conversations(store: &dyn ConversationStore) {
    let (a, b) = (
        ConversationId::from_random([1; 16]),
        ConversationId::from_random([2; 16]),
    );
    assert!(store.conversations(None).unwrap().is_empty());
    store.create_conversation(&a, None, 1_000).unwrap();
    store.create_conversation(&b, None, 2_000).unwrap();
    assert!(
        store.create_conversation(&a, None, 3_000).is_err(),
        "an id names one conversation"
    );
    let first = turn("What are the API rate limits on the Business plan?", 1_500);
    let second = turn("What about the Starter plan?", 3_000);
    assert!(store.append_turn(&a, &first).unwrap());
    assert!(store.append_turn(&a, &second).unwrap());
    let unknown = ConversationId::from_random([9; 16]);
    assert!(!store.append_turn(&unknown, &first).unwrap());
    assert!(store.conversation(&unknown, None).unwrap().is_none());

    let read = store.conversation(&a, None).unwrap().unwrap();
    assert_eq!(read.turns, vec![first.clone(), second]);
    assert_eq!((read.created_ms, read.updated_ms), (1_000, 3_000));
    let listed = store.conversations(None).unwrap();
    let summary: Vec<_> = listed
        .iter()
        .map(|c| (c.id.clone(), c.title.as_str(), c.turns, c.updated_ms))
        .collect();
    assert_eq!(
        summary,
        [
            (a.clone(), first.question.as_str(), 2, 3_000),
            (b.clone(), "", 0, 2_000)
        ]
    );

    std::thread::scope(|scope| {
        for n in 0..6 {
            let b = &b;
            scope.spawn(move || {
                assert!(store
                    .append_turn(b, &turn(&format!("q{n}"), 4_000))
                    .unwrap());
            });
        }
    });
    let mut asked: Vec<String> = store
        .conversation(&b, None)
        .unwrap()
        .unwrap()
        .turns
        .into_iter()
        .map(|t| t.question)
        .collect();
    asked.sort();
    assert_eq!(asked, ["q0", "q1", "q2", "q3", "q4", "q5"]);

    assert!(store.delete_conversation(&a, None).unwrap());
    assert!(!store.delete_conversation(&a, None).unwrap());
    assert!(store.conversation(&a, None).unwrap().is_none());
    let left: Vec<_> = store
        .conversations(None)
        .unwrap()
        .into_iter()
        .map(|c| (c.id, c.turns))
        .collect();
    assert_eq!(left, [(b, 6)]);
    check_owners(store);
}

/// A key's conversations are its own: another key can neither read, list nor delete them; the
/// machine's owner (`None`) sees all of them.
fn check_owners(store: &dyn ConversationStore) {
    let hr = ConversationId::from_random([7; 16]);
    store.create_conversation(&hr, Some("hr"), 5_000).unwrap();
    let read = store.conversation(&hr, Some("hr")).unwrap().unwrap();
    assert_eq!(read.owner.as_deref(), Some("hr"));
    assert!(store.conversation(&hr, Some("sales")).unwrap().is_none());
    assert!(store.conversation(&hr, None).unwrap().is_some());
    let listed = |owner| -> Vec<ConversationId> {
        store
            .conversations(owner)
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect()
    };
    assert_eq!(listed(Some("hr")), std::slice::from_ref(&hr));
    assert!(listed(Some("sales")).is_empty());
    assert!(listed(None).contains(&hr));
    assert!(!store.delete_conversation(&hr, Some("sales")).unwrap());
    assert!(store.delete_conversation(&hr, Some("hr")).unwrap());
}
