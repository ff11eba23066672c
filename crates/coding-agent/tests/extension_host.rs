//! The Node extension host (`node host.mjs --extensions <entries>`, protocol version 2) driven by
//! a scripted fake pi (`extension_support`): registrations of several extensions in one process,
//! load failures, commands and their context calls, tools with updates and abort, pending
//! actions, late registrations, rendering. The `event` request: `extension_host_events`; what
//! extensions import: `extension_imports`; pi 0.73.1's own: `extension_pi073`.

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
async fn a_typescript_entry_that_does_not_transpile_is_a_load_error_and_the_good_one_beside_it_registers() {
    let dir = tempfile::tempdir().unwrap();
    let broken = write(dir.path(), "broken.ts", "export default function (pi: ExtensionAPI {\n");
    let good = write(
        dir.path(),
        "good.mjs",
        "export default function (pi) { pi.registerCommand(\"ok\", { description: \"Fine\", handler: async () => {} }); }\n",
    );
    let Some(mut host) = ExtHost::start(&[broken.clone(), good.clone()], dir.path()).await else {
        return;
    };
    assert_eq!(host.failed.len(), 1, "{:?}", host.failed);
    assert_eq!(host.failed[0].0, broken);
    assert!(
        host.failed[0].1.starts_with("Failed to load extension: "),
        "{:?}",
        host.failed
    );
    let init = host.initialize(dir.path()).await;
    let list = init["extensions"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{init}");
    assert_eq!(list[0]["path"], good.display().to_string());
    assert_eq!(list[0]["commands"], json!([{"name": "ok", "description": "Fine"}]));
    host.shutdown().await;
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
        found: ctx.modelRegistry.find("openai", "gpt-x")?.name ?? null, available: ctx.modelRegistry.getAvailable().map((m) => m.id),
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
            "modelRegistry": {
                "models": [
                    {"provider": "anthropic", "id": "claude-x", "name": "Claude X"},
                    {"provider": "openai", "id": "gpt-x", "name": "GPT X"},
                ],
                "available": [1],
            },
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
            "found": "GPT X", "available": ["gpt-x"],
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
