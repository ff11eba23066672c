//! Unit tests of the chaining rules, with in-test listeners (closures).

use std::future::Future;
use std::sync::Mutex;

use futures::future::BoxFuture;
use pi_agent_core::{TextContent, UserContent};

use std::sync::Arc;

use pi_agent_core::{AgentMessage, ContentBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{EventListener, ExtensionError, ExtensionRunner, Extensions, InputOutcome, InputSource};

type Handler = Box<dyn Fn(Value) -> BoxFuture<'static, Result<Option<Value>, ExtensionError>> + Send + Sync>;

/// A listener of one event type running a closure.
pub(crate) struct Recording {
    kind: String,
    name: String,
    handler: Handler,
}

impl Recording {
    pub(crate) fn new<F, Fut>(kind: &str, handler: F) -> Arc<Self>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<Value>, ExtensionError>> + Send + 'static,
    {
        Self::named(&format!("/ext/{kind}.ts"), kind, handler)
    }

    pub(crate) fn named<F, Fut>(name: &str, kind: &str, handler: F) -> Arc<Self>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<Value>, ExtensionError>> + Send + 'static,
    {
        Arc::new(Recording {
            kind: kind.to_owned(),
            name: name.to_owned(),
            handler: Box::new(move |event| Box::pin(handler(event))),
        })
    }

    /// A listener answering `answer` every time.
    pub(crate) fn answering(kind: &str, answer: Value) -> Arc<Self> {
        Self::new(kind, move |_| {
            let answer = answer.clone();
            async move { Ok(Some(answer)) }
        })
    }
}

#[async_trait::async_trait]
impl EventListener for Recording {
    fn name(&self) -> &str {
        &self.name
    }
    async fn handle(&self, event: &Value, _cancel: &CancellationToken) -> Result<Option<Value>, ExtensionError> {
        (self.handler)(event.clone()).await
    }
}

/// A runner over in-test listeners that keeps what it was asked and told.
#[derive(Default)]
pub(crate) struct TestRunner {
    listeners: Vec<Arc<Recording>>,
    pub(crate) asked: Mutex<Vec<String>>,
    pub(crate) reported: Mutex<Vec<String>>,
}

impl ExtensionRunner for TestRunner {
    fn listeners(&self, event_type: &str) -> Vec<Arc<dyn EventListener>> {
        self.asked.lock().unwrap().push(event_type.to_owned());
        self.listeners
            .iter()
            .filter(|l| l.kind == event_type)
            .map(|l| l.clone() as Arc<dyn EventListener>)
            .collect()
    }
    fn report(&self, error: ExtensionError) {
        self.reported.lock().unwrap().push(error.to_string());
    }
}

pub(crate) fn test_runner(listeners: Vec<Arc<Recording>>) -> Arc<TestRunner> {
    Arc::new(TestRunner {
        listeners,
        ..TestRunner::default()
    })
}

pub(crate) fn runner_with(listeners: Vec<Arc<Recording>>) -> Extensions {
    Extensions::new(test_runner(listeners))
}

fn failing(kind: &str) -> Arc<Recording> {
    Recording::named("/ext/broken.ts", kind, |event| async move {
        Err(ExtensionError::Handler {
            extension: "/ext/broken.ts".into(),
            event: event["type"].as_str().unwrap_or_default().to_owned(),
            message: "boom".into(),
        })
    })
}

fn cancel() -> CancellationToken {
    CancellationToken::new()
}

#[tokio::test]
async fn nothing_is_built_when_nobody_listens() {
    let runner = test_runner(vec![Recording::answering("input", json!({"action": "handled"}))]);
    let extensions = Extensions::new(runner.clone());
    let built = std::sync::atomic::AtomicBool::new(false);
    let result = extensions
        .emit(
            "turn_start",
            || {
                built.store(true, std::sync::atomic::Ordering::SeqCst);
                json!({})
            },
            &cancel(),
        )
        .await;
    assert!(result.is_none());
    assert!(
        !built.load(std::sync::atomic::Ordering::SeqCst),
        "no payload built without a listener"
    );
    assert!(
        extensions
            .context(&[AgentMessage::user("x")], &cancel())
            .await
            .is_none()
    );
    assert_eq!(*runner.asked.lock().unwrap(), ["turn_start", "context"]);
}

#[tokio::test]
async fn a_failing_listener_is_reported_and_the_next_one_still_answers() {
    let runner = test_runner(vec![
        failing("input"),
        Recording::answering("input", json!({"action": "transform", "text": "after"})),
    ]);
    let outcome = Extensions::new(runner.clone())
        .input("before", None, InputSource::Rpc, &cancel())
        .await;
    assert_eq!(
        outcome,
        InputOutcome::Transform {
            text: "after".into(),
            images: None
        }
    );
    assert_eq!(
        *runner.reported.lock().unwrap(),
        ["Extension \"/ext/broken.ts\" error in input handler: boom"]
    );
}

#[tokio::test]
async fn a_timeout_is_reported_and_counts_as_no_answer() {
    let runner = test_runner(vec![Recording::new("session_before_switch", |_| async {
        Err(ExtensionError::Timeout {
            extension: "/ext/slow.ts".into(),
            event: "session_before_switch".into(),
        })
    })]);
    let result = Extensions::new(runner.clone())
        .emit("session_before_switch", || json!({"reason": "new"}), &cancel())
        .await;
    assert!(result.is_none());
    assert_eq!(
        *runner.reported.lock().unwrap(),
        ["Extension \"/ext/slow.ts\" error in session_before_switch handler: timed out"]
    );
}

#[tokio::test]
async fn input_transforms_chain_and_handled_ends_the_round() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let second = Recording::new("input", move |event| {
        log.lock().unwrap().push(event.clone());
        async { Ok(Some(json!({"action": "handled"}))) }
    });
    let third = Recording::new("input", |_| async { panic!("not asked after handled") });
    let extensions = runner_with(vec![
        Recording::answering("input", json!({"action": "transform", "text": "two"})),
        second,
        third,
    ]);
    let outcome = extensions.input("one", None, InputSource::Interactive, &cancel()).await;
    assert_eq!(outcome, InputOutcome::Handled);
    assert_eq!(
        seen.lock().unwrap()[0],
        json!({"type": "input", "text": "two", "source": "interactive"})
    );
    let unchanged = runner_with(vec![Recording::answering("input", json!({"action": "continue"}))])
        .input("one", None, InputSource::Extension, &cancel())
        .await;
    assert_eq!(unchanged, InputOutcome::Continue);
}

