//! The `context` pi sends with `execute` and `session` (pi's `CustomToolContext`, current at every
//! call): the change of the current branch since what the process holds, the session file, the
//! model, and — once per process — the model registry (`docs/custom-tools.md`).

use std::sync::Arc;

use pi_ai::ModelRegistry;
use serde_json::{Map, Value, json};

use crate::custom_tools::{SessionView, ToolSessionEvent};

/// What pi has told one process so far.
#[derive(Default)]
pub(crate) struct SentContext {
    /// The ids of the branch the process holds, root first.
    branch: Vec<String>,
    /// The registry the process was given (kept alive so that the pointer stays its own).
    registry: Option<Arc<ModelRegistry>>,
}

/// The `context` of an `execute`: `session: {keep, entries, sessionFile}` (keep the first `keep`
/// entries held, then append `entries`), `model`, and `modelRegistry` when the process has not
/// had it yet.
pub(crate) fn execute_context(view: &dyn SessionView, sent: &mut SentContext) -> Value {
    let delta = view.branch_since(&sent.branch);
    delta.apply_to(&mut sent.branch);
    let mut context = Map::new();
    context.insert(
        "session".into(),
        json!({"keep": delta.keep, "entries": delta.entries, "sessionFile": view.session_file()}),
    );
    add_models(view, sent, &mut context);
    Value::Object(context)
}

/// The `context` of a `session` event: the event's entries become what the process holds, so
/// only `model` (and `modelRegistry` when new) is added.
pub(crate) fn session_context(view: &dyn SessionView, sent: &mut SentContext, event: &ToolSessionEvent) -> Value {
    sent.branch = event.entries.iter().map(|entry| entry.id.clone()).collect();
    let mut context = Map::new();
    add_models(view, sent, &mut context);
    Value::Object(context)
}

fn add_models(view: &dyn SessionView, sent: &mut SentContext, context: &mut Map<String, Value>) {
    context.insert(
        "model".into(),
        view.model()
            .and_then(|model| serde_json::to_value(model).ok())
            .unwrap_or(Value::Null),
    );
    let Some(registry) = view.registry() else { return };
    if sent.registry.as_ref().is_some_and(|had| Arc::ptr_eq(had, &registry)) {
        return;
    }
    context.insert("modelRegistry".into(), registry_json(&registry));
    sent.registry = Some(registry);
}

/// `{models: [Model], available: [index]}`: every model, and which have a key configured (or need
/// none) — without resolving any key.
fn registry_json(registry: &ModelRegistry) -> Value {
    let models = registry.all();
    let available: Vec<usize> = models
        .iter()
        .enumerate()
        .filter(|(_, model)| registry.has_auth(model))
        .map(|(index, _)| index)
        .collect();
    json!({"models": models, "available": available})
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Mutex;

    use pi_agent_core::Model;
    use pi_session_store::{EntryKind, SessionEntry};

    use super::*;
    use crate::custom_tools::{BranchDelta, SessionReason};

    struct Fixed {
        branch: Mutex<Vec<SessionEntry>>,
        registry: Arc<ModelRegistry>,
    }

    impl SessionView for Fixed {
        fn branch_since(&self, known: &[String]) -> BranchDelta {
            let branch = self.branch.lock().unwrap();
            BranchDelta::between(known, &branch.iter().collect::<Vec<_>>())
        }
        fn session_file(&self) -> Option<PathBuf> {
            Some(PathBuf::from("/s/x.jsonl"))
        }
        fn model(&self) -> Option<Model> {
            self.registry.find("openai", "gpt-5.1").cloned()
        }
        fn registry(&self) -> Option<Arc<ModelRegistry>> {
            Some(self.registry.clone())
        }
    }

    fn entry(id: &str) -> SessionEntry {
        SessionEntry::new(id, None, "", EntryKind::SessionInfo { name: None })
    }

    #[test]
    fn execute_sends_only_what_the_process_lacks() {
        let registry = ModelRegistry::builtin().with_env(|name| (name == "OPENAI_API_KEY").then(|| "k".into()));
        let view = Fixed {
            branch: Mutex::new(vec![entry("a"), entry("b")]),
            registry: Arc::new(registry),
        };
        let mut sent = SentContext::default();
        let first = execute_context(&view, &mut sent);
        assert_eq!(first["session"]["keep"], 0);
        assert_eq!(first["session"]["entries"].as_array().map(Vec::len), Some(2));
        assert_eq!(first["session"]["sessionFile"], "/s/x.jsonl");
        assert_eq!(first["model"]["id"], "gpt-5.1");
        let models = first["modelRegistry"]["models"].as_array().unwrap();
        let available: Vec<&str> = first["modelRegistry"]["available"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                models[usize::try_from(i.as_u64().unwrap()).unwrap()]["provider"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert!(
            !available.is_empty() && available.iter().all(|p| *p == "openai"),
            "{available:?}"
        );

        view.branch.lock().unwrap().push(entry("c"));
        let second = execute_context(&view, &mut sent);
        assert_eq!(second["session"]["keep"], 2);
        assert_eq!(second["session"]["entries"][0]["id"], "c");
        assert!(second.get("modelRegistry").is_none(), "the registry is sent once");

        // A session event replaces what the process holds: the next execute is relative to it.
        let mut event = ToolSessionEvent::empty(SessionReason::Tree);
        event.entries = Arc::new(vec![entry("a")]);
        let context = session_context(&view, &mut sent, &event);
        assert!(context.get("session").is_none());
        assert_eq!(context["model"]["id"], "gpt-5.1");
        let third = execute_context(&view, &mut sent);
        assert_eq!(third["session"]["keep"], 1);
        let ids: Vec<&str> = third["session"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["b", "c"]);
    }
}
