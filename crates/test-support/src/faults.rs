//! Servers that misbehave below HTTP, on 127.0.0.1: one that accepts and never answers
//! ([`StallingServer`]), one that writes raw bytes and hangs up ([`RawServer`], e.g. a response
//! cut in the middle of its body).
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! use pi_test_support::faults::StallingServer;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let server = StallingServer::start().await;
//! let mut socket = tokio::net::TcpStream::connect(server.url("").replace("http://", "")).await.unwrap();
//! socket.write_all(b"POST /v1 HTTP/1.1\r\ncontent-length: 0\r\n\r\n").await.unwrap();
//! let mut byte = [0u8; 1];
//! let read = tokio::time::timeout(std::time::Duration::from_millis(100), socket.read(&mut byte)).await;
//! assert!(read.is_err(), "no answer");
//! pi_test_support::wait::until("the request to be counted", || server.requests() == 1).await;
//! # });
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Binds 127.0.0.1 on a free port.
async fn listen() -> (TcpListener, std::net::SocketAddr) {
    #[allow(clippy::expect_used)]
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    #[allow(clippy::expect_used)]
    let addr = listener.local_addr().expect("local address of the listener");
    (listener, addr)
}

/// Reads a request's head (up to the blank line); `false` when the peer went away first.
async fn read_head(socket: &mut TcpStream) -> bool {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.extend_from_slice(&chunk[..n]),
        }
        if seen.windows(4).any(|window| window == b"\r\n\r\n") {
            return true;
        }
    }
}

/// Accepts connections, reads each request's head, counts it and never answers: the socket stays
/// open until the client gives up (or the test ends).
pub struct StallingServer {
    addr: std::net::SocketAddr,
    requests: Arc<AtomicUsize>,
}

impl StallingServer {
    /// Starts the server.
    ///
    /// # Panics
    ///
    /// When no port on 127.0.0.1 can be bound (a broken test machine).
    pub async fn start() -> Self {
        let (listener, addr) = listen().await;
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    if read_head(&mut socket).await {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    // Hold the connection until the client closes it.
                    let mut sink = [0u8; 1024];
                    while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
                });
            }
        });
        StallingServer { addr, requests }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// How many requests arrived (each was left unanswered).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Answers every request with the same raw bytes, then closes the connection: a response whose
/// body is cut, a malformed status line, anything below what [`crate::MockServer`] scripts.
pub struct RawServer {
    addr: std::net::SocketAddr,
}

impl RawServer {
    /// Starts the server answering with `bytes`.
    ///
    /// # Panics
    ///
    /// When no port on 127.0.0.1 can be bound (a broken test machine).
    pub async fn start(bytes: Vec<u8>) -> Self {
        let (listener, addr) = listen().await;
        let bytes = Arc::new(bytes);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let bytes = bytes.clone();
                tokio::spawn(async move {
                    if read_head(&mut socket).await {
                        let _ = socket.write_all(&bytes).await;
                        let _ = socket.flush().await;
                    }
                    let _ = socket.shutdown().await;
                });
            }
        });
        RawServer { addr }
    }

    /// A `200 text/event-stream` response, chunked, that sends `events` as one chunk and then
    /// hangs up without the final chunk: a stream cut by the network.
    pub async fn cut_stream(events: &str) -> Self {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let bytes = format!("{head}{:x}\r\n{events}\r\n", events.len());
        RawServer::start(bytes.into_bytes()).await
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}
