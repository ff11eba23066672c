//! Properties of the pending-action store, the runtime, the `resolve` tool and the forcing policy
//! driven together, the way a session drives them (`docs/resolve.md`), against a model of what the
//! docs and the seed (`seeds/resolve-tool-runtime.txt`) promise:
//!
//! * an action leaves the stack only when its apply succeeds or its discard completes, and an
//!   apply or discard that finishes after newer previews were pushed removes exactly its own
//!   action (`PendingActionStore::remove(id)`), not the new top;
//! * results: `applied <label>` / `Apply failed: <label> failed`; a discard answers the reject's
//!   text, or `Discarded: <label>. Reason: prop` without a reject or when it returns nothing, and a
//!   failing reject's message without the `Apply failed:` prefix;
//! * forcing: a forced call is counted when it ends without a resolution (ignored, failed call,
//!   `resolve` unavailable, failed apply / discard); an aborted call is not, even when its apply had
//!   started and finishes afterwards; the breaker trips after `LIMIT` in a row.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::SeqCst};

use pi_agent_core::{OPERATION_ABORTED, StopReason, ToolChoice, ToolContext, ToolResult, TypedTool};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use tokio::sync::Notify;

use super::{ResolveForcing, is_pending_action_label};
use crate::resolve::{APPLY_FAILED_PREFIX, NO_PENDING_ACTION, RESOLVE_TOOL_NAME, default_discard_text};
use crate::resolve::{PendingAction, PendingActionStore, PendingError, ResolveRuntime, ResolveTool, ToolChoiceQueue};
use crate::resolve::{ResolveAction, ResolveParams};

const LIMIT: u32 = 3;

/// The discard callback of a preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reject {
    /// No `reject`: the default discard text.
    Absent,
    /// Returns its own text.
    Text,
    /// Returns nothing: the default discard text.
    Nothing,
    /// Fails this many times, then returns its text.
    Fails(u8),
}

#[derive(Debug, Clone, Copy)]
struct Spec {
    apply_failures: u8,
    reject: Reject,
}

#[derive(Debug, Clone)]
enum Op {
    /// A preview staged between model calls (not during a forced one).
    Push(Spec),
    /// A model call answered without `resolve`.
    Ignore,
    /// A model call that fails.
    Error,
    /// A model call while `resolve` is not an active tool.
    Unavailable,
    /// A model call that calls `resolve`; these previews are staged while its callback runs.
    Resolve(ResolveAction, Vec<Spec>),
    /// A model call that calls `resolve` (apply) and is aborted once the apply has started;
    /// `settle_first`: the apply finishes before the turn ends, else after.
    AbortAfterStart { settle_first: bool },
}

fn spec() -> impl Strategy<Value = Spec> + Clone {
    let reject = prop_oneof![
        Just(Reject::Absent),
        Just(Reject::Text),
        Just(Reject::Nothing),
        (1u8..3).prop_map(Reject::Fails),
    ];
    (0u8..3, reject).prop_map(|(apply_failures, reject)| Spec { apply_failures, reject })
}

/// Gates every callback while `hold` is set: it says it started, then waits to be released.
#[derive(Default)]
struct Gate {
    hold: AtomicBool,
    started: Notify,
    release: Notify,
}

impl Gate {
    async fn pass(&self) {
        if self.hold.load(SeqCst) {
            self.started.notify_one();
            self.release.notified().await;
        }
    }
}

fn action(label: &str, spec: Spec, gate: &Arc<Gate>) -> PendingAction {
    let applies = Arc::new(AtomicU8::new(0));
    let (g, l) = (gate.clone(), label.to_owned());
    let action = PendingAction::new(label, "prop", move |_, _| {
        let attempt = applies.fetch_add(1, SeqCst);
        let (gate, label) = (g.clone(), l.clone());
        async move {
            gate.pass().await;
            if attempt < spec.apply_failures {
                Err(PendingError::Other(format!("{label} failed")))
            } else {
                Ok(ToolResult::text(format!("applied {label}")))
            }
        }
    });
    if spec.reject == Reject::Absent {
        return action;
    }
    let rejects = Arc::new(AtomicU8::new(0));
    let (g, l) = (gate.clone(), label.to_owned());
    action.with_reject(move |_, _| {
        let attempt = rejects.fetch_add(1, SeqCst);
        let (gate, label) = (g.clone(), l.clone());
        async move {
            gate.pass().await;
            match spec.reject {
                Reject::Nothing => Ok(None),
                Reject::Fails(n) if attempt < n => Err(PendingError::Other(format!("{label} reject failed"))),
                _ => Ok(Some(ToolResult::text(format!("rejected {label}")))),
            }
        }
    })
}