#[tokio::test]
async fn tool_call_input_mutations_chain_and_the_first_block_wins() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let extensions = runner_with(vec![
        Recording::answering("tool_call", json!({"input": {"command": "ls -la"}})),
        Recording::new("tool_call", move |event| {
            log.lock().unwrap().push(event["input"].clone());
            async { Ok(Some(json!({"block": true, "reason": "no"}))) }
        }),
        Recording::new("tool_call", |_| async { panic!("not asked after a block") }),
    ]);
    let outcome = extensions
        .tool_call("c1", "bash", &json!({"command": "ls"}), &cancel())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [json!({"command": "ls -la"})]);
    assert!(outcome.block);
    assert_eq!(outcome.reason.as_deref(), Some("no"));
    assert_eq!(outcome.input, Some(json!({"command": "ls -la"})));
}

#[tokio::test]
async fn a_failing_tool_call_listener_blocks_with_its_message() {
    let error = runner_with(vec![failing("tool_call")])
        .tool_call("c1", "bash", &json!({}), &cancel())
        .await
        .unwrap_err();
    assert_eq!(error.message(), "boom");
}

#[tokio::test]
async fn tool_result_patches_merge_and_each_listener_sees_the_patched_result() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let extensions = runner_with(vec![
        Recording::answering("tool_result", json!({"content": [{"type": "text", "text": "patched"}]})),
        Recording::new("tool_result", move |event| {
            log.lock().unwrap().push(event["content"].clone());
            async { Ok(Some(json!({"isError": true}))) }
        }),
    ]);
    let patch = extensions
        .tool_result(
            || {
                (
                    "c1".into(),
                    "read".into(),
                    json!({}),
                    vec![ContentBlock::text("raw")],
                    Value::Null,
                    false,
                )
            },
            &cancel(),
        )
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [json!([{"type": "text", "text": "patched"}])]);
    assert_eq!(patch.content, Some(vec![ContentBlock::text("patched")]));
    assert_eq!(patch.is_error, Some(true));
    assert_eq!(patch.details, None);
    let untouched = runner_with(vec![Recording::answering("tool_result", json!({}))])
        .tool_result(
            || ("c1".into(), "read".into(), json!({}), Vec::new(), Value::Null, false),
            &cancel(),
        )
        .await;
    assert_eq!(untouched, None);
}

