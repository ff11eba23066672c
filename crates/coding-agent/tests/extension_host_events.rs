//! The `event` request of the Node extension host: the handlers of the extensions one process
//! hosts chained in registration order by the contract's rules (`docs/extension-host.md`), and
//! what a handler that throws does.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::extension_support::{ExtHost, context, write};
use serde_json::{Value, json};

/// Extensions whose handlers exercise every chaining rule; `order` records who ran.
fn chaining_extensions(dir: &Path) -> Vec<PathBuf> {
    let a = write(
        dir,
        "a.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("tool_call", (event) => {
    if (event.input.command === "throw") throw new Error("a cannot decide");
    if (event.toolName === "bash") event.input.command = `set -e; ${event.input.command}`;
    if (event.input.command?.includes("rm -rf")) return { block: true, reason: "a blocks rm -rf" };
  });
  pi.on("tool_result", () => ({ content: [{ type: "text", text: "from a" }] }));
  pi.on("input", (event) => {
    if (event.text === "stop") return { action: "handled" };
    return { action: "transform", text: event.text + " [a]" };
  });
  pi.on("before_agent_start", (event, ctx) => ({
    systemPrompt: `${ctx.getSystemPrompt()} +a`,
    message: { customType: "a", content: "from a", display: true },
  }));
  pi.on("context", (event) => ({ messages: [...event.messages, { role: "user", content: "a" }] }));
  pi.on("before_provider_request", (event) => ({ ...event.payload, a: true }));
  pi.on("message_end", (event) => ({ message: { ...event.message, content: event.message.content + " a" } }));
  pi.on("session_before_switch", () => ({ cancel: false }));
  pi.on("resources_discover", () => { throw new Error("a failed in resources_discover"); });
  pi.on("resources_discover", () => ({ skillPaths: ["/skills/a"] }));
}
"#,
    );
    let b = write(
        dir,
        "b.mjs",
        r#"export default function (pi) {
  pi.on("tool_call", (event) => {
    if (event.input.command?.includes("rm -rf")) return { block: true, reason: "b blocks too" };
    if (event.toolName === "bash") event.input.timeout = 5;
  });
  pi.on("tool_result", (event) => ({ details: { seen: event.content[0].text }, isError: false }));
  pi.on("input", (event) => ({ action: "transform", text: event.text + " [b]", images: [{ type: "image", data: "x", mimeType: "image/png" }] }));
  pi.on("before_agent_start", (event, ctx) => ({
    systemPrompt: `${event.systemPrompt} +b (${ctx.getSystemPrompt().length})`,
    message: { customType: "b", content: "from b", display: false },
  }));
  pi.on("context", (event) => ({ messages: event.messages.slice(1) }));
  pi.on("before_provider_request", (event) => undefined);
  pi.on("message_end", () => undefined);
  pi.on("session_before_switch", () => ({ cancel: true }));
  pi.on("resources_discover", () => ({ skillPaths: ["/skills/b"], promptPaths: ["/prompts/b"] }));
  pi.on("agent_end", () => { throw new Error("b failed in agent_end"); });
}
"#,
    );
    vec![a, b]
}

