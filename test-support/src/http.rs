//! A scripted HTTP/1.1 server on 127.0.0.1, for tests of remote rules and configs.
//!
//! Hand-written rather than a server crate: tests need what a real server never does on
//! purpose (a reply that stalls between body pieces, headers sent too late, a script that
//! changes its answer per request), and it must stop by itself. It stops after
//! [`Server::MAX_CONNECTIONS`] connections (or the limit given to
//! [`Server::start_limited`]), [`Server::LIFETIME`], or when dropped.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// One scripted response.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// Headers sent besides `Content-Length` and `Connection: close`.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Sleep before sending anything.
    pub delay: Duration,
    /// Send the body in this many pieces with `gap` between them.
    pub pieces: usize,
    /// The pause between two pieces of the body.
    pub gap: Duration,
}

impl Reply {
    /// 200 with `body`.
    pub fn ok(body: impl Into<Vec<u8>>) -> Reply {
        Reply { status: 200, body: body.into(), ..Reply::default() }
    }

    /// `code` with a short body naming it.
    pub fn status(code: u16) -> Reply {
        Reply { status: code, body: format!("status {code}").into_bytes(), ..Reply::default() }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The request's path (and query).
    pub path: String,
    /// The request line and headers, lower-cased.
    pub head: String,
}

type Routes = HashMap<String, Vec<Reply>>;

/// The server; each path has a script of replies (the last one repeats), other paths get
/// 404. A reply with an `etag` header answers 304 to a request whose `if-none-match` names
/// it.
pub struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// The connections a server accepts before it stops, unless a limit is given.
    pub const MAX_CONNECTIONS: usize = 500;
    /// How long a server accepts connections before it stops on its own.
    pub const LIFETIME: Duration = Duration::from_secs(30);

    /// A server answering each path with its script of replies (the last one repeats),
    /// for at most [`Self::MAX_CONNECTIONS`] connections.
    pub fn start<P: Into<String>>(routes: impl IntoIterator<Item = (P, Vec<Reply>)>) -> Server {
        Self::start_limited(routes, Self::MAX_CONNECTIONS)
    }

    /// A server that stops accepting after `connections` connections (so a later run
    /// finds it gone and must use its cache).
    pub fn start_limited<P: Into<String>>(
        routes: impl IntoIterator<Item = (P, Vec<Reply>)>,
        connections: usize,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let routes: Arc<Routes> = Arc::new(routes.into_iter().map(|(p, r)| (p.into(), r)).collect());
        let requests: Arc<Mutex<Vec<Request>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopped) = (Arc::clone(&requests), Arc::clone(&stop));
        thread::spawn(move || {
            let deadline = Instant::now() + Self::LIFETIME;
            let mut served = 0;
            while Instant::now() < deadline && served < connections && !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        served += 1;
                        let (routes, log) = (Arc::clone(&routes), Arc::clone(&log));
                        thread::spawn(move || serve(stream, &routes, &log));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Server { port, requests, stop }
    }

    /// One path, one body, always 200, for at most `connections` connections.
    pub fn body(path: &str, body: impl Into<Vec<u8>>, connections: usize) -> Server {
        Server::start_limited([(path, vec![Reply::ok(body)])], connections)
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// How many requests asked for `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.requests().iter().filter(|r| r.path == path).count()
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(mut stream: TcpStream, routes: &Routes, log: &Mutex<Vec<Request>>) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    let mut interrupted = 0;
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") && raw.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            // A timed socket read is not restarted after a signal (signal(7)).
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted && interrupted < 100 => interrupted += 1,
            Ok(0) | Err(_) => return,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let path = String::from_utf8_lossy(&raw).split_whitespace().nth(1).unwrap_or("/").to_owned();
    let count = {
        let mut log = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        log.push(Request { path: path.clone(), head: head.clone() });
        log.iter().filter(|r| r.path == path).count()
    };
    let reply = match routes.get(&path) {
        Some(script) if !script.is_empty() => script[(count - 1).min(script.len() - 1)].clone(),
        _ => Reply::status(404),
    };
    let etag = reply.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("etag")).map(|(_, v)| v);
    let reply = match etag {
        Some(tag) if head.contains(&format!("if-none-match: {}", tag.to_ascii_lowercase())) => {
            Reply { status: 304, body: Vec::new(), ..reply }
        }
        _ => reply,
    };
    thread::sleep(reply.delay);
    let mut out = format!(
        "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        let _ = write!(out, "{name}: {value}\r\n");
    }
    out.push_str("\r\n");
    if stream.write_all(out.as_bytes()).is_err() {
        return;
    }
    let pieces = reply.pieces.max(1);
    let size = reply.body.len().div_ceil(pieces).max(1);
    for chunk in reply.body.chunks(size) {
        if stream.write_all(chunk).and_then(|()| stream.flush()).is_err() {
            return;
        }
        thread::sleep(reply.gap);
    }
}
