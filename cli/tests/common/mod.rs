//! Helpers shared by the CLI test binaries.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Serves `body` with status 200 at `path` on 127.0.0.1, for at most `requests`
/// connections or 20 s, and returns the URL.
pub fn serve_body(path: &str, body: &'static str, requests: usize) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}{path}", listener.local_addr().expect("addr"));
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut served = 0;
        while served < requests && Instant::now() < deadline {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            served += 1;
            stream.set_nonblocking(false).ok();
            let _ = stream.read(&mut [0u8; 4096]);
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    url
}