struct ModelAction {
    label: String,
    apply_failures: u8,
    reject: Reject,
}

/// What docs/resolve.md says the stack and the breaker hold.
#[derive(Default)]
struct Model {
    stack: Vec<ModelAction>,
    failures: u32,
    stopped: bool,
    trips: usize,
}

impl Model {
    fn push(&mut self, label: String, spec: Spec, during_forced_call: bool) {
        self.stack.push(ModelAction {
            label,
            apply_failures: spec.apply_failures,
            reject: spec.reject,
        });
        if !during_forced_call {
            self.failures = 0;
            self.stopped = false;
        }
    }

    fn forced(&self) -> bool {
        !self.stack.is_empty() && !self.stopped
    }

    fn record_failure(&mut self) {
        self.failures += 1;
        if self.failures >= LIMIT && !self.stopped {
            self.stopped = true;
            self.trips += 1;
        }
    }

    /// Whether resolving the top with `action` runs a callback.
    fn top_has_callback(&self, action: ResolveAction) -> bool {
        self.stack
            .last()
            .is_some_and(|a| action == ResolveAction::Apply || a.reject != Reject::Absent)
    }

    /// Resolves the action labelled `label` (wherever it is now): the expected text, and the
    /// stack afterwards.
    fn settle(&mut self, label: &str, action: ResolveAction) -> Result<String, String> {
        let index = self.stack.iter().position(|a| a.label == label).unwrap();
        let entry = &mut self.stack[index];
        let result = match action {
            ResolveAction::Apply if entry.apply_failures > 0 => {
                entry.apply_failures -= 1;
                Err(format!("{APPLY_FAILED_PREFIX}{label} failed"))
            }
            ResolveAction::Apply => Ok(format!("applied {label}")),
            ResolveAction::Discard => match entry.reject {
                Reject::Absent | Reject::Nothing => Ok(default_discard_text(label, "prop")),
                Reject::Fails(n) if n > 0 => {
                    entry.reject = Reject::Fails(n - 1);
                    Err(format!("{label} reject failed"))
                }
                Reject::Text | Reject::Fails(_) => Ok(format!("rejected {label}")),
            },
        };
        if result.is_ok() {
            self.stack.remove(index);
            if self.stack.is_empty() {
                self.failures = 0;
                self.stopped = false;
            }
        }
        result
    }
}

/// A session's resolve machinery, wired as `session/mod.rs` wires it.
struct World {
    store: PendingActionStore,
    queue: ToolChoiceQueue,
    forcing: Arc<ResolveForcing>,
    tool: Arc<ResolveTool>,
    gate: Arc<Gate>,
    outcomes: Arc<AtomicUsize>,
    trips: Arc<AtomicUsize>,
    model: Model,
    pushed: usize,
}

type Outcome = (Result<String, String>, Option<String>);

fn text_and_label(result: Result<ToolResult, pi_agent_core::ToolError>) -> Outcome {
    let label = |d: Option<&serde_json::Value>| d.and_then(|d| d["label"].as_str()).map(str::to_owned);
    match result {
        Ok(r) => (
            Ok(r.content[0].as_text().unwrap_or_default().to_owned()),
            label(Some(&r.details)),
        ),
        Err(e) => (Err(e.message().to_owned()), label(e.details())),
    }
}

