//! The extension-UI sub-protocol of RPC mode: a tool's `select` / `confirm` / `input` becomes an
//! `extension_ui_request` line on stdout, and the client's `extension_ui_response` line (matched by
//! `id`) answers it. `notify` is fire-and-forget.
//!
//! ```text
//! → {"type":"extension_ui_request","id":"…","method":"select","title":"Pick","options":["a","b"]}
//! ← {"type":"extension_ui_response","id":"…","value":"a"}
//! → {"type":"extension_ui_request","id":"…","method":"confirm","title":"Sure?","message":"Delete it"}
//! ← {"type":"extension_ui_response","id":"…","confirmed":true}
//! ← {"type":"extension_ui_response","id":"…","cancelled":true}
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::writer::Writer;
use pi_coding_agent::{NotifyKind, ToolUi};

/// Questions waiting for the client's answer, by request id; `None` once its input ended.
type Waiting = Option<HashMap<String, oneshot::Sender<Value>>>;

/// The RPC client as the tools' user interface.
#[derive(Clone)]
pub struct RpcUi {
    writer: Writer,
    /// The questions waiting for an answer; `None` once the client's input ended.
    pending: Arc<Mutex<Waiting>>,
}

impl RpcUi {
    /// Questions go out through `writer`.
    pub fn new(writer: Writer) -> Self {
        RpcUi {
            writer,
            pending: Arc::new(Mutex::new(Some(HashMap::new()))),
        }
    }

    /// The writer questions go out through.
    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    /// Hands a client's `extension_ui_response` to the question waiting for it; `false` when no
    /// question has that id.
    pub fn answer(&self, response: &Value) -> bool {
        let Some(id) = response.get("id").and_then(Value::as_str) else {
            return false;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .and_then(|pending| pending.remove(id));
        match waiting {
            Some(sender) => sender.send(response.clone()).is_ok(),
            None => false,
        }
    }

    /// The client's input ended: every question waiting for an answer, and every later one, gets
    /// none (so a tool blocked on a dialog finishes, and the session can end).
    pub fn close(&self) {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Sends a request and waits for its response (`None` when the client went away).
    async fn ask(&self, mut request: Value) -> Option<Value> {
        let id = uuid::Uuid::new_v4().to_string();
        request["type"] = "extension_ui_request".into();
        request["id"] = id.clone().into();
        let (sender, receiver) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()?
            .insert(id, sender);
        self.writer.line(&request);
        receiver.await.ok()
    }
}

/// An extension's error as pi 0.73.1 writes it in RPC mode:
/// `{"type":"extension_error","extensionPath","event","error"}`.
pub fn extension_error_line(error: &pi_coding_agent::extensions::ExtensionError) -> Value {
    json!({
        "type": "extension_error",
        "extensionPath": error.extension(),
        "event": error.event(),
        "error": error.message(),
    })
}

/// A duration as pi's `timeout` field: milliseconds.
fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The `value` of a dialog's response, unless it was cancelled or never came.
fn answered_value(response: Option<Value>) -> Option<String> {
    let response = response?;
    if cancelled(&response) {
        return None;
    }
    response.get("value").and_then(Value::as_str).map(str::to_owned)
}

/// A confirm's answer: `confirmed`, `false` when cancelled or never answered.
fn confirmed(response: Option<Value>) -> bool {
    response
        .filter(|response| !cancelled(response))
        .and_then(|response| response.get("confirmed").and_then(Value::as_bool))
        .unwrap_or(false)
}

fn cancelled(response: &Value) -> bool {
    response.get("cancelled").and_then(Value::as_bool) == Some(true)
}

#[async_trait]
impl ToolUi for RpcUi {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        answered_value(
            self.ask(json!({"method": "select", "title": title, "options": options}))
                .await,
        )
    }

    async fn confirm(&self, title: &str, message: &str) -> bool {
        confirmed(
            self.ask(json!({"method": "confirm", "title": title, "message": message}))
                .await,
        )
    }

    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        answered_value(
            self.ask(json!({"method": "input", "title": title, "placeholder": placeholder}))
                .await,
        )
    }

    fn notify(&self, message: &str, kind: NotifyKind) {
        self.tell(json!({"method": "notify", "message": message, "notifyType": kind.as_str()}));
    }

    async fn select_within(&self, title: &str, options: &[String], timeout: std::time::Duration) -> Option<String> {
        let request = json!({"method": "select", "title": title, "options": options, "timeout": millis(timeout)});
        answered_value(self.ask(request).await)
    }

    async fn confirm_within(&self, title: &str, message: &str, timeout: std::time::Duration) -> bool {
        let request = json!({"method": "confirm", "title": title, "message": message, "timeout": millis(timeout)});
        confirmed(self.ask(request).await)
    }

