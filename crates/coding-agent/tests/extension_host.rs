//! The Node extension host (`node host.mjs --extensions <entries>`, protocol version 2) driven by
//! a scripted fake pi (`extension_support`): registrations of several extensions in one process,
//! load failures, every chaining rule of the `event` request, commands and their context calls,
//! tools with updates and abort, `create*Tool` through `tools.execute`, late registrations,
//! rendering; then every extension pi 0.73.1 ships, loaded and its registrations snapshotted.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::extension_support::{ExtHost, context, write};
use serde_json::{Value, json};

/// Two extensions: one TypeScript (with a helper module and an async factory), one JavaScript.
fn two_extensions(dir: &Path) -> Vec<PathBuf> {
    write(
        dir,
        "lib/greet.ts",
        "export const greet = (name: string): string => `Hello, ${name}!`;\n",
    );
    let first = write(
        dir,
        "first.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { StringEnum } from "@mariozechner/pi-ai";
import { Text } from "@mariozechner/pi-tui";
import { greet } from "./lib/greet.js";

export default async function (pi: ExtensionAPI) {
  await new Promise((resolve) => setTimeout(resolve, 5));
  pi.registerTool({
    name: "greet",
    label: "Greet",
    description: "Greets someone",
    promptSnippet: "Greet people",
    promptGuidelines: ["Use greet when asked to greet."],
    parameters: Type.Object({ name: Type.String(), tone: Type.Optional(StringEnum(["warm", "cold"] as const)) }),
    executionMode: "sequential",
    async execute(_id, params) {
      return { content: [{ type: "text", text: greet(params.name) }], details: { name: params.name } };
    },
    renderCall(args, theme) {
      return new Text(theme.bold(`greet ${args.name}`), 0, 0);
    },
    renderResult(result, { expanded }) {
      return new Text(`${result.details.name}${expanded ? " (expanded)" : ""}`, 1, 0);
    },
  });
  pi.registerCommand("hello", { description: "Say hello", handler: async () => {} });
  pi.registerFlag("loud", { description: "Shout", type: "boolean", default: false });
  pi.on("session_start", async () => {});
  pi.on("tool_call", async () => {});
}
"#,
    );
    let second = write(
        dir,
        "second.mjs",
        r#"export default function (pi) {
  pi.registerCommand("deploy", {
    description: "Deploy",
    getArgumentCompletions: (prefix) => ["dev", "prod"].filter((e) => e.startsWith(prefix)).map((e) => ({ value: e, label: e })),
    handler: async () => {},
  });
  pi.registerShortcut("ctrl+shift+p", { description: "Plan", handler: async (ctx) => ctx.ui.notify(`flag of another extension: ${pi.getFlag("loud")}`) });
  pi.registerMessageRenderer("note", () => undefined);
  pi.registerProvider("proxy", { baseUrl: "http://127.0.0.1:9", apiKey: "PROXY_KEY", api: "openai-completions", models: [] });
  pi.on("tool_call", () => {});
  pi.on("input", () => {});
}
"#,
    );
    vec![first, second]
}

