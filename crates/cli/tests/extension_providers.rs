//! `pi.registerProvider` / `pi.unregisterProvider` through the real `pi` binary (pi 0.73.1's
//! `docs/extensions.md`): providers registered while extensions load are in the registry before
//! the model is chosen (`--model`, `--list-models`), a refused config is reported in pi's words,
//! and a registration made later (from a command) takes effect at once — as does its removal.
//! The extensions are TypeScript, so these need Node.js (found with pi 0.73.1's package, as the
//! other TypeScript tests; `PI_REQUIRE_PI073=1` makes a missing one fail).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::{MockServer, openai};
use serde_json::{Value, json};

use crate::rpc::Rpc;

async fn node() -> Option<std::path::PathBuf> {
    let env: crate::rpc_client::Env = std::sync::Arc::new(|name: &str| std::env::var(name).ok());
    crate::rpc_client::reference_or_skip(env).await.map(|(node, _)| node)
}

/// A provider config for `server`, as an extension would write it.
fn proxy_config(server: &MockServer, model: &str) -> String {
    json!({
        "baseUrl": server.url("/v1"),
        "apiKey": "PROXY_SECRET_KEY_1234",
        "api": "openai-completions",
        "models": [{
            "id": model, "name": "Proxy Model", "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 64000, "maxTokens": 4096
        }]
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn providers_registered_while_loading_are_listed_and_chosen_with_model() {
    let Some(node) = node().await else { return };
    let server = MockServer::start(vec![openai::text("Through the proxy.")]).await;
    // No models.json: the extension's provider is the only one with a key.
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let extension = sandbox.project.join("proxy.ts");
    std::fs::write(
        &extension,
        format!(
            "export default async function (pi: any) {{\n  await Promise.resolve();\n  pi.registerProvider(\"proxy\", {});\n  pi.registerProvider(\"broken\", {{ models: [{{ id: \"x\" }}] }});\n}}\n",
            proxy_config(&server, "proxy-model")
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut command = sandbox.command(args);
        command.env("PI_NODE", &node);
        pi_test_support::sandbox::output(command)
    };
    let refused = format!(
        "Error: Extension \"{}\" error: Provider broken: \"baseUrl\" is required when defining models.\n",
        extension.display()
    );

    let out = run(&["-e", "proxy.ts", "--list-models"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), refused);
    let listed = text(&out.stdout);
    assert!(
        listed
            .lines()
            .any(|line| line.contains("proxy") && line.contains("proxy-model")),
        "{listed}"
    );

    let out = run(&["-e", "proxy.ts", "--model", "proxy/proxy-model", "-p", "hi"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Through the proxy.\n");
    assert_eq!(text(&out.stderr), refused);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].json()["model"], "proxy-model");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer PROXY_SECRET_KEY_1234")
    );

    // Without the extension the model is unknown, as before.
    let out = sandbox.run(&["--model", "proxy/proxy-model", "-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

/// Sends `get_available_models` until `wanted` holds for the ids it lists (the host sends a
/// registration made in a command as its own request, which may be handled just after the
/// command's answer).
fn available_until(rpc: &mut Rpc, wanted: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    for attempt in 0.. {
        if std::time::Instant::now() > deadline {
            break;
        }
        let id = format!("models-{attempt}");
        rpc.send(json!({"id": id, "type": "get_available_models"}));
        let response = rpc.response(&id);
        let ids: Vec<String> = response["data"]["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|model| {
                format!(
                    "{}/{}",
                    model["provider"].as_str().unwrap(),
                    model["id"].as_str().unwrap()
                )
            })
            .collect();
        if wanted(&ids) {
            return ids;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the available models never became as wanted")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_registered_from_a_command_works_at_once_and_unregistering_removes_it() {
    let Some(node) = node().await else { return };
    let server = MockServer::start(vec![openai::text("From the late provider.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    std::fs::write(
        sandbox.project.join("late.ts"),
        format!(
            "export default function (pi: any) {{\n  pi.registerCommand(\"connect\", {{ handler: async () => {{ pi.registerProvider(\"late\", {}); }} }});\n  pi.registerCommand(\"disconnect\", {{ handler: async () => {{ pi.unregisterProvider(\"late\"); }} }});\n}}\n",
            proxy_config(&server, "late-model")
        ),
    )
    .unwrap();
    let mut rpc = Rpc::start_in_with_env(
        sandbox,
        &["--mode", "rpc", "-e", "late.ts"],
        &[("PI_NODE", node.as_os_str())],
    );
    let (before, bodies) = tokio::task::spawn_blocking(move || {
        let before = available_until(&mut rpc, |_| true);
        rpc.send(json!({"id": "c", "type": "prompt", "message": "/connect"}));
        rpc.response("c");
        available_until(&mut rpc, |ids| ids.iter().any(|id| id == "late/late-model"));
        rpc.send(json!({"id": "s", "type": "set_model", "provider": "late", "modelId": "late-model"}));
        let set = rpc.response("s");
        assert_eq!(set["success"], true, "{set}");
        rpc.send(json!({"id": "p", "type": "prompt", "message": "hi"}));
        rpc.response("p");
        rpc.event("agent_end");
        rpc.send(json!({"id": "d", "type": "prompt", "message": "/disconnect"}));
        rpc.response("d");
        available_until(&mut rpc, |ids| !ids.iter().any(|id| id.starts_with("late/")));
        rpc.send(json!({"id": "s2", "type": "set_model", "provider": "late", "modelId": "late-model"}));
        let gone: Value = rpc.response("s2");
        rpc.close();
        (before, gone)
    })
    .await
    .unwrap();
    assert!(!before.iter().any(|id| id.starts_with("late/")), "{before:?}");
    assert_eq!(bodies["success"], false);
    assert_eq!(bodies["error"], "Model not found: late/late-model");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].json()["model"], "late-model");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer PROXY_SECRET_KEY_1234")
    );
}
