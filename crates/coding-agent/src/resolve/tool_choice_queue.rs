//! The tool-choice queue: one-shot or sequenced overrides of the next model calls' tool choice.
//!
//! A [`ToolChoiceQueue`] holds *directives*. Each directive yields one or more [`ToolChoice`]s, one
//! per model call, and carries a label and three optional callbacks. The session asks the queue
//! once per model call ([`ToolChoiceQueue::next_tool_choice`]); the value it hands out is *in
//! flight* until the turn ends, when the session settles it with [`ToolChoiceQueue::resolve`] or
//! [`ToolChoiceQueue::reject`]. At most one value is in flight at a time.
//!
//! * `on_resolved(choice)` fires when the served choice is settled successfully.
//! * `on_rejected(choice, reason)` fires when it is not; returning [`RejectOutcome::Requeue`]
//!   puts the same choice back at the head of the queue (label `<label>-requeued`, same
//!   callbacks), so only the lost call is replayed.
//! * `on_invoked(args)` makes the directive demand that the forced tool actually runs: the tool
//!   calls it through [`ToolChoiceQueue::peek_in_flight_invoker`], and a turn that ends without
//!   that call is rejected as [`RejectReason::NotInvoked`] instead of resolved.
//!
//! This is oh-my-pi's `ToolChoiceQueue` (`reference/omp.md` §1.7); the session uses it to force
//! `resolve` while a preview is pending and for the user's `/force <tool>`.
//!
//! ```
//! use pi_agent_core::ToolChoice;
//! use pi_coding_agent::resolve::{DirectiveOptions, RejectOutcome, RejectReason, ToolChoiceQueue};
//!
//! let queue = ToolChoiceQueue::new();
//! queue.push_sequence(
//!     [ToolChoice::Tool("write".into()), ToolChoice::None],
//!     DirectiveOptions::new().label("user-force").on_rejected(|_, _| RejectOutcome::Requeue),
//! );
//! assert_eq!(queue.next_tool_choice(), Some(ToolChoice::Tool("write".into())));
//! // The model call failed: the lost choice comes back first.
//! queue.reject(RejectReason::Error);
//! assert_eq!(queue.next_tool_choice(), Some(ToolChoice::Tool("write".into())));
//! queue.resolve();
//! assert_eq!(queue.next_tool_choice(), Some(ToolChoice::None));
//! queue.resolve();
//! assert_eq!(queue.next_tool_choice(), None);
//! assert_eq!(queue.consume_last_served_label().as_deref(), Some("user-force"));
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use pi_agent_core::{ToolChoice, ToolError, ToolResult};
use serde_json::Value;

/// Why an in-flight choice was not resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The model call was aborted.
    Aborted,
    /// The model call ended in an error.
    Error,
    /// [`ToolChoiceQueue::clear`] ran.
    Cleared,
    /// [`ToolChoiceQueue::remove_by_label`] removed the directive.
    Removed,
    /// The choice names a tool that is not active.
    Unavailable,
    /// The directive wanted its tool to run and the model did not call it.
    NotInvoked,
}