#[tokio::test]
async fn several_extensions_register_in_one_process_and_a_failing_one_is_reported_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = two_extensions(dir.path());
    let throws = write(
        dir.path(),
        "throws.ts",
        "export default function () { throw new Error(\"boom at load\"); }\n",
    );
    let missing = write(
        dir.path(),
        "missing.mjs",
        "import { nope } from \"./nowhere.mjs\";\nexport default () => nope;\n",
    );
    let no_default = write(dir.path(), "no-default.mjs", "export const x = 1;\n");
    entries.insert(1, throws.clone());
    entries.extend([missing.clone(), no_default.clone()]);
    let Some(mut host) = ExtHost::start(&entries, dir.path()).await else {
        return;
    };
    let init = host.initialize(dir.path()).await;
    let list = init["extensions"].as_array().unwrap();
    assert_eq!(list.len(), 5, "{init}");
    assert_eq!(
        list[0],
        json!({
            "path": entries[0].display().to_string(),
            "tools": [{
                "name": "greet",
                "label": "Greet",
                "description": "Greets someone",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "tone": {"type": "string", "enum": ["warm", "cold"]},
                    },
                    "required": ["name"],
                },
                "executionMode": "sequential",
                "promptSnippet": "Greet people",
                "promptGuidelines": ["Use greet when asked to greet."],
                "hasRenderCall": true,
                "hasRenderResult": true,
            }],
            "commands": [{"name": "hello", "description": "Say hello"}],
            "flags": [{"name": "loud", "type": "boolean", "description": "Shout", "default": false}],
            "shortcuts": [],
            "events": ["session_start", "tool_call"],
            "messageRenderers": [],
            "providers": [],
        })
    );
    assert_eq!(
        list[1],
        json!({"path": throws.display().to_string(), "error": "Failed to load extension: boom at load"})
    );
    assert_eq!(
        list[2],
        json!({
            "path": entries[2].display().to_string(),
            "tools": [],
            "commands": [{"name": "deploy", "description": "Deploy", "hasCompletions": true}],
            "flags": [],
            "shortcuts": [{"shortcut": "ctrl+shift+p", "description": "Plan"}],
            "events": ["tool_call", "input"],
            "messageRenderers": ["note"],
            "providers": [{"name": "proxy", "config": {"baseUrl": "http://127.0.0.1:9", "apiKey": "PROXY_KEY", "api": "openai-completions", "models": []}}],
        })
    );
    assert_eq!(list[3]["path"], missing.display().to_string());
    let error = list[3]["error"].as_str().unwrap();
    assert!(
        error.starts_with("Failed to load extension: Cannot find module"),
        "{error}"
    );
    assert_eq!(
        list[4],
        json!({"path": no_default.display().to_string(), "error": "Failed to load extension: Extension must export a default function"})
    );
    // The others work: the tool of the first runs.
    let result = host
        .call("execute", json!({"callId": "c1", "tool": "greet", "params": {"name": "Ada"}, "context": context(dir.path(), json!({}))}))
        .await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "Hello, Ada!"}], "details": {"name": "Ada"}})
    );
    // As in pi, an extension reads only its own flags (the first's `loud` is not the second's); a
    // shortcut's key compares in lower case.
    host.notify("flags", json!({"values": {"loud": true}})).await;
    host.call(
        "shortcut",
        json!({"shortcut": "Ctrl+Shift+P", "context": context(dir.path(), json!({}))}),
    )
    .await;
    assert_eq!(
        host.sent_of("ui.notify"),
        [json!({"message": "flag of another extension: undefined"})]
    );
    host.shutdown().await;
}

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
async fn commands_shortcuts_and_completions_reach_pi_through_their_context() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "commands.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("work", {
    description: "Does work",
    getArgumentCompletions: (prefix: string) => prefix === "none" ? null : [{ value: `${prefix}1`, label: "one", description: "first" }],
    handler: async (args, ctx) => {
      const choice = await ctx.ui.select("Pick", ["a", "b"], { timeout: 1000 });
      const ok = await ctx.ui.confirm("Sure?", "Really");
      const name = await ctx.ui.input("Name", "placeholder");
      const text = await ctx.ui.editor("Edit", "prefill");
      ctx.ui.notify(`args=${args} choice=${choice} ok=${ok} name=${name} text=${text}`, "info");
      ctx.ui.setStatus("k", "busy");
      ctx.ui.setStatus("k", undefined);
      ctx.ui.setWidget("w", ["l1", "l2"], { placement: "belowEditor" });
      ctx.ui.setTitle("title");
      ctx.ui.setEditorText("draft");
      ctx.ui.setWorkingMessage("working");
      ctx.ui.setFooter(() => ({ render: () => [] }));
      const custom = await ctx.ui.custom(() => ({ render: () => [] }));
      await pi.sendMessage({ customType: "note", content: "hi", display: true }, { triggerTurn: true, deliverAs: "steer" });
      await pi.sendUserMessage("go", { deliverAs: "followUp" });
      await pi.appendEntry("state", { n: ctx.sessionManager.getEntries().length });
      await pi.setSessionName("named");
      await pi.setLabel("e1", undefined);
      await pi.setActiveTools(["read"]);
      const switched = await pi.setModel({ provider: "anthropic", id: "claude" });
      await pi.setThinkingLevel("high");
      await ctx.waitForIdle();
      const created = await ctx.newSession({ parentSession: "/s.jsonl" });
      const forked = await ctx.fork("e1", { position: "at" });
      const navigated = await ctx.navigateTree("e1", { summarize: true, label: "L" });
      const other = await ctx.switchSession("/other.jsonl");
      await ctx.reload();
      ctx.compact({ customInstructions: "short" });
      ctx.abort();
      ctx.shutdown();
      ctx.ui.notify(JSON.stringify({
        custom: custom === undefined, switched, created, forked, navigated, other,
        name: pi.getSessionName(), active: pi.getActiveTools(), level: pi.getThinkingLevel(),
        leaf: ctx.sessionManager.getLeafId(), id: ctx.sessionManager.getSessionId(), idle: ctx.isIdle(),
        usage: ctx.getContextUsage(), prompt: ctx.getSystemPrompt(), model: ctx.model?.id, cwd: ctx.cwd === process.cwd(),
        flag: pi.getFlag("mode"), commands: pi.getCommands().map((c) => c.name), signal: ctx.signal === undefined,
      }));
    },
  });
  pi.registerFlag("mode", { type: "string", default: "fast" });
  pi.registerShortcut("ctrl+k", { description: "K", handler: async (ctx) => ctx.ui.notify(`shortcut in ${ctx.sessionManager.getSessionFile()}`) });
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    host.notify("flags", json!({"values": {"mode": "slow"}})).await;
    host.answer("ui.select", json!("b"));
    host.answer("ui.confirm", json!(true));
    host.answer("ui.input", json!("Ada"));
    host.answer("ui.editor", json!("edited"));
    host.answer("pi.setModel", json!(true));
    host.answer("ctx.newSession", json!({"cancelled": false}));
    host.answer("ctx.fork", json!({"cancelled": true}));
    host.answer("ctx.navigateTree", json!({"cancelled": false}));
    host.answer("ctx.switchSession", json!({"cancelled": false}));
    let entries = json!([
        {"type": "message", "id": "e1", "parentId": null, "message": {"role": "user", "content": "hi"}},
        {"type": "message", "id": "e2", "parentId": "e1", "message": {"role": "assistant", "content": []}},
    ]);
    let ctx = context(
        dir.path(),
        json!({
            "session": {"keep": 0, "entries": entries},
            "sessionFile": "/sessions/s1.jsonl",
            "leafId": "e2",
            "model": {"provider": "anthropic", "id": "claude-x"},
            "contextUsage": {"tokens": 10, "contextWindow": 100, "percent": 10},
            "commands": [{"name": "work", "source": "extension"}],
        }),
    );
    let r = host
        .call("command", json!({"name": "work", "args": "now", "context": ctx}))
        .await;
    assert_eq!(r, Value::Null);
    let methods: Vec<&str> = host.sent.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(
        methods,
        [
            "ui.select",
            "ui.confirm",
            "ui.input",
            "ui.editor",
            "ui.notify",
            "ui.setStatus",
            "ui.setStatus",
            "ui.setWidget",
            "ui.setTitle",
            "ui.setEditorText",
            "ui.setWorkingMessage",
            "pi.sendMessage",
            "pi.sendUserMessage",
            "pi.appendEntry",
            "pi.setSessionName",
            "pi.setLabel",
            "pi.setActiveTools",
            "pi.setModel",
            "pi.setThinkingLevel",
            "ctx.waitForIdle",
            "ctx.newSession",
            "ctx.fork",
            "ctx.navigateTree",
            "ctx.switchSession",
            "ctx.reload",
            "ctx.compact",
            "ctx.abort",
            "ctx.shutdown",
            "ui.notify",
        ]
    );
    let params = |method: &str| host.sent_of(method);
    assert_eq!(
        params("ui.select")[0],
        json!({"title": "Pick", "options": ["a", "b"], "timeout": 1000})
    );
    assert_eq!(
        params("ui.input")[0],
        json!({"title": "Name", "placeholder": "placeholder"})
    );
    assert_eq!(params("ui.editor")[0], json!({"title": "Edit", "prefill": "prefill"}));
    assert_eq!(
        params("ui.notify")[0],
        json!({"message": "args=now choice=b ok=true name=Ada text=edited", "type": "info"})
    );
    assert_eq!(
        params("ui.setStatus"),
        [json!({"key": "k", "text": "busy"}), json!({"key": "k", "text": null})]
    );
    assert_eq!(
        params("ui.setWidget")[0],
        json!({"key": "w", "lines": ["l1", "l2"], "placement": "belowEditor"})
    );
    assert_eq!(params("ui.setWorkingMessage")[0], json!({"message": "working"}));
    assert_eq!(
        params("pi.sendMessage")[0],
        json!({"message": {"customType": "note", "content": "hi", "display": true}, "options": {"triggerTurn": true, "deliverAs": "steer"}})
    );
    assert_eq!(
        params("pi.sendUserMessage")[0],
        json!({"content": "go", "options": {"deliverAs": "followUp"}})
    );
    assert_eq!(
        params("pi.appendEntry")[0],
        json!({"customType": "state", "data": {"n": 2}})
    );
    assert_eq!(params("pi.setLabel")[0], json!({"entryId": "e1", "label": null}));
    assert_eq!(
        params("pi.setModel")[0],
        json!({"provider": "anthropic", "id": "claude"})
    );
    assert_eq!(params("ctx.newSession")[0], json!({"parentSession": "/s.jsonl"}));
    assert_eq!(params("ctx.fork")[0], json!({"entryId": "e1", "position": "at"}));
    assert_eq!(
        params("ctx.navigateTree")[0],
        json!({"targetId": "e1", "summarize": true, "label": "L"})
    );
    assert_eq!(params("ctx.switchSession")[0], json!({"sessionPath": "/other.jsonl"}));
    assert_eq!(params("ctx.compact")[0], json!({"customInstructions": "short"}));
    let summary: Value = serde_json::from_str(params("ui.notify")[1]["message"].as_str().unwrap()).unwrap();
    assert_eq!(
        summary,
        json!({
            "custom": true, "switched": true, "created": {"cancelled": false}, "forked": {"cancelled": true},
            "navigated": {"cancelled": false}, "other": {"cancelled": false}, "name": "named", "active": ["read"],
            "level": "high", "leaf": "e2", "id": "s1", "idle": true,
            "usage": {"tokens": 10, "contextWindow": 100, "percent": 10}, "prompt": "You are pi.",
            "model": "claude-x", "cwd": true, "flag": "slow", "commands": ["work"], "signal": true,
        })
    );
    // Completions, and a shortcut with its context.
    let items = host
        .call("command.complete", json!({"name": "work", "prefix": "x"}))
        .await;
    assert_eq!(items, json!([{"value": "x1", "label": "one", "description": "first"}]));
    assert_eq!(
        host.call("command.complete", json!({"name": "work", "prefix": "none"}))
            .await,
        Value::Null
    );
    let ctx = context(
        dir.path(),
        json!({"sessionFile": "/sessions/s1.jsonl", "session": {"keep": 2, "entries": []}}),
    );
    host.call("shortcut", json!({"shortcut": "ctrl+k", "context": ctx}))
        .await;
    assert_eq!(
        host.sent_of("ui.notify").last().unwrap(),
        &json!({"message": "shortcut in /sessions/s1.jsonl"})
    );
    let error = host
        .call_err("command", json!({"name": "nope", "args": "", "context": {}}))
        .await;
    assert_eq!(error["message"], "Unknown command: nope");
    host.shutdown().await;
}

