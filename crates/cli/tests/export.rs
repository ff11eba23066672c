//! `pi --export`: its output and errors as pi gives them, and the export opened in a real browser
//! — headless Chromium loads the file and its DOM is checked (messages, tool names, highlighted
//! code, images, both branches of the tree).
//!
//! The browser test needs Chromium (`PI_CHROMIUM`, else `/usr/bin/chromium` or `chromium` on the
//! PATH). Without it the test prints `skipped: …` loudly and passes, unless `PI_REQUIRE_CHROMIUM`
//! is set (`.ci/run` installs Debian's package with `.ci/ensure-chromium` and sets it, so CI
//! cannot skip it).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const PI: &str = env!("CARGO_BIN_EXE_pi");

/// A 2×2 red PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4z8DAwMDAwMAAAA0AAf/L0XAAAAAASUVORK5CYII=";

fn entry(id: &str, parent: Option<&str>, second: u32, body: Value) -> String {
    let mut line = json!({"id": id, "parentId": parent, "timestamp": format!("2026-11-26T10:00:{second:02}.000Z")});
    for (key, value) in body.as_object().unwrap() {
        line[key] = value.clone();
    }
    line.to_string()
}

fn assistant(content: Value, stop: &str) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": content, "api": "openai-completions",
        "provider": "mock", "model": "mock-model", "stopReason": stop, "timestamp": 1,
        "usage": {"input": 1500, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1520,
            "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.012}}}})
}

fn result(call: &str, tool: &str, content: Value, details: Value) -> Value {
    json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call, "toolName": tool,
        "content": content, "details": details, "isError": false, "timestamp": 1}})
}

