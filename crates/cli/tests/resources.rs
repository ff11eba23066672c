//! pi's resources through the real binary: skills in the system prompt (and `--no-skills`,
//! `--skill`, the `read` tool's absence), prompt templates expanded in print mode (and
//! `--no-prompt-templates`, `--prompt-template`, settings entries), `SYSTEM.md` /
//! `APPEND_SYSTEM.md` with their precedence against the flags, and RPC `get_commands`. The exact
//! texts are compared with pi 0.73.1's in the recorded conformance scenarios
//! `rpc-skills-templates` and `print-system-files`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::{MockServer, openai};
use serde_json::{Value, json};

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn skill(dir: &Path, name: &str, description: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    );
}

/// Runs `pi -p` with `args` once per entry (one reply each) and returns each request's system
/// prompt and last user text.
async fn requests(sandbox_setup: impl Fn(&Sandbox), runs: &[&[&str]]) -> Vec<(String, String)> {
    let replies = runs.iter().map(|_| openai::text("ok")).collect();
    let server = MockServer::start(replies).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    sandbox_setup(&sandbox);
    for args in runs {
        let mut all = vec!["-p", "--no-session"];
        all.extend_from_slice(args);
        let output = sandbox.run(&all).await;
        assert!(output.status.success(), "{args:?}: {}", text(&output.stderr));
    }
    server
        .requests()
        .iter()
        .map(|request| {
            let body: Value = request.json();
            let messages = body["messages"].as_array().unwrap();
            let system = messages[0]["content"].as_str().unwrap_or_default().to_owned();
            let user = messages.last().unwrap()["content"].to_string();
            (system, user)
        })
        .collect()
}

