//! `pi --list-models` against goldens recorded from pi 0.73.1 (`tests/data/list-models/`).
//!
//! Recorded with `node dist/cli.js --list-models` of `@mariozechner/pi-coding-agent@0.73.1` on Node
//! 20, `HOME` an empty temporary directory and only `PATH`, `HOME`, `PI_OFFLINE=1`,
//! `PI_SKIP_VERSION_CHECK=1` and the variables named below in the environment:
//! `openrouter.txt` with `OPENROUTER_API_KEY=x`; `every-key.txt` with every variable pi-ai 0.73.1's
//! `env-api-keys` reads (each `=x`) and `AWS_PROFILE=x`. pi writes the table to stderr when stdout is
//! not a terminal (its stdout take-over outside the interactive mode); we write it to stdout,
//! so the golden is compared with our stdout.

use pi_test_support::sandbox::{Sandbox, text};

/// Every variable the catalog (pi-ai 0.73.1's `env-api-keys`) reads a key from, and `AWS_PROFILE`
/// (Bedrock's credentials, which have no key variable): the environment `every-key.txt` was
/// recorded in.
fn every_key() -> Vec<&'static str> {
    let mut vars: Vec<&'static str> = Vec::new();
    for var in pi_ai::builtin_providers().flat_map(|provider| provider.env_vars.iter().copied()) {
        if !vars.contains(&var) {
            vars.push(var);
        }
    }
    vars.push("AWS_PROFILE");
    vars
}

async fn list_models(vars: &[&str]) -> String {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let mut command = sandbox.command(&["--list-models"]);
    command.env("PI_OFFLINE", "1").env("PI_SKIP_VERSION_CHECK", "1");
    for var in vars {
        command.env(var, "x");
    }
    let output = pi_test_support::sandbox::output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

fn golden(name: &str) -> String {
    let path = format!("{}/tests/data/list-models/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Line by line, so that a difference names its line.
fn assert_same_lines(ours: &str, pi: &str) {
    for (i, (ours, pi)) in ours.lines().zip(pi.lines()).enumerate() {
        assert_eq!(ours, pi, "line {}", i + 1);
    }
    assert_eq!(ours.lines().count(), pi.lines().count(), "number of lines");
    assert_eq!(ours, pi);
}

#[tokio::test(flavor = "multi_thread")]
async fn openrouters_models_as_pi_lists_them() {
    assert_same_lines(&list_models(&["OPENROUTER_API_KEY"]).await, &golden("openrouter.txt"));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_providers_models_as_pi_lists_them() {
    assert_same_lines(&list_models(&every_key()).await, &golden("every-key.txt"));
}

/// `auth.json` as pi writes it: an `api_key` entry (groq) and a ChatGPT login (openai-codex).
const AUTH_JSON: &str = r#"{
  "groq": {
    "type": "api_key",
    "key": "gsk-from-auth-json"
  },
  "openai-codex": {
    "type": "oauth",
    "access": "codex-access-token",
    "refresh": "codex-refresh-token",
    "expires": 4102444800000,
    "accountId": "acct-1"
  }
}"#;

/// `auth-json.txt`: recorded like the others, with only `AUTH_JSON` in `~/.pi/agent/auth.json` and no
/// key variable: its providers' models are listed.
#[tokio::test(flavor = "multi_thread")]
async fn auth_json_providers_models_as_pi_lists_them() {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    std::fs::create_dir_all(sandbox.agent_dir()).unwrap();
    std::fs::write(sandbox.agent_dir().join("auth.json"), AUTH_JSON).unwrap();
    let mut command = sandbox.command(&["--list-models"]);
    command.env("PI_OFFLINE", "1").env("PI_SKIP_VERSION_CHECK", "1");
    let output = pi_test_support::sandbox::output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_same_lines(&text(&output.stdout), &golden("auth-json.txt"));
    // Read, not rewritten.
    assert_eq!(
        std::fs::read_to_string(sandbox.agent_dir().join("auth.json")).unwrap(),
        AUTH_JSON
    );
}