impl World {
    fn new() -> World {
        let store = PendingActionStore::new();
        let runtime = ResolveRuntime::new(store.clone());
        let queue = ToolChoiceQueue::new();
        let trips = Arc::new(AtomicUsize::new(0));
        let counter = trips.clone();
        let forcing = ResolveForcing::new(
            runtime.clone(),
            queue.clone(),
            LIMIT,
            Arc::new(|| true),
            Arc::new(move |_| {
                counter.fetch_add(1, SeqCst);
            }),
        );
        let on_push = forcing.clone();
        store.subscribe_push(move |_, _| on_push.on_push());
        let outcomes = Arc::new(AtomicUsize::new(0));
        let (on_outcome, counter) = (forcing.clone(), outcomes.clone());
        runtime.subscribe(move |outcome| {
            on_outcome.on_outcome(outcome);
            counter.fetch_add(1, SeqCst);
        });
        let tool = Arc::new(ResolveTool::new(runtime, Some(queue.clone())).requiring_seen());
        World {
            store,
            queue,
            forcing,
            tool,
            gate: Arc::default(),
            outcomes,
            trips,
            model: Model::default(),
            pushed: 0,
        }
    }

    fn push(&mut self, spec: Spec, during_forced_call: bool) {
        let label = format!("action {}", self.pushed);
        self.pushed += 1;
        self.store.push(action(&label, spec, &self.gate));
        self.model.push(label, spec, during_forced_call);
    }

    /// Asks for the next call's tool choice: forced exactly while something is pending and the
    /// breaker has not tripped.
    fn begin_turn(&self) -> Result<bool, TestCaseError> {
        let forced = self.model.forced();
        let choice = self.forcing.next_tool_choice(|_| true);
        prop_assert_eq!(choice, forced.then(|| ToolChoice::Tool(RESOLVE_TOOL_NAME.into())));
        Ok(forced)
    }

    fn call(&self, action: ResolveAction, ctx: ToolContext) -> tokio::task::JoinHandle<Outcome> {
        let tool = self.tool.clone();
        let params = ResolveParams::new(action, "prop");
        tokio::spawn(async move { text_and_label(tool.execute("call", params, ctx).await) })
    }

