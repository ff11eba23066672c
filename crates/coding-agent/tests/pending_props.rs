//! Property: the pending-action stack resolves in reverse push order under any interleaving of
//! pushes, applies that succeed or fail, and discards (SPEC §9).

#![allow(clippy::unwrap_used)]

use pi_agent_core::ToolResult;
use pi_coding_agent::resolve::{NO_PENDING_ACTION, ResolveAction, ResolveParams, ResolveRuntime};
use pi_coding_agent::resolve::{PendingAction, PendingActionStore, PendingError};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Push an action whose apply fails this many times before it succeeds.
    Push(u8),
    Apply,
    Discard,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..3).prop_map(Op::Push),
        2 => Just(Op::Apply),
        1 => Just(Op::Discard),
    ]
}

fn action(label: String, failures: u8) -> PendingAction {
    let attempts = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
    let text = label.clone();
    PendingAction::new(label, "prop", move |_, _| {
        let attempt = attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let text = text.clone();
        async move {
            if attempt < failures {
                Err(PendingError::Other(format!("{text} failed")))
            } else {
                Ok(ToolResult::text(text))
            }
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_stack_is_lifo_and_only_successes_leave_it(ops in prop::collection::vec(op(), 1..60)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let store = PendingActionStore::new();
            let resolver = ResolveRuntime::new(store.clone());
            // The model: labels bottom to top, with the failures each apply has left.
            let mut model: Vec<(String, u8)> = Vec::new();
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push(failures) => {
                        let label = format!("action {n}");
                        store.push(action(label.clone(), failures));
                        model.push((label, failures));
                    }
                    Op::Apply | Op::Discard => {
                        let which = if matches!(op, Op::Apply) { ResolveAction::Apply } else { ResolveAction::Discard };
                        let result = resolver
                            .resolve(ResolveParams::new(which, "prop"))
                            .await
                            .map(|r| r.content[0].as_text().unwrap_or_default().to_owned())
                            .map_err(|e| e.message().to_owned());
                        match model.last_mut() {
                            None => prop_assert_eq!(result, Err(NO_PENDING_ACTION.to_owned())),
                            Some((label, failures)) => match which {
                                ResolveAction::Apply if *failures > 0 => {
                                    *failures -= 1;
                                    prop_assert_eq!(result, Err(format!("Apply failed: {label} failed")));
                                }
                                ResolveAction::Apply => {
                                    prop_assert_eq!(result, Ok(label.clone()));
                                    model.pop();
                                }
                                ResolveAction::Discard => {
                                    prop_assert_eq!(result, Ok(format!("Discarded: {label}. Reason: prop")));
                                    model.pop();
                                }
                            },
                        }
                    }
                }
                let labels: Vec<String> = model.iter().map(|(l, _)| l.clone()).collect();
                prop_assert_eq!(store.labels(), labels);
            }
            Ok(())
        })?;
    }
}
