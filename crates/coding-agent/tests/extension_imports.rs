//! What extensions import, reaching pi through the Node extension host: `create*Tool` running
//! pi's built-ins (`tools.execute`), `complete` / `streamSimple` (`ai.complete`), and an
//! extension's own npm dependencies resolved from its folder.

#![allow(clippy::unwrap_used)]

use crate::extension_support::{ExtHost, context, write};
use serde_json::json;

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
async fn model_calls_of_extensions_go_through_pi() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "ask.ts",
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { complete, streamSimple } from "@mariozechner/pi-ai";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("ask", {
    handler: async (args, ctx) => {
      const context = { systemPrompt: "Be brief.", messages: [{ role: "user", content: args, timestamp: 1 }] };
      const answer = await complete(ctx.model!, context, { maxTokens: 100 });
      const events: string[] = [];
      for await (const event of streamSimple(ctx.model!, context)) events.push(event.type);
      ctx.ui.notify(`${answer.content.map((c: any) => c.text).join("")} | ${events.join(",")}`);
    },
  });
}
"#,
    );
    let Some(mut host) = ExtHost::start(std::slice::from_ref(&entry), dir.path()).await else {
        return;
    };
    host.initialize(dir.path()).await;
    host.answer(
        "ai.complete",
        json!({"role": "assistant", "content": [{"type": "text", "text": "Four."}], "provider": "anthropic", "model": "claude-x", "stopReason": "stop", "timestamp": 2}),
    );
    let ctx = context(
        dir.path(),
        json!({"model": {"provider": "anthropic", "id": "claude-x", "name": "Claude X"}}),
    );
    host.call("command", json!({"name": "ask", "args": "2+2?", "context": ctx}))
        .await;
    let calls = host.sent_of("ai.complete");
    assert_eq!(
        calls[0],
        json!({
            "model": {"provider": "anthropic", "id": "claude-x"},
            "context": {"messages": [{"role": "user", "content": "2+2?", "timestamp": 1}], "systemPrompt": "Be brief."},
            "options": {"maxTokens": 100},
        })
    );
    assert_eq!(calls.len(), 2);
    assert_eq!(
        host.sent_of("ui.notify"),
        [json!({"message": "Four. | start,text_start,text_delta,text_end,done"})]
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
