//! The Node extension host against pi 0.73.1 itself: the module shims give the answers of pi's
//! own packages (a probe recorded from them), and every extension pi ships in
//! `examples/extensions/` loads in one host, its registrations snapshotted.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::extension_support::{ExtHost, context, write};
use pi_test_support::pi073;
use serde_json::{Value, json};

/// What the probe extension computes with the shims; the same code run on pi 0.73.1's own
/// `@mariozechner/pi-tui` and `@mariozechner/pi-coding-agent` gave `PI_0_73_1_ANSWERS`.
const SHIM_PROBE: &str = include_str!("extension_support/shim_probe.mjs");

/// The probe's answers from pi 0.73.1's own packages (recorded with Node 20 from the npm package).
const PI_0_73_1_ANSWERS: &str = include_str!("extension_support/pi-0.73.1-shim-answers.json");

#[tokio::test]
async fn the_shims_answer_as_pi_0_73_1s_own_packages() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(dir.path(), "probe.mjs", SHIM_PROBE);
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    host.call(
        "command",
        json!({"name": "probe", "args": "", "context": context(dir.path(), json!({}))}),
    )
    .await;
    let notified = host.sent_of("ui.notify");
    let ours: Value = serde_json::from_str(notified[0]["message"].as_str().unwrap()).unwrap();
    let pis: Value = serde_json::from_str(PI_0_73_1_ANSWERS).unwrap();
    for (key, expected) in pis.as_object().unwrap() {
        assert_eq!(&ours[key], expected, "{key}");
    }
    host.shutdown().await;
}

// --- pi 0.73.1's shipped extensions ---------------------------------------------------------

/// The entry of each example under `examples/extensions` (copied to `dir`): a `.ts` file, or a
/// folder's package.json `pi.extensions[0]`, else its `index.ts`. By name.
fn example_entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "README.md")
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = dir.join(&name);
            if !path.is_dir() {
                return (name, path);
            }
            let manifest = std::fs::read_to_string(path.join("package.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok());
            let entry = manifest
                .as_ref()
                .and_then(|m| m["pi"]["extensions"][0].as_str())
                .map_or_else(|| path.join("index.ts"), |e| path.join(e));
            (name, entry)
        })
        .collect()
}

/// Copies directory `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// One extension's registration as a few readable lines.
fn describe(name: &str, registration: &Value) -> String {
    let mut out = format!("{name}\n");
    if let Some(error) = registration["error"].as_str() {
        // The message of a missing package names the file that imports it: keep the first line.
        let first = error.lines().next().unwrap_or_default();
        let first = first.split(" imported from ").next().unwrap_or(first);
        out.push_str(&format!("  error: {first}\n"));
        return out;
    }
    let list = |key: &str| registration[key].as_array().cloned().unwrap_or_default();
    for tool in list("tools") {
        let params: Vec<String> = tool["parameters"]["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let mut marks = Vec::new();
        for (key, mark) in [
            ("hasRenderCall", "renderCall"),
            ("hasRenderResult", "renderResult"),
            ("promptSnippet", "snippet"),
        ] {
            if !tool[key].is_null() {
                marks.push(mark);
            }
        }
        if let Some(mode) = tool["executionMode"].as_str() {
            marks.push(mode);
        }
        out.push_str(&format!(
            "  tool {}({}) {:?}\n",
            tool["name"].as_str().unwrap_or("?"),
            params.join(", "),
            marks
        ));
    }
    for command in list("commands") {
        let completes = if command["hasCompletions"] == true {
            " [completions]"
        } else {
            ""
        };
        out.push_str(&format!("  /{}{completes}\n", command["name"].as_str().unwrap_or("?")));
    }
    for flag in list("flags") {
        out.push_str(&format!(
            "  --{} {} default={}\n",
            flag["name"].as_str().unwrap_or("?"),
            flag["type"].as_str().unwrap_or("?"),
            flag["default"]
        ));
    }
    for shortcut in list("shortcuts") {
        out.push_str(&format!(
            "  shortcut {}\n",
            shortcut["shortcut"].as_str().unwrap_or("?")
        ));
    }
    let events: Vec<&str> = registration["events"]
        .as_array()
        .map(|e| e.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !events.is_empty() {
        out.push_str(&format!("  events: {}\n", events.join(", ")));
    }
    for renderer in list("messageRenderers") {
        out.push_str(&format!("  renderer {}\n", renderer.as_str().unwrap_or("?")));
    }
    for provider in list("providers") {
        let models = provider["config"]["models"].as_array().map_or(0, Vec::len);
        out.push_str(&format!(
            "  provider {} ({models} models)\n",
            provider["name"].as_str().unwrap_or("?")
        ));
    }
    out
}

#[tokio::test]
async fn every_extension_pi_0_73_1_ships_loads_in_one_host() {
    let found = pi073::package(&pi073::process_env);
    let Some(package) = pi073::or_skip("pi 0.73.1's example extensions", found, &pi073::process_env) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let examples = dir.path().join("extensions");
    copy_dir(&package.join("examples/extensions"), &examples);
    let entries = example_entries(&examples);
    // 72: the 73 of issue 16 counted `examples/extensions/README.md`.
    assert_eq!(entries.len(), 72, "pi 0.73.1 ships 72 extensions");
    let paths: Vec<PathBuf> = entries.iter().map(|(_, path)| path.clone()).collect();
    let Some(mut host) = ExtHost::start(&paths, dir.path()).await else {
        return;
    };
    let init = host.initialize(dir.path()).await;
    let registrations = init["extensions"].as_array().unwrap();
    assert_eq!(registrations.len(), entries.len());
    let mut report = String::new();
    for ((name, path), registration) in entries.iter().zip(registrations) {
        assert_eq!(registration["path"], path.display().to_string());
        report.push_str(&describe(name, registration));
    }
    let failed = registrations.iter().filter(|r| r.get("error").is_some()).count();
    report.push_str(&format!("\n{} of {} load\n", entries.len() - failed, entries.len()));
    insta::assert_snapshot!(report);

    // Their handlers and tools run in the shared process (print mode: no UI).
    let ctx = context(dir.path(), json!({"hasUI": false, "isIdle": false}));
    let event = |event: Value| json!({"event": event, "context": ctx.clone()});
    let gate = host
        .call(
            "event",
            event(
                json!({"type": "tool_call", "toolCallId": "t1", "toolName": "bash", "input": {"command": "rm -rf /"}}),
            ),
        )
        .await;
    assert_eq!(
        gate,
        json!({"block": true, "reason": "Dangerous command blocked (no UI for confirmation)"})
    );
    let protected = host
        .call("event", event(json!({"type": "tool_call", "toolCallId": "t2", "toolName": "write", "input": {"path": ".env", "content": "x"}})))
        .await;
    assert_eq!(
        protected,
        json!({"block": true, "reason": "Path \".env\" is protected"})
    );
    let input = host
        .call(
            "event",
            event(json!({"type": "input", "text": "?quick what is rust", "source": "interactive"})),
        )
        .await;
    assert_eq!(
        input,
        json!({"action": "transform", "text": "Respond briefly in 1-2 sentences: what is rust"})
    );
    let hello = host
        .call(
            "execute",
            json!({"callId": "h1", "tool": "hello", "params": {"name": "pi"}, "context": ctx.clone()}),
        )
        .await;
    assert_eq!(
        hello,
        json!({"content": [{"type": "text", "text": "Hello, pi!"}], "details": {"greeted": "pi"}})
    );
    host.shutdown().await;
}
