//! Short forms for scripting [`FauxModel`], the in-process model of `pi_agent_core::faux`, and
//! for reading back what it was asked.
//!
//! ```
//! use pi_agent_core::faux::FauxModel;
//! use pi_test_support::scripted;
//! use serde_json::json;
//!
//! let faux = FauxModel::new();
//! faux.set_responses([
//!     scripted::tool_call("c1", "read", json!({"path": "a.txt"})),
//!     scripted::text("Done."),
//! ]);
//! assert_eq!(faux.pending_response_count(), 2);
//! assert!(scripted::forced_choices(&faux).is_empty(), "no call yet");
//! ```

use pi_agent_core::ToolChoice;
use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use serde_json::Value;

/// A response calling one tool: `name` with `arguments`, as call `id`.
pub fn tool_call(id: &str, name: &str, arguments: Value) -> FauxResponse {
    faux_assistant_message(vec![faux_tool_call(id, name, arguments)]).into()
}

/// A response of plain text.
pub fn text(text: &str) -> FauxResponse {
    faux_assistant_text(text).into()
}

/// The forced tool choice of every call the model got so far, in order (`None` where the call
/// was not forced).
pub fn forced_choices(faux: &FauxModel) -> Vec<Option<ToolChoice>> {
    faux.calls().into_iter().map(|call| call.tool_choice).collect()
}

/// `Some(ToolChoice::Tool(name))`: a call forced to use `name`, as [`forced_choices`] lists it.
pub fn forced(name: &str) -> Option<ToolChoice> {
    Some(ToolChoice::Tool(name.into()))
}
