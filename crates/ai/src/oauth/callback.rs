//! The loopback server the browser is sent back to: `GET <path>?code=…&state=…` on
//! 127.0.0.1 (or `PI_OAUTH_CALLBACK_HOST`), answered with pi's success or error page.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The code (and state) the browser brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Callback {
    pub(crate) code: String,
    pub(crate) state: Option<String>,
}

/// What the server checks, and the texts it answers with.
#[derive(Debug, Clone)]
pub(crate) struct CallbackSpec {
    /// The path it answers on (`/callback`, `/auth/callback`).
    pub(crate) path: &'static str,
    /// The state the request must carry.
    pub(crate) state: String,
    /// Whether a missing `state` is refused (Anthropic) rather than a mismatch (Codex).
    pub(crate) state_first: bool,
    /// The success text (`Anthropic authentication completed. You can close this window.`).
    pub(crate) success: &'static str,
    /// The provider, for `<name> authentication did not complete.`.
    pub(crate) provider: &'static str,
}

/// A running callback server; dropping it stops it.
pub(crate) struct CallbackServer {
    port: u16,
    code: Option<oneshot::Receiver<Callback>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CallbackServer {
    /// Listens on `host:port` (port 0: any free one).
    pub(crate) async fn start(host: &str, port: u16, spec: CallbackSpec) -> std::io::Result<CallbackServer> {
        let listener = TcpListener::bind((host, port)).await?;
        let port = listener.local_addr()?.port();
        let (tx, rx) = oneshot::channel();
        let tx = Arc::new(Mutex::new(Some(tx)));
        let spec = Arc::new(spec);
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let (tx, spec) = (tx.clone(), spec.clone());
                tokio::spawn(async move {
                    let Some(target) = read_target(&mut socket).await else {
                        return;
                    };
                    let (status, page, callback) = answer(&spec, &target);
                    let reply = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                        page.len()
                    );
                    let _ = socket.write_all(reply.as_bytes()).await;
                    let _ = socket.shutdown().await;
                    if let Some(callback) = callback
                        && let Some(tx) = tx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
                    {
                        let _ = tx.send(callback);
                    }
                });
            }
        });
        Ok(CallbackServer {
            port,
            code: Some(rx),
            task,
        })
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The first good callback (pending forever once taken).
    pub(crate) async fn code(&mut self) -> Option<Callback> {
        match self.code.take() {
            Some(rx) => rx.await.ok(),
            None => std::future::pending().await,
        }
    }
}

/// The request target (`/callback?code=…`) of the request on `socket`.
async fn read_target(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || buffer.len() > 64 * 1024 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buffer);
    let line = head.lines().next()?;
    line.split(' ').nth(1).map(str::to_owned)
}

/// Status, page and (for a good request) the callback, as pi's servers answer.
fn answer(spec: &CallbackSpec, target: &str) -> (&'static str, String, Option<Callback>) {
    let Ok(url) = reqwest::Url::parse(&format!("http://localhost{target}")) else {
        return (
            "500 Internal Server Error",
            error_page("Internal error while processing OAuth callback.", None),
            None,
        );
    };
    if url.path() != spec.path {
        return ("404 Not Found", error_page("Callback route not found.", None), None);
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    };
    let (code, state) = (param("code"), param("state"));
    if spec.state_first {
        if let Some(error) = param("error") {
            let message = format!("{} authentication did not complete.", spec.provider);
            return (
                "400 Bad Request",
                error_page(&message, Some(&format!("Error: {error}"))),
                None,
            );
        }
        let (Some(code), Some(state)) = (code.filter(|c| !c.is_empty()), state.filter(|s| !s.is_empty())) else {
            return (
                "400 Bad Request",
                error_page("Missing code or state parameter.", None),
                None,
            );
        };
        if state != spec.state {
            return ("400 Bad Request", error_page("State mismatch.", None), None);
        }
        return (
            "200 OK",
            success_page(spec.success),
            Some(Callback {
                code,
                state: Some(state),
            }),
        );
    }
    if state.as_deref() != Some(spec.state.as_str()) {
        return ("400 Bad Request", error_page("State mismatch.", None), None);
    }
    let Some(code) = code.filter(|c| !c.is_empty()) else {
        return ("400 Bad Request", error_page("Missing authorization code.", None), None);
    };
    ("200 OK", success_page(spec.success), Some(Callback { code, state }))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn page(title: &str, message: &str, details: Option<&str>) -> String {
    let details = details
        .map(|d| format!("<div class=\"details\">{}</div>", escape(d)))
        .unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\" />\n  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n  <title>{title}</title>\n  <style>body {{ margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center; background: #09090b; color: #fafafa; font-family: ui-sans-serif, system-ui, sans-serif; }} p, .details {{ color: #a1a1aa; }} .details {{ font-family: ui-monospace, monospace; white-space: pre-wrap; }}</style>\n</head>\n<body>\n  <main>\n    <h1>{title}</h1>\n    <p>{}</p>\n    {details}\n  </main>\n</body>\n</html>",
        escape(message)
    )
}

/// pi's success page.
fn success_page(message: &str) -> String {
    page("Authentication successful", message, None)
}

/// pi's error page.
fn error_page(message: &str, details: Option<&str>) -> String {
    page("Authentication failed", message, details)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(state_first: bool) -> CallbackSpec {
        CallbackSpec {
            path: "/callback",
            state: "s1".into(),
            state_first,
            success: "Done.",
            provider: "Anthropic",
        }
    }

    #[test]
    fn answers_as_pi_does() {
        let (status, _, code) = answer(&spec(true), "/callback?code=c&state=s1");
        assert_eq!((status, code.map(|c| c.code)), ("200 OK", Some("c".to_owned())));
        assert_eq!(answer(&spec(true), "/other?code=c&state=s1").0, "404 Not Found");
        let (status, page, _) = answer(&spec(true), "/callback?code=c&state=s2");
        assert_eq!(status, "400 Bad Request");
        assert!(page.contains("State mismatch."));
        let (_, page, _) = answer(&spec(true), "/callback?error=access_denied");
        assert!(page.contains("Anthropic authentication did not complete.") && page.contains("Error: access_denied"));
        assert!(
            answer(&spec(true), "/callback?code=c")
                .1
                .contains("Missing code or state parameter.")
        );
        assert!(
            answer(&spec(false), "/callback?state=s1")
                .1
                .contains("Missing authorization code.")
        );
        assert!(answer(&spec(false), "/callback?code=c").1.contains("State mismatch."));
    }
}
