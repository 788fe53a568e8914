//! The Git connector against real repositories made with the `git` command line (which must be
//! installed: these tests fail, naming it, when it is not).

mod common;

use common::{limits, mirrored, no_readers};
use shiori_connectors::{
    connect, sync, Connector, ConnectorError, ConnectorSettings, Listed, RemoteObject, SourceUrl,
};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `git` in `dir` with a fixed identity and no user or system configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Shiori Test",
            "-c",
            "user.email=test@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run git ({error}); install Git (apt-get install git)")
        });
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

fn write(repo: &Path, path: &str, text: &str) {
    let file = repo.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn commit(repo: &Path, message: &str) {
    git(repo, &["add", "--all"]);
    git(repo, &["commit", "--quiet", "-m", message]);
}

/// A repository whose `main` holds a few files, among them a nested one, one with a space and a
/// Japanese name, an executable script and a symbolic link.
fn repository(root: &Path) -> std::path::PathBuf {
    let repo = root.join("remote");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    write(&repo, "README.md", "# Handbook\n");
    write(&repo, "docs/guide/intro.md", "Welcome.\n");
    write(&repo, "docs/議事録 2024.txt", "会議のメモ\n");
    write(&repo, "scripts/build.sh", "#!/bin/sh\necho build\n");
    std::os::unix::fs::symlink("README.md", repo.join("link.md")).unwrap();
    git(
        &repo,
        &["update-index", "--add", "--chmod=+x", "scripts/build.sh"],
    );
    commit(&repo, "first");
    repo
}

fn url(repo: &Path, branch: Option<&str>) -> SourceUrl {
    let base = format!("git+file://{}", repo.display());
    let text = match branch {
        Some(branch) => format!("{base}#{branch}"),
        None => base,
    };
    text.parse().unwrap()
}

/// Delegates to the real connector, counting downloads.
struct Counting {
    inner: Box<dyn Connector>,
    fetches: AtomicUsize,
}

impl Counting {
    fn new(url: &SourceUrl, mirror: &Path) -> Counting {
        Counting {
            inner: connect(url, &ConnectorSettings::default(), mirror).unwrap(),
            fetches: AtomicUsize::new(0),
        }
    }
}

impl Connector for Counting {
    fn list(&self, cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        self.inner.list(cursor)
    }

    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError> {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        self.inner.fetch(object, into, limit)
    }
}

#[test]
fn mirrors_a_branch_then_downloads_only_what_changed() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let mirror = root.path().join("mirror");
    let url = url(&repo, Some("main"));

    let connector = Counting::new(&url, &mirror);
    let first = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!(
        (first.fetched, first.deleted, first.failures.len()),
        (4, 0, 0),
        "{first:?}"
    );
    assert_eq!(
        mirrored(&mirror, "README.md").as_deref(),
        Some("# Handbook\n")
    );
    assert_eq!(
        mirrored(&mirror, "docs/guide/intro.md").as_deref(),
        Some("Welcome.\n")
    );
    assert_eq!(
        mirrored(&mirror, "docs/議事録 2024.txt").as_deref(),
        Some("会議のメモ\n")
    );
    assert_eq!(
        mirrored(&mirror, "scripts/build.sh").as_deref(),
        Some("#!/bin/sh\necho build\n")
    );
    assert_eq!(
        mirrored(&mirror, "link.md"),
        None,
        "symbolic links are not mirrored"
    );

    write(&repo, "README.md", "# Handbook, second edition\n");
    std::fs::remove_file(repo.join("docs/guide/intro.md")).unwrap();
    write(&repo, "notes/new.md", "Fresh.\n");
    commit(&repo, "second");

    // A new connector, as a later run would make, reuses the clone kept in the mirror folder.
    let connector = Counting::new(&url, &mirror);
    let second = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!(
        (
            second.fetched,
            second.deleted,
            second.unchanged,
            second.failures.len()
        ),
        (2, 1, 2, 0),
        "{second:?}"
    );
    assert_eq!(connector.fetches.load(Ordering::Relaxed), 2);
    assert_eq!(
        mirrored(&mirror, "README.md").as_deref(),
        Some("# Handbook, second edition\n")
    );
    assert_eq!(mirrored(&mirror, "docs/guide/intro.md"), None);
    assert_eq!(
        mirrored(&mirror, "notes/new.md").as_deref(),
        Some("Fresh.\n")
    );
    assert_eq!(
        mirrored(&mirror, "docs/議事録 2024.txt").as_deref(),
        Some("会議のメモ\n")
    );

    let third = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!(
        (third.fetched, third.deleted, third.unchanged),
        (0, 0, 4),
        "{third:?}"
    );
    assert_eq!(connector.fetches.load(Ordering::Relaxed), 2);
}

