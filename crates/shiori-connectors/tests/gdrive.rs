//! The Drive connector against a scripted Drive API v3 server that keeps a folder tree and a
//! changes log and answers as the reference describes: partial responses shaped by `fields`,
//! pages shorter than `pageSize` (the reference allows it) so every list takes several,
//! `startPageToken`, `changes` with `nextPageToken`/`newStartPageToken`, `alt=media` and
//! `export`, Google's error bodies, and a token endpoint that verifies the service account's
//! RS256 assertion with the public half of a key made for the test.

mod common;

use md5::Digest;
use serde_json::{json, Map, Value};
use shiori_connectors::{connect, sync, Connector, ConnectorSettings, SourceUrl, SyncReport};
use shiori_mock::{MockServer, Recorded, Reply};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

const FOLDER: &str = "application/vnd.google-apps.folder";
const DOC: &str = "application/vnd.google-apps.document";
const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const CLIENT_EMAIL: &str = "indexer@shiori-test.iam.gserviceaccount.com";
const ROOT: &str = "root-folder";
/// Items per page whatever `pageSize` asks, so paging is exercised.
const PAGE: usize = 3;

/// An RSA key pair made with openssl once per test run: (private PKCS#8 PEM, public PEM).
fn key_pair() -> &'static (String, String) {
    static PAIR: OnceLock<(String, String)> = OnceLock::new();
    PAIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("key.pem");
        let public = dir.path().join("public.pem");
        let run = |args: &[&str]| {
            let output = Command::new("openssl").args(args).output();
            assert!(
                output.is_ok_and(|o| o.status.success()),
                "openssl {args:?} failed; install openssl"
            );
        };
        run(&[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            private.to_str().unwrap(),
        ]);
        run(&[
            "pkey",
            "-in",
            private.to_str().unwrap(),
            "-pubout",
            "-out",
            public.to_str().unwrap(),
        ]);
        (
            std::fs::read_to_string(private).unwrap(),
            std::fs::read_to_string(public).unwrap(),
        )
    })
}

#[derive(Clone)]
struct File {
    name: String,
    mime: String,
    parents: Vec<String>,
    content: Vec<u8>,
    version: u64,
    trashed: bool,
    permissions: Vec<Value>,
    /// Listings leave permissions out, as for a shared drive's items.
    hide_permissions: bool,
    /// Its export is over Google's 10 MB limit.
    too_big: bool,
}

impl File {
    fn new(name: &str, mime: &str, parent: &str, content: &[u8]) -> File {
        File {
            name: name.into(),
            mime: mime.into(),
            parents: vec![parent.into()],
            content: content.to_vec(),
            version: 1,
            trashed: false,
            permissions: Vec::new(),
            hide_permissions: false,
            too_big: false,
        }
    }

    fn shared_with(mut self, kind: &str, who: &str) -> File {
        let key = if kind == "domain" {
            "domain"
        } else {
            "emailAddress"
        };
        self.permissions.push(json!({
            "kind": "drive#permission", "id": format!("p{}", self.permissions.len()),
            "type": kind, key: who, "role": "reader"
        }));
        self
    }

    fn google(&self) -> bool {
        self.mime.starts_with("application/vnd.google-apps.")
    }

    /// The full file resource; `fields` then selects from it.
    fn resource(&self, id: &str) -> Value {
        let mut resource = json!({
            "kind": "drive#file", "id": id, "name": self.name, "mimeType": self.mime,
            "parents": self.parents, "trashed": self.trashed,
            "version": self.version.to_string(),
            "modifiedTime": format!("2024-05-01T10:00:{:02}.000Z", self.version % 60),
        });
        if !self.google() {
            resource["size"] = json!(self.content.len().to_string());
            resource["md5Checksum"] = json!(format!("{:x}", md5::Md5::digest(&self.content)));
        }
        if !self.hide_permissions {
            resource["permissions"] = json!(self.permissions);
        }
        resource
    }
}

