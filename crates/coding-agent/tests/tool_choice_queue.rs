//! The tool-choice queue (`reference/omp.md` §5.2, written fresh).

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent_core::{ToolChoice, ToolResult};
use pi_coding_agent::resolve::{DirectiveOptions, Invoker, RejectOutcome, RejectReason, ToolChoiceQueue};
use serde_json::{Value, json};

fn write() -> ToolChoice {
    ToolChoice::Tool("write".into())
}

fn read() -> ToolChoice {
    ToolChoice::Tool("read".into())
}

type Log<T> = Arc<Mutex<Vec<T>>>;

fn log<T>() -> Log<T> {
    Arc::new(Mutex::new(Vec::new()))
}

fn rejections(outcome: RejectOutcome) -> (Log<(ToolChoice, RejectReason)>, DirectiveOptions) {
    let seen = log();
    let sink = seen.clone();
    let options = DirectiveOptions::new().on_rejected(move |choice, reason| {
        sink.lock().unwrap().push((choice.clone(), reason));
        outcome
    });
    (seen, options)
}

fn echo_invoker(calls: Arc<AtomicUsize>) -> Invoker {
    Arc::new(move |args: Value| {
        calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Ok(ToolResult::text("echo").with_details(json!({ "echoed": args }))) })
    })
}

#[test]
fn empty_queue_serves_nothing() {
    let queue = ToolChoiceQueue::new();
    assert_eq!(queue.next_tool_choice(), None);
    assert!(!queue.has_in_flight());
    assert!(queue.is_empty());
}

#[test]
fn fires_on_resolved_with_the_served_choice() {
    let queue = ToolChoiceQueue::new();
    let seen = log();
    let sink = seen.clone();
    queue.push_once(
        write(),
        DirectiveOptions::new().on_resolved(move |choice| sink.lock().unwrap().push(choice.clone())),
    );
    assert_eq!(queue.next_tool_choice(), Some(write()));
    queue.resolve();
    assert_eq!(*seen.lock().unwrap(), [write()]);
}

#[test]
fn push_once_yields_once_then_exhausts() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(write(), DirectiveOptions::new());
    assert_eq!(queue.next_tool_choice(), Some(write()));
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn push_sequence_yields_in_order() {
    let queue = ToolChoiceQueue::new();
    queue.push_sequence([write(), read(), ToolChoice::None], DirectiveOptions::new());
    for expected in [write(), read(), ToolChoice::None] {
        assert_eq!(queue.next_tool_choice(), Some(expected));
        queue.resolve();
    }
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn requeue_replays_only_the_lost_yield() {
    let queue = ToolChoiceQueue::new();
    let (seen, options) = rejections(RejectOutcome::Requeue);
    queue.push_sequence([write(), ToolChoice::None], options);
    assert_eq!(queue.next_tool_choice(), Some(write()));
    queue.reject(RejectReason::Aborted);
    assert_eq!(*seen.lock().unwrap(), [(write(), RejectReason::Aborted)]);
    assert_eq!(queue.next_tool_choice(), Some(write()));
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), Some(ToolChoice::None));
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn a_requeued_directive_is_labelled_and_served_first() {
    let queue = ToolChoiceQueue::new();
    let (_, options) = rejections(RejectOutcome::Requeue);
    queue.push_once(write(), options.label("user-force"));
    queue.push_once(read(), DirectiveOptions::new().label("later"));
    queue.next_tool_choice();
    queue.reject(RejectReason::Error);
    assert_eq!(queue.inspect(), ["user-force-requeued", "later"]);
}

#[test]
fn drop_discards_the_yield() {
    let queue = ToolChoiceQueue::new();
    let (seen, options) = rejections(RejectOutcome::Drop);
    queue.push_once(write(), options);
    queue.next_tool_choice();
    queue.reject(RejectReason::Error);
    assert_eq!(*seen.lock().unwrap(), [(write(), RejectReason::Error)]);
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn no_callback_drops_the_yield() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(write(), DirectiveOptions::new());
    queue.next_tool_choice();
    queue.reject(RejectReason::Aborted);
    assert!(queue.is_empty());
}

#[test]
fn a_requeued_directive_keeps_its_on_rejected_across_aborts() {
    let queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    queue.push_once(
        write(),
        DirectiveOptions::new().on_rejected(move |_, _| match counter.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => RejectOutcome::Requeue,
            _ => RejectOutcome::Drop,
        }),
    );
    for _ in 0..3 {
        assert_eq!(queue.next_tool_choice(), Some(write()));
        queue.reject(RejectReason::Aborted);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn now_prepends_to_the_head() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(read(), DirectiveOptions::new().label("first"));
    queue.push_once(write(), DirectiveOptions::new().label("urgent").now());
    assert_eq!(queue.inspect(), ["urgent", "first"]);
    assert_eq!(queue.next_tool_choice(), Some(write()));
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), Some(read()));
}

#[test]
fn directives_drain_fifo() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(write(), DirectiveOptions::new());
    queue.push_once(read(), DirectiveOptions::new());
    assert_eq!(queue.inspect(), ["anonymous", "anonymous"]);
    assert_eq!(queue.next_tool_choice(), Some(write()));
    queue.resolve();
    assert_eq!(queue.next_tool_choice(), Some(read()));
}

#[test]
fn resolve_and_reject_with_nothing_in_flight_are_no_ops() {
    let queue = ToolChoiceQueue::new();
    let (seen, options) = rejections(RejectOutcome::Drop);
    queue.push_once(write(), options);
    queue.resolve();
    queue.reject(RejectReason::Error);
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(
        queue.next_tool_choice(),
        Some(write()),
        "the directive is still served next"
    );
}

