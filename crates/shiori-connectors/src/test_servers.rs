//! Real servers for tests (the `test-servers` feature): a child process on a free loopback port,
//! its output kept in a log file (requests are counted from it), stopped when the guard drops,
//! and moto's S3 server with boto3 to write objects. A server that cannot start fails the test,
//! naming what to install.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Server {
    /// Starts `command` (which must listen on `port`) and waits until the port accepts.
    pub fn start(mut command: Command, port: u16, log: PathBuf, install: &str) -> Server {
        let out = std::fs::File::create(&log).expect("a log file in the temporary folder");
        let err = out.try_clone().expect("a second handle on the log file");
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
            assert!(
                Instant::now() < deadline,
                "{command:?} did not listen on {port}"
            );
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
        self.log()
            .lines()
            .filter(|line| line.contains(needle))
            .count()
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
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The Python interpreter the test dependencies were installed into.
pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

const MOTO_INSTALL: &str =
    "install it with `pip install 'moto[server]'` (scripts/test-deps.sh does)";

/// moto's S3 server, one per test process: the S3 connector reads its endpoint and keys from
/// the process environment, which is set once, before any caller reads it.
pub struct Moto {
    pub server: Server,
}

impl Moto {
    pub fn shared() -> &'static Moto {
        static MOTO: OnceLock<Moto> = OnceLock::new();
        MOTO.get_or_init(|| {
            let moto = Moto::start();
            std::env::set_var("AWS_ENDPOINT_URL", moto.endpoint());
            std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
            std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
            std::env::set_var("AWS_REGION", "us-east-1");
            moto
        })
    }

    /// A server of the caller's own, which it may stop (by dropping it); the environment is
    /// left alone, so a caller passes [`Moto::endpoint`] to the processes it starts.
    pub fn start() -> Moto {
        let port = free_port();
        let log = std::env::temp_dir().join(format!("shiori-moto-{port}.log"));
        let mut command = Command::new(python());
        command.args([
            "-m",
            "moto.server",
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ]);
        Moto {
            server: Server::start(command, port, log, MOTO_INSTALL),
        }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.server.port)
    }

    /// Runs boto3 against the server: `script` sees `s3` (a client) and `sys.argv[1:]`.
    pub fn boto(&self, script: &str, args: &[&str]) {
        let program = format!(
            "import boto3, sys\ns3 = boto3.client('s3', endpoint_url='http://127.0.0.1:{}', \
             aws_access_key_id='testing', aws_secret_access_key='testing', \
             region_name='us-east-1')\n{script}",
            self.server.port
        );
        let output = Command::new(python())
            .arg("-c")
            .arg(program)
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("cannot run python3: {error}"));
        assert!(
            output.status.success(),
            "boto3: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    pub fn bucket(&self, name: &str) {
        self.boto("s3.create_bucket(Bucket=sys.argv[1])", &[name]);
    }

    pub fn put(&self, bucket: &str, key: &str, body: &str) {
        self.boto(
            "s3.put_object(Bucket=sys.argv[1], Key=sys.argv[2], Body=sys.argv[3].encode())",
            &[bucket, key, body],
        );
    }

    pub fn delete(&self, bucket: &str, key: &str) {
        self.boto(
            "s3.delete_object(Bucket=sys.argv[1], Key=sys.argv[2])",
            &[bucket, key],
        );
    }

    /// GETs of objects in `bucket` the server has logged (a listing is a GET of the bucket
    /// itself, with a query).
    pub fn object_gets(&self, bucket: &str) -> usize {
        let object = format!("\"GET /{bucket}/");
        let listing = format!("\"GET /{bucket}/?");
        self.server
            .log()
            .lines()
            .filter(|line| line.contains(&object) && !line.contains(&listing))
            .count()
    }
}