#[derive(Default)]
struct State {
    files: BTreeMap<String, File>,
    /// The changes log: the id of the file each change touched; change N is at N - 1.
    log: Vec<String>,
    tokens: HashSet<String>,
    token_url: String,
    /// Replies given once, instead of the real one, to the next request whose path and query
    /// contain the text.
    faults: Vec<(String, Reply)>,
}

impl State {
    fn put(&mut self, id: &str, file: File) {
        self.files.insert(id.into(), file);
        self.log.push(id.into());
    }

    fn edit(&mut self, id: &str, edit: impl FnOnce(&mut File)) {
        let file = self.files.get_mut(id).unwrap();
        edit(file);
        file.version += 1;
        self.log.push(id.into());
    }

    fn remove(&mut self, id: &str) {
        self.files.remove(id);
        self.log.push(id.into());
    }
}

struct Drive {
    state: Arc<Mutex<State>>,
    server: MockServer,
    dir: tempfile::TempDir,
}

impl Drive {
    fn start(files: Vec<(&str, File)>) -> Drive {
        let state = Arc::new(Mutex::new(State::default()));
        for (id, file) in files {
            state.lock().unwrap().put(id, file);
        }
        let handler_state = Arc::clone(&state);
        let server = MockServer::start(move |request| answer(&handler_state, request));
        state.lock().unwrap().token_url = format!("{}/token", server.url());
        Drive {
            state,
            server,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn with(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.state.lock().unwrap());
    }

    fn fault(&self, needle: &str, reply: Reply) {
        self.with(|state| state.faults.push((needle.into(), reply)));
    }

    fn service_account(&self) -> PathBuf {
        let path = self.dir.path().join("service-account.json");
        let key = json!({
            "type": "service_account", "project_id": "shiori-test",
            "private_key_id": "key-1", "private_key": key_pair().0,
            "client_email": CLIENT_EMAIL, "client_id": "1234",
            "token_uri": format!("{}/token", self.server.url()),
        });
        std::fs::write(&path, key.to_string()).unwrap();
        path
    }

    fn settings(&self, credentials: PathBuf, readers: &[(&str, &[&str])]) -> ConnectorSettings {
        let mut settings = ConnectorSettings::default();
        settings.gdrive.credentials = Some(credentials);
        settings.gdrive.api_url = self.server.url().to_string();
        settings.gdrive.token_url = format!("{}/token", self.server.url());
        settings.gdrive.readers = readers
            .iter()
            .map(|(who, groups)| {
                (
                    who.to_string(),
                    groups.iter().map(|g| g.to_string()).collect(),
                )
            })
            .collect();
        settings
    }

    fn connector(&self, folder: &str, settings: &ConnectorSettings) -> Box<dyn Connector> {
        connect(&url(folder), settings, self.dir.path()).unwrap()
    }

    fn requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }
}

fn url(folder: &str) -> SourceUrl {
    SourceUrl::Drive {
        folder: folder.into(),
    }
}

fn answer(state: &Mutex<State>, request: &Recorded) -> Reply {
    let mut state = state.lock().unwrap();
    let target = format!("{}?{}", request.path, request.query);
    if let Some(at) = state
        .faults
        .iter()
        .position(|(needle, _)| target.contains(needle))
    {
        return state.faults.remove(at).1;
    }
    if request.path == "/token" {
        return token(&mut state, request);
    }
    let authorized = request
        .header("authorization")
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|token| state.tokens.contains(token));
    if !authorized {
        return google_error(401, "authError", "Invalid Credentials");
    }
    let params: BTreeMap<String, String> = url::form_urlencoded::parse(request.query.as_bytes())
        .into_owned()
        .collect();
    let Some(route) = request.path.strip_prefix("/drive/v3/") else {
        return google_error(404, "notFound", "Not Found");
    };
    let segments: Vec<&str> = route.split('/').collect();
    let reply = match segments.as_slice() {
        ["changes", "startPageToken"] => Ok(json!({
            "kind": "drive#startPageToken",
            "startPageToken": (state.log.len() + 1).to_string(),
        })),
        ["changes"] => changes(&state, &params),
        ["files"] => list(&state, &params),
        ["files", id] if params.get("alt").map(String::as_str) == Some("media") => {
            return media(&state, id);
        }
        ["files", id] => match state.files.get(*id) {
            Some(file) => Ok(file.resource(id)),
            None => Err(not_found(id)),
        },
        ["files", id, "export"] => return export(&state, id, &params),
        ["files", id, "permissions"] => permissions(&state, id, &params),
        _ => Err(google_error(404, "notFound", "Not Found")),
    };
    match reply {
        Ok(value) => Reply::json(select(&value, &fields(params.get("fields")))),
        Err(reply) => reply,
    }
}

