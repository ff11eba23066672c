//! The line-mode interactive session: read a message per line, stream the answer as a plain
//! transcript. It is what `pi` runs on a dumb terminal (`TERM=dumb`) instead of the
//! [interactive mode](super::interactive).
//!
//! Commands: `/apply [reason]` and `/discard [reason]` resolve the newest pending preview,
//! `/compact [instructions]` summarizes the history now, `/quit` (or end of input) leaves.

use crate::io::write_redacted;
use std::io::BufRead;

use pi_agent_core::AgentMessage;
use tokio::sync::mpsc;

use super::plain_text;
use super::print::Output;
use pi_coding_agent::App;
use pi_coding_agent::extensions::events::InputSource;
use pi_coding_agent::resolve::ResolveAction;

/// Writes `text`, every secret redacted.
fn write(output: &Output, text: &str) {
    write_redacted(output, text, false);
}

/// Reads stdin lines on a blocking thread.
fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Runs the session on the process's stdin until `/quit` or end of input; `banner` is printed
/// first.
pub(crate) async fn run_line(app: &App, banner: &str, initial: Vec<AgentMessage>, stdout: Output) -> i32 {
    run_line_with(app, banner, initial, stdout, stdin_lines()).await
}

/// [`run_line`] reading from `lines`.
pub(crate) async fn run_line_with(
    app: &App,
    banner: &str,
    initial: Vec<AgentMessage>,
    stdout: Output,
    mut lines: mpsc::UnboundedReceiver<String>,
) -> i32 {
    let session = app.session();
    write(&stdout, banner);
    let sink = stdout.clone();
    let subscription = session.subscribe(move |event| {
        if let Some(text) = plain_text::render(event) {
            write(&sink, &text);
        }
    });
    for prompt in initial {
        if let Err(error) = app.prompt_from(prompt, InputSource::Interactive).await {
            write(&stdout, &format!("{error}\n"));
        }
    }
    loop {
        let pending = session.pending_actions().peek();
        if let Some(action) = &pending {
            write(&stdout, &format!("(pending: {} — /apply or /discard)\n", action.label));
        }
        write(&stdout, "> ");
        let Some(line) = lines.recv().await else {
            write(&stdout, "\n");
            break;
        };
        let line = line.trim();
        match line.split_once(' ').map_or((line, ""), |(c, r)| (c, r.trim())) {
            ("", _) => continue,
            ("/quit" | "/exit", _) => break,
            (command @ ("/apply" | "/discard"), reason) => {
                let action = if command == "/apply" {
                    ResolveAction::Apply
                } else {
                    ResolveAction::Discard
                };
                let reason = if reason.is_empty() {
                    "Decided by the user."
                } else {
                    reason
                };
                let text = match session.resolve_pending(action, reason).await {
                    Ok(result) => result.content.iter().filter_map(|b| b.as_text()).collect::<String>(),
                    Err(error) => error.message().to_owned(),
                };
                write(&stdout, &format!("{text}\n"));
            }
            ("/compact", instructions) => {
                // Its events print how it went; an error is the last of them.
                let _ = app.compact((!instructions.is_empty()).then_some(instructions)).await;
            }
            _ => {
                let prompt = AgentMessage::user(line);
                if let Err(error) = app.prompt_from(prompt, InputSource::Interactive).await {
                    write(&stdout, &format!("{error}\n"));
                }
            }
        }
    }
    subscription.unsubscribe();
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    #[tokio::test(flavor = "multi_thread")]
    async fn a_line_session_with_a_pending_preview_applied_from_the_keyboard() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.ts"), "oldCall(1);\n").unwrap();
        let faux = FauxModel::new();
        faux.set_responses([
            faux_assistant_message(vec![faux_tool_call(
                "c1",
                "ast_edit",
                json!({"ops": [{"pat": "oldCall($A)", "out": "newCall($A)"}], "paths": ["a.ts"]}),
            )]),
            // Forced to resolve, the model answers in text instead; the user decides.
            faux_assistant_text("Please review the preview."),
        ]);
        let options = pi_coding_agent::SessionOptions::new(dir.path(), faux.model())
            .stream_fn(faux.stream_fn())
            .tools(["ast_edit"]);
        let session = pi_coding_agent::AgentSession::new(options).unwrap();
        let app = App::new(
            session,
            pi_session_store::SessionManager::in_memory(dir.path()),
            Arc::new(pi_ai::ModelRegistry::builtin()),
            None,
            Arc::new(|warning| panic!("{warning}")),
        );
        let buffer: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let stdout: Output = Arc::new(Mutex::new(SharedBuffer(buffer.clone())));
        let (tx, rx) = mpsc::unbounded_channel();
        for line in ["rename it", "/apply Looks right.", "/quit"] {
            tx.send(line.to_owned()).unwrap();
        }
        let code = run_line_with(&app, "banner\n", Vec::new(), stdout, rx).await;
        assert_eq!(code, 0);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.ts")).unwrap(),
            "newCall(1);\n"
        );
        let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("banner\n> "), "{text}");
        assert!(
            text.contains("(pending: AST Edit: 1 replacement in 1 file — /apply or /discard)"),
            "{text}"
        );
        assert!(text.contains("Applied 1 replacement in 1 file."), "{text}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn compact_in_a_line_session_summarizes_with_the_instructions() {
        let dir = tempfile::tempdir().unwrap();
        let faux = FauxModel::new();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = seen.clone();
        faux.set_responses([
            pi_agent_core::faux::FauxResponse::from(faux_assistant_text("first answer")),
            pi_agent_core::faux::FauxResponse::factory(move |request| {
                if let Some(AgentMessage::User(user)) = request.context.messages.first() {
                    sink.lock().unwrap().push(user.content.text());
                }
                faux_assistant_text("## Goal\nShort.")
            }),
        ]);
        let options = pi_coding_agent::SessionOptions::new(dir.path(), faux.model()).stream_fn(faux.stream_fn());
        let app = App::new(
            pi_coding_agent::AgentSession::new(options).unwrap(),
            pi_session_store::SessionManager::in_memory(dir.path()),
            Arc::new(pi_ai::ModelRegistry::builtin()),
            None,
            Arc::new(|warning| panic!("{warning}")),
        );
        let buffer: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let stdout: Output = Arc::new(Mutex::new(SharedBuffer(buffer.clone())));
        let (tx, rx) = mpsc::unbounded_channel();
        for line in ["one", "/compact keep it short", "/quit"] {
            tx.send(line.to_owned()).unwrap();
        }
        assert_eq!(run_line_with(&app, "", Vec::new(), stdout, rx).await, 0);
        let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
        assert!(text.contains("· Compacting context...\n"), "{text}");
        assert!(text.contains("· Compacted from "), "{text}");
        let prompt = seen.lock().unwrap()[0].clone();
        assert!(prompt.ends_with("\n\nAdditional focus: keep it short"), "{prompt}");
        assert_eq!(app.session().agent().messages()[0].role(), "compactionSummary");
    }

    struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for SharedBuffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
