//! `benchgate serve` as a child process on a loopback port, spoken to over raw HTTP/1.1 (so a
//! request can also be cut off half-way).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::fake_github::{self, FakeGitHub};

/// The webhook secret the server is started with.
pub const SECRET: &str = "It's a Secret to Everybody";

pub struct Server {
    pub child: Child,
    pub address: String,
    pub log: Arc<std::sync::Mutex<String>>,
}

impl Server {
    /// Waits until the server's log holds `needle` (the log is read by a thread, after the
    /// server wrote it); panics with the log after 30 seconds.
    pub fn wait_for_log(&self, needle: &str) {
        let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::wait_until(&format!("{needle:?} in the server's log"), || {
                self.log.lock().unwrap().contains(needle)
            })
        }));
        if waited.is_err() {
            panic!(
                "{needle:?} never reached the server's log:\n{}",
                self.log.lock().unwrap()
            );
        }
    }

    /// `db`: a SQLite file or a `postgres://` URL.
    pub fn start(
        db: impl AsRef<std::ffi::OsStr>,
        extra: &[&str],
        github: Option<&FakeGitHub>,
    ) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_benchgate"));
        command
            .args([
                "serve".as_ref(),
                "--db".as_ref(),
                db.as_ref(),
                "--bind".as_ref(),
                "127.0.0.1:0".as_ref(),
            ])
            .args(extra)
            .env("BENCHGATE_WEBHOOK_SECRET", SECRET)
            .env_remove("GITHUB_TOKEN")
            .stderr(Stdio::piped());
        if let Some(github) = github {
            command
                .env("GITHUB_TOKEN", fake_github::TOKEN)
                .args(["--github-api-url", &github.api_url]);
        }
        let mut child = command.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        // The log up to and including the line that says where the server listens.
        let mut line = String::new();
        let address = loop {
            let before = line.len();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server stopped before it said where it listens:\n{line}");
            }
            let last = &line[before..];
            if let Some(rest) = last.split("http://").nth(1) {
                break rest
                    .split(|c: char| c.is_whitespace() || c == '"')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
            }
        };
        let log = Arc::new(std::sync::Mutex::new(line));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        Self {
            child,
            address,
            log,
        }
    }

    pub fn kill(&mut self) {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
    }

    pub fn terminate(&mut self) -> std::process::ExitStatus {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }

    /// One request; returns (status, JSON body).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, Value) {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.address,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let text = String::from_utf8_lossy(&response);
        let status: u16 = text[9..12].parse().unwrap();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    /// A GET whose body is returned as text.
    pub fn get_text(&self, path: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        let head = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let text = String::from_utf8_lossy(&response).into_owned();
        let status: u16 = text[9..12].parse().unwrap();
        let body = text
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_owned();
        (status, body)
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.request("GET", path, &[], b"")
    }

    pub fn upload(&self, token: &str, document: &Value) -> (u16, Value) {
        let bearer = format!("Bearer {token}");
        self.request(
            "POST",
            "/api/v1/runs",
            &[
                ("authorization", &bearer),
                ("content-type", "application/json"),
            ],
            document.to_string().as_bytes(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
