//! The S3 connector against moto's S3 server (PyPI `moto[server]`), with objects written by
//! boto3, an S3 client somebody else wrote.

mod common;

use common::{free_port, limits, mirrored, no_readers, python, Server};
use shiori_connectors::{connect, sync, ConnectorSettings, SourceUrl};
use std::process::Command;
use std::sync::OnceLock;

const INSTALL: &str = "install it with `pip install 'moto[server]'` (scripts/test-deps.sh does)";

/// One moto server for every test here: the connector reads its endpoint and keys from the
/// process environment, which is set once, before any test reads it.
fn moto() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let port = free_port();
        let log = std::env::temp_dir().join(format!("shiori-moto-{port}.log"));
        let mut command = Command::new(python());
        command.args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()]);
        let server = Server::start(command, port, log, INSTALL);
        std::env::set_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"));
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        std::env::set_var("AWS_REGION", "us-east-1");
        server
    })
}

/// Runs boto3 against the server: `script` sees `s3` (a client) and `sys.argv[1:]`.
fn boto(script: &str, args: &[&str]) {
    let server = moto();
    let program = format!(
        "import boto3, sys\ns3 = boto3.client('s3', endpoint_url='http://127.0.0.1:{}', \
         aws_access_key_id='testing', aws_secret_access_key='testing', region_name='us-east-1')\n{script}",
        server.port
    );
    let output = Command::new(python())
        .arg("-c")
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "boto3: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn put(bucket: &str, key: &str, body: &str) {
    boto(
        "s3.put_object(Bucket=sys.argv[1], Key=sys.argv[2], Body=sys.argv[3].encode())",
        &[bucket, key, body],
    );
}

fn delete(bucket: &str, key: &str) {
    boto(
        "s3.delete_object(Bucket=sys.argv[1], Key=sys.argv[2])",
        &[bucket, key],
    );
}

fn bucket(name: &str) {
    boto("s3.create_bucket(Bucket=sys.argv[1])", &[name]);
}

/// GETs of objects in `bucket` the server has logged (listings are GETs of the bucket itself,
/// with a query).
fn object_gets(bucket: &str) -> usize {
    let prefix = format!("\"GET /{bucket}/");
    moto()
        .log()
        .lines()
        .filter(|line| line.contains(&prefix) && !line.contains(&format!("/{bucket}/?")))
        .count()
}

#[test]
fn a_second_sync_downloads_only_changed_and_new_objects_and_drops_deleted_ones() {
    bucket("handbook");
    put("handbook", "docs/intro.md", "# Intro\nWelcome.");
    put("handbook", "docs/policies/leave.md", "Annual leave is 20 days.");
    put("handbook", "docs/policies/出張 規程.md", "出張の日当は3000円です。");
    put("handbook", "other/outside.md", "not under the prefix");
    let url: SourceUrl = "s3://handbook/docs/".parse().unwrap();
    let mirror = tempfile::tempdir().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), mirror.path()).unwrap();

    let first = sync(&url, connector.as_ref(), mirror.path(), &limits(), &no_readers).unwrap();
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
    let second = sync(&url, connector.as_ref(), mirror.path(), &limits(), &no_readers).unwrap();
    assert_eq!((second.fetched, second.unchanged, second.deleted), (2, 1, 1));
    assert_eq!(object_gets("handbook"), 5, "one download per changed or new object");
    assert_eq!(
        mirrored(mirror.path(), "intro.md").as_deref(),
        Some("# Intro\nWelcome, edited.")
    );
    assert_eq!(mirrored(mirror.path(), "policies/leave.md"), None);
    assert_eq!(mirrored(mirror.path(), "new.md").as_deref(), Some("A new page."));
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
    assert!(report.failures[0].reason.contains("4096 bytes"), "{:?}", report.failures);
    assert_eq!(object_gets("big"), 1);
}

#[test]
fn a_missing_bucket_fails_the_listing_and_names_it() {
    moto();
    let url: SourceUrl = "s3://no-such-bucket/x/".parse().unwrap();
    let mirror = tempfile::tempdir().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), mirror.path()).unwrap();
    let error = sync(&url, connector.as_ref(), mirror.path(), &limits(), &no_readers)
        .unwrap_err()
        .to_string();
    assert!(error.contains("s3://no-such-bucket/x"), "{error}");
    assert!(!error.contains("testing"), "no credential in {error}");
}