    /// Waits until the runtime reported more than `before` outcomes.
    async fn settled(&self, before: usize) {
        for _ in 0..10_000 {
            if self.outcomes.load(SeqCst) > before {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the invocation never finished");
    }

    async fn step(&mut self, op: Op) -> Result<(), TestCaseError> {
        match op {
            Op::Push(spec) => self.push(spec, false),
            Op::Ignore | Op::Error => {
                if self.begin_turn()? {
                    self.model.record_failure();
                }
                let stop = if matches!(op, Op::Ignore) {
                    StopReason::Stop
                } else {
                    StopReason::Error
                };
                self.forcing.finish_turn(stop);
            }
            Op::Unavailable => {
                let would_force = self.model.forced();
                let choice = self.forcing.next_tool_choice(|name| name != RESOLVE_TOOL_NAME);
                prop_assert_eq!(choice, None, "a call without resolve is never forced to it");
                if would_force {
                    self.model.record_failure();
                }
                self.forcing.finish_turn(StopReason::Stop);
            }
            Op::Resolve(action, pushes) => {
                let forced = self.begin_turn()?;
                let target = self.model.stack.last().map(|a| a.label.clone());
                let hold = self.model.top_has_callback(action);
                self.gate.hold.store(hold, SeqCst);
                let call = self.call(action, ToolContext::detached());
                let (result, expected) = if hold {
                    // Newer previews arrive while the callback runs.
                    self.gate.started.notified().await;
                    for spec in pushes {
                        self.push(spec, forced);
                    }
                    self.gate.hold.store(false, SeqCst);
                    self.gate.release.notify_one();
                    let result = call.await.unwrap();
                    (result, self.model.settle(target.as_deref().unwrap(), action))
                } else {
                    let result = call.await.unwrap();
                    let expected = match &target {
                        Some(label) => self.model.settle(label, action),
                        None => Err(NO_PENDING_ACTION.to_owned()),
                    };
                    for spec in pushes {
                        self.push(spec, forced);
                    }
                    (result, expected)
                };
                prop_assert_eq!(&result.0, &expected);
                prop_assert_eq!(result.1, target, "the result names the action it resolved");
                if forced {
                    match expected {
                        Ok(_) => self.model.failures = 0,
                        Err(_) => self.model.record_failure(),
                    }
                }
                self.forcing.finish_turn(StopReason::ToolUse);
            }
            Op::AbortAfterStart { settle_first } => {
                self.begin_turn()?;
                let Some(label) = self.model.stack.last().map(|a| a.label.clone()) else {
                    let result = self.call(ResolveAction::Apply, ToolContext::detached()).await.unwrap();
                    prop_assert_eq!(result.0, Err(NO_PENDING_ACTION.to_owned()));
                    self.forcing.finish_turn(StopReason::Aborted);
                    return Ok(());
                };
                self.gate.hold.store(true, SeqCst);
                let ctx = ToolContext::detached();
                let cancel = ctx.cancel.clone();
                let call = self.call(ResolveAction::Apply, ctx);
                self.gate.started.notified().await;
                cancel.cancel();
                let result = call.await.unwrap();
                prop_assert_eq!(result.0, Err(OPERATION_ABORTED.to_owned()), "the abort answers at once");
                prop_assert!(
                    self.store.labels().contains(&label),
                    "an apply still running keeps its action"
                );
                let before = self.outcomes.load(SeqCst);
                self.gate.hold.store(false, SeqCst);
                if settle_first {
                    self.gate.release.notify_one();
                    self.settled(before).await;
                    let _ = self.model.settle(&label, ResolveAction::Apply);
                    self.forcing.finish_turn(StopReason::Aborted);
                } else {
                    self.forcing.finish_turn(StopReason::Aborted);
                    self.check()?;
                    self.gate.release.notify_one();
                    self.settled(before).await;
                    let _ = self.model.settle(&label, ResolveAction::Apply);
                }
            }
        }
        self.check()
    }

    fn check(&self) -> Result<(), TestCaseError> {
        let labels: Vec<String> = self.model.stack.iter().map(|a| a.label.clone()).collect();
        prop_assert_eq!(self.store.labels(), labels, "the stack (bottom to top)");
        prop_assert_eq!(self.forcing.lock().failures, self.model.failures, "failed forced calls");
        prop_assert_eq!(self.forcing.stopped(), self.model.stopped, "the breaker");
        prop_assert_eq!(self.trips.load(SeqCst), self.model.trips, "times the breaker tripped");
        prop_assert!(!self.queue.has_in_flight(), "every turn settles its choice");
        let in_queue = self
            .queue
            .inspect()
            .iter()
            .filter(|l| is_pending_action_label(l))
            .count();
        prop_assert!(in_queue <= 1, "duplicate forcing directives");
        if self.model.forced() {
            prop_assert_eq!(in_queue, 1, "pending but not forced");
        }
        Ok(())
    }
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut world = World::new();
        for op in ops {
            world.step(op).await?;
        }
        Ok(())
    })
}

fn lifo_op() -> impl Strategy<Value = Op> {
    let pushes = prop::collection::vec(spec(), 0..3);
    prop_oneof![
        3 => spec().prop_map(Op::Push),
        3 => pushes.clone().prop_map(|p| Op::Resolve(ResolveAction::Apply, p)),
        2 => pushes.prop_map(|p| Op::Resolve(ResolveAction::Discard, p)),
        1 => Just(Op::Ignore),
        1 => Just(Op::Error),
    ]
}

fn forcing_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => spec().prop_map(Op::Push),
        3 => Just(Op::Unavailable),
        3 => any::<bool>().prop_map(|settle_first| Op::AbortAfterStart { settle_first }),
        2 => Just(Op::Resolve(ResolveAction::Apply, Vec::new())),
        1 => Just(Op::Resolve(ResolveAction::Discard, Vec::new())),
        1 => Just(Op::Ignore),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// LIFO under pushes made while an apply or discard is in flight, with every kind of reject
    /// callback, interleaved with forced and unforced model calls.
    #[test]
    fn lifo_holds_with_pushes_during_an_apply_reject_callbacks_and_forcing(
        ops in prop::collection::vec(lifo_op(), 1..60)
    ) {
        run(ops)?;
    }

    /// `resolve` inactive counts as a failed forced call and is never forced; an abort after the
    /// apply started is not counted, and the action's fate is the apply's.
    #[test]
    fn unavailable_counts_and_an_abort_after_the_apply_started_does_not(
        ops in prop::collection::vec(forcing_op(), 1..60)
    ) {
        run(ops)?;
    }
}