#[tokio::test]
async fn event_results_chain_in_registration_order_by_the_contracts_rules() {
    let dir = tempfile::tempdir().unwrap();
    let entries = chaining_extensions(dir.path());
    let Some(mut host) = ExtHost::start(&entries, dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    let ctx = context(dir.path(), json!({"isIdle": false}));
    let event = |event: Value| json!({"event": event, "context": ctx.clone()});

    // tool_call: input mutated in place by both, in order; no block.
    let r = host
        .call(
            "event",
            event(json!({"type": "tool_call", "toolCallId": "t1", "toolName": "bash", "input": {"command": "ls"}})),
        )
        .await;
    assert_eq!(r, json!({"input": {"command": "set -e; ls", "timeout": 5}}));
    // tool_call: the first block wins (with the input as mutated so far).
    let r = host
        .call(
            "event",
            event(
                json!({"type": "tool_call", "toolCallId": "t2", "toolName": "bash", "input": {"command": "rm -rf /"}}),
            ),
        )
        .await;
    assert_eq!(
        r,
        json!({"block": true, "reason": "a blocks rm -rf", "input": {"command": "set -e; rm -rf /"}})
    );
    // tool_call of a tool no handler changes: null.
    let r = host
        .call(
            "event",
            event(json!({"type": "tool_call", "toolCallId": "t3", "toolName": "read", "input": {"path": "x"}})),
        )
        .await;
    assert_eq!(r, Value::Null);
    // tool_result: patches merged; b sees a's content.
    let r = host
        .call("event", event(json!({"type": "tool_result", "toolCallId": "t1", "toolName": "bash", "input": {}, "content": [{"type": "text", "text": "orig"}], "details": null, "isError": true})))
        .await;
    assert_eq!(
        r,
        json!({"content": [{"type": "text", "text": "from a"}], "details": {"seen": "from a"}, "isError": false})
    );
    // input: transforms chain; images carried.
    let r = host
        .call(
            "event",
            event(json!({"type": "input", "text": "hi", "source": "interactive"})),
        )
        .await;
    assert_eq!(
        r,
        json!({"action": "transform", "text": "hi [a] [b]", "images": [{"type": "image", "data": "x", "mimeType": "image/png"}]})
    );
    // input: the first `handled` wins.
    let r = host
        .call(
            "event",
            event(json!({"type": "input", "text": "stop", "source": "rpc"})),
        )
        .await;
    assert_eq!(r, json!({"action": "handled"}));
    // before_agent_start: the system prompt chains (ctx.getSystemPrompt sees it), messages collect.
    let r = host
        .call("event", event(json!({"type": "before_agent_start", "prompt": "p", "systemPrompt": "You are pi.", "systemPromptOptions": {}})))
        .await;
    assert_eq!(
        r,
        json!({
            "systemPrompt": "You are pi. +a +b (14)",
            "messages": [
                {"customType": "a", "content": "from a", "display": true},
                {"customType": "b", "content": "from b", "display": false},
            ],
        })
    );
    // context: replacements chain.
    let r = host
        .call(
            "event",
            event(json!({"type": "context", "messages": [{"role": "user", "content": "0"}]})),
        )
        .await;
    assert_eq!(r, json!({"messages": [{"role": "user", "content": "a"}]}));
    // before_provider_request: a replaces, b keeps (undefined).
    let r = host
        .call(
            "event",
            event(json!({"type": "before_provider_request", "payload": {"model": "m"}})),
        )
        .await;
    assert_eq!(r, json!({"payload": {"model": "m", "a": true}}));
    // message_end: a replaces, b keeps.
    let r = host
        .call(
            "event",
            event(json!({"type": "message_end", "message": {"role": "user", "content": "x"}})),
        )
        .await;
    assert_eq!(r, json!({"message": {"role": "user", "content": "x a"}}));
    // session_before_*: the first cancel wins.
    let r = host
        .call(
            "event",
            event(json!({"type": "session_before_switch", "reason": "new"})),
        )
        .await;
    assert_eq!(r, json!({"cancel": true}));
    // resources_discover: paths collected.
    let r = host
        .call(
            "event",
            event(json!({"type": "resources_discover", "cwd": "/", "reason": "startup"})),
        )
        .await;
    assert_eq!(
        r,
        json!({"skillPaths": ["/skills/a", "/skills/b"], "promptPaths": ["/prompts/b"]})
    );
    // ... and a handler that throws there is reported while the chain goes on.
    assert_eq!(
        host.sent_of("extension.error"),
        [
            json!({"extension": entries[0].display().to_string(), "event": "resources_discover", "message": "a failed in resources_discover"})
        ]
    );
    // An event nobody listens to: null.
    let r = host
        .call(
            "event",
            event(json!({"type": "turn_start", "turnIndex": 0, "timestamp": 1})),
        )
        .await;
    assert_eq!(r, Value::Null);
    // Another event's handler that throws: reported, the event answered.
    let r = host
        .call("event", event(json!({"type": "agent_end", "messages": []})))
        .await;
    assert_eq!(r, Value::Null);
    assert_eq!(
        host.sent_of("extension.error")[1],
        json!({"extension": entries[1].display().to_string(), "event": "agent_end", "message": "b failed in agent_end"})
    );
    // A tool_call handler that throws ends the event, as in pi: an error naming its extension.
    let error = host
        .call_err(
            "event",
            event(json!({"type": "tool_call", "toolCallId": "t4", "toolName": "bash", "input": {"command": "throw"}})),
        )
        .await;
    assert_eq!(error["message"], "a cannot decide");
    assert_eq!(error["data"]["extension"], entries[0].display().to_string());
    host.shutdown().await;
}

#[tokio::test]
async fn user_bash_operations_run_in_the_host_and_compaction_handlers_get_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "remote.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("user_bash", (event) => {
    if (event.command === "local") return undefined;
    return {
      operations: {
        async exec(command: string, cwd: string, { onData }: { onData: (chunk: Buffer) => void }) {
          onData(Buffer.from(`remote ${command} in ${cwd}\n`));
          onData(Buffer.from("done"));
          return { exitCode: 3 };
        },
      },
    };
  });
  pi.on("user_bash", () => ({ result: { output: "from the second handler", exitCode: 0, cancelled: false, truncated: false } }));
  pi.on("session_before_compact", (event) => ({
    compaction: {
      summary: `signal: ${event.signal instanceof AbortSignal && !event.signal.aborted}`,
      firstKeptEntryId: "e1",
      tokensBefore: 10,
    },
  }));
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    let ctx = context(dir.path(), json!({}));
    let event = |event: Value| json!({"event": event, "context": ctx.clone()});
    let r = host
        .call(
            "event",
            event(json!({"type": "user_bash", "command": "ls", "excludeFromContext": false, "cwd": "/srv"})),
        )
        .await;
    assert_eq!(
        r,
        json!({"result": {"output": "remote ls in /srv\ndone", "exitCode": 3, "cancelled": false, "truncated": false}})
    );
    // The first handler leaves `local` alone: the second's result wins.
    let r = host
        .call(
            "event",
            event(json!({"type": "user_bash", "command": "local", "excludeFromContext": true, "cwd": "/srv"})),
        )
        .await;
    assert_eq!(
        r,
        json!({"result": {"output": "from the second handler", "exitCode": 0, "cancelled": false, "truncated": false}})
    );
    let r = host
        .call(
            "event",
            event(json!({"type": "session_before_compact", "preparation": {}, "branchEntries": []})),
        )
        .await;
    assert_eq!(
        r,
        json!({"compaction": {"summary": "signal: true", "firstKeptEntryId": "e1", "tokensBefore": 10}})
    );
    host.shutdown().await;
}
