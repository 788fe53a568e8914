//! The S3 connector against moto's S3 server (PyPI `moto[server]`), with objects written by
//! boto3, an S3 client somebody else wrote.

mod common;

use common::{limits, mirrored, no_readers, Moto};
use shiori_connectors::{connect, sync, ConnectorSettings, SourceUrl};

fn moto() -> &'static Moto {
    Moto::shared()
}

fn put(bucket: &str, key: &str, body: &str) {
    moto().put(bucket, key, body);
}

fn delete(bucket: &str, key: &str) {
    moto().delete(bucket, key);
}

fn bucket(name: &str) {
    moto().bucket(name);
}

fn object_gets(bucket: &str) -> usize {
    moto().object_gets(bucket)
}

#[test]
fn a_second_sync_downloads_only_changed_and_new_objects_and_drops_deleted_ones() {
    bucket("handbook");
    put("handbook", "docs/intro.md", "# Intro\nWelcome.");
    put(
        "handbook",
        "docs/policies/leave.md",
        "Annual leave is 20 days.",
    );
    put(
        "handbook",
        "docs/policies/出張 規程.md",
        "出張の日当は3000円です。",
    );
    put("handbook", "other/outside.md", "not under the prefix");
    let url: SourceUrl = "s3://handbook/docs/".parse().unwrap();
    let mirror = tempfile::tempdir().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), mirror.path()).unwrap();

    let first = sync(
        &url,
        connector.as_ref(),
        mirror.path(),
        &limits(),
        &no_readers,
    )
    .unwrap();
    assert_eq!((first.fetched, first.unchanged, first.deleted), (3, 0, 0));
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    assert_eq!(object_gets("handbook"), 3);
    assert_eq!(
        mirrored(mirror.path(), "policies/出張 規程.md").as_deref(),
        Some("出張の日当は3000円です。")
    );
    assert_eq!(mirrored(mirror.path(), "outside.md"), None);

    put("handbook", "docs/intro.md", "# Intro\nWelcome, edited.");
    delete("handbook", "docs/policies/leave.md");
    put("handbook", "docs/new.md", "A new page.");
    let second = sync(
        &url,
        connector.as_ref(),
        mirror.path(),
        &limits(),
        &no_readers,
    )
    .unwrap();
    assert_eq!(
        (second.fetched, second.unchanged, second.deleted),
        (2, 1, 1)
    );
    assert_eq!(
        object_gets("handbook"),
        5,
        "one download per changed or new object"
    );
    assert_eq!(
        mirrored(mirror.path(), "intro.md").as_deref(),
        Some("# Intro\nWelcome, edited.")
    );
    assert_eq!(mirrored(mirror.path(), "policies/leave.md"), None);
    assert_eq!(
        mirrored(mirror.path(), "new.md").as_deref(),
        Some("A new page.")
    );
}

#[test]
fn an_object_over_the_limit_fails_alone_without_being_downloaded() {
    bucket("big");
    put("big", "huge.txt", &"x".repeat(4096));
    put("big", "small.txt", "fine");
    let url: SourceUrl = "s3://big/".parse().unwrap();
    let mirror = tempfile::tempdir().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), mirror.path()).unwrap();
    let mut small = limits();
    small.max_object_bytes = 1024;
    let report = sync(&url, connector.as_ref(), mirror.path(), &small, &no_readers).unwrap();
    assert_eq!(report.fetched, 1);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.failures[0].object, "s3://big/huge.txt");
    assert!(
        report.failures[0].reason.contains("4096 bytes"),
        "{:?}",
        report.failures
    );
    assert_eq!(object_gets("big"), 1);
}

#[test]
fn a_missing_bucket_fails_the_listing_and_names_it() {
    moto();
    let url: SourceUrl = "s3://no-such-bucket/x/".parse().unwrap();
    let mirror = tempfile::tempdir().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), mirror.path()).unwrap();
    let error = sync(
        &url,
        connector.as_ref(),
        mirror.path(),
        &limits(),
        &no_readers,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("s3://no-such-bucket/x"), "{error}");
    assert!(!error.contains("testing"), "no credential in {error}");
}

#[test]
fn a_key_no_path_can_name_is_refused_alone_and_the_rest_mirrored() {
    bucket("oddkeys");
    put("oddkeys", "docs/good.md", "Expenses are claimed monthly.");
    put("oddkeys", "docs/a//b.md", "an empty path segment");
    put("oddkeys", "docs/sub/../up.md", "a parent segment");
    put("oddkeys", "docs/zz-last.md", "listed after the odd keys");
    let url: SourceUrl = "s3://oddkeys/docs/".parse().unwrap();
    let mirror = tempfile::tempdir().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), mirror.path()).unwrap();
    let report = sync(
        &url,
        connector.as_ref(),
        mirror.path(),
        &limits(),
        &no_readers,
    )
    .unwrap();
    assert_eq!(report.fetched, 2, "{report:?}");
    assert_eq!(
        mirrored(mirror.path(), "good.md").as_deref(),
        Some("Expenses are claimed monthly.")
    );
    assert!(mirrored(mirror.path(), "zz-last.md").is_some());
    let mut refused: Vec<&str> = report.failures.iter().map(|f| f.object.as_str()).collect();
    refused.sort_unstable();
    assert_eq!(
        refused,
        [
            "s3://oddkeys/docs/a//b.md",
            "s3://oddkeys/docs/sub/../up.md"
        ],
        "{report:?}"
    );
}
