//! Past one server: reads on a real streaming replica (a base backup of the primary, started
//! by the test), what this store wrote read back at once, a lagging replica skipped, a replica
//! stopped in the middle of a run of searches with no search lost, TLS through PgBouncer with a
//! certificate authority made for the test, a database that went away answered as
//! unavailable in bounded time, and BM25 kept on the primary while pg_textsearch's index does
//! not reach the standbys.

use shiori_analysis::JapaneseTokenization;
use shiori_core::Filters;
use shiori_store::{DocumentStore, StoreError};
use shiori_store_postgres::test_server::{TestServer, TlsFront};
use shiori_store_postgres::{migrate, PostgresOptions, PostgresStore, SslMode, TlsOptions};
use std::time::{Duration, Instant};

mod common;
use common::{add, doc_ids, open_store, options, started, started_with_textsearch};

/// A migrated primary with one streaming replica, and the options that read from it.
fn primary_and_replica() -> (TestServer, TestServer, PostgresOptions) {
    replicated(started())
}

/// `primary`, migrated, with one streaming replica, and the options that read from it.
fn replicated(primary: TestServer) -> (TestServer, TestServer, PostgresOptions) {
    let url = primary.create_database("shiori").unwrap();
    migrate(&PostgresOptions::new(&url)).unwrap();
    let replica = primary.replica().unwrap();
    replica.wait_for_replay(&url).unwrap();
    let mut postgres = PostgresOptions::new(&url);
    postgres.replica_urls = vec![replica.url("shiori")];
    postgres.connect_timeout = Duration::from_secs(2);
    (primary, replica, postgres)
}

/// Waits until the store's health thread has seen its replica serve.
fn wait_until_serving(store: &PostgresStore) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let status = store.stats(&Filters::default()).unwrap().replicas;
        if status.iter().all(|replica| replica.serving) {
            return;
        }
        assert!(Instant::now() < deadline, "never served: {status:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn nearest(store: &PostgresStore) -> Vec<String> {
    let hits = store
        .dense_search(&[1.0, 0.0, 0.0], 10, &Filters::default())
        .unwrap();
    let mut ids = doc_ids(store, &hits);
    ids.sort();
    ids
}

/// Whether the store's replica is skipped, for a reason naming `why` (not serving, whatever
/// the reason, is asserted).
fn skipped_because(store: &PostgresStore, why: &str) -> bool {
    let status = store.stats(&Filters::default()).unwrap().replicas;
    let reason = status[0].reason.as_deref().unwrap_or_default();
    if !reason.contains(why) {
        return false;
    }
    assert!(!status[0].serving, "{status:?}");
    true
}

fn run_on_replica(replica: &TestServer, sql: &str) {
    let mut client = postgres::Client::connect(&replica.url("shiori"), postgres::NoTls).unwrap();
    client.batch_execute(sql).unwrap();
}

#[test]
fn reads_go_to_the_replica_and_a_store_reads_its_own_writes() {
    let (_primary, replica, postgres) = primary_and_replica();
    let mut writer = open_store(&PostgresOptions::new(&postgres.url));
    add(&mut writer, "a", "h1", "apple", [1.0, 0.0, 0.0]);
    replica.wait_for_replay(&postgres.url).unwrap();
    let mut reader = open_store(&postgres);
    wait_until_serving(&reader);
    assert_eq!(nearest(&reader), ["a"]);

    // With replay paused, another process's write stays invisible to the replica's readers:
    // proof that the searches run there.
    run_on_replica(&replica, "SELECT pg_wal_replay_pause()");
    add(&mut writer, "b", "h2", "banana", [1.0, 0.1, 0.0]);
    assert_eq!(nearest(&reader), ["a"], "read from the paused replica");

    // This store's own write is read back at once: from the primary, until the replica has
    // replayed it.
    add(&mut reader, "c", "h3", "cherry", [1.0, 0.2, 0.0]);
    assert_eq!(nearest(&reader), ["a", "b", "c"]);
    assert!(skipped_because(&reader, "last write"));

    run_on_replica(&replica, "SELECT pg_wal_replay_resume()");
    wait_until_serving(&reader);
    assert_eq!(nearest(&reader), ["a", "b", "c"]);
    // A store whose own address is the standby reads from it (and would refuse to write).
    replica.wait_for_replay(&postgres.url).unwrap();
    let on_standby = open_store(&PostgresOptions::new(&replica.url("shiori")));
    assert_eq!(nearest(&on_standby), ["a", "b", "c"]);
}