/// `POST /token`: a service account's signed assertion or an authorized user's refresh token.
fn token(state: &mut State, request: &Recorded) -> Reply {
    let form: BTreeMap<String, String> = url::form_urlencoded::parse(request.body.as_bytes())
        .into_owned()
        .collect();
    let valid = match form.get("grant_type").map(String::as_str) {
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => verify_assertion(
            form.get("assertion").map_or("", String::as_str),
            &state.token_url,
        ),
        Some("refresh_token") => {
            form.get("client_id").map(String::as_str) == Some("client-1")
                && form.get("client_secret").map(String::as_str) == Some("s3cret-client")
                && form.get("refresh_token").map(String::as_str) == Some("1//refresh-me")
        }
        _ => false,
    };
    if !valid {
        return Reply::status(
            400,
            r#"{"error": "invalid_grant", "error_description": "Invalid grant"}"#,
        );
    }
    let token = format!("ya29.token-{}", state.tokens.len() + 1);
    state.tokens.insert(token.clone());
    Reply::json(json!({"access_token": token, "expires_in": 3599, "token_type": "Bearer"}))
}

#[derive(serde::Deserialize)]
struct Claims {
    iss: String,
    scope: String,
    aud: String,
    iat: u64,
    exp: u64,
}

/// Checks the assertion's RS256 signature with the public key, and its claims.
fn verify_assertion(assertion: &str, token_url: &str) -> bool {
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(key_pair().1.as_bytes()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[token_url]);
    validation.set_issuer(&[CLIENT_EMAIL]);
    let Ok(data) = jsonwebtoken::decode::<Claims>(assertion, &key, &validation) else {
        return false;
    };
    let claims = data.claims;
    data.header.kid.as_deref() == Some("key-1")
        && claims.iss == CLIENT_EMAIL
        && claims.aud == token_url
        && claims.scope == "https://www.googleapis.com/auth/drive.readonly"
        && claims.exp == claims.iat + 3600
}

/// `files.list` with `q = 'ID' in parents and trashed=false`.
fn list(state: &State, params: &BTreeMap<String, String>) -> Result<Value, Reply> {
    let q = params.get("q").map_or("", String::as_str);
    let parent = q
        .strip_prefix('\'')
        .and_then(|rest| rest.strip_suffix("' in parents and trashed=false"))
        .ok_or_else(|| google_error(400, "invalidQuery", "Invalid Value"))?;
    let children: Vec<Value> = state
        .files
        .iter()
        .filter(|(_, file)| !file.trashed && file.parents.iter().any(|p| p == parent))
        .map(|(id, file)| file.resource(id))
        .collect();
    let (page, next) = page_of(children, params)?;
    let mut reply = json!({"kind": "drive#fileList", "incompleteSearch": false, "files": page});
    if let Some(next) = next {
        reply["nextPageToken"] = json!(next);
    }
    Ok(reply)
}

