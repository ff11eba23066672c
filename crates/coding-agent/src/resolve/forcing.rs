//! Forcing `resolve` while a preview is pending, with a circuit breaker.
//!
//! While the pending-action stack is non-empty, one directive labelled
//! `pending-action:<source tool>` sits at the head of the tool-choice queue: it forces the next
//! model call to `resolve`, demands that `resolve` actually runs (`on_invoked`), and is put back
//! when the call is lost. Each forced call that ends without the pending action being resolved —
//! the model did not call `resolve`, the call failed, `resolve` was not active, or the apply /
//! discard failed — counts as a failure; after `limit` consecutive failures the session stops
//! forcing, keeps the action pending and reports it (SPEC §6; oh-my-pi #2546, #3061). A preview
//! staged outside a forced call, a successful resolution or an emptied stack starts the count
//! again; a preview staged *instead of* the forced `resolve` does not (the model would otherwise be
//! forced forever), and a forced `resolve` cut off by an abort is not counted.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use pi_agent_core::{StopReason, ToolChoice};

use crate::resolve::PendingActionStore;
use crate::resolve::{DirectiveOptions, Invoker, RejectOutcome, RejectReason, ToolChoiceQueue};
use crate::resolve::{RESOLVE_TOOL_NAME, ResolveOutcome, ResolveRuntime};

/// Label prefix of the directives that force `resolve` for a pending action.
pub const PENDING_ACTION_LABEL_PREFIX: &str = "pending-action:";

/// Whether a queue label belongs to a pending-action directive (requeued ones included).
pub fn is_pending_action_label(label: &str) -> bool {
    label.starts_with(PENDING_ACTION_LABEL_PREFIX)
}

/// Consecutive failed forced calls after which forcing stops (SPEC §6).
pub const DEFAULT_FORCE_LIMIT: u32 = 3;

/// Reported when the breaker trips.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForcingStopped {
    /// Label of the action still pending.
    pub label: String,
    /// The tool that staged it.
    pub source_tool_name: String,
    /// How many forced calls failed in a row.
    pub attempts: u32,
}

#[derive(Debug, Default)]
struct State {
    failures: u32,
    stopped: bool,
}

/// How the `resolve` run by one forcing directive ended: `None` until it returns (and for good
/// when an abort drops it), then whether it succeeded.
type InvocationOutcome = Arc<Mutex<Option<bool>>>;

type SupportsForcing = Arc<dyn Fn() -> bool + Send + Sync>;
type OnStopped = Arc<dyn Fn(ForcingStopped) + Send + Sync>;

/// The forcing policy of one session.
pub(crate) struct ResolveForcing {
    store: PendingActionStore,
    queue: ToolChoiceQueue,
    runtime: ResolveRuntime,
    limit: u32,
    supports_forcing: SupportsForcing,
    on_stopped: OnStopped,
    state: Mutex<State>,
    this: Weak<ResolveForcing>,
}