#[tokio::test]
async fn a_tool_streams_updates_and_is_aborted_by_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "slow.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "slow",
    label: "Slow",
    description: "Waits for abort",
    parameters: Type.Object({}),
    async execute(toolCallId, _params, signal, onUpdate, ctx) {
      onUpdate?.({ content: [{ type: "text", text: `started ${toolCallId} in ${ctx.cwd}` }], details: { step: 1 } });
      await new Promise((resolve) => signal!.addEventListener("abort", resolve, { once: true }));
      throw new Error(`aborted: ${signal!.aborted} ${ctx.signal === signal}`);
    },
  });
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    let id = host
        .request("execute", json!({"callId": "call-7", "tool": "slow", "params": {}, "context": context(dir.path(), json!({"isIdle": false}))}))
        .await;
    let update = host.until_sent("update").await;
    assert_eq!(
        update.params,
        json!({"callId": "call-7", "partial": {"content": [{"type": "text", "text": format!("started call-7 in {}", dir.path().display())}], "details": {"step": 1}}})
    );
    host.notify("cancel", json!({"callId": "call-7"})).await;
    let answer = host.response(id).await;
    assert_eq!(answer["error"]["message"], "aborted: true true", "{answer}");
    host.shutdown().await;
}

#[tokio::test]
async fn a_tool_stages_a_pending_action_that_pi_applies_and_legacy_arguments_are_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "stage.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
export default function (pi: ExtensionAPI & { pushPendingAction: Function }) {
  pi.registerTool({
    name: "stage",
    label: "Stage",
    description: "Stages a note",
    parameters: Type.Object({ text: Type.String() }),
    prepareArguments: (args: any) => (args.note !== undefined ? { text: args.note } : args),
    async execute(_id, params) {
      await pi.pushPendingAction({
        label: `note ${params.text}`,
        sourceToolName: "stage",
        details: { text: params.text },
        apply: async (reason: string) => ({ content: [{ type: "text", text: `applied ${params.text} (${reason})` }] }),
        reject: async (reason: string) => ({ content: [{ type: "text", text: `discarded (${reason})` }] }),
      });
      return { content: [{ type: "text", text: `staged ${params.text}` }] };
    },
  });
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    let ctx = context(dir.path(), json!({}));
    let staged = host
        .call(
            "execute",
            json!({"callId": "c1", "tool": "stage", "params": {"note": "old form"}, "context": ctx}),
        )
        .await;
    assert_eq!(
        staged,
        json!({"content": [{"type": "text", "text": "staged old form"}]})
    );
    let push = host.sent_of("pendingAction.push");
    assert_eq!(
        push,
        [
            json!({"actionId": "action-1", "label": "note old form", "hasReject": true, "sourceToolName": "stage", "details": {"text": "old form"}})
        ]
    );
    let applied = host
        .call(
            "pendingAction.apply",
            json!({"actionId": "action-1", "reason": "looks good"}),
        )
        .await;
    assert_eq!(
        applied,
        json!({"content": [{"type": "text", "text": "applied old form (looks good)"}]})
    );
    // Applied actions are forgotten.
    let error = host
        .call_err("pendingAction.reject", json!({"actionId": "action-1", "reason": "no"}))
        .await;
    assert_eq!(error["message"], "Unknown pending action: action-1");
    host.shutdown().await;
}