#[test]
fn lists_blob_ids_and_sizes_and_fetches_within_the_limit() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let url = url(&repo, None);
    let connector = connect(
        &url,
        &ConnectorSettings::default(),
        &root.path().join("mirror"),
    )
    .unwrap();
    let Listed { listing, .. } = connector.list(None).unwrap();
    let shiori_connectors::Listing::Complete(objects) = listing else {
        panic!("a Git listing is complete");
    };
    assert_eq!(
        common::paths(&objects),
        [
            "README.md",
            "docs/guide/intro.md",
            "docs/議事録 2024.txt",
            "scripts/build.sh"
        ]
    );
    let readme = objects.iter().find(|o| o.path == "README.md").unwrap();
    assert_eq!(readme.marker, git(&repo, &["rev-parse", "main:README.md"]));
    assert_eq!(readme.size, Some(11));

    let mut content = Vec::new();
    assert_eq!(connector.fetch(readme, &mut content, 11).unwrap(), 11);
    assert_eq!(content, b"# Handbook\n");
    let error = connector.fetch(readme, &mut Vec::new(), 10).unwrap_err();
    assert!(matches!(error, ConnectorError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("README.md"), "{error}");
}

#[test]
fn follows_a_named_branch_and_a_force_push() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    git(&repo, &["switch", "--quiet", "-c", "docs"]);
    write(
        &repo,
        "docs/guide/intro.md",
        "Welcome to the docs branch.\n",
    );
    commit(&repo, "docs: intro");
    let older = git(&repo, &["rev-parse", "HEAD"]);
    write(&repo, "docs/guide/intro.md", "Welcome, rewritten.\n");
    write(&repo, "docs/later.md", "Added later.\n");
    commit(&repo, "docs: later");
    git(&repo, &["switch", "--quiet", "main"]);

    let mirror = root.path().join("mirror");
    let url = url(&repo, Some("docs"));
    let connector = Counting::new(&url, &mirror);
    sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!(
        mirrored(&mirror, "docs/guide/intro.md").as_deref(),
        Some("Welcome, rewritten.\n")
    );
    assert_eq!(
        mirrored(&mirror, "docs/later.md").as_deref(),
        Some("Added later.\n")
    );

    // The branch is rewound, as a force push does.
    git(&repo, &["branch", "--force", "docs", &older]);
    let report = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!((report.fetched, report.deleted), (1, 1), "{report:?}");
    assert_eq!(
        mirrored(&mirror, "docs/guide/intro.md").as_deref(),
        Some("Welcome to the docs branch.\n")
    );
    assert_eq!(mirrored(&mirror, "docs/later.md"), None);
}

#[test]
fn without_a_branch_the_remotes_default_branch_is_mirrored() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    git(&repo, &["switch", "--quiet", "-c", "trunk"]);
    write(&repo, "trunk.md", "On trunk.\n");
    commit(&repo, "trunk");

    let mirror = root.path().join("mirror");
    let url = url(&repo, None);
    let connector = Counting::new(&url, &mirror);
    sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!(
        mirrored(&mirror, "trunk.md").as_deref(),
        Some("On trunk.\n")
    );
}

#[test]
fn an_empty_remote_lists_nothing() {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("empty");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--bare"]);
    let url = url(&repo, None);
    let connector = connect(
        &url,
        &ConnectorSettings::default(),
        &root.path().join("mirror"),
    )
    .unwrap();
    let listed = connector.list(None).unwrap();
    assert_eq!(
        listed.listing,
        shiori_connectors::Listing::Complete(Vec::new())
    );
}

