//! TLS in front of a test server: PgBouncer (Debian's `pgbouncer`, built with OpenSSL) on a
//! free loopback port, with a certificate for `localhost` and `127.0.0.1` signed by a
//! certificate authority made for the test, passing every session on to the server.

use super::{as_user, checked, chown, failure, free_port, TestServer};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// A running PgBouncer; dropping it stops it.
pub struct TlsFront {
    user: Option<&'static str>,
    dir: TempDir,
    port: u16,
}

impl TlsFront {
    /// Starts PgBouncer in front of `server`, TLS required of every client.
    pub fn start(server: &TestServer) -> io::Result<TlsFront> {
        let dir = tempfile::Builder::new().prefix("shiori-tls-").tempdir()?;
        certificate_authority(dir.path(), "ca")?;
        certificate_authority(dir.path(), "other-ca")?;
        server_certificate(dir.path())?;
        std::fs::write(dir.path().join("users.txt"), "\"postgres\" \"\"\n")?;
        let mut front = TlsFront {
            user: server.user,
            dir,
            port: 0,
        };
        chown_all(front.user, front.dir.path())?;
        let mut last_error = failure("PgBouncer never started");
        for _ in 0..5 {
            front.port = free_port()?;
            match front.launch(server.port) {
                Ok(()) => return Ok(front),
                Err(error) => last_error = error,
            }
        }
        Err(last_error)
    }

    fn launch(&self, server_port: u16) -> io::Result<()> {
        let dir = self.dir.path();
        let config = format!(
            "[databases]\n* = host=127.0.0.1 port={server_port}\n\
             [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
             unix_socket_dir =\nauth_type = trust\nauth_file = {dir}/users.txt\n\
             pool_mode = session\nignore_startup_parameters = extra_float_digits,options\n\
             client_tls_sslmode = require\nclient_tls_cert_file = {dir}/server.pem\n\
             client_tls_key_file = {dir}/server.key\n\
             logfile = {dir}/pgbouncer.log\npidfile = {dir}/pgbouncer.pid\n",
            port = self.port,
            dir = dir.display(),
        );
        std::fs::write(dir.join("pgbouncer.ini"), config)?;
        chown_all(self.user, dir)?;
        checked(
            as_user(self.user, Path::new("pgbouncer"))
                .arg("-d")
                .arg(dir.join("pgbouncer.ini"))
                .output()
                .map_err(|e| {
                    failure(format!(
                        "the TLS tests need Debian's pgbouncer (`apt-get install pgbouncer`, as \
                         scripts/test-deps.sh does): {e}"
                    ))
                })?,
            "pgbouncer",
        )?;
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(dir.join("pgbouncer.log")).unwrap_or_default();
        Err(failure(format!("PgBouncer did not listen: {log}")))
    }

    /// `database` through the front, as `postgres` (URL without `sslmode`: the client sets it).
    pub fn url(&self, host: &str, database: &str) -> String {
        format!("postgres://postgres@{host}:{}/{database}", self.port)
    }

    /// The PEM file of the authority that signed the front's certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The PEM file of an authority that signed nothing the front shows.
    pub fn other_ca_file(&self) -> PathBuf {
        self.dir.path().join("other-ca.pem")
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        // Best effort: a front that never started has no pid file.
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("pgbouncer.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).output();
        }
    }
}

fn openssl(dir: &Path, args: &[&str]) -> io::Result<()> {
    let output = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .map_err(|e| failure(format!("the TLS tests need the openssl command: {e}")))?;
    checked(output, &format!("openssl {}", args.join(" "))).map(|_| ())
}

fn certificate_authority(dir: &Path, name: &str) -> io::Result<()> {
    let key = format!("{name}.key");
    let pem = format!("{name}.pem");
    let subject = format!("/CN=Shiori test {name}");
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &pem,
            "-days",
            "2",
            "-subj",
            &subject,
        ],
    )
}

fn server_certificate(dir: &Path) -> io::Result<()> {
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName = DNS:localhost, IP:127.0.0.1\n",
    )?;
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    )?;
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    )
}

/// Gives the folder and its files to the user PgBouncer runs as (it refuses root).
fn chown_all(user: Option<&str>, dir: &Path) -> io::Result<()> {
    chown(user, dir)?;
    for entry in std::fs::read_dir(dir)? {
        chown(user, &entry?.path())?;
    }
    Ok(())
}