impl RejectReason {
    /// The reason as oh-my-pi spells it (`not_invoked`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::Aborted => "aborted",
            RejectReason::Error => "error",
            RejectReason::Cleared => "cleared",
            RejectReason::Removed => "removed",
            RejectReason::Unavailable => "unavailable",
            RejectReason::NotInvoked => "not_invoked",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `on_rejected` wants done with the lost choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RejectOutcome {
    /// Serve the same choice again, before anything else.
    Requeue,
    /// Forget it (the default when there is no callback).
    #[default]
    Drop,
}

/// `on_resolved(choice)`.
pub type OnResolved = Arc<dyn Fn(&ToolChoice) + Send + Sync>;
/// `on_rejected(choice, reason)`.
pub type OnRejected = Arc<dyn Fn(&ToolChoice, RejectReason) -> RejectOutcome + Send + Sync>;
/// `on_invoked(args)`: what the forced tool runs when the model calls it.
pub type Invoker = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync>;

/// Label and callbacks of a directive; built with the chained setters.
#[derive(Clone, Default)]
pub struct DirectiveOptions {
    label: Option<String>,
    now: bool,
    callbacks: Callbacks,
}

impl fmt::Debug for DirectiveOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectiveOptions")
            .field("label", &self.label)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl DirectiveOptions {
    /// No label (`anonymous`), appended at the tail, no callbacks.
    pub fn new() -> Self {
        DirectiveOptions::default()
    }

    /// Sets the label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Inserts the directive at the head of the queue instead of the tail.
    #[must_use]
    pub fn now(mut self) -> Self {
        self.now = true;
        self
    }

    /// Sets `on_resolved`.
    #[must_use]
    pub fn on_resolved(mut self, callback: impl Fn(&ToolChoice) + Send + Sync + 'static) -> Self {
        self.callbacks.on_resolved = Some(Arc::new(callback));
        self
    }

    /// Sets `on_rejected`.
    #[must_use]
    pub fn on_rejected(
        mut self,
        callback: impl Fn(&ToolChoice, RejectReason) -> RejectOutcome + Send + Sync + 'static,
    ) -> Self {
        self.callbacks.on_rejected = Some(Arc::new(callback));
        self
    }

    /// Sets `on_invoked`.
    #[must_use]
    pub fn on_invoked(mut self, invoker: Invoker) -> Self {
        self.callbacks.on_invoked = Some(invoker);
        self
    }
}

#[derive(Clone, Default)]
struct Callbacks {
    on_resolved: Option<OnResolved>,
    on_rejected: Option<OnRejected>,
    on_invoked: Option<Invoker>,
}

struct Directive {
    label: String,
    choices: std::iter::Peekable<Box<dyn Iterator<Item = ToolChoice> + Send>>,
    callbacks: Callbacks,
}

impl Directive {
    fn new(label: String, choices: Box<dyn Iterator<Item = ToolChoice> + Send>, callbacks: Callbacks) -> Self {
        Directive {
            label,
            choices: choices.peekable(),
            callbacks,
        }
    }
}

struct InFlight {
    label: String,
    choice: ToolChoice,
    callbacks: Callbacks,
    invoked: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Directive>,
    in_flight: Option<InFlight>,
    last_served: Option<String>,
}

/// The session's queue of tool-choice directives. Clones share the queue.
///
/// Callbacks run outside the queue's lock, so they may use the queue.
#[derive(Clone, Default)]
pub struct ToolChoiceQueue {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for ToolChoiceQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolChoiceQueue")
            .field("queued", &self.inspect())
            .field("in_flight", &self.in_flight_label())
            .finish()
    }
}

impl ToolChoiceQueue {
    /// An empty queue.
    pub fn new() -> Self {
        ToolChoiceQueue::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        pi_agent_core::lock(&self.state)
    }

    /// Queues a directive yielding `choice` once.
    pub fn push_once(&self, choice: ToolChoice, options: DirectiveOptions) {
        self.push(std::iter::once(choice), options);
    }

    /// Queues a directive yielding `choices` in order, one per model call.
    pub fn push_sequence(&self, choices: impl IntoIterator<Item = ToolChoice>, options: DirectiveOptions) {
        let choices: Vec<ToolChoice> = choices.into_iter().collect();
        self.push(choices.into_iter(), options);
    }

    /// Queues a directive yielding whatever `choices` yields; `now` puts it at the head.
    pub fn push(&self, choices: impl Iterator<Item = ToolChoice> + Send + 'static, options: DirectiveOptions) {
        let label = options.label.unwrap_or_else(|| "anonymous".to_owned());
        let mut directive = Directive::new(label, Box::new(choices), options.callbacks);
        if directive.choices.peek().is_none() {
            return;
        }
        let mut state = self.lock();
        if options.now {
            state.queue.push_front(directive);
        } else {
            state.queue.push_back(directive);
        }
    }

    /// The tool choice for the next model call: advances the head directive (a directive leaves
    /// the queue with its last value) and records the value as in flight, replacing any earlier
    /// in-flight record. `None` when the queue is empty.
    pub fn next_tool_choice(&self) -> Option<ToolChoice> {
        let mut state = self.lock();
        loop {
            let head = state.queue.front_mut()?;
            let Some(choice) = head.choices.next() else {
                state.queue.pop_front();
                continue;
            };
            let in_flight = InFlight {
                label: head.label.clone(),
                choice: choice.clone(),
                callbacks: head.callbacks.clone(),
                invoked: Arc::new(AtomicBool::new(false)),
            };
            if head.choices.peek().is_none() {
                state.queue.pop_front();
            }
            state.in_flight = Some(in_flight);
            return Some(choice);
        }
    }