/// A session file with every kind of entry pi writes, and a second branch from the first answer.
fn session_file(dir: &Path) -> PathBuf {
    let call =
        |id: &str, name: &str, args: Value| json!({"type": "toolCall", "id": id, "name": name, "arguments": args});
    let lines = [
        json!({"type": "session", "version": 3, "id": "0193a1b2-0000-4000-8000-000000000001",
            "timestamp": "2026-11-26T10:00:00.000Z", "cwd": "/home/ann/app"})
        .to_string(),
        entry(
            "e0000001",
            None,
            1,
            json!({"type": "model_change", "provider": "mock", "modelId": "mock-model"}),
        ),
        entry(
            "e0000002",
            Some("e0000001"),
            2,
            json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
        ),
        entry(
            "e0000003",
            Some("e0000002"),
            3,
            json!({"type": "message", "message": {"role": "user", "timestamp": 1,
            "content": [{"type": "text", "text": "Look at **this** screenshot"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]}}),
        ),
        entry(
            "e0000004",
            Some("e0000003"),
            4,
            assistant(
                json!([
                    {"type": "thinking", "thinking": "The user wants a look around."},
                    {"type": "text", "text": "Let me look.\n\n```rust\nfn main() { println!(\"hi\"); }\n```"},
                    call("c1", "bash", json!({"command": "ls -la"})),
                    call("c2", "read", json!({"path": "/home/ann/app/src/main.rs"})),
                    call("c3", "write", json!({"path": "notes.md", "content": "# Notes"})),
                    call("c4", "edit", json!({"path": "src/lib.rs", "oldText": "old", "newText": "new"})),
                    call("c5", "ls", json!({"path": "src"})),
                    call("c6", "grep", json!({"pattern": "TODO"})),
                ]),
                "toolUse",
            ),
        ),
        entry(
            "e0000005",
            Some("e0000004"),
            5,
            result(
                "c1",
                "bash",
                json!([{"type": "text", "text": "total 0\nCargo.toml"}]),
                Value::Null,
            ),
        ),
        entry(
            "e0000006",
            Some("e0000005"),
            6,
            result(
                "c2",
                "read",
                json!([{"type": "text", "text": "fn main() {\n    let answer = 42;\n}"}]),
                Value::Null,
            ),
        ),
        entry(
            "e0000007",
            Some("e0000006"),
            7,
            result(
                "c3",
                "write",
                json!([{"type": "text", "text": "Wrote 7 bytes"}]),
                Value::Null,
            ),
        ),
        entry(
            "e0000008",
            Some("e0000007"),
            8,
            result(
                "c4",
                "edit",
                json!([{"type": "text", "text": "Edited"}]),
                json!({"diff": "-1 old\n+1 new"}),
            ),
        ),
        entry(
            "e0000009",
            Some("e0000008"),
            9,
            result(
                "c5",
                "ls",
                json!([{"type": "text", "text": "lib.rs\nmain.rs"}]),
                Value::Null,
            ),
        ),
        entry(
            "e0000010",
            Some("e0000009"),
            10,
            result(
                "c6",
                "grep",
                json!([{"type": "text", "text": "lib.rs:1: TODO"}]),
                Value::Null,
            ),
        ),
        entry(
            "e0000011",
            Some("e0000010"),
            11,
            assistant(
                json!([{"type": "text", "text": "All done on the main branch."}]),
                "stop",
            ),
        ),
        entry(
            "e0000012",
            Some("e0000011"),
            12,
            json!({"type": "message", "message": {"role": "bashExecution",
            "command": "cargo test", "output": "ok", "exitCode": 0, "cancelled": false, "timestamp": 1}}),
        ),
        entry(
            "e0000013",
            Some("e0000012"),
            13,
            json!({"type": "custom_message", "customType": "reminder",
            "content": "Remember the tests", "display": true}),
        ),
        entry(
            "e0000014",
            Some("e0000013"),
            14,
            json!({"type": "compaction", "summary": "We looked around.",
            "firstKeptEntryId": "e0000011", "tokensBefore": 45678}),
        ),
        entry(
            "e0000015",
            Some("e0000014"),
            15,
            json!({"type": "label", "targetId": "e0000003", "label": "start"}),
        ),
        entry(
            "e0000016",
            Some("e0000015"),
            16,
            json!({"type": "session_info", "name": "browser demo"}),
        ),
        entry(
            "e0000017",
            Some("e0000016"),
            17,
            json!({"type": "custom", "customType": "state", "data": {"n": 1}}),
        ),
        // The other branch, from the first answer, newer: the leaf.
        entry(
            "e0000018",
            Some("e0000004"),
            18,
            json!({"type": "branch_summary", "fromId": "e0000004",
            "summary": "Tried the **other** way."}),
        ),
        entry(
            "e0000019",
            Some("e0000018"),
            19,
            json!({"type": "message", "message": {"role": "user",
            "content": "A question on the side branch", "timestamp": 1}}),
        ),
        entry(
            "e0000020",
            Some("e0000019"),
            20,
            assistant(json!([{"type": "text", "text": "The side answer."}]), "stop"),
        ),
    ];
    let path = dir.join("2026-11-26T10-00-00-000Z_0193a1b2.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// `pi <args>` in `dir` with nothing of the tester's environment but `PATH` (as `Sandbox` runs it).
fn pi(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(PI)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("PI_CODING_AGENT_DIR", dir.join("agent"))
        .output()
        .unwrap()
}

#[test]
fn export_writes_pis_default_file_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_file(dir.path());
    let out = pi(dir.path(), &["--export", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Exported to: pi-session-2026-11-26T10-00-00-000Z_0193a1b2.html\n"
    );
    let html = std::fs::read_to_string(dir.path().join("pi-session-2026-11-26T10-00-00-000Z_0193a1b2.html")).unwrap();
    assert!(html.contains("The side answer."));

    let out = pi(dir.path(), &["--export", file.to_str().unwrap(), "named.html"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Exported to: named.html\n");
    assert!(dir.path().join("named.html").exists());
}

#[test]
fn export_of_a_missing_file_fails_as_pi_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = pi(dir.path(), &["--export", "missing.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: File not found: missing.jsonl\n"
    );
    assert!(out.stdout.is_empty());
}

/// Chromium to test with, or `None` (after saying so) when the test may skip.
fn chromium() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("PI_CHROMIUM").map(PathBuf::from),
        Some(PathBuf::from("/usr/bin/chromium")),
        which("chromium"),
    ];
    if let Some(found) = candidates.into_iter().flatten().find(|p| p.is_file()) {
        return Some(found);
    }
    assert!(
        std::env::var_os("PI_REQUIRE_CHROMIUM").is_none(),
        "PI_REQUIRE_CHROMIUM is set but Chromium is not installed (run .ci/ensure-chromium)"
    );
    eprintln!(
        "skipped: the HTML export was NOT opened in a browser: Chromium not found (run .ci/ensure-chromium, or set PI_CHROMIUM)"
    );
    None
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

#[test]
fn the_export_opens_in_headless_chromium_with_every_entry() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = session_file(dir.path());
    let page = dir.path().join("export.html");
    let out = pi(
        dir.path(),
        &["--export", file.to_str().unwrap(), page.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let profile = dir.path().join("chromium-profile");
    let run = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && dom.contains("</html>"),
        "chromium failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The page's script ran to its end in the browser.
    assert!(
        dom.contains("data-ready=\"true\""),
        "the page script did not finish:\n{dom}"
    );
    for needle in [
        // messages (markdown rendered), thinking, the header
        "<strong>this</strong>",
        "The user wants a look around.",
        "Session: 0193a1b2-0000-4000-8000-000000000001",
        "Session Export: browser demo",
        // the built-in tools as pi's export renders them
        "$ ls -la",
        "<span class=\"tool-name\">read</span>",
        "<span class=\"tool-name\">write</span>",
        "<span class=\"tool-name\">edit</span>",
        "<span class=\"tool-name\">ls</span>",
        "<span class=\"tool-name\">grep</span>",
        "<div class=\"diff-added\">+1 new</div>",
        "$ cargo test",
        // highlighted code: a fenced block and the file `read` returned
        "<code class=\"language-rust\"><span class=\"hl-source hl-rust\">",
        "hl-storage hl-type",
        // images as data URIs, the user's and the tool's
        "<img src=\"data:image/png;base64,iVBORw0KGgo",
        "class=\"message-image\"",
        // compaction, branch summary, custom message, model change
        "Compacted from 45,678 tokens",
        "Branch Summary",
        "<strong>other</strong>",
        "[reminder]",
        "Switched to model: <span class=\"model-name\">mock/mock-model</span>",
        // the tree: both branches, the label, the status line
        "<span class=\"tree-label\">[start]</span>",
        "A question on the side branch",
        "All done on the main branch.",
        "├─ ",
        "└─ ",
        "entries</div>",
    ] {
        assert!(dom.contains(needle), "the DOM lacks {needle:?}");
    }
    // The leaf's branch is shown, the other one is in the DOM but hidden until picked.
    let entry_tag = |id: &str| {
        let at = dom
            .find(&format!("data-entry=\"{id}\""))
            .unwrap_or_else(|| panic!("entry {id} missing"));
        let start = dom[..at].rfind('<').unwrap();
        dom[start..at + dom[at..].find('>').unwrap()].to_owned()
    };
    assert!(!entry_tag("e0000020").contains("hidden"), "{}", entry_tag("e0000020"));
    assert!(entry_tag("e0000011").contains("hidden"), "{}", entry_tag("e0000011"));
    // Nothing was loaded from anywhere.
    assert!(!dom.contains("src=\"http"), "the page loads something from the network");
}