/// `changes.list` from `pageToken`: each logged change with the file as it is now, or
/// `removed: true` when it is gone.
fn changes(state: &State, params: &BTreeMap<String, String>) -> Result<Value, Reply> {
    let start: usize = params
        .get("pageToken")
        .and_then(|token| token.parse().ok())
        .filter(|&token| token >= 1)
        .ok_or_else(|| google_error(400, "invalid", "Invalid Value"))?;
    let end = state.log.len().min(start - 1 + PAGE);
    let entries: Vec<Value> = state.log[(start - 1).min(end)..end]
        .iter()
        .map(|id| match state.files.get(id) {
            Some(file) => json!({"kind": "drive#change", "changeType": "file", "fileId": id,
                                 "removed": false, "file": file.resource(id)}),
            None => {
                json!({"kind": "drive#change", "changeType": "file", "fileId": id, "removed": true})
            }
        })
        .collect();
    let mut reply = json!({"kind": "drive#changeList", "changes": entries});
    if end < state.log.len() {
        reply["nextPageToken"] = json!((end + 1).to_string());
    } else {
        reply["newStartPageToken"] = json!((state.log.len() + 1).to_string());
    }
    Ok(reply)
}

fn permissions(state: &State, id: &str, params: &BTreeMap<String, String>) -> Result<Value, Reply> {
    let file = state.files.get(id).ok_or_else(|| not_found(id))?;
    // One a page, so a file with two permissions takes two requests.
    let mut limited = params.clone();
    limited.insert("pageSize".into(), "1".into());
    let (page, next) = page_of(file.permissions.clone(), &limited)?;
    let mut reply = json!({"kind": "drive#permissionList", "permissions": page});
    if let Some(next) = next {
        reply["nextPageToken"] = json!(next);
    }
    Ok(reply)
}

fn media(state: &State, id: &str) -> Reply {
    match state.files.get(id) {
        None => not_found(id),
        Some(file) if file.google() => google_error(
            403,
            "fileNotDownloadable",
            "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
        ),
        Some(file) => bytes(&file.content, &file.mime),
    }
}

fn export(state: &State, id: &str, params: &BTreeMap<String, String>) -> Reply {
    match state.files.get(id) {
        None => not_found(id),
        Some(file)
            if file.mime != DOC || params.get("mimeType").map(String::as_str) != Some(DOCX) =>
        {
            google_error(
                400,
                "badRequest",
                "The requested conversion is not supported.",
            )
        }
        Some(file) if file.too_big => google_error(
            403,
            "exportSizeLimitExceeded",
            "This file is too large to be exported.",
        ),
        Some(file) => bytes(&file.content, DOCX),
    }
}

fn bytes(content: &[u8], mime: &str) -> Reply {
    Reply::status(200, String::from_utf8(content.to_vec()).unwrap()).header("content-type", mime)
}

/// A page of `items` from the offset in `pageToken`, at most `pageSize` and [`PAGE`] long.
fn page_of(
    items: Vec<Value>,
    params: &BTreeMap<String, String>,
) -> Result<(Vec<Value>, Option<String>), Reply> {
    let size: usize = params
        .get("pageSize")
        .map_or(Ok(100), |size| size.parse())
        .map_err(|_| google_error(400, "invalid", "Invalid pageSize"))?;
    let offset: usize = params
        .get("pageToken")
        .map_or(Ok(0), |token| {
            token.strip_prefix("offset-").unwrap_or("x").parse()
        })
        .map_err(|_| google_error(400, "invalid", "Invalid pageToken"))?;
    let end = items.len().min(offset + size.clamp(1, 1000).min(PAGE));
    let next = (end < items.len()).then(|| format!("offset-{end}"));
    Ok((items[offset.min(end)..end].to_vec(), next))
}

fn not_found(id: &str) -> Reply {
    google_error(404, "notFound", &format!("File not found: {id}."))
}

/// Google's JSON error body.
fn google_error(status: u16, reason: &str, message: &str) -> Reply {
    let body = json!({"error": {"code": status, "message": message,
        "errors": [{"message": message, "domain": "global", "reason": reason}]}});
    Reply::status(status, body.to_string()).header("content-type", "application/json")
}

/// One field of a `fields` selection, `name(sub,fields)`.
struct Field {
    name: String,
    sub: Vec<Field>,
}

fn fields(selection: Option<&String>) -> Option<Vec<Field>> {
    let chars: Vec<char> = selection?.chars().collect();
    Some(parse_fields(&chars, &mut 0))
}