    /// Settles the in-flight choice as served. A directive with `on_invoked` whose invoker was
    /// not called is rejected with [`RejectReason::NotInvoked`] instead. No-op when nothing is in
    /// flight.
    pub fn resolve(&self) {
        let Some(in_flight) = self.lock().in_flight.take() else {
            return;
        };
        if in_flight.callbacks.on_invoked.is_some() && !in_flight.invoked.load(Ordering::SeqCst) {
            self.settle_rejected(in_flight, RejectReason::NotInvoked, true);
            return;
        }
        self.lock().last_served = Some(in_flight.label.clone());
        if let Some(on_resolved) = &in_flight.callbacks.on_resolved {
            on_resolved(&in_flight.choice);
        }
    }

    /// Settles the in-flight choice as lost; `on_rejected` decides whether it is served again.
    /// No-op when nothing is in flight.
    pub fn reject(&self, reason: RejectReason) {
        let Some(in_flight) = self.lock().in_flight.take() else {
            return;
        };
        self.settle_rejected(in_flight, reason, true);
    }

    fn settle_rejected(&self, in_flight: InFlight, reason: RejectReason, allow_requeue: bool) {
        let outcome = match &in_flight.callbacks.on_rejected {
            Some(on_rejected) => on_rejected(&in_flight.choice, reason),
            None => RejectOutcome::Drop,
        };
        if allow_requeue && outcome == RejectOutcome::Requeue {
            let requeued = Directive::new(
                format!("{}-requeued", in_flight.label),
                Box::new(std::iter::once(in_flight.choice)),
                in_flight.callbacks,
            );
            self.lock().queue.push_front(requeued);
        }
    }

    /// The in-flight directive's `on_invoked`, wrapped so that calling it marks the directive as
    /// invoked; `None` when nothing is in flight or the directive has no invoker.
    pub fn peek_in_flight_invoker(&self) -> Option<Invoker> {
        let state = self.lock();
        let in_flight = state.in_flight.as_ref()?;
        let invoker = in_flight.callbacks.on_invoked.clone()?;
        let invoked = in_flight.invoked.clone();
        Some(Arc::new(move |args| {
            invoked.store(true, Ordering::SeqCst);
            invoker(args)
        }))
    }

    /// Rejects the in-flight choice with [`RejectReason::Removed`] if its label is `label`, then
    /// drops every queued directive labelled `label`.
    pub fn remove_by_label(&self, label: &str) {
        let in_flight = {
            let mut state = self.lock();
            if state.in_flight.as_ref().is_some_and(|f| f.label == label) {
                state.in_flight.take()
            } else {
                None
            }
        };
        if let Some(in_flight) = in_flight {
            self.settle_rejected(in_flight, RejectReason::Removed, true);
        }
        self.lock().queue.retain(|directive| directive.label != label);
    }

    /// Rejects the in-flight choice with [`RejectReason::Cleared`] (its callback fires, but a
    /// requeue it asks for is not honoured), empties the queue and forgets the last served label.
    pub fn clear(&self) {
        let in_flight = {
            let mut state = self.lock();
            state.queue.clear();
            state.last_served = None;
            state.in_flight.take()
        };
        if let Some(in_flight) = in_flight {
            self.settle_rejected(in_flight, RejectReason::Cleared, false);
        }
    }

    /// The label of the last resolved directive, once; later calls return `None` until another
    /// directive is resolved.
    pub fn consume_last_served_label(&self) -> Option<String> {
        self.lock().last_served.take()
    }

    /// Whether a served choice waits to be settled.
    pub fn has_in_flight(&self) -> bool {
        self.lock().in_flight.is_some()
    }

    /// The label of the in-flight directive.
    pub fn in_flight_label(&self) -> Option<String> {
        self.lock().in_flight.as_ref().map(|f| f.label.clone())
    }

    /// The labels of the queued directives, head first (the in-flight one is not included).
    pub fn inspect(&self) -> Vec<String> {
        self.lock().queue.iter().map(|d| d.label.clone()).collect()
    }

    /// True when nothing is queued and nothing is in flight.
    pub fn is_empty(&self) -> bool {
        let state = self.lock();
        state.queue.is_empty() && state.in_flight.is_none()
    }
}
