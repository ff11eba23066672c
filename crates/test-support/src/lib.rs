//! Test support for the pi crates (dev-only, like codex's `core_test_support`): mock model
//! providers, a sandbox for the `pi` binary, scripted-model helpers and fixture builders, so that
//! each crate's tests stop carrying their own copies.
//!
//! It is a dev-dependency only (`cargo xtask layers` rejects a normal dependency on it), and
//! depends on no crate of ours but `pi-agent-core`: helpers that need pi-ai, pi-coding-agent or
//! pi-cli types stay in those crates' `tests/`.
//!
//! What is here, and when to use which:
//!
//! * Talking HTTP to a provider (pi-ai's API tests, the `pi` binary against a model):
//!   [`MockServer`] is a scripted HTTP/1.1 server on 127.0.0.1. Each request takes the next
//!   [`Reply`] (status, headers, body chunks with optional pauses) and is [`Recorded`], so a test
//!   can check or snapshot ([`pretty`]) the request body that was sent. The server-sent events of
//!   each wire API come from its module:
//!   * [`openai`]: an OpenAI-compatible `/chat/completions` server, with the mock model and the
//!     `models.json` that make it pi's default model — what most tests of the whole program use;
//!   * [`anthropic`]: the Anthropic Messages API (`message_start`, content blocks, …);
//!   * [`openai_responses`]: the OpenAI Responses API (`response.created`, output items, …);
//!   * [`google`]: the Gemini API, also served by Vertex AI (`GenerateContentResponse` chunks).
//! * Running pi 0.73.1 itself (its RpcClient, CLI or example extensions): [`pi073::package`]
//!   finds its npm package and [`pi073::or_skip`] skips the test without it, unless
//!   `PI_REQUIRE_PI073` is set.
//! * Comparing with pi 0.73.1: [`pi_recorded`] has request bodies pi 0.73.1 sent (recorded once,
//!   `data/pi-0.73.1/README.md` says how) and their system prompts.
//! * Recorded conformance: [`conformance`] runs a scenario (data: scripted replies, files, runs,
//!   RPC steps) through a program — pi 0.73.1 under Node for `cargo xtask record-pi`, our binary
//!   in pi-cli's `conformance` tests — normalizes what it did and compares it with the goldens.
//! * Faults below HTTP: [`faults`] has a server that accepts and never answers and one that
//!   writes raw bytes and hangs up (a stream cut mid-body).
//! * Checking a provider's stream (pi-ai): [`stream`] has the final message, the event kinds and
//!   the error of a `Vec<AssistantMessageEvent>`, the API key the tests send and the check that it
//!   never leaks; [`messages`] builds history (user, assistant, tool result) to send; [`tools`]
//!   has small tools (`get_weather`, `read_note`, a tool that is never run) and the text of a tool
//!   result.
//! * Running the `pi` binary (pi-cli's tests and benches): a [`sandbox::Sandbox`] is a temporary
//!   `HOME` with an agent directory and a project, whose commands run with a clean environment;
//!   the binary is a parameter (`env!("CARGO_BIN_EXE_pi")`).
//! * Tests of the sandbox of bash and tool processes: [`landlock::available`] fails them on a
//!   kernel without Landlock unless `PI_ALLOW_NO_LANDLOCK=1`.
//! * Session files: [`session_files`] writes pi's JSONL session files by hand and reads them back.
//! * No HTTP at all (sessions, the interactive mode): the in-process faux model of
//!   `pi_agent_core::faux`, with [`scripted`]'s short forms for its responses and for the tool
//!   choices it was forced to.
//! * Fuzz targets (`fuzz_*` proptest tests on the stable toolchain): [`fuzz::config`] is their
//!   budget (`PI_FUZZ_CASES`), and [`fuzz`] has the strategies they share: damaged texts, chunked
//!   bodies, awkward JSON.
//! * Waiting in async tests: [`wait::until`] polls a condition, [`wait::within`] bounds a future;
//!   both fail the test with a message instead of hanging it.
//!
//! A provider test in miniature: script the server, point a model at it, send a request (here by
//! hand, where a real test runs a provider or the `pi` binary), check what was sent.
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! use pi_test_support::{MockServer, Reply, openai, pretty};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let server = MockServer::start(vec![
//!     Reply::json(429, r#"{"error": {"message": "slow down"}}"#).header("retry-after", "0"),
//!     openai::text("hello"),
//! ])
//! .await;
//! let model = openai::model(&server.url("/v1"));
//! assert_eq!(model.api, "openai-completions");
//!
//! let body = format!(r#"{{"model": "{}", "stream": true}}"#, model.id);
//! let address = server.base_url().replace("http://", "");
//! let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
//! let request = format!("POST /v1/chat/completions HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}", body.len());
//! socket.write_all(request.as_bytes()).await.unwrap();
//! let mut response = String::new();
//! socket.read_to_string(&mut response).await.unwrap();
//! assert!(response.starts_with("HTTP/1.1 429"), "the first scripted reply");
//!
//! let recorded = &server.requests()[0];
//! assert_eq!(recorded.line, "POST /v1/chat/completions");
//! assert_eq!(recorded.json()["model"], openai::MODEL_ID);
//! assert_eq!(pretty(&recorded.json()), "{\n  \"model\": \"mock-model\",\n  \"stream\": true\n}");
//! # });
//! ```

pub mod anthropic;
pub mod bedrock;
pub mod conformance;
pub mod extensions;
pub mod faults;
pub mod fuzz;
pub mod google;
pub mod json_lines;
pub mod landlock;
pub mod messages;
pub mod mistral;
pub mod openai;
pub mod openai_responses;
pub mod pi073;
pub mod pi_recorded;
pub mod sandbox;
pub mod scripted;
pub mod session_files;
pub mod stream;
pub mod tools;
pub mod wait;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// `value` as indented JSON, for snapshots of request bodies.
pub fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body chunks, each sent after its pause.
    pub chunks: Vec<(Duration, Vec<u8>)>,
}

impl Reply {
    /// A `text/event-stream` reply sending `chunks` back to back.
    pub fn sse(status: u16, chunks: &[&str]) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks: chunks.iter().map(|c| (Duration::ZERO, c.as_bytes().to_vec())).collect(),
        }
    }

    /// A 200 `text/event-stream` reply sending these events (already framed, e.g. by
    /// [`anthropic::event`] or [`openai_responses::event`]) back to back.
    pub fn events<S: AsRef<str>>(events: &[S]) -> Self {
        let chunks: Vec<&str> = events.iter().map(AsRef::as_ref).collect();
        Reply::sse(200, &chunks)
    }

    /// A JSON reply (for errors).
    pub fn json(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![(Duration::ZERO, body.as_bytes().to_vec())],
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Pauses before every chunk after the first.
    #[must_use]
    pub fn paced(mut self, pause: Duration) -> Self {
        for (i, chunk) in self.chunks.iter_mut().enumerate() {
            if i > 0 {
                chunk.0 = pause;
            }
        }
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Method and path, e.g. `POST /v1/messages`.
    pub line: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Recorded {
    /// The body parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The running server.
pub struct MockServer {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl MockServer {
    /// Starts a server answering requests with `replies` in order (a 500 once they run out).
    ///
    /// # Panics
    ///
    /// When no port on 127.0.0.1 can be bound (a broken test machine).
    pub async fn start(replies: Vec<Reply>) -> Self {
        let replies = Mutex::new(replies.into_iter().collect::<std::collections::VecDeque<_>>());
        Self::serve(true, move |_| {
            replies
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front()
                .unwrap_or_else(|| Reply::json(500, r#"{"error":"no scripted reply"}"#))
        })
        .await
    }

    /// Starts a server answering every request with `respond(request)`, computed from it (a
    /// benchmark's model whose usage follows the context it is sent). Requests are not kept:
    /// [`MockServer::requests`] stays empty.
    ///
    /// # Panics
    ///
    /// When no port on 127.0.0.1 can be bound (a broken test machine).
    pub async fn start_with(respond: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        Self::serve(false, respond).await
    }

    async fn serve(keep: bool, respond: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        #[allow(clippy::expect_used)]
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        #[allow(clippy::expect_used)]
        let addr = listener.local_addr().expect("local address of the listener");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let respond = Arc::new(respond);
        let recorded = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                // The head and each chunk are separate writes: without this, Nagle's algorithm
                // holds a write back until the client's delayed ACK (40 ms on Linux), which a
                // benchmark would measure instead of the program.
                let _ = socket.set_nodelay(true);
                let recorded = recorded.clone();
                let respond = respond.clone();
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut socket).await else {
                        return;
                    };
                    let reply = respond(&request);
                    if keep {
                        recorded.lock().unwrap_or_else(|p| p.into_inner()).push(request);
                    }
                    let _ = write_reply(&mut socket, reply).await;
                });
            }
        });
        MockServer { addr, requests }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The base URL without a path.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buffer[header_end..]).into_owned();
    let line = line.rsplit_once(' ').map(|(l, _)| l.to_owned()).unwrap_or(line);
    Some(Recorded { line, headers, body })
}

async fn write_reply(socket: &mut tokio::net::TcpStream, reply: Reply) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\ntransfer-encoding: chunked\r\nconnection: close\r\n",
        reply.status
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    for (pause, bytes) in reply.chunks {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        socket.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await?;
        socket.write_all(&bytes).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await?;
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.flush().await
}