fn parse_fields(chars: &[char], at: &mut usize) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut name = String::new();
    while let Some(&c) = chars.get(*at) {
        *at += 1;
        match c {
            ',' if !name.is_empty() => fields.push(Field {
                name: std::mem::take(&mut name),
                sub: Vec::new(),
            }),
            ',' => {}
            '(' => {
                let sub = parse_fields(chars, at);
                fields.push(Field {
                    name: std::mem::take(&mut name),
                    sub,
                });
            }
            ')' => break,
            c => name.push(c),
        }
    }
    if !name.is_empty() {
        fields.push(Field {
            name,
            sub: Vec::new(),
        });
    }
    fields
}

/// `value` with only the selected fields (all of it without a selection).
fn select(value: &Value, selection: &Option<Vec<Field>>) -> Value {
    match selection {
        Some(fields) => project(value, fields),
        None => value.clone(),
    }
}

fn project(value: &Value, fields: &[Field]) -> Value {
    match value {
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| project(item, fields)).collect())
        }
        Value::Object(object) => {
            let mut kept = Map::new();
            for field in fields {
                if let Some(inner) = object.get(&field.name) {
                    let inner = if field.sub.is_empty() {
                        inner.clone()
                    } else {
                        project(inner, &field.sub)
                    };
                    kept.insert(field.name.clone(), inner);
                }
            }
            Value::Object(kept)
        }
        other => other.clone(),
    }
}

/// What the export of a Google Doc as DOCX gives. (The scripted server's bodies are text, so
/// this stands for the archive; the test checks the bytes arrive as sent.)
fn docx(text: &str) -> Vec<u8> {
    format!("PK-docx:{text}").into_bytes()
}

/// The standard tree: a root folder with files of each kind, a sub-folder, and a folder
/// elsewhere.
fn tree() -> Vec<(&'static str, File)> {
    vec![
        ("my-drive", File::new("My Drive", FOLDER, "", b"")),
        (ROOT, File::new("Shared Docs", FOLDER, "my-drive", b"")),
        (
            "f-notes",
            File::new("notes.txt", "text/plain", ROOT, b"meeting notes v1")
                .shared_with("user", "Alice@example.com"),
        ),
        (
            "f-report",
            File::new(
                "report.pdf",
                "application/pdf",
                ROOT,
                b"%PDF-1.4 not really",
            )
            .shared_with("domain", "example.com"),
        ),
        (
            "f-plan",
            File::new("Plan", DOC, ROOT, &docx("the plan"))
                .shared_with("group", "team@example.com"),
        ),
        (
            "f-form",
            File::new("Survey", "application/vnd.google-apps.form", ROOT, b""),
        ),
        (
            "f-secret",
            File::new("secret.txt", "text/plain", ROOT, b"for bob")
                .shared_with("user", "bob@elsewhere.org"),
        ),
        ("f-trashed", {
            let mut file = File::new("old.txt", "text/plain", ROOT, b"old");
            file.trashed = true;
            file
        }),
        ("d-sub", File::new("Sub", FOLDER, ROOT, b"")),
        ("f-deep", {
            let mut file = File::new("deep.txt", "text/plain", "d-sub", b"deep down")
                .shared_with("user", "carol@elsewhere.org")
                .shared_with("user", "alice@example.com");
            file.hide_permissions = true;
            file
        }),
        (
            "d-elsewhere",
            File::new("Elsewhere", FOLDER, "my-drive", b""),
        ),
        (
            "f-outside",
            File::new("outside.txt", "text/plain", "d-elsewhere", b"not ours"),
        ),
    ]
}

const READERS: &[(&str, &[&str])] = &[
    ("alice@example.com", &["staff"]),
    ("team@example.com", &["eng"]),
    ("domain:example.com", &["all"]),
];

type Readers = Mutex<BTreeMap<String, Option<Vec<String>>>>;