#[tokio::test]
async fn an_extensions_own_npm_dependencies_resolve_from_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("with-deps");
    write(
        &ext,
        "node_modules/shout/package.json",
        r#"{"name": "shout", "version": "1.0.0", "type": "module", "exports": "./index.js"}"#,
    );
    write(
        &ext,
        "node_modules/shout/index.js",
        "export default (text) => text.toUpperCase() + \"!\";\n",
    );
    write(
        &ext,
        "node_modules/legacy/package.json",
        r#"{"name": "legacy", "version": "1.0.0", "main": "main.js"}"#,
    );
    write(&ext, "node_modules/legacy/main.js", "exports.twice = (n) => n * 2;\n");
    let entry = write(
        &ext,
        "index.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import shout from "shout";
import { twice } from "legacy";
export default function (pi: ExtensionAPI) {
  pi.registerCommand(shout("loud"), { description: String(twice(21)), handler: async () => {} });
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    let init = host.initialize(dir.path()).await;
    assert_eq!(
        init["extensions"][0]["commands"],
        json!([{"name": "LOUD!", "description": "42"}]),
        "{init}"
    );
    host.shutdown().await;
}

#[tokio::test]
async fn create_tool_factories_run_pis_built_ins_through_tools_execute() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "wrap.ts",
        r#"import { createBashTool, createReadTool, type ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  const bash = createBashTool(process.cwd());
  const read = createReadTool(process.cwd());
  pi.registerTool({
    ...bash,
    description: `${bash.description} (audited)`,
    async execute(id, params, signal, onUpdate) {
      const result = await bash.execute(id, params, signal, onUpdate);
      return { ...result, details: { audited: true } };
    },
  });
  pi.registerTool({
    ...read,
    async execute(id, params, signal, onUpdate) {
      try {
        return await read.execute(id, params, signal, onUpdate);
      } catch (error) {
        return { content: [{ type: "text", text: `read failed: ${(error as Error).message}` }] };
      }
    },
  });
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    let init = host.initialize(dir.path()).await;
    let tools = &init["extensions"][0]["tools"];
    assert_eq!(tools[0]["name"], "bash");
    assert_eq!(
        tools[0]["parameters"]["properties"]["command"],
        json!({"type": "string", "description": "Bash command to execute"})
    );
    assert!(tools[0]["description"].as_str().unwrap().ends_with("(audited)"));
    assert_eq!(tools[1]["name"], "read");
    host.answer(
        "tools.execute",
        json!({"content": [{"type": "text", "text": "ran by pi"}], "details": {"exitCode": 0}}),
    );
    let ctx = context(dir.path(), json!({}));
    let result = host
        .call(
            "execute",
            json!({"callId": "c9", "tool": "bash", "params": {"command": "echo hi"}, "context": ctx}),
        )
        .await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "ran by pi"}], "details": {"audited": true}})
    );
    assert_eq!(
        host.sent_of("tools.execute"),
        [json!({"tool": "bash", "params": {"command": "echo hi"}, "callId": "c9"})]
    );
    // pi's error answer is the built-in's throw.
    host.script.remove("tools.execute");
    host.answer_error("tools.execute", "ENOENT: no such file: nope");
    let result = host
        .call("execute", json!({"callId": "c10", "tool": "read", "params": {"path": "nope"}, "context": context(dir.path(), json!({}))}))
        .await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "read failed: ENOENT: no such file: nope"}]})
    );
    assert_eq!(
        host.sent_of("tools.execute")[1],
        json!({"tool": "read", "params": {"path": "nope"}, "callId": "c10"})
    );
    host.shutdown().await;
}

