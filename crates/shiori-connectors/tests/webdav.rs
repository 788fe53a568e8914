//! The WebDAV connector against a real WsgiDAV server: a folder mirrored, then only what
//! changed fetched again; basic authentication; an endpoint nobody listens on.

mod common;

use common::{free_port, limits, mirrored, no_readers, paths, python, Server};
use shiori_connectors::{connect, sync, ConnectorSettings, Listing, SourceUrl, WebDavSettings};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const INSTALL: &str = "install WsgiDAV: pip install wsgidav cheroot";

/// The base folder's name: a space and non-ASCII, so the base path itself is percent-encoded.
const FOLDER: &str = "共有 Docs";

/// WsgiDAV serving `root` to anyone. Its default verbosity logs one line per request,
/// `"GET /path" … -> 200 OK`, with the path decoded.
fn anonymous_server(root: &Path, log_dir: &Path) -> Server {
    let port = free_port();
    let mut command = Command::new("wsgidav");
    command
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--auth",
            "anonymous",
        ])
        .arg("--root")
        .arg(root)
        .arg("--no-config");
    Server::start(command, port, log_dir.join("wsgidav.log"), INSTALL)
}

/// WsgiDAV serving `root` only to `user` with `password`, over basic authentication.
fn server_with_login(root: &Path, log_dir: &Path, user: &str, password: &str) -> Server {
    let port = free_port();
    let config = serde_json::json!({
        "host": "127.0.0.1",
        "port": port,
        "provider_mapping": { "/": root },
        "http_authenticator": {
            "accept_basic": true,
            "accept_digest": false,
            "default_to_digest": false,
        },
        "simple_dc": { "user_mapping": { "*": { user: { "password": password } } } },
    });
    let config_file = log_dir.join("wsgidav.json");
    std::fs::write(&config_file, config.to_string()).unwrap();
    let mut command = Command::new("wsgidav");
    command.arg("--config").arg(&config_file);
    Server::start(command, port, log_dir.join("wsgidav.log"), INSTALL)
}

fn source(server: &Server, folder: &str) -> SourceUrl {
    format!("webdav+http://127.0.0.1:{}/{folder}/", server.port)
        .parse()
        .unwrap()
}

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn gets(server: &Server) -> usize {
    server.count("\"GET /")
}

struct Scene {
    _temp: tempfile::TempDir,
    root: PathBuf,
    mirror: PathBuf,
    state: PathBuf,
    logs: PathBuf,
}

fn scene() -> Scene {
    let temp = tempfile::tempdir().unwrap();
    let [root, mirror, state, logs] =
        ["served", "mirror", "state", "logs"].map(|name| temp.path().join(name));
    for folder in [&root, &state, &logs] {
        std::fs::create_dir_all(folder).unwrap();
    }
    Scene {
        _temp: temp,
        root,
        mirror,
        state,
        logs,
    }
}

#[test]
fn mirrors_a_folder_then_fetches_only_what_changed() {
    let scene = scene();
    let docs = scene.root.join(FOLDER);
    write(&docs, "a.txt", "alpha");
    write(&docs, "sub/b.txt", "bravo");
    write(&docs, "sub/deep/c.md", "# charlie");
    write(&docs, "会議 メモ.txt", "議事録");
    write(&scene.root, "outside.txt", "not below the base");
    let server = anonymous_server(&scene.root, &scene.logs);
    let url = source(&server, FOLDER);
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();

    let listed = connector.list(None).unwrap();
    assert_eq!(listed.cursor, None);
    let Listing::Complete(objects) = listed.listing else {
        panic!("a WebDAV listing is always complete");
    };
    assert_eq!(
        paths(&objects),
        ["a.txt", "sub/b.txt", "sub/deep/c.md", "会議 メモ.txt"]
    );
    assert!(objects
        .iter()
        .all(|o| !o.marker.is_empty() && o.size.is_some()));

    let first = sync(
        &url,
        connector.as_ref(),
        &scene.mirror,
        &limits(),
        &no_readers,
    )
    .unwrap();
    assert!(first.failures.is_empty(), "{:?}", first.failures);
    assert_eq!((first.fetched, first.unchanged, first.deleted), (4, 0, 0));
    assert_eq!(mirrored(&scene.mirror, "a.txt").as_deref(), Some("alpha"));
    assert_eq!(
        mirrored(&scene.mirror, "sub/b.txt").as_deref(),
        Some("bravo")
    );
    assert_eq!(
        mirrored(&scene.mirror, "sub/deep/c.md").as_deref(),
        Some("# charlie")
    );
    assert_eq!(
        mirrored(&scene.mirror, "会議 メモ.txt").as_deref(),
        Some("議事録")
    );
    assert_eq!(mirrored(&scene.mirror, "outside.txt"), None);

    // WsgiDAV's ETag is inode, whole-second mtime and size: the new text has another length,
    // so the change shows even within the same second.
    write(&docs, "a.txt", "alpha, revised");
    std::fs::remove_file(docs.join("sub/b.txt")).unwrap();
    write(&docs, "sub/deep/new.txt", "delta");
    let gets_before = gets(&server);
    let second = sync(
        &url,
        connector.as_ref(),
        &scene.mirror,
        &limits(),
        &no_readers,
    )
    .unwrap();
    assert!(second.failures.is_empty(), "{:?}", second.failures);
    assert_eq!(
        (second.fetched, second.deleted, second.unchanged),
        (2, 1, 2)
    );
    assert_eq!(gets(&server) - gets_before, 2, "{}", server.log());
    assert_eq!(server.count(&format!("\"GET /{FOLDER}/a.txt\"")), 2);
    assert_eq!(
        server.count(&format!("\"GET /{FOLDER}/sub/deep/new.txt\"")),
        1
    );
    assert_eq!(server.count(&format!("\"GET /{FOLDER}/会議 メモ.txt\"")), 1);
    assert_eq!(
        mirrored(&scene.mirror, "a.txt").as_deref(),
        Some("alpha, revised")
    );
    assert_eq!(
        mirrored(&scene.mirror, "sub/deep/new.txt").as_deref(),
        Some("delta")
    );
    assert_eq!(mirrored(&scene.mirror, "sub/b.txt"), None);
    assert_eq!(
        mirrored(&scene.mirror, "会議 メモ.txt").as_deref(),
        Some("議事録")
    );
}