#[test]
fn a_missing_branch_or_remote_is_named() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    git(&repo, &["branch", "docs"]);

    let url = url(&repo, Some("wiki"));
    let connector = connect(&url, &ConnectorSettings::default(), &root.path().join("a")).unwrap();
    let error = connector.list(None).unwrap_err();
    assert!(
        matches!(error, ConnectorError::Protocol { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains(&url.to_string()), "{message}");
    assert!(
        message.contains("branch \"wiki\" not found; the remote has: docs, main"),
        "{message}"
    );

    let url: SourceUrl = "git+file:///nonexistent/repository".parse().unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), &root.path().join("b")).unwrap();
    let error = connector.list(None).unwrap_err();
    assert!(
        matches!(
            error,
            ConnectorError::Transport {
                transient: false,
                ..
            }
        ),
        "no retry makes a missing repository appear: {error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("git+file:///nonexistent/repository"),
        "{error}"
    );

    // Nobody listens there: a connection refused may pass, so it is worth a retry.
    let port = common::free_port();
    let url: SourceUrl = format!("git+http://127.0.0.1:{port}/remote")
        .parse()
        .unwrap();
    let connector = connect(&url, &ConnectorSettings::default(), &root.path().join("c")).unwrap();
    let error = connector.list(None).unwrap_err();
    assert!(
        matches!(
            error,
            ConnectorError::Transport {
                transient: true,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains(&url.to_string()), "{error}");
}

#[test]
fn mirrors_over_smart_http() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let port = common::free_port();
    let mut server = Command::new(common::python());
    server
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/git_http.py"))
        .arg(port.to_string())
        .arg(root.path());
    let server = common::Server::start(
        server,
        port,
        root.path().join("server.log"),
        "install Python 3 and Git (git http-backend)",
    );

    let mirror = root.path().join("mirror");
    let url: SourceUrl = format!("git+http://127.0.0.1:{port}/remote#main")
        .parse()
        .unwrap();
    let connector = Counting::new(&url, &mirror);
    let first = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!((first.fetched, first.failures.len()), (4, 0), "{first:?}");
    assert_eq!(
        mirrored(&mirror, "docs/議事録 2024.txt").as_deref(),
        Some("会議のメモ\n")
    );

    write(&repo, "README.md", "# Handbook over HTTP\n");
    commit(&repo, "second");
    let second = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap();
    assert_eq!((second.fetched, second.unchanged), (1, 3), "{second:?}");
    assert_eq!(
        mirrored(&mirror, "README.md").as_deref(),
        Some("# Handbook over HTTP\n")
    );
    assert!(
        server.count("POST /remote/git-upload-pack") >= 2,
        "{}",
        server.log()
    );
}

#[test]
fn a_git_server_that_redirects_is_refused() {
    let root = tempfile::tempdir().unwrap();
    repository(root.path());
    let git_port = common::free_port();
    let mut git_server = Command::new(common::python());
    git_server
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/git_http.py"))
        .arg(git_port.to_string())
        .arg(root.path());
    let git_server = common::Server::start(
        git_server,
        git_port,
        root.path().join("server.log"),
        "install Python 3 and Git (git http-backend)",
    );
    let port = common::free_port();
    let mut redirecting = Command::new(common::python());
    redirecting
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/redirecting.py"))
        .args([
            &port.to_string(),
            "302",
            &format!("http://127.0.0.1:{git_port}"),
        ]);
    let _redirecting = common::Server::start(
        redirecting,
        port,
        root.path().join("redirecting.log"),
        "install Python 3",
    );

    let url: SourceUrl = format!("git+http://127.0.0.1:{port}/remote#main")
        .parse()
        .unwrap();
    let mirror = root.path().join("mirror");
    let connector = Counting::new(&url, &mirror);
    let error = sync(&url, &connector, &mirror, &limits(), &no_readers).unwrap_err();
    assert!(error.to_string().contains(&url.to_string()), "{error}");
    assert_eq!(
        git_server.count("GET /remote"),
        0,
        "the redirect was followed: {}",
        git_server.log()
    );
}