#[tokio::test]
async fn registrations_after_loading_are_sent_as_register_and_events_cross_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let late = write(
        dir.path(),
        "late.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
export default function (pi: ExtensionAPI) {
  pi.on("session_start", async () => {
    pi.registerTool({ name: "later", label: "Later", description: "Registered late", parameters: Type.Object({}), async execute() { return { content: [] }; } });
    pi.registerProvider("late-proxy", { baseUrl: "http://127.0.0.1:9" });
  });
  pi.registerCommand("more", {
    handler: async () => {
      pi.registerCommand("extra", { description: "Extra", handler: async () => {} });
      pi.registerFlag("f", { type: "string" });
      pi.registerShortcut("alt+x", { handler: async () => {} });
      pi.on("agent_start", () => {});
      pi.registerMessageRenderer("m", () => undefined);
      pi.unregisterProvider("late-proxy");
      pi.events.emit("late:ping", { n: 1 });
    },
  });
}
"#,
    );
    let listener = write(
        dir.path(),
        "listener.mjs",
        r#"export default function (pi) {
  pi.events.on("late:ping", (data) => pi.appendEntry("pinged", data));
  pi.events.on("remote:ping", (data) => pi.appendEntry("remote", data));
}
"#,
    );
    let Some(mut host) = ExtHost::start(&[late.clone(), listener], dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    let ctx = context(dir.path(), json!({}));
    host.call(
        "event",
        json!({"event": {"type": "session_start", "reason": "startup"}, "context": ctx.clone()}),
    )
    .await;
    let path = late.display().to_string();
    assert_eq!(
        host.sent_of("register"),
        [
            json!({"path": path, "tools": [{"name": "later", "label": "Later", "description": "Registered late", "parameters": {"type": "object", "properties": {}}}]})
        ]
    );
    assert_eq!(
        host.sent_of("pi.registerProvider"),
        [json!({"name": "late-proxy", "config": {"baseUrl": "http://127.0.0.1:9"}})]
    );
    host.call("command", json!({"name": "more", "args": "", "context": ctx.clone()}))
        .await;
    host.notify(
        "events.emit",
        json!({"channel": "remote:ping", "data": {"from": "python"}}),
    )
    .await;
    // A round trip, so that the notification above was read.
    host.call("command.complete", json!({"name": "more", "prefix": ""}))
        .await;
    assert_eq!(
        host.sent_of("register")[1..],
        [
            json!({"path": path, "commands": [{"name": "extra", "description": "Extra"}]}),
            json!({"path": path, "flags": [{"name": "f", "type": "string"}]}),
            json!({"path": path, "shortcuts": [{"shortcut": "alt+x"}]}),
            json!({"path": path, "events": ["agent_start"]}),
            json!({"path": path, "messageRenderers": ["m"]}),
        ]
    );
    assert_eq!(host.sent_of("pi.unregisterProvider"), [json!({"name": "late-proxy"})]);
    assert_eq!(
        host.sent_of("pi.events.emit"),
        [json!({"channel": "late:ping", "data": {"n": 1}})]
    );
    assert_eq!(
        host.sent_of("pi.appendEntry"),
        [
            json!({"customType": "pinged", "data": {"n": 1}}),
            json!({"customType": "remote", "data": {"from": "python"}})
        ]
    );
    // The late command runs.
    host.call("command", json!({"name": "extra", "args": "", "context": ctx}))
        .await;
    host.shutdown().await;
}