#[test]
fn remove_by_label_removes_targeted_directives() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(write(), DirectiveOptions::new().label("eager-todo"));
    queue.push_once(read(), DirectiveOptions::new().label("user-force"));
    queue.remove_by_label("eager-todo");
    assert_eq!(queue.inspect(), ["user-force"]);
    assert_eq!(queue.next_tool_choice(), Some(read()));
}

#[test]
fn remove_by_label_rejects_the_in_flight_choice_when_its_label_matches() {
    let queue = ToolChoiceQueue::new();
    let (seen, options) = rejections(RejectOutcome::Drop);
    queue.push_once(write(), options.label("eager-todo"));
    queue.next_tool_choice();
    queue.remove_by_label("eager-todo");
    assert_eq!(*seen.lock().unwrap(), [(write(), RejectReason::Removed)]);
    assert!(!queue.has_in_flight());
}

#[test]
fn clear_empties_the_queue_and_rejects_the_in_flight_choice() {
    let queue = ToolChoiceQueue::new();
    let (seen, options) = rejections(RejectOutcome::Requeue);
    queue.push_once(write(), options);
    queue.push_once(read(), DirectiveOptions::new());
    queue.next_tool_choice();
    queue.clear();
    assert_eq!(*seen.lock().unwrap(), [(write(), RejectReason::Cleared)]);
    assert!(queue.is_empty(), "the requeue asked for by the callback is wiped");
    assert_eq!(queue.next_tool_choice(), None);
}

#[test]
fn consume_last_served_label_returns_it_once() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(write(), DirectiveOptions::new().label("user-force"));
    queue.next_tool_choice();
    queue.resolve();
    assert_eq!(queue.consume_last_served_label().as_deref(), Some("user-force"));
    assert_eq!(queue.consume_last_served_label(), None);
}

#[test]
fn has_in_flight_follows_next_and_resolve() {
    let queue = ToolChoiceQueue::new();
    assert!(!queue.has_in_flight());
    queue.push_once(write(), DirectiveOptions::new());
    queue.next_tool_choice();
    assert!(queue.has_in_flight());
    queue.resolve();
    assert!(!queue.has_in_flight());
}

#[tokio::test]
async fn peek_in_flight_invoker_exposes_on_invoked() {
    let queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    queue.push_once(write(), DirectiveOptions::new().on_invoked(echo_invoker(calls.clone())));
    assert!(queue.peek_in_flight_invoker().is_none(), "nothing in flight yet");
    queue.next_tool_choice();
    let invoker = queue.peek_in_flight_invoker().unwrap();
    let result = invoker(json!({"action": "apply", "reason": "ok"})).await.unwrap();
    assert_eq!(result.details, json!({"echoed": {"action": "apply", "reason": "ok"}}));
}

#[test]
fn no_invoker_without_on_invoked() {
    let queue = ToolChoiceQueue::new();
    queue.push_once(write(), DirectiveOptions::new());
    queue.next_tool_choice();
    assert!(queue.peek_in_flight_invoker().is_none());
}

#[test]
fn an_on_invoked_directive_is_not_resolved_until_its_tool_runs() {
    let queue = ToolChoiceQueue::new();
    let (seen, options) = rejections(RejectOutcome::Requeue);
    let resolved = Arc::new(AtomicUsize::new(0));
    let counter = resolved.clone();
    let calls = Arc::new(AtomicUsize::new(0));
    queue.push_once(
        write(),
        options.on_invoked(echo_invoker(calls)).on_resolved(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }),
    );
    queue.next_tool_choice();
    queue.resolve();
    assert_eq!(*seen.lock().unwrap(), [(write(), RejectReason::NotInvoked)]);
    assert_eq!(resolved.load(Ordering::SeqCst), 0);
    assert_eq!(queue.next_tool_choice(), Some(write()), "requeued and forced again");
}

#[tokio::test]
async fn an_on_invoked_directive_resolves_after_its_tool_ran() {
    let queue = ToolChoiceQueue::new();
    let resolved = Arc::new(AtomicUsize::new(0));
    let counter = resolved.clone();
    let calls = Arc::new(AtomicUsize::new(0));
    queue.push_once(
        write(),
        DirectiveOptions::new()
            .on_invoked(echo_invoker(calls))
            .on_resolved(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
            }),
    );
    queue.next_tool_choice();
    let invoker = queue.peek_in_flight_invoker().unwrap();
    invoker(json!({})).await.unwrap();
    queue.resolve();
    assert_eq!(resolved.load(Ordering::SeqCst), 1);
    assert!(!queue.has_in_flight());
}

#[tokio::test]
async fn on_invoked_survives_a_requeue() {
    let queue = ToolChoiceQueue::new();
    let calls = Arc::new(AtomicUsize::new(0));
    queue.push_once(
        write(),
        DirectiveOptions::new()
            .on_invoked(echo_invoker(calls.clone()))
            .on_rejected(|_, _| RejectOutcome::Requeue),
    );
    queue.next_tool_choice();
    queue.reject(RejectReason::Aborted);
    queue.next_tool_choice();
    let invoker = queue.peek_in_flight_invoker().unwrap();
    invoker(json!({})).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn reject_reasons_have_omp_names() {
    let names: Vec<&str> = [
        RejectReason::Aborted,
        RejectReason::Error,
        RejectReason::Cleared,
        RejectReason::Removed,
        RejectReason::Unavailable,
        RejectReason::NotInvoked,
    ]
    .iter()
    .map(|r| r.as_str())
    .collect();
    assert_eq!(
        names,
        ["aborted", "error", "cleared", "removed", "unavailable", "not_invoked"]
    );
}
