//! Real servers the connector tests start: a child process on a free loopback port, its output
//! kept in a log file (requests are counted from it), stopped when the guard drops. A server
//! that cannot start fails the test, naming what to install.

#![allow(dead_code)]

use shiori_connectors::{RemoteObject, SyncLimits};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Server {
    /// Starts `command` (which must listen on `port`) and waits until the port accepts.
    pub fn start(mut command: Command, port: u16, log: PathBuf, install: &str) -> Server {
        let out = std::fs::File::create(&log).unwrap();
        let err = out.try_clone().unwrap();
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {command:?} ({error}); {install}"));
        let mut server = Server { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "{command:?} exited with {status}: {}; {install}",
                    std::fs::read_to_string(&server.log).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "{command:?} did not listen on {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Log lines with `needle` (a request line the server printed).
    pub fn count(&self, needle: &str) -> usize {
        self.log().lines().filter(|line| line.contains(needle)).count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The Python interpreter the test dependencies were installed into.
pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

pub fn limits() -> SyncLimits {
    SyncLimits {
        max_object_bytes: 10 * 1024 * 1024,
        downloads: 4,
    }
}

/// Records nothing: these tests look at files and downloads, not readers.
pub fn no_readers(_: &Path, _: Option<&[String]>) -> std::io::Result<()> {
    Ok(())
}

/// The mirrored file's text, if it is there.
pub fn mirrored(mirror: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(shiori_connectors::mirror_files(mirror).join(path)).ok()
}

pub fn paths(objects: &[RemoteObject]) -> Vec<String> {
    let mut paths: Vec<String> = objects.iter().map(|o| o.path.clone()).collect();
    paths.sort();
    paths
}