fn run(connector: &dyn Connector, mirror: &Path, readers: &Readers) -> SyncReport {
    let files = shiori_connectors::mirror_files(mirror);
    let record = |path: &Path, groups: Option<&[String]>| {
        let relative = path
            .strip_prefix(&files)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        readers
            .lock()
            .unwrap()
            .insert(relative, groups.map(<[String]>::to_vec));
        Ok(())
    };
    sync(&url(ROOT), connector, mirror, &common::limits(), &record).unwrap()
}

fn mirrored_paths(mirror: &Path) -> Vec<String> {
    let files = shiori_connectors::mirror_files(mirror);
    let mut paths = Vec::new();
    let mut pending = vec![files.clone()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                paths.push(
                    path.strip_prefix(&files)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    paths.sort();
    paths
}

fn downloads(requests: &[Recorded]) -> usize {
    requests
        .iter()
        .filter(|r| r.query.contains("alt=media") || r.path.ends_with("/export"))
        .count()
}

fn groups(list: &[&str]) -> Option<Vec<String>> {
    Some(list.iter().map(|g| g.to_string()).collect())
}

#[test]
fn mirrors_a_folder_then_follows_the_changes_feed() {
    let drive = Drive::start(tree());
    let settings = drive.settings(drive.service_account(), READERS);
    let connector = drive.connector(ROOT, &settings);
    let mirror = tempfile::tempdir().unwrap();
    let readers = Readers::default();

    let first = run(connector.as_ref(), mirror.path(), &readers);
    assert_eq!(
        (first.fetched, first.deleted, first.failures.len()),
        (5, 0, 0),
        "{first:?}"
    );
    assert_eq!(
        mirrored_paths(mirror.path()),
        [
            "Plan.docx",
            "Sub/deep.txt",
            "notes.txt",
            "report.pdf",
            "secret.txt"
        ]
    );
    assert_eq!(
        common::mirrored(mirror.path(), "notes.txt").unwrap(),
        "meeting notes v1"
    );
    assert_eq!(
        common::mirrored(mirror.path(), "Plan.docx").unwrap(),
        "PK-docx:the plan"
    );
    let exports = drive.server.requests_to("/drive/v3/files/f-plan/export");
    assert_eq!(exports.len(), 1);
    assert!(exports[0].query.contains(
        "mimeType=application%2Fvnd.openxmlformats-officedocument.wordprocessingml.document"
    ));
    let expected_readers: BTreeMap<String, Option<Vec<String>>> = [
        ("Plan.docx", groups(&["eng"])),
        ("Sub/deep.txt", groups(&["staff"])),
        ("notes.txt", groups(&["staff"])),
        ("report.pdf", groups(&["all"])),
        ("secret.txt", groups(&[])),
    ]
    .into_iter()
    .map(|(path, groups)| (path.to_string(), groups))
    .collect();
    assert_eq!(*readers.lock().unwrap(), expected_readers);

    let requests = drive.requests();
    assert_eq!(
        requests.iter().filter(|r| r.path == "/token").count(),
        1,
        "the token is kept"
    );
    let start = requests
        .iter()
        .position(|r| r.path.ends_with("/startPageToken"))
        .unwrap();
    let first_list = requests
        .iter()
        .position(|r| r.path == "/drive/v3/files")
        .unwrap();
    assert!(start < first_list, "the start token comes before the walk");
    let root_pages = requests
        .iter()
        .filter(|r| r.path == "/drive/v3/files" && r.query.contains(ROOT))
        .count();
    assert!(root_pages >= 2, "{root_pages} pages");
    assert_eq!(
        drive
            .server
            .requests_to("/drive/v3/files/f-deep/permissions")
            .len(),
        2
    );
    assert_eq!(downloads(&requests), 5);
    let mark = requests.len();

    drive.with(|state| {
        state.edit("f-notes", |file| {
            file.content = b"meeting notes v2".to_vec()
        });
        state.remove("f-report");
        state.put(
            "f-new",
            File::new("new.txt", "text/plain", "d-sub", b"brand new"),
        );
        state.edit("f-secret", |file| file.parents = vec!["d-elsewhere".into()]);
    });
    let second = run(connector.as_ref(), mirror.path(), &readers);
    assert_eq!(
        (second.fetched, second.deleted, second.failures.len()),
        (2, 2, 0),
        "{second:?}"
    );
    assert_eq!(
        mirrored_paths(mirror.path()),
        ["Plan.docx", "Sub/deep.txt", "Sub/new.txt", "notes.txt"]
    );
    assert_eq!(
        common::mirrored(mirror.path(), "notes.txt").unwrap(),
        "meeting notes v2"
    );
    let since: Vec<Recorded> = drive.requests().split_off(mark);
    assert_eq!(downloads(&since), 2, "one download per changed or new file");
    assert!(
        since
            .iter()
            .filter(|r| r.path == "/drive/v3/changes")
            .count()
            >= 2,
        "paged changes"
    );
    assert!(
        !since.iter().any(|r| r.path == "/drive/v3/files"),
        "no full listing"
    );
    assert_eq!(
        readers.lock().unwrap()["report.pdf"],
        None,
        "a deleted file's readers are cleared"
    );

    let mark = drive.requests().len();
    let third = run(connector.as_ref(), mirror.path(), &readers);
    assert_eq!(
        (third.fetched, third.deleted, third.unchanged),
        (0, 0, 4),
        "{third:?}"
    );
    let since = drive.requests().split_off(mark);
    assert_eq!(downloads(&since), 0);
    assert_eq!(
        since
            .iter()
            .filter(|r| r.path == "/drive/v3/changes")
            .count(),
        1
    );
}

#[test]
fn a_renamed_folder_lists_everything_again_and_moves_without_downloads() {
    let drive = Drive::start(tree());
    let settings = drive.settings(drive.service_account(), &[]);
    let connector = drive.connector(ROOT, &settings);
    let mirror = tempfile::tempdir().unwrap();
    let readers = Readers::default();
    run(connector.as_ref(), mirror.path(), &readers);
    assert!(
        readers.lock().unwrap().values().all(Option::is_none),
        "no readers: project groups"
    );

    drive.with(|state| state.edit("d-sub", |folder| folder.name = "Renamed".into()));
    let mark = drive.requests().len();
    let report = run(connector.as_ref(), mirror.path(), &readers);
    assert_eq!(
        (report.fetched, report.failures.len()),
        (0, 0),
        "{report:?}"
    );
    assert!(mirrored_paths(mirror.path()).contains(&"Renamed/deep.txt".to_string()));
    let since = drive.requests().split_off(mark);
    assert!(
        since.iter().any(|r| r.path == "/drive/v3/files"),
        "a full listing"
    );
    assert_eq!(downloads(&since), 0);
}

#[test]
fn a_folder_moved_in_brings_its_files_without_changes_of_their_own() {
    let drive = Drive::start(tree());
    let settings = drive.settings(drive.service_account(), &[]);
    let connector = drive.connector(ROOT, &settings);
    let mirror = tempfile::tempdir().unwrap();
    let readers = Readers::default();
    run(connector.as_ref(), mirror.path(), &readers);

    drive.with(|state| {
        state.edit("d-elsewhere", |folder| {
            folder.parents = vec!["d-sub".into()]
        });
        state.put("d-inner", File::new("Inner", FOLDER, "d-elsewhere", b""));
        state.put(
            "f-inner",
            File::new("inner.txt", "text/plain", "d-inner", b"inner"),
        );
    });
    let report = run(connector.as_ref(), mirror.path(), &readers);
    assert_eq!(
        (report.fetched, report.failures.len()),
        (2, 0),
        "{report:?}"
    );
    let paths = mirrored_paths(mirror.path());
    assert!(
        paths.contains(&"Sub/Elsewhere/outside.txt".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"Sub/Elsewhere/Inner/inner.txt".to_string()),
        "{paths:?}"
    );
}

#[test]
fn rate_limits_as_429_or_403_are_waited_out() {
    let drive = Drive::start(tree());
    drive.fault(
        "startPageToken",
        Reply::status(429, "slow down").header("retry-after", "0"),
    );
    drive.fault(
        "/drive/v3/files?",
        google_error(403, "userRateLimitExceeded", "User Rate Limit Exceeded"),
    );
    drive.fault(
        "alt=media",
        google_error(403, "rateLimitExceeded", "Rate Limit Exceeded"),
    );
    let settings = drive.settings(drive.service_account(), &[]);
    let connector = drive.connector(ROOT, &settings);
    let mirror = tempfile::tempdir().unwrap();
    let report = run(connector.as_ref(), mirror.path(), &Readers::default());
    assert_eq!(
        (report.fetched, report.failures.len()),
        (5, 0),
        "{report:?}"
    );
    assert_eq!(
        drive
            .server
            .requests_to("/drive/v3/changes/startPageToken")
            .len(),
        2
    );
}

#[test]
fn a_rejected_token_is_renewed_once() {
    let drive = Drive::start(tree());
    drive.fault(
        "/drive/v3/files/root-folder?",
        google_error(401, "authError", "Invalid Credentials"),
    );
    let settings = drive.settings(drive.service_account(), &[]);
    let connector = drive.connector(ROOT, &settings);
    let listed = connector.list(None).unwrap();
    assert!(listed.cursor.is_some());
    assert_eq!(drive.server.requests_to("/token").len(), 2);
}

#[test]
fn an_authorized_user_trades_its_refresh_token_and_no_secret_is_told() {
    let drive = Drive::start(tree());
    let path = drive.dir.path().join("user.json");
    let user = |refresh: &str| {
        json!({"type": "authorized_user", "client_id": "client-1",
               "client_secret": "s3cret-client", "refresh_token": refresh})
        .to_string()
    };
    std::fs::write(&path, user("1//refresh-me")).unwrap();
    let mut settings = drive.settings(path.clone(), &[]);
    settings.gdrive.api_url = format!("{}/", drive.server.url());
    let listed = drive.connector(ROOT, &settings).list(None).unwrap();
    assert!(
        matches!(listed.listing, shiori_connectors::Listing::Complete(ref objects) if objects.len() == 5)
    );
    let token_request = &drive.server.requests_to("/token")[0];
    assert!(token_request.body.contains("grant_type=refresh_token"));

    std::fs::write(&path, user("1//revoked")).unwrap();
    let error = drive
        .connector(ROOT, &settings)
        .list(None)
        .unwrap_err()
        .to_string();
    assert!(error.contains("400"), "{error}");
    for secret in ["revoked", "s3cret-client", "ya29"] {
        assert!(!error.contains(secret), "{error}");
    }
}

#[test]
fn a_missing_folder_or_missing_credentials_say_what_to_do() {
    let drive = Drive::start(tree());
    let settings = drive.settings(drive.service_account(), &[]);
    let error = drive
        .connector("no-such-folder", &settings)
        .list(None)
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("gdrive://no-such-folder"), "{message}");
    assert!(message.contains("no such folder"), "{message}");
    assert!(!message.contains("PRIVATE KEY"), "{message}");

    let mut settings = settings;
    settings.gdrive.credentials = Some(drive.dir.path().join("absent.json"));
    let error = connect(&url(ROOT), &settings, drive.dir.path())
        .err()
        .unwrap();
    assert!(error.to_string().contains("absent.json"), "{error}");
}

#[test]
fn a_document_over_the_export_limit_is_reported_and_the_rest_mirrored() {
    let mut files = tree();
    for (id, file) in &mut files {
        if *id == "f-plan" {
            file.too_big = true;
        }
    }
    let drive = Drive::start(files);
    let settings = drive.settings(drive.service_account(), &[]);
    let connector = drive.connector(ROOT, &settings);
    let mirror = tempfile::tempdir().unwrap();
    let report = run(connector.as_ref(), mirror.path(), &Readers::default());
    assert_eq!(report.fetched, 4, "{report:?}");
    assert_eq!(report.failures.len(), 1);
    assert!(report.failures[0].object.ends_with("Plan.docx"));
    assert!(
        report.failures[0].reason.contains("10 MB"),
        "{:?}",
        report.failures
    );
}