    async fn input_within(
        &self,
        title: &str,
        placeholder: Option<&str>,
        timeout: std::time::Duration,
    ) -> Option<String> {
        let request =
            json!({"method": "input", "title": title, "placeholder": placeholder, "timeout": millis(timeout)});
        answered_value(self.ask(request).await)
    }

    async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let mut request = json!({"method": "editor", "title": title});
        if let Some(prefill) = prefill {
            request["prefill"] = prefill.into();
        }
        answered_value(self.ask(request).await)
    }

    fn set_status(&self, key: &str, text: Option<&str>) {
        let mut request = json!({"method": "setStatus", "statusKey": key});
        if let Some(text) = text {
            request["statusText"] = text.into();
        }
        self.tell(request);
    }

    fn set_widget(&self, key: &str, lines: Option<&[String]>, placement: Option<&str>) {
        let mut request = json!({"method": "setWidget", "widgetKey": key});
        if let Some(lines) = lines {
            request["widgetLines"] = json!(lines);
        }
        if let Some(placement) = placement {
            request["widgetPlacement"] = placement.into();
        }
        self.tell(request);
    }

    fn set_title(&self, title: &str) {
        self.tell(json!({"method": "setTitle", "title": title}));
    }

    fn set_editor_text(&self, text: &str) {
        self.tell(json!({"method": "set_editor_text", "text": text}));
    }
}

impl RpcUi {
    /// A fire-and-forget `extension_ui_request` (`notify`, `setStatus`, …): `type` and `id`
    /// first, then `fields`, as pi writes them.
    fn tell(&self, fields: Value) {
        let mut request = json!({
            "type": "extension_ui_request",
            "id": uuid::Uuid::new_v4().to_string(),
        });
        if let (Value::Object(request), Value::Object(fields)) = (&mut request, fields) {
            request.extend(fields);
        }
        self.writer.line(&request);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Lines {
        fn take(&self) -> Vec<Value> {
            let bytes = std::mem::take(&mut *self.0.lock().unwrap());
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        }
    }

    async fn next_request(lines: &Lines) -> Value {
        loop {
            if let Some(request) = lines.take().pop() {
                return request;
            }
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn when_the_client_is_gone_waiting_and_later_questions_get_no_answer() {
        let lines = Lines::default();
        let ui = RpcUi::new(Writer::new(Arc::new(Mutex::new(lines.clone()))));
        let asking = ui.clone();
        let confirm = tokio::spawn(async move { asking.confirm("Sure?", "Delete it").await });
        next_request(&lines).await;
        ui.close();
        assert!(!confirm.await.unwrap(), "an unanswered confirm is a no");
        assert_eq!(ui.select("Pick", &["a".into()]).await, None);
        assert!(lines.take().is_empty(), "nothing is asked after the input ended");
    }

    #[tokio::test]
    async fn questions_go_out_and_answers_come_back_by_id() {
        let lines = Lines::default();
        let ui = RpcUi::new(Writer::new(Arc::new(Mutex::new(lines.clone()))));
        assert!(ui.has_ui());

        let asking = ui.clone();
        let select = tokio::spawn(async move { asking.select("Pick", &["a".into(), "b".into()]).await });
        let request = next_request(&lines).await;
        assert_eq!(request["type"], "extension_ui_request");
        assert_eq!(request["method"], "select");
        assert_eq!(request["options"], json!(["a", "b"]));
        assert!(!ui.answer(&json!({"id": "someone-else", "value": "x"})));
        assert!(ui.answer(&json!({"type": "extension_ui_response", "id": request["id"], "value": "b"})));
        assert_eq!(select.await.unwrap().as_deref(), Some("b"));

        let asking = ui.clone();
        let confirm = tokio::spawn(async move { asking.confirm("Sure?", "Delete it").await });
        let request = next_request(&lines).await;
        assert_eq!(request["message"], "Delete it");
        ui.answer(&json!({"id": request["id"], "confirmed": true}));
        assert!(confirm.await.unwrap());

        let asking = ui.clone();
        let input = tokio::spawn(async move { asking.input("Name", Some("anonymous")).await });
        let request = next_request(&lines).await;
        assert_eq!(request["placeholder"], "anonymous");
        ui.answer(&json!({"id": request["id"], "cancelled": true}));
        assert_eq!(input.await.unwrap(), None);

        ui.notify("Done", NotifyKind::Warning);
        let note = next_request(&lines).await;
        assert_eq!(note["method"], "notify");
        assert_eq!(note["notifyType"], "warning");
    }
}