fn project(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.root().join("project")
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_sends_the_expanded_template_and_no_prompt_templates_the_text() {
    let setup = |sandbox: &Sandbox| {
        write(
            &project(sandbox).join(".pi/prompts/review.md"),
            "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 carefully. Focus: ${@:2}\n",
        );
        write(&sandbox.agent_dir().join("prompts/fix.md"), "Fix $@.");
        write(&sandbox.root().join("shared/explain.md"), "Explain $ARGUMENTS.");
        write(&project(sandbox).join("one-off.md"), "One off: $1");
    };
    let requests = requests(
        setup,
        &[
            &["/review src/main.rs \"error paths\" io"],
            &["/fix the 'flaky test'"],
            &["-np", "/review src/main.rs"],
            &["-np", "--prompt-template", "one-off.md", "/one-off yes"],
            &["--prompt-template", "../shared", "/explain this code"],
        ],
    )
    .await;
    let users: Vec<&str> = requests.iter().map(|(_, user)| user.as_str()).collect();
    assert!(
        users[0].contains("Review src/main.rs carefully. Focus: error paths io"),
        "{}",
        users[0]
    );
    assert!(users[1].contains("Fix the flaky test."), "{}", users[1]);
    assert!(users[2].contains("/review src/main.rs"), "{}", users[2]);
    assert!(users[3].contains("One off: yes"), "{}", users[3]);
    assert!(users[4].contains("Explain this code."), "{}", users[4]);
}

#[tokio::test(flavor = "multi_thread")]
async fn skills_are_listed_for_the_model_unless_no_skills_or_no_read_tool() {
    let setup = |sandbox: &Sandbox| {
        skill(&sandbox.agent_dir().join("skills"), "global-skill", "A global skill.");
        skill(
            &project(sandbox).join(".pi/skills"),
            "project-skill",
            "A project skill.",
        );
        skill(&sandbox.root().join("elsewhere"), "cli-skill", "Given with --skill.");
        write(
            &project(sandbox).join(".pi/skills/hidden/SKILL.md"),
            "---\nname: hidden\ndescription: Manual only.\ndisable-model-invocation: true\n---\nHidden body.\n",
        );
    };
    let requests = requests(
        setup,
        &[
            &["hi"],
            &["-ns", "hi"],
            &["--no-skills", "--skill", "../elsewhere/cli-skill", "hi"],
            &["--tools", "bash", "hi"],
            &["/skill:hidden please"],
            &["/skill:nope please"],
        ],
    )
    .await;
    let names = |system: &str| -> Vec<String> {
        system
            .lines()
            .filter_map(|l| {
                l.trim()
                    .strip_prefix("<name>")?
                    .strip_suffix("</name>")
                    .map(str::to_owned)
            })
            .collect()
    };
    assert_eq!(names(&requests[0].0), ["project-skill", "global-skill"]);
    assert!(requests[0].0.contains("<available_skills>"), "{}", requests[0].0);
    assert!(names(&requests[1].0).is_empty(), "{}", requests[1].0);
    assert_eq!(names(&requests[2].0), ["cli-skill"]);
    assert!(!requests[3].0.contains("<available_skills>"), "{}", requests[3].0);
    // A skill hidden from the model still expands on /skill:name; an unknown one stays as typed.
    assert!(
        requests[4].1.contains("<skill name=\\\"hidden\\\""),
        "{}",
        requests[4].1
    );
    assert!(
        requests[4].1.contains("Hidden body.\\n</skill>\\n\\nplease"),
        "{}",
        requests[4].1
    );
    assert!(requests[5].1.contains("/skill:nope please"), "{}", requests[5].1);
}

#[tokio::test(flavor = "multi_thread")]
async fn system_md_and_append_system_md_with_the_flags_winning() {
    let setup = |sandbox: &Sandbox| {
        write(&sandbox.agent_dir().join("SYSTEM.md"), "Global system.");
        write(&sandbox.agent_dir().join("APPEND_SYSTEM.md"), "Global append.");
    };
    let project_files = |sandbox: &Sandbox| {
        setup(sandbox);
        write(&project(sandbox).join(".pi/SYSTEM.md"), "Project system.");
        write(&project(sandbox).join(".pi/APPEND_SYSTEM.md"), "Project append.");
    };
    let global = requests(setup, &[&["hi"], &["--system-prompt", "Flag system.", "hi"]]).await;
    assert!(
        global[0].0.starts_with("Global system.\n\nGlobal append.\n"),
        "{}",
        global[0].0
    );
    assert!(
        global[1].0.starts_with("Flag system.\n\nGlobal append.\n"),
        "{}",
        global[1].0
    );
    let projects = requests(
        project_files,
        &[&["hi"], &["--append-system-prompt", "Flag append.", "hi"]],
    )
    .await;
    assert!(
        projects[0].0.starts_with("Project system.\n\nProject append.\n"),
        "{}",
        projects[0].0
    );
    assert!(
        projects[1].0.starts_with("Project system.\n\nFlag append.\n"),
        "{}",
        projects[1].0
    );
    assert!(!projects[1].0.contains("Project append."), "{}", projects[1].0);
    // An empty SYSTEM.md keeps pi's own prompt.
    let empty = requests(|s| write(&project(s).join(".pi/SYSTEM.md"), ""), &[&["hi"]]).await;
    assert!(
        empty[0].0.starts_with("You are an expert coding assistant"),
        "{}",
        empty[0].0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_entries_add_skills_and_templates() {
    let setup = |sandbox: &Sandbox| {
        skill(&sandbox.root().join("team-skills"), "team", "From the global settings.");
        write(
            &sandbox.root().join("team-prompts/standup.md"),
            "Write the standup for $1.",
        );
        let global = json!({"skills": [sandbox.root().join("team-skills")]});
        write(&sandbox.agent_dir().join("settings.json"), &global.to_string());
        // Project entries are relative to `.pi/`.
        write(
            &project(sandbox).join(".pi/settings.json"),
            &json!({"prompts": ["../../team-prompts"]}).to_string(),
        );
    };
    let requests = requests(setup, &[&["/standup monday"]]).await;
    assert!(requests[0].0.contains("<name>team</name>"), "{}", requests[0].0);
    assert!(
        requests[0].1.contains("Write the standup for monday."),
        "{}",
        requests[0].1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_get_commands_lists_templates_then_skills() {
    let server = MockServer::start(vec![]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    write(
        &project(&sandbox).join(".pi/prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1",
    );
    skill(&sandbox.agent_dir().join("skills"), "hello", "Greets.");
    let input = "{\"type\":\"get_commands\",\"id\":\"c\"}\n";
    let output = sandbox.run_with_stdin(&["--mode", "rpc"], input).await;
    let stdout = text(&output.stdout);
    let response: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == "c")
        .unwrap_or_else(|| panic!("{stdout}"));
    let commands = response["data"]["commands"].as_array().unwrap();
    let summary: Vec<(&str, &str, &str, &str)> = commands
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["source"].as_str().unwrap(),
                c["sourceInfo"]["source"].as_str().unwrap(),
                c["sourceInfo"]["scope"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("review", "prompt", "auto", "project"),
            ("skill:hello", "skill", "auto", "user")
        ]
    );
    assert_eq!(commands[1]["description"], "Greets.");
    assert_eq!(commands[1]["sourceInfo"]["baseDir"], json!(sandbox.agent_dir()));
}