/// pg_textsearch 1.0.0 does not WAL-log its index: BM25 searches go to the primary, dense
/// searches (and the scores of known chunks, read from their rows) to the replica, and the
/// store says so in its stats.
#[test]
fn bm25_stays_on_the_primary_while_the_index_does_not_reach_standbys() {
    let (_primary, replica, postgres) = replicated(started_with_textsearch());
    let mut writer = open_store(&PostgresOptions::new(&postgres.url));
    add(&mut writer, "a", "h1", "apple", [1.0, 0.0, 0.0]);
    replica.wait_for_replay(&postgres.url).unwrap();
    let reader = open_store(&postgres);
    wait_until_serving(&reader);
    let keyword_index = reader.stats(&Filters::default()).unwrap().keyword_index;
    assert!(
        keyword_index.contains("pg_textsearch 1.0.0") && keyword_index.contains("primary only"),
        "{keyword_index}"
    );

    run_on_replica(&replica, "SELECT pg_wal_replay_pause()");
    add(&mut writer, "b", "h2", "apple banana", [1.0, 0.1, 0.0]);
    assert_eq!(
        nearest(&reader),
        ["a"],
        "dense search on the paused replica"
    );
    let hits = reader
        .keyword_search("apple", 10, &Filters::default())
        .unwrap();
    // The replica holds no row of "b" to read back: the count is the proof.
    assert_eq!(hits.len(), 2, "BM25 on the primary: {hits:?}");
    run_on_replica(&replica, "SELECT pg_wal_replay_resume()");
}

#[test]
fn a_replica_past_the_lag_bound_is_skipped() {
    let (_primary, replica, mut postgres) = primary_and_replica();
    postgres.max_replica_lag = Duration::from_millis(200);
    let mut writer = open_store(&PostgresOptions::new(&postgres.url));
    let reader = open_store(&postgres);
    wait_until_serving(&reader);
    run_on_replica(&replica, "SELECT pg_wal_replay_pause()");
    add(&mut writer, "a", "h1", "apple", [1.0, 0.0, 0.0]);
    // The replica receives the write but does not replay it; its lag grows past the bound.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !skipped_because(&reader, "lagging") {
        assert!(Instant::now() < deadline, "never skipped for its lag");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(nearest(&reader), ["a"], "read from the primary instead");
}

#[test]
fn a_replica_stopped_mid_run_loses_no_search() {
    let (_primary, replica, postgres) = primary_and_replica();
    let mut writer = open_store(&PostgresOptions::new(&postgres.url));
    add(&mut writer, "a", "h1", "apple", [1.0, 0.0, 0.0]);
    replica.wait_for_replay(&postgres.url).unwrap();
    let reader = open_store(&postgres);
    wait_until_serving(&reader);
    std::thread::scope(|scope| {
        let searches = scope.spawn(|| {
            (0..300)
                .map(|_| {
                    let hits = reader.keyword_search("apple", 5, &Filters::default())?;
                    let dense = reader.dense_search(&[1.0, 0.0, 0.0], 5, &Filters::default())?;
                    Ok::<_, StoreError>((hits.len(), dense.len()))
                })
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(300));
        replica.stop().unwrap();
        for outcome in searches.join().unwrap() {
            assert_eq!(outcome.unwrap(), (1, 1));
        }
    });
    assert!(skipped_because(&reader, "unreachable"));
}

#[test]
fn a_database_that_went_away_is_unavailable_in_bounded_time() {
    let server = started();
    let url = server.create_database("shiori").unwrap();
    let mut postgres = PostgresOptions::new(&url);
    postgres.connect_timeout = Duration::from_secs(1);
    migrate(&postgres).unwrap();
    let store = open_store(&postgres);
    server.stop().unwrap();
    let started = Instant::now();
    let error = store
        .dense_search(&[1.0, 0.0, 0.0], 5, &Filters::default())
        .unwrap_err();
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "bounded wait");
    let error = PostgresStore::open(
        &postgres,
        options("test-embedder"),
        JapaneseTokenization::Bigram,
    )
    .err()
    .unwrap();
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
    assert!(error.to_string().contains("cannot connect"), "{error}");
}

#[test]
fn tls_checks_the_servers_certificate_against_the_configured_authority() {
    let server = started();
    server.create_database("shiori").unwrap();
    let front = TlsFront::start(&server).unwrap();
    let tls = |host: &str, mode: SslMode, root_cert| {
        let mut postgres = PostgresOptions::new(&front.url(host, "shiori"));
        postgres.tls = TlsOptions { mode, root_cert };
        postgres.connect_timeout = Duration::from_secs(5);
        postgres
    };

    let verified = tls("localhost", SslMode::VerifyFull, Some(front.ca_file()));
    migrate(&verified).unwrap();
    let mut store = open_store(&verified);
    add(&mut store, "a", "h1", "apple", [1.0, 0.0, 0.0]);
    assert_eq!(nearest(&store), ["a"]);
    // The certificate names 127.0.0.1 too; `require` encrypts without checking.
    migrate(&tls(
        "127.0.0.1",
        SslMode::VerifyFull,
        Some(front.ca_file()),
    ))
    .unwrap();
    migrate(&tls("127.0.0.1", SslMode::Require, None)).unwrap();

    let error = migrate(&tls(
        "localhost",
        SslMode::VerifyFull,
        Some(front.other_ca_file()),
    ))
    .unwrap_err()
    .to_string();
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    let error = migrate(&tls("localhost", SslMode::Disable, None))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("cannot connect"),
        "plain text refused: {error}"
    );
}