#[test]
fn a_missing_base_folder_is_a_clear_error() {
    let scene = scene();
    let server = anonymous_server(&scene.root, &scene.logs);
    let url = source(&server, "no-such-folder");
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();
    let message = connector.list(None).unwrap_err().to_string();
    assert!(message.contains(&url.to_string()), "{message}");
    assert!(
        message.contains("404") && message.contains("no such folder"),
        "{message}"
    );
}

#[test]
fn basic_credentials_from_the_named_variables() {
    let scene = scene();
    write(&scene.root.join("private"), "plan.txt", "secret plan");
    let right = "correct horse battery";
    let server = server_with_login(&scene.root, &scene.logs, "reader", right);
    let url = source(&server, "private");
    let tag = std::process::id();
    let settings = |username_env: &str, password_env: &str| ConnectorSettings {
        webdav: WebDavSettings {
            username_env: username_env.into(),
            password_env: password_env.into(),
        },
        ..ConnectorSettings::default()
    };
    let wrong_user = format!("SHIORI_TEST_WEBDAV_WRONG_USER_{tag}");
    let wrong_password = format!("SHIORI_TEST_WEBDAV_WRONG_PASSWORD_{tag}");
    std::env::set_var(&wrong_user, "reader");
    std::env::set_var(&wrong_password, "tr0ub4dor-wrong");
    let refused = connect(&url, &settings(&wrong_user, &wrong_password), &scene.state).unwrap();
    let error = sync(
        &url,
        refused.as_ref(),
        &scene.mirror,
        &limits(),
        &no_readers,
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(message.contains(&url.to_string()), "{message}");
    assert!(
        message.contains("401") && message.contains(&wrong_password),
        "{message}"
    );
    assert!(
        !message.contains("tr0ub4dor-wrong") && !message.contains(right),
        "{message}"
    );
    assert_eq!(mirrored(&scene.mirror, "plan.txt"), None);

    let unset = format!("SHIORI_TEST_WEBDAV_UNSET_{tag}");
    let anonymous = connect(&url, &settings(&unset, &unset), &scene.state).unwrap();
    let message = anonymous.list(None).unwrap_err().to_string();
    assert!(
        message.contains("401") && message.contains("set SHIORI_TEST"),
        "{message}"
    );

    let user = format!("SHIORI_TEST_WEBDAV_USER_{tag}");
    let password = format!("SHIORI_TEST_WEBDAV_PASSWORD_{tag}");
    std::env::set_var(&user, "reader");
    std::env::set_var(&password, right);
    let allowed = connect(&url, &settings(&user, &password), &scene.state).unwrap();
    let report = sync(
        &url,
        allowed.as_ref(),
        &scene.mirror,
        &limits(),
        &no_readers,
    )
    .unwrap();
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(report.fetched, 1);
    assert_eq!(
        mirrored(&scene.mirror, "plan.txt").as_deref(),
        Some("secret plan")
    );
}

#[test]
fn an_endpoint_nobody_listens_on_fails_in_bounded_time() {
    let scene = scene();
    let url: SourceUrl = format!("webdav+http://127.0.0.1:{}/docs/", free_port())
        .parse()
        .unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();
    let started = Instant::now();
    let message = connector.list(None).unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(message.contains(&url.to_string()), "{message}");
}

/// A server whose every folder holds one file and a sub-folder, and lists the base again as if
/// it were a child: what a link to an ancestor looks like from outside.
const ENDLESS_TREE: &str = r#"
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Endless(BaseHTTPRequestHandler):
    def do_PROPFIND(self):
        path = self.path
        body = ('<d:multistatus xmlns:d="DAV:">'
            f'<d:response><d:href>{path}</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
            f'<d:response><d:href>{path}f.txt</d:href><d:propstat><d:prop><d:resourcetype/><d:getetag>"{len(path)}"</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
            f'<d:response><d:href>{path}deeper/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
            '<d:response><d:href>/base/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
            '</d:multistatus>').encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Endless).serve_forever()
