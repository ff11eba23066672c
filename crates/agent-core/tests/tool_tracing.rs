//! Tool dispatch is traced: one `tool_call` span per call carrying the tool's name and the call
//! id (never the arguments), with debug events when the call starts and when it ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{Agent, AgentOptions, FnTool, ToolResult};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

const SECRET: &str = "hunter2-do-not-log";

#[derive(Debug, Clone, Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

#[derive(Debug, Clone)]
struct SeenSpan {
    name: String,
    fields: Fields,
}

#[derive(Debug, Clone)]
struct SeenEvent {
    span: Option<u64>,
    fields: Fields,
}

/// Records every span and event; single-threaded use only (the stack of entered spans is shared).
#[derive(Default, Clone)]
struct Recorder(Arc<Seen>);

#[derive(Default)]
struct Seen {
    next: AtomicU64,
    spans: Mutex<BTreeMap<u64, SeenSpan>>,
    events: Mutex<Vec<SeenEvent>>,
    entered: Mutex<Vec<u64>>,
}

impl Subscriber for Recorder {
    fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = Fields::default();
        span.record(&mut fields);
        self.0.spans.lock().unwrap().insert(
            id,
            SeenSpan {
                name: span.metadata().name().to_owned(),
                fields,
            },
        );
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(seen) = self.0.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut seen.fields);
        }
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let span = self.0.entered.lock().unwrap().last().copied();
        self.0.events.lock().unwrap().push(SeenEvent { span, fields });
    }

    fn enter(&self, span: &Id) {
        self.0.entered.lock().unwrap().push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut entered = self.0.entered.lock().unwrap();
        if let Some(at) = entered.iter().rposition(|id| *id == span.into_u64()) {
            entered.remove(at);
        }
    }
}

#[test]
fn every_tool_call_gets_a_span_with_its_name_and_id_but_not_its_arguments() {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let faux = FauxModel::new();
            faux.set_responses([
                faux_assistant_message(vec![
                    faux_tool_call("call-1", "login", json!({"password": SECRET})),
                    faux_tool_call("call-2", "missing", json!({"token": SECRET})),
                ]),
                faux_assistant_text("done"),
            ]);
            let login = FnTool::new(
                "login",
                "Logs in",
                json!({"type": "object", "properties": {"password": {"type": "string"}}}),
                |_id, _args, _ctx| async { Ok(ToolResult::text("ok")) },
            );
            let agent = Agent::new(
                AgentOptions::new(faux.model())
                    .stream_fn(faux.stream_fn())
                    .tools(vec![login.into_arc()]),
            );
            agent.prompt("log in").await.unwrap();
        });
    });

    let spans = recorder.0.spans.lock().unwrap().clone();
    let events = recorder.0.events.lock().unwrap().clone();
    let calls: Vec<(u64, &SeenSpan)> = spans
        .iter()
        .filter(|(_, span)| span.name == "tool_call")
        .map(|(id, span)| (*id, span))
        .collect();
    let described: Vec<(String, String)> = calls
        .iter()
        .map(|(_, span)| (span.fields.0["tool_name"].clone(), span.fields.0["call_id"].clone()))
        .collect();
    assert_eq!(
        described,
        [
            ("login".to_owned(), "call-1".to_owned()),
            ("missing".to_owned(), "call-2".to_owned())
        ]
    );
    for (id, span) in &calls {
        assert_eq!(span.fields.0.len(), 2, "only the name and the id: {span:?}");
        let messages: Vec<(String, Option<String>)> = events
            .iter()
            .filter(|event| event.span == Some(*id))
            .map(|event| {
                (
                    event.fields.0["message"].clone(),
                    event.fields.0.get("is_error").cloned(),
                )
            })
            .collect();
        let is_error = if span.fields.0["tool_name"] == "login" {
            "false"
        } else {
            "true"
        };
        assert_eq!(
            messages,
            [
                ("tool call started".to_owned(), None),
                ("tool call finished".to_owned(), Some(is_error.to_owned()))
            ],
            "{span:?}"
        );
    }
    let everything = format!("{spans:?}{events:?}");
    assert!(!everything.contains(SECRET), "arguments leaked into tracing");
}