impl ResolveForcing {
    pub(crate) fn new(
        runtime: ResolveRuntime,
        queue: ToolChoiceQueue,
        limit: u32,
        supports_forcing: SupportsForcing,
        on_stopped: OnStopped,
    ) -> Arc<Self> {
        Arc::new_cyclic(|this| ResolveForcing {
            store: runtime.store().clone(),
            queue,
            runtime,
            limit: limit.max(1),
            supports_forcing,
            on_stopped,
            state: Mutex::new(State::default()),
            this: this.clone(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        pi_agent_core::lock(&self.state)
    }

    /// True after the breaker tripped for the current pending actions.
    pub(crate) fn stopped(&self) -> bool {
        self.lock().stopped
    }

    /// The tool choice of the next model call: the queue's next value, except that a forcing
    /// directive whose actions were all resolved meanwhile is dropped (never force a `resolve`
    /// that can only fail), and a choice naming an inactive tool is rejected as `unavailable`
    /// and the call is not forced.
    ///
    /// It is asked once before every model call, so it also marks every pending action as seen:
    /// from this call on, the model has the preview in its context and may resolve it.
    pub(crate) fn next_tool_choice(&self, is_active: impl Fn(&str) -> bool) -> Option<ToolChoice> {
        self.store.mark_seen();
        loop {
            let choice = self.queue.next_tool_choice()?;
            let forcing = self
                .queue
                .in_flight_label()
                .is_some_and(|l| is_pending_action_label(&l));
            if forcing && self.store.is_empty() {
                self.queue.reject(RejectReason::Removed);
                continue;
            }
            if let ToolChoice::Tool(name) = &choice
                && !is_active(name)
            {
                self.queue.reject(RejectReason::Unavailable);
                return None;
            }
            return Some(choice);
        }
    }

    /// A preview was staged: force `resolve`. Counting starts afresh unless the preview came from
    /// a call that was forced to `resolve` (staging more instead of resolving is not resolving).
    pub(crate) fn on_push(&self) {
        let during_forced_call = self
            .queue
            .in_flight_label()
            .is_some_and(|l| is_pending_action_label(&l));
        if !during_forced_call {
            let mut state = self.lock();
            state.failures = 0;
            state.stopped = false;
        }
        self.ensure_directive();
    }

    /// The pending actions were dropped (a new or switched session): start afresh.
    pub(crate) fn reset(&self) {
        let mut state = self.lock();
        state.failures = 0;
        state.stopped = false;
    }

    /// A `resolve` invocation finished.
    pub(crate) fn on_outcome(&self, outcome: &ResolveOutcome) {
        let mut state = self.lock();
        if outcome.remaining == 0 {
            state.failures = 0;
            state.stopped = false;
        }
    }

    /// The turn ended: settle the in-flight choice by the assistant message's stop reason, then
    /// make sure forcing continues while something is pending.
    pub(crate) fn finish_turn(&self, stop_reason: StopReason) {
        if self.queue.has_in_flight() {
            match stop_reason {
                StopReason::Aborted => self.queue.reject(RejectReason::Aborted),
                StopReason::Error => self.queue.reject(RejectReason::Error),
                _ => self.queue.resolve(),
            }
        }
        self.ensure_directive();
    }

    /// Queues the forcing directive if something is pending, the breaker has not tripped, the
    /// model can be forced, and no such directive is queued or in flight.
    pub(crate) fn ensure_directive(&self) {
        let Some(top) = self.store.peek() else {
            return;
        };
        if self.stopped() || !(self.supports_forcing)() {
            return;
        }
        let queued = self
            .queue
            .in_flight_label()
            .is_some_and(|l| is_pending_action_label(&l))
            || self.queue.inspect().iter().any(|l| is_pending_action_label(l));
        if queued {
            return;
        }
        let outcome = InvocationOutcome::default();
        let invoker = {
            let resolve = self.runtime.invoker();
            let outcome = outcome.clone();
            let invoker: Invoker = Arc::new(move |args| {
                let run = resolve(args);
                let outcome = outcome.clone();
                Box::pin(async move {
                    let result = run.await;
                    *pi_agent_core::lock(&outcome) = Some(result.is_ok());
                    result
                })
            });
            invoker
        };
        let resolved = self.this.clone();
        let rejected = self.this.clone();
        let options = DirectiveOptions::new()
            .label(format!("{PENDING_ACTION_LABEL_PREFIX}{}", top.source_tool_name))
            .now()
            .on_resolved(move |_| {
                if let Some(forcing) = resolved.upgrade() {
                    let ok = *outcome.lock().unwrap_or_else(|p| p.into_inner());
                    forcing.on_resolved(ok);
                }
            })
            .on_rejected(move |_, reason| match rejected.upgrade() {
                Some(forcing) => forcing.on_rejected(reason),
                None => RejectOutcome::Drop,
            })
            .on_invoked(invoker);
        self.queue
            .push_once(ToolChoice::Tool(RESOLVE_TOOL_NAME.to_owned()), options);
    }

    /// The forced call ran `resolve`: it counts as a failure when the invocation failed, and not
    /// at all when it never returned (an abort cut it off; the next turn forces again).
    fn on_resolved(&self, invocation_ok: Option<bool>) {
        match invocation_ok {
            Some(true) => self.lock().failures = 0,
            Some(false) => {
                self.record_failure();
            }
            None => {}
        }
    }

    fn on_rejected(&self, reason: RejectReason) -> RejectOutcome {
        if self.store.is_empty() {
            return RejectOutcome::Drop;
        }
        match reason {
            RejectReason::Cleared | RejectReason::Removed => RejectOutcome::Drop,
            RejectReason::Aborted => RejectOutcome::Requeue,
            RejectReason::NotInvoked | RejectReason::Error | RejectReason::Unavailable => self.record_failure(),
        }
    }

    /// Counts a failed forced call; trips the breaker at the limit.
    fn record_failure(&self) -> RejectOutcome {
        let tripped = {
            let mut state = self.lock();
            state.failures += 1;
            if state.failures >= self.limit && !state.stopped {
                state.stopped = true;
                Some(state.failures)
            } else if state.stopped {
                return RejectOutcome::Drop;
            } else {
                None
            }
        };
        let Some(attempts) = tripped else {
            return RejectOutcome::Requeue;
        };
        let top = self.store.peek();
        (self.on_stopped)(ForcingStopped {
            label: top.as_ref().map(|a| a.label.clone()).unwrap_or_default(),
            source_tool_name: top.map(|a| a.source_tool_name).unwrap_or_default(),
            attempts,
        });
        RejectOutcome::Drop
    }
}

// Properties of the store, the runtime and forcing together; a child module, so that they can read
// the breaker's count.
#[cfg(test)]
#[path = "forcing_props.rs"]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::{PendingAction, PendingError};
    use crate::resolve::{ResolveAction, ResolveParams};
    use pi_agent_core::ToolResult;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicU8, AtomicUsize};

    const LIMIT: u32 = 3;

    /// What the model does with one call.
    #[derive(Debug, Clone, Copy)]
    enum Call {
        /// Answers without calling `resolve`.
        Ignore,
        /// Calls `resolve` with this action.
        Resolve(ResolveAction),
        /// The call ends in an error.
        Error,
        /// The user aborts the call.
        Abort,
        /// Stages another preview instead of calling `resolve`.
        Stage,
        /// Calls `resolve`, and the user aborts while it runs (the invocation is dropped).
        AbortWhileResolving,
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// A preview whose apply fails this many times first.
        Push(u8),
        Call(Call),
    }

    fn op() -> impl Strategy<Value = Op> {
        let call = prop_oneof![
            3 => Just(Call::Ignore),
            3 => Just(Call::Resolve(ResolveAction::Apply)),
            1 => Just(Call::Resolve(ResolveAction::Discard)),
            1 => Just(Call::Error),
            1 => Just(Call::Abort),
            1 => Just(Call::Stage),
            1 => Just(Call::AbortWhileResolving),
        ];
        prop_oneof![1 => (0u8..4).prop_map(Op::Push), 4 => call.prop_map(Op::Call)]
    }

    fn forcing_directives(queue: &ToolChoiceQueue) -> usize {
        let in_flight = queue.in_flight_label().is_some_and(|l| is_pending_action_label(&l));
        usize::from(in_flight) + queue.inspect().iter().filter(|l| is_pending_action_label(l)).count()
    }

    fn push(store: &PendingActionStore, n: usize, failures: u8) {
        let attempts = Arc::new(AtomicU8::new(0));
        store.push(PendingAction::new(format!("action {n}"), "prop", move |_, _| {
            let attempt = attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                if attempt < failures {
                    Err(PendingError::Other("no".into()))
                } else {
                    Ok(ToolResult::text("ok"))
                }
            }
        }));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The queue never serves a stale forced `resolve` (nothing pending) or a duplicate one
        /// (two forcing directives at once), and a model that does not resolve is forced at most
        /// `LIMIT` calls in a row.
        #[test]
        fn forcing_is_never_stale_duplicated_or_unbounded(ops in prop::collection::vec(op(), 1..80)) {
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            rt.block_on(async {
                let store = PendingActionStore::new();
                let runtime = ResolveRuntime::new(store.clone());
                let queue = ToolChoiceQueue::new();
                let stops = Arc::new(AtomicUsize::new(0));
                let stop_counter = stops.clone();
                let forcing = ResolveForcing::new(
                    runtime.clone(),
                    queue.clone(),
                    LIMIT,
                    Arc::new(|| true),
                    Arc::new(move |_| {
                        stop_counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }),
                );
                let on_push = forcing.clone();
                store.subscribe_push(move |_, _| on_push.on_push());
                let on_outcome = forcing.clone();
                runtime.subscribe(move |outcome| on_outcome.on_outcome(outcome));

                // Forced calls since the last push or successful resolution (aborts excluded).
                let mut streak = 0u32;
                for (n, op) in ops.into_iter().enumerate() {
                    match op {
                        Op::Push(failures) => {
                            push(&store, n, failures);
                            streak = 0;
                        }
                        Op::Call(call) => {
                            let had_pending = store.has_pending();
                            let choice = forcing.next_tool_choice(|_| true);
                            let is_forced = choice == Some(ToolChoice::Tool(RESOLVE_TOOL_NAME.into()));
                            prop_assert!(!is_forced || had_pending, "stale forced resolve");
                            if is_forced && !matches!(call, Call::Abort | Call::AbortWhileResolving) {
                                streak += 1;
                                prop_assert!(streak <= LIMIT, "forced {} calls in a row", streak);
                            }
                            let stop_reason = match call {
                                Call::Ignore => StopReason::Stop,
                                Call::Resolve(action) => {
                                    let params = ResolveParams::new(action, "prop");
                                    let result = match queue.peek_in_flight_invoker() {
                                        Some(invoker) => invoker(serde_json::to_value(&params).unwrap()).await,
                                        None => runtime.resolve(params).await,
                                    };
                                    if result.is_ok() {
                                        streak = 0;
                                    }
                                    StopReason::ToolUse
                                }
                                Call::Error => StopReason::Error,
                                Call::Abort => StopReason::Aborted,
                                Call::Stage => {
                                    push(&store, n, 0);
                                    if !is_forced {
                                        streak = 0;
                                    }
                                    StopReason::ToolUse
                                }
                                Call::AbortWhileResolving => {
                                    if let Some(invoker) = queue.peek_in_flight_invoker() {
                                        let params = ResolveParams::new(ResolveAction::Apply, "prop");
                                        // Started, then dropped before it returns.
                                        drop(invoker(serde_json::to_value(&params).unwrap()));
                                    }
                                    // The loop still ends the turn with the assistant's stop reason.
                                    StopReason::ToolUse
                                }
                            };
                            forcing.finish_turn(stop_reason);
                        }
                    }
                    prop_assert!(forcing_directives(&queue) <= 1, "duplicate forcing directives");
                    if store.is_empty() {
                        prop_assert!(!forcing.stopped());
                    } else if !forcing.stopped() {
                        prop_assert_eq!(forcing_directives(&queue), 1, "pending but not forced");
                    }
                }
                Ok(())
            })?;
        }
    }
}