#[tokio::test]
async fn tool_and_message_renderers_draw_lines_at_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = two_extensions(dir.path());
    entries.push(write(
        dir.path(),
        "renderer.ts",
        r##"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Box, Container, Markdown, Spacer, Text, truncateToWidth } from "@mariozechner/pi-tui";
export default function (pi: ExtensionAPI) {
  pi.registerMessageRenderer("note", () => { throw new Error("not called: the second extension's note renderer comes first"); });
  pi.registerMessageRenderer("card", (message, { expanded }, theme) => {
    const box = new Box(1, 0);
    box.addChild(new Text(theme.fg("accent", `note: ${message.content}`), 0, 0));
    if (expanded) box.addChild(new Markdown("# Title\n- one\n- two", 0, 0));
    const root = new Container();
    root.addChild(box);
    root.addChild(new Spacer(1));
    root.addChild(new Text(truncateToWidth("a very long line that is cut", 12), 0, 0));
    return root;
  });
}
"##,
    ));
    let Some(mut host) = ExtHost::start(&entries, dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    let call = host
        .call(
            "render",
            json!({"kind": "call", "name": "greet", "width": 20, "expanded": false, "args": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(call, json!({"lines": ["greet Ada           "]}));
    let result = host
        .call("render", json!({"kind": "result", "name": "greet", "width": 16, "expanded": true, "args": {}, "result": {"content": [], "details": {"name": "Bo"}}, "isPartial": false, "isError": false}))
        .await;
    assert_eq!(result, json!({"lines": [" Bo (expanded)  "]}));
    // As in pi, the first extension in load order that registered a type draws it: the second's
    // `note` renderer, which returns nothing, so pi draws its default.
    let note = json!({"role": "custom", "customType": "note", "content": "hello world", "display": true});
    let drawn = host
        .call(
            "render",
            json!({"kind": "message", "name": "note", "width": 14, "expanded": true, "message": note}),
        )
        .await;
    assert_eq!(drawn, Value::Null);
    let message = json!({"role": "custom", "customType": "card", "content": "hello world", "display": true});
    let drawn = host
        .call(
            "render",
            json!({"kind": "message", "name": "card", "width": 14, "expanded": true, "message": message}),
        )
        .await;
    insta::assert_snapshot!(
        drawn["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| format!("|{}|", l.as_str().unwrap()))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let none = host
        .call(
            "render",
            json!({"kind": "call", "name": "nope", "width": 10, "expanded": false, "args": {}}),
        )
        .await;
    assert_eq!(none, Value::Null);
    host.shutdown().await;
}

/// What the probe extension computes with the shims; the same code run on pi 0.73.1's own
/// `@mariozechner/pi-tui` and `@mariozechner/pi-coding-agent` gave `PI_0_73_1_ANSWERS`.
const SHIM_PROBE: &str = r##"import * as tui from "@mariozechner/pi-tui";
import * as ca from "@mariozechner/pi-coding-agent";
const plainTheme = Object.fromEntries(["heading", "link", "linkUrl", "code", "codeBlock", "codeBlockBorder", "quote", "quoteBorder", "hr", "listBullet", "bold", "italic", "underline", "strikethrough"].map((n) => [n, (s) => s]));
export default function (pi) {
  pi.registerCommand("probe", {
    handler: async (_args, ctx) => {
      const t = tui, c = ca;
      const out = {
        width: ["héllo", "日本語", "emoji 😀", "\x1b[31mred\x1b[0m", "tab\tx"].map((s) => t.visibleWidth(s)),
        truncate: [["hello world", 8], ["日本語テキスト", 5], ["\x1b[31mred text\x1b[0m", 5], ["hello", 2], ["abc", 3]].map(([s, w]) => t.truncateToWidth(s, w)),
        truncatePad: t.truncateToWidth("ab", 5, "…", true),
        wrap: t.wrapTextWithAnsi("the quick brown fox jumps over the lazy dog", 10),
        text: new t.Text("hello world", 1, 1).render(8),
        keys: ["\r", "\x1b", "\x1b[A", "\x03", "A", "\x1b[97;5u", "\x1b[1;5A", "\x1bx"].map((k) => t.parseKey(k) ?? null),
        matches: [["\x03", "ctrl+c"], ["A", "shift+a"], ["A", "a"], ["\x1b[Z", "shift+tab"], ["\r", "return"], ["\x1b", "esc"]].map(([k, id]) => t.matchesKey(k, id)),
        release: [t.isKeyRelease("\x1b[97;1:3u"), t.isKeyRelease("a")],
        keyIds: [t.Key.ctrl("c"), t.Key.ctrlShift("p"), t.Key.enter, t.Key.pageUp],
        fuzzy: t.fuzzyFilter(["apple", "banana", "grape", "pineapple"], "ap", (x) => x),
        markdown: new t.Markdown("# Title\n\n- one\n- two\n\n```\ncode\n```", 0, 0, plainTheme).render(20),
        sizes: [100, 2048, 3 * 1024 * 1024].map((n) => c.formatSize(n)),
        head: (({ content, truncated, truncatedBy, outputLines, totalLines }) => ({ content, truncated, truncatedBy, outputLines, totalLines }))(c.truncateHead("a\nb\nc\nd", { maxLines: 2 })),
        tail: (({ content, lastLinePartial, truncatedBy }) => ({ content, lastLinePartial, truncatedBy }))(c.truncateTail("x\n" + "y".repeat(20), { maxBytes: 8 })),
        line: c.truncateLine("z".repeat(12), 5),
        limits: [c.DEFAULT_MAX_BYTES, c.DEFAULT_MAX_LINES],
        frontmatter: c.parseFrontmatter("---\nname: scout\ndescription: Fast recon\ntools: read, grep\n---\n\nYou are a scout.\n"),
        serialized: c.serializeConversation(c.convertToLlm([
          { role: "user", content: "hi", timestamp: 1 },
          { role: "assistant", content: [{ type: "text", text: "ok" }, { type: "toolCall", id: "1", name: "ls", arguments: { path: "." } }], timestamp: 2 },
          { role: "custom", customType: "n", content: "note", display: true, timestamp: 3 },
        ])),
        isCall: c.isToolCallEventType("bash", { toolName: "bash" }),
        box: (() => { const b = new t.Box(2, 1); b.addChild(new t.Text("inside the box", 0, 0)); return b.render(12); })(),
        truncatedText: new t.TruncatedText("a long line that will be cut", 1, 0).render(10),
        select: (() => {
          const id = (x) => x;
          const l = new t.SelectList([{ value: "a", label: "Alpha", description: "first thing" }, { value: "b", label: "Beta" }, { value: "c", label: "Gamma" }], 2, { selectedPrefix: id, selectedText: id, description: id, scrollInfo: id, noMatch: id });
          l.handleInput("\x1b[B");
          return [l.render(30), l.render(60), new t.SelectList([], 5, { selectedPrefix: id, selectedText: id, description: id, scrollInfo: id, noMatch: id }).render(30)];
        })(),
        settings: new t.SettingsList([{ id: "x", label: "Mode", currentValue: "on", values: ["on", "off"], description: "Turns it" }, { id: "y", label: "Speed", currentValue: "fast" }], 5, { label: (x) => x, value: (x) => x, description: (x) => x, cursor: "→ ", hint: (x) => x }, () => {}, () => {}).render(60),
        input: (() => { const i = new t.Input(); i.handleInput("x"); i.handleInput("y"); return i.render(10); })(),
        editor: (() => { const e = new t.Editor({ requestRender() {}, terminal: { rows: 24, columns: 80 } }, { borderColor: (x) => x, selectList: {} }); e.setText("hello\nworld"); return e.render(12); })(),
      };
      ctx.ui.notify(JSON.stringify(out));
    },
  });
}
"##;

/// The probe's answers from pi 0.73.1's own packages (recorded with Node 20 from the npm package).
const PI_0_73_1_ANSWERS: &str = r##"{"width":[5,6,8,3,7],"truncate":["hello\u001b[0m...\u001b[0m","日\u001b[0m...\u001b[0m","\u001b[31mre\u001b[0m...\u001b[0m","\u001b[0m..\u001b[0m","abc"],"truncatePad":"ab   ","wrap":["the quick","brown fox","jumps over","the lazy","dog"],"text":["        "," hello  "," world  ","        "],"keys":["enter","escape","up","ctrl+c","A","ctrl+a","ctrl+up","alt+x"],"matches":[true,true,false,true,true,true],"release":[true,false],"keyIds":["ctrl+c","ctrl+shift+p","enter","pageUp"],"fuzzy":["apple","grape","pineapple"],"markdown":["Title               ","                    ","- one               ","- two               ","                    ","```                 ","  code              ","```                 "],"sizes":["100B","2.0KB","3.0MB"],"head":{"content":"a\nb","truncated":true,"truncatedBy":"lines","outputLines":2,"totalLines":4},"tail":{"content":"yyyyyyyy","lastLinePartial":true,"truncatedBy":"bytes"},"line":{"text":"zzzzz... [truncated]","wasTruncated":true},"limits":[51200,2000],"frontmatter":{"frontmatter":{"name":"scout","description":"Fast recon","tools":"read, grep"},"body":"You are a scout."},"serialized":"[User]: hi\n\n[Assistant]: ok\n\n[Assistant tool calls]: ls(path=\".\")\n\n[User]: note","isCall":true,"box":["            ","  inside    ","  the box   ","            "],"truncatedText":[" a lon\u001b[0m...\u001b[0m "],"select":[["  Alpha","→ Beta","  (2/3)"],["  Alpha                           first thing","→ Beta","  (2/3)"],["  No matching commands"]],"settings":["→ Mode   on","  Speed  fast","","  Turns it","","  Enter/Space to change · Esc to cancel"],"input":["> xy\u001b[7m \u001b[27m     "],"editor":["────────────","hello       ","world\u001b[7m \u001b[0m      ","────────────"]}"##;

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

/// The environment variable naming pi 0.73.1's npm package directory
/// (`…/node_modules/@mariozechner/pi-coding-agent`).
const PI_073_PACKAGE: &str = "PI_073_PACKAGE";
/// Set (to anything): the examples test fails instead of skipping without [`PI_073_PACKAGE`].
const REQUIRE_PI073: &str = "PI_REQUIRE_PI073";

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
    let Some(package) = std::env::var_os(PI_073_PACKAGE) else {
        assert!(
            std::env::var_os(REQUIRE_PI073).is_none(),
            "{REQUIRE_PI073} is set, but {PI_073_PACKAGE} is not"
        );
        println!("skipped: {PI_073_PACKAGE} does not name pi 0.73.1's package");
        return;
    };
    let package = PathBuf::from(package);
    let version: Value = serde_json::from_str(&std::fs::read_to_string(package.join("package.json")).unwrap()).unwrap();
    assert_eq!(version["version"], "0.73.1", "{PI_073_PACKAGE} is not pi 0.73.1");
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