#[tokio::test]
async fn message_end_keeps_the_role_and_reports_another() {
    let assistant = json!({"role": "assistant", "content": [{"type": "text", "text": "new"}], "api": "faux",
        "provider": "faux", "model": "m", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 1});
    let runner = test_runner(vec![
        Recording::answering("message_end", json!({ "message": assistant })),
        Recording::answering(
            "message_end",
            json!({"message": {"role": "user", "content": "x", "timestamp": 1}}),
        ),
    ]);
    let user = AgentMessage::User(pi_agent_core::UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::Text(TextContent::new("hi"))]),
        timestamp: 1,
    });
    let replaced = Extensions::new(runner.clone()).message_end(&user, &cancel()).await;
    // The first answer is an assistant message for a user message: refused; the second is kept.
    assert_eq!(replaced.map(|m| m.role().to_owned()), Some("user".to_owned()));
    assert_eq!(
        *runner.reported.lock().unwrap(),
        [
            "Extension \"/ext/message_end.ts\" error in message_end handler: message_end handlers must return a message with the same role"
        ]
    );
}

#[tokio::test]
async fn before_agent_start_collects_messages_and_chains_the_system_prompt() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let extensions = runner_with(vec![
        Recording::answering(
            "before_agent_start",
            json!({"message": {"customType": "note", "content": "remember", "display": true}, "systemPrompt": "A"}),
        ),
        Recording::new("before_agent_start", move |event| {
            log.lock().unwrap().push(event["systemPrompt"].clone());
            async {
                Ok(Some(
                    json!({"messages": [{"customType": "n2", "content": "two", "display": false, "details": {"k": 1}}],
                                "systemPrompt": "A+B"}),
                ))
            }
        }),
    ]);
    let outcome = extensions
        .before_agent_start("hi", None, "base", || json!({"cwd": "/w"}), &cancel())
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [json!("A")]);
    assert_eq!(outcome.system_prompt.as_deref(), Some("A+B"));
    let stored: Vec<Value> = outcome
        .messages
        .iter()
        .map(|m| {
            let mut value = serde_json::to_value(m).unwrap();
            value.as_object_mut().unwrap().remove("timestamp");
            value
        })
        .collect();
    assert_eq!(
        stored,
        [
            json!({"role": "custom", "customType": "note", "content": "remember", "display": true}),
            json!({"role": "custom", "customType": "n2", "content": "two", "display": false, "details": {"k": 1}}),
        ]
    );
}

#[tokio::test]
async fn session_before_events_stop_at_the_first_cancel() {
    let extensions = runner_with(vec![
        Recording::answering("session_before_fork", json!({"skipConversationRestore": true})),
        Recording::answering("session_before_fork", json!({"cancel": true})),
        Recording::new("session_before_fork", |_| async { panic!("not asked after a cancel") }),
    ]);
    let result = extensions
        .emit(
            "session_before_fork",
            || json!({"entryId": "e1", "position": "before"}),
            &cancel(),
        )
        .await;
    assert_eq!(result, Some(json!({"cancel": true})));
}

#[tokio::test]
async fn context_and_provider_payload_chain() {
    let extensions = runner_with(vec![
        Recording::answering("context", json!({"messages": []})),
        Recording::new("context", |event| async move {
            assert_eq!(event["messages"], json!([]));
            Ok(None)
        }),
        Recording::answering("before_provider_request", json!({"payload": {"model": "x", "a": 1}})),
        Recording::new("before_provider_request", |event| async move {
            let mut body = event["payload"].clone();
            body["b"] = json!(2);
            Ok(Some(body))
        }),
    ]);
    let messages = extensions.context(&[AgentMessage::user("x")], &cancel()).await.unwrap();
    assert!(messages.is_empty());
    let body = extensions
        .before_provider_request(&json!({"model": "x"}), &cancel())
        .await
        .unwrap();
    assert_eq!(body, json!({"model": "x", "a": 1, "b": 2}));
}

#[tokio::test]
async fn user_bash_takes_the_first_result_and_resources_collect_every_path() {
    let extensions = runner_with(vec![
        Recording::answering("user_bash", json!({})),
        Recording::answering(
            "user_bash",
            json!({"result": {"output": "remote", "exitCode": 0, "cancelled": false, "truncated": false}}),
        ),
        Recording::answering(
            "resources_discover",
            json!({"skillPaths": ["/s"], "promptPaths": ["/p"]}),
        ),
        Recording::answering("resources_discover", json!({"themePaths": ["/t"]})),
    ]);
    let result = extensions
        .user_bash("ls", false, std::path::Path::new("/w"), &cancel())
        .await
        .unwrap();
    assert_eq!(result.output, "remote");
    assert_eq!(result.exit_code, Some(0));
    let paths = extensions
        .resources_discover(std::path::Path::new("/w"), "startup", &cancel())
        .await;
    assert_eq!(paths.skill_paths.len(), 1);
    assert_eq!(paths.prompt_paths[0].path, "/p");
    assert_eq!(paths.theme_paths[0].extension_path, "/ext/resources_discover.ts");
}
