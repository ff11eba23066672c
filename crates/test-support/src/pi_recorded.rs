//! Request bodies recorded from pi 0.73.1, the reference our requests are compared with.
//!
//! The files are in `crates/test-support/data/pi-0.73.1/` (see its `README.md` for how they were
//! recorded): each is the JSON body pi sent for `pi --no-session -p … hi` with the arguments its
//! name says, to a capturing server on 127.0.0.1 configured as a `models.json` provider per API
//! (`cc`: openai-completions, `cr`: openai-responses, `an`: anthropic-messages; models `plain`
//! and `think` (`reasoning: true`), with pi's defaults otherwise).
//!
//! ```
//! let body = pi_test_support::pi_recorded::body("cc-plain");
//! assert_eq!(body["max_completion_tokens"], 16384);
//! ```

use serde_json::Value;

/// The recorded body `name` (the file name without `.json`).
///
/// # Panics
/// When there is no such recording or it is not JSON (a test setup error).
pub fn body(name: &str) -> Value {
    let path = format!("{}/data/pi-0.73.1/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The system prompt of a recorded body, whatever the API put it in.
///
/// # Panics
/// When the body has no system prompt where its API puts it.
pub fn system_prompt(body: &Value) -> String {
    let text = if let Some(system) = body.get("system") {
        &system[0]["text"]
    } else if let Some(input) = body.get("input") {
        &input[0]["content"]
    } else {
        &body["messages"][0]["content"]
    };
    text.as_str().expect("a recorded system prompt").to_owned()
}

/// The date pi wrote into the recorded prompts (`Current date: …`).
pub const RECORDED_DATE: &str = "2026-11-26";