"#;

#[test]
fn an_endless_tree_is_walked_to_a_bounded_depth_and_each_folder_once() {
    let scene = scene();
    let script = scene.logs.join("endless.py");
    std::fs::write(&script, ENDLESS_TREE).unwrap();
    let port = free_port();
    let mut command = Command::new(python());
    command.arg(&script).arg(port.to_string());
    let server = Server::start(command, port, scene.logs.join("endless.log"), "python3");
    let url: SourceUrl = format!("webdav+http://127.0.0.1:{port}/base/")
        .parse()
        .unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();
    let Listing::Complete(objects) = connector.list(None).unwrap().listing else {
        panic!("a WebDAV listing is always complete");
    };
    // The base and 64 levels below it, each with its file; the base listed once.
    assert_eq!(objects.len(), 65);
    assert_eq!(server.count("\"PROPFIND "), 65, "{}", server.log());
    assert_eq!(server.count("\"PROPFIND /base/ "), 1);
    let deepest = format!("{}f.txt", "deeper/".repeat(64));
    assert!(objects.iter().any(|o| o.path == deepest));
}

/// `tests/common/redirecting.py`: a server answering with `status` and a Location on `target`.
fn redirecting(status: u16, target: &str, mode: &str, logs: &Path) -> Server {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/redirecting.py"))
        .args([&port.to_string(), &status.to_string(), target, mode]);
    let log = logs.join(format!("redirecting-{port}.log"));
    Server::start(command, port, log, "install Python 3")
}

#[test]
fn redirects_to_another_server_are_refused() {
    let scene = scene();
    write(&scene.root, "internal/secret.txt", "internal only");
    let internal = anonymous_server(&scene.root, &scene.logs);
    let internal_url = format!("http://127.0.0.1:{}", internal.port);

    let listing_moved = redirecting(307, &internal_url, "redirect", &scene.logs);
    let url = source(&listing_moved, "internal");
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();
    let message = connector.list(None).unwrap_err().to_string();
    assert!(message.contains("another server"), "{message}");

    let download_moved = redirecting(302, &internal_url, "listing", &scene.logs);
    let url = source(&download_moved, "internal");
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();
    let report = sync(&url, &*connector, &scene.mirror, &limits(), &no_readers).unwrap();
    assert_eq!(report.fetched, 0, "{report:?}");
    assert!(
        report.failures[0].reason.contains("another server"),
        "{report:?}"
    );
    assert_eq!(mirrored(&scene.mirror, "secret.txt"), None);
    assert_eq!(
        internal.count("internal"),
        0,
        "the internal server was asked: {}",
        internal.log()
    );
}

/// A server listing, in `/base/`, one file inside it and one outside it; GET serves any path.
const ONE_HREF_OUTSIDE: &str = r#"
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def response(href, collection):
    kind = "<d:collection/>" if collection else ""
    return (f'<d:response><d:href>{href}</d:href><d:propstat><d:prop><d:resourcetype>{kind}'
        f'</d:resourcetype><d:getetag>"1"</d:getetag></d:prop><d:status>HTTP/1.1 200 OK'
        '</d:status></d:propstat></d:response>')

class Listing(BaseHTTPRequestHandler):
    def do_PROPFIND(self):
        body = ('<d:multistatus xmlns:d="DAV:">' + response("/base/", True)
            + response("/base/good.txt", False) + response("/elsewhere/evil.txt", False)
            + '</d:multistatus>').encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        body = f"text of {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Listing).serve_forever()
"#;

#[test]
fn an_href_outside_the_folder_is_refused_alone() {
    let scene = scene();
    let script = scene.logs.join("outside.py");
    std::fs::write(&script, ONE_HREF_OUTSIDE).unwrap();
    let port = free_port();
    let mut command = Command::new(python());
    command.arg(&script).arg(port.to_string());
    let _server = Server::start(command, port, scene.logs.join("outside.log"), "python3");
    let url: SourceUrl = format!("webdav+http://127.0.0.1:{port}/base/")
        .parse()
        .unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), &scene.state).unwrap();
    let report = sync(&url, &*connector, &scene.mirror, &limits(), &no_readers).unwrap();
    assert_eq!(report.fetched, 1, "{report:?}");
    assert_eq!(
        mirrored(&scene.mirror, "good.txt").as_deref(),
        Some("text of /base/good.txt")
    );
    assert_eq!(report.failures.len(), 1, "{report:?}");
    assert!(
        report.failures[0].object.ends_with("/elsewhere/evil.txt"),
        "{report:?}"
    );
}
