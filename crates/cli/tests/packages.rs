//! `pi install | remove | uninstall | update | list | config` through our binary, never on the
//! internet: a local folder package, a tarball made with `npm pack` and installed with npm offline
//! (`npm_config_offline`, a registry on a closed port), and a local git repository that git
//! reaches as `https://git.test/…` (an `insteadOf` rewrite to `file://`, so that the sources are
//! the URL forms pi accepts). The same steps were run through pi 0.73.1 once
//! (`tests/data/pi-0.73.1/packages/record.sh`): our transcript must be pi's.
//!
//! npm and git are the user's; without them these tests print why and skip, unless
//! `PI_REQUIRE_NODE` is set (`.ci/run` sets it), which fails them instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pi_coding_agent::packages::{PackageManager, resources};
use pi_test_support::sandbox::{Sandbox, text};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pi-0.73.1/packages");

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Why `npm` or `git` cannot run with the `PATH` of `env`, if one cannot.
fn missing_tools(env: Env<'_>) -> Option<String> {
    let path = env("PATH").unwrap_or_default();
    for tool in ["npm", "git"] {
        let ran = Command::new(tool)
            .arg("--version")
            .env_clear()
            .env("PATH", &path)
            .output();
        match ran {
            Ok(output) if output.status.success() => {}
            Ok(output) => return Some(format!("`{tool} --version` failed: {}", text(&output.stderr))),
            Err(error) => return Some(format!("`{tool}` cannot run: {error}")),
        }
    }
    None
}

/// Whether to skip: npm or git missing (printing why) — unless `PI_REQUIRE_NODE` is set in `env`,
/// which fails the test instead.
fn skip_in(env: Env<'_>) -> bool {
    match missing_tools(env) {
        None => false,
        Some(why) => {
            assert!(
                env("PI_REQUIRE_NODE").is_none(),
                "PI_REQUIRE_NODE is set, but the package tests cannot run: {why}"
            );
            println!("skipped: {why}");
            true
        }
    }
}

fn skip() -> bool {
    skip_in(&|name| std::env::var(name).ok())
}

#[test]
fn without_npm_or_git_the_tests_skip_unless_node_is_required() {
    let bare = |name: &str| (name == "PATH").then(|| "/nonexistent".to_owned());
    assert!(skip_in(&bare));
    let required = |name: &str| match name {
        "PATH" => Some("/nonexistent".to_owned()),
        "PI_REQUIRE_NODE" => Some("1".to_owned()),
        _ => None,
    };
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| skip_in(&required))).unwrap_err();
    let message = failed.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("PI_REQUIRE_NODE is set, but the package tests cannot run: `npm` cannot run"),
        "{message}"
    );
}

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    output
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The sandbox of `record.sh`: `fixtures/local-pkg`, its `npm pack` tarball, the git repository
/// `repos/user/demo` (tagged `v1`), an npm prefix of its own.
struct World {
    sandbox: Sandbox,
    root: PathBuf,
}

impl World {
    fn new(with_tools: bool) -> World {
        let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
        let root = sandbox.root().to_path_buf();
        copy_dir(&Path::new(DATA).join("local-pkg"), &root.join("fixtures/local-pkg"));
        let world = World { sandbox, root };
        if with_tools {
            run(Command::new("npm")
                .args(["pack", "./local-pkg"])
                .current_dir(world.root.join("fixtures"))
                .envs(world.npm_env()));
            let repo = world.root.join("repos/user/demo");
            copy_dir(&Path::new(DATA).join("local-pkg"), &repo);
            world.git(&["init", "-q"]);
            world.git(&["add", "-A"]);
            world.git(&["commit", "-qm", "one"]);
            world.git(&["tag", "v1"]);
        }
        world
    }

    fn git(&self, args: &[&str]) {
        run(Command::new("git")
            .args([
                "-c",
                "user.name=pi",
                "-c",
                "user.email=pi@example.invalid",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(self.root.join("repos/user/demo"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &self.sandbox.home));
    }

    /// npm without the network and with its own prefix and cache.
    fn npm_env(&self) -> Vec<(String, String)> {
        let root = self.root.display();
        [
            ("npm_config_prefix", format!("{root}/npm-prefix")),
            ("npm_config_cache", format!("{root}/npm-cache")),
            ("npm_config_offline", "true".to_owned()),
            ("npm_config_registry", "http://127.0.0.1:9/".to_owned()),
            ("npm_config_update_notifier", "false".to_owned()),
            ("npm_config_fund", "false".to_owned()),
            ("npm_config_audit", "false".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// git reaching `https://git.test/` in `repos/`, without the detached-HEAD advice.
    fn git_env(&self) -> Vec<(String, String)> {
        [
            ("GIT_CONFIG_NOSYSTEM", "1".to_owned()),
            ("GIT_CONFIG_COUNT", "2".to_owned()),
            (
                "GIT_CONFIG_KEY_0",
                format!("url.file://{}/repos/.insteadOf", self.root.display()),
            ),
            ("GIT_CONFIG_VALUE_0", "https://git.test/".to_owned()),
            ("GIT_CONFIG_KEY_1", "advice.detachedHead".to_owned()),
            ("GIT_CONFIG_VALUE_1", "false".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    fn pi(&self, args: &[&str]) -> Output {
        let mut command = self.sandbox.command(args);
        command.envs(self.npm_env()).envs(self.git_env());
        command.output().unwrap()
    }

    /// `get_commands` of `pi --mode rpc` (with a key, so that a model is configured): each
    /// command's name and source.
    fn rpc_commands(&self, node: &str) -> Vec<(String, String)> {
        use std::io::Write;
        let mut command = self.sandbox.command(&["--mode", "rpc"]);
        command
            .envs(self.npm_env())
            .envs(self.git_env())
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("PI_NODE", node)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"{\"type\":\"get_commands\"}\n").unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let line = text(&output.stdout);
        let response: serde_json::Value = serde_json::from_str(line.lines().next().unwrap_or("")).unwrap();
        response["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c["source"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    fn manager(&self) -> PackageManager {
        let mut manager = PackageManager::new(&self.sandbox.project, self.sandbox.agent_dir());
        for (name, value) in self.npm_env().into_iter().chain(self.git_env()) {
            manager = manager.child_env(name, value);
        }
        manager.child_output(pi_coding_agent::packages::ChildOutput::Null)
    }

    fn normalize(&self, text: &str) -> String {
        text.replace(&self.root.display().to_string(), "<root>")
    }

    /// Runs the steps of `steps.txt` as `record.sh` does and writes the same transcript.
    fn transcript(&self) -> String {
        let steps = std::fs::read_to_string(Path::new(DATA).join("steps.txt")).unwrap();
        let mut out = String::new();
        for step in steps.lines() {
            let step = step.replace("<root>", &self.root.display().to_string());
            out.push_str(&format!("$ {}\n", self.normalize(&step)));
            let words: Vec<&str> = step.split_whitespace().collect();
            match words[0] {
                "pi" => {
                    let output = self.pi(&words[1..]);
                    out.push_str("[stdout]\n");
                    out.push_str(&self.normalize(&text(&output.stdout)));
                    out.push_str("[stderr]\n");
                    out.push_str(&self.normalize(&text(&output.stderr)));
                    out.push_str(&format!("[exit {}]\n", output.status.code().unwrap()));
                }
                "cat" => {
                    out.push_str(&self.normalize(&std::fs::read_to_string(self.root.join(words[1])).unwrap()));
                    out.push('\n');
                }
                "ls" => {
                    let mut names: Vec<String> = std::fs::read_dir(self.root.join(words[1]))
                        .unwrap()
                        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .collect();
                    names.sort();
                    for name in names {
                        out.push_str(&format!("{name}\n"));
                    }
                }
                "commit" => {
                    std::fs::write(self.root.join("repos/user/demo/prompts/bye.md"), "Say bye\n").unwrap();
                    self.git(&["add", "-A"]);
                    self.git(&["commit", "-qm", "two"]);
                }
                other => panic!("unknown step {other}"),
            }
        }
        out
    }
}

/// What differs from run to run: npm's timings (`added 1 package in 572ms`) and git's hashes.
fn stable(transcript: &str) -> String {
    let timing = regex::Regex::new(r" in \d+(\.\d+)?m?s$").unwrap();
    let hash = regex::Regex::new(r"\b[0-9a-f]{7}\b").unwrap();
    transcript
        .lines()
        .map(|line| {
            hash.replace_all(&timing.replace(line, " in <time>"), "<hash>")
                .into_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_commands_answer_as_pi_0_73_1_does() {
    if skip() {
        return;
    }
    let world = World::new(true);
    let ours = stable(&world.transcript());
    let pis = stable(&std::fs::read_to_string(Path::new(DATA).join("transcript.txt")).unwrap());
    insta::assert_snapshot!("transcript", ours);
    // Line by line, so that a difference names its line.
    for (number, (our, pi)) in ours.lines().zip(pis.lines()).enumerate() {
        assert_eq!(our, pi, "line {} of the transcript", number + 1);
    }
    assert_eq!(ours.lines().count(), pis.lines().count());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_package_is_installed_listed_loaded_and_removed() {
    // No npm or git: a local package is recorded, never copied.
    let world = World::new(false);
    std::fs::rename(
        world.root.join("fixtures/local-pkg"),
        world.sandbox.project.join("local-package"),
    )
    .unwrap();
    let install = world.pi(&["install", "./local-package"]);
    assert_eq!(
        (text(&install.stdout), install.status.code()),
        (
            "Installing ./local-package...\nInstalled ./local-package\n".to_owned(),
            Some(0)
        )
    );
    let list = world.pi(&["list"]);
    let package = world.sandbox.project.join("local-package");
    assert_eq!(
        text(&list.stdout),
        format!(
            "User packages:\n  ../../../project/local-package\n    {}\n",
            package.display()
        )
    );
    let loaded = resources(&world.manager()).await.unwrap();
    let paths = |list: &[pi_coding_agent::packages::PackageResource]| -> Vec<PathBuf> {
        list.iter().map(|r| r.path.clone()).collect()
    };
    assert_eq!(paths(&loaded.extensions), [package.join("extensions/hello.ts")]);
    assert_eq!(paths(&loaded.skills), [package.join("skills/review/SKILL.md")]);
    assert_eq!(paths(&loaded.prompts), [package.join("prompts/hi.md")]);
    assert_eq!(paths(&loaded.themes), [package.join("themes/demo.json")]);
    assert_eq!(loaded.extensions[0].package.source, "../../../project/local-package");
    // A run loads what the package provides: its prompt template and skill are commands, and its
    // extension's command too (when a Node.js can run it).
    let node = std::env::var("PI_NODE").unwrap_or_else(|_| "node".to_owned());
    let has_node = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        has_node || std::env::var_os("PI_REQUIRE_NODE").is_none(),
        "PI_REQUIRE_NODE is set, but {node} cannot run"
    );
    std::fs::write(
        package.join("extensions/hello.ts"),
        "export default function (pi: any) {\n  pi.registerCommand(\"hello\", { description: \"Say hello\", handler: async () => {} });\n}\n",
    )
    .unwrap();
    let commands = world.rpc_commands(&node);
    let mut expected = vec![
        ("hi".to_owned(), "prompt".to_owned()),
        ("skill:review".to_owned(), "skill".to_owned()),
    ];
    if has_node {
        expected.insert(0, ("hello".to_owned(), "extension".to_owned()));
    } else {
        println!("skipped: the package's extension command ({node} cannot run)");
    }
    assert_eq!(commands, expected);
    let config = world.pi(&["config"]);
    assert_eq!(
        text(&config.stdout),
        "../../../project/local-package (user)\n  Extensions\n    [x] hello.ts\n  Skills\n    [x] review\n  Prompts\n    [x] hi.md\n  Themes\n    [x] demo.json\n"
    );
    let remove = world.pi(&["remove", "./local-package"]);
    assert_eq!(
        (text(&remove.stdout), remove.status.code()),
        (
            "Removing ./local-package...\nRemoved ./local-package\n".to_owned(),
            Some(0)
        )
    );
    assert!(package.exists(), "a local package is never deleted");
    assert_eq!(text(&world.pi(&["list"]).stdout), "No packages installed.\n");
    assert_eq!(resources(&world.manager()).await.unwrap().extensions, []);
}

#[tokio::test(flavor = "multi_thread")]
async fn extension_sources_install_for_one_run_under_the_temporary_directory() {
    if skip() {
        return;
    }
    let world = World::new(true);
    let tmp = world.root.join("tmp");
    let tmp_text = tmp.display().to_string();
    let home = world.sandbox.home.display().to_string();
    let env = move |name: &str| match name {
        "TMPDIR" => Some(tmp_text.clone()),
        "HOME" => Some(home.clone()),
        _ => None,
    };
    let mut manager = PackageManager::from_env(&world.sandbox.project, world.sandbox.agent_dir(), &env);
    for (name, value) in world.npm_env().into_iter().chain(world.git_env()) {
        manager = manager.child_env(name, value);
    }
    let manager = manager.child_output(pi_coding_agent::packages::ChildOutput::Null);
    let tarball = format!(
        "npm:pi-demo-pkg@file:{}/fixtures/pi-demo-pkg-1.0.0.tgz",
        world.root.display()
    );
    let sources = ["git:git.test/user/demo".to_owned(), tarball.clone()];
    let found = manager.resolve_extension_sources(&sources).await.unwrap();
    // pi's places: <tmp>/pi-extensions/git-<host>/<8 hex>/<path> and …/npm/<8 hex>/node_modules/<name>.
    let git = tmp.join("pi-extensions/git-git.test/d66aaa44/user/demo");
    let npm = tmp.join("pi-extensions/npm/f35b2129/node_modules/pi-demo-pkg");
    let extensions: Vec<PathBuf> = found.extensions.iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        extensions,
        [git.join("extensions/hello.ts"), npm.join("extensions/hello.ts")]
    );
    assert_eq!(found.extensions[1].package.source, tarball);
    // Nothing was written to settings.
    assert!(!world.sandbox.agent_dir().join("settings.json").exists());
    // A second run pulls the unpinned git source again.
    std::fs::write(world.root.join("repos/user/demo/prompts/bye.md"), "Say bye\n").unwrap();
    world.git(&["add", "-A"]);
    world.git(&["commit", "-qm", "two"]);
    let again = manager.resolve_extension_sources(&sources[..1]).await.unwrap();
    let prompts: Vec<PathBuf> = again.prompts.iter().map(|r| r.path.clone()).collect();
    assert_eq!(prompts, [git.join("prompts/bye.md"), git.join("prompts/hi.md")]);
}

#[test]
fn a_settings_file_that_is_not_json_is_an_error_and_stays_as_it_is() {
    let world = World::new(false);
    let settings = world.sandbox.agent_dir().join("settings.json");
    std::fs::write(&settings, "{ broken").unwrap();
    let install = world.pi(&["install", "../fixtures/local-pkg"]);
    assert_eq!(install.status.code(), Some(1));
    assert_eq!(text(&install.stdout), "");
    assert!(
        text(&install.stderr).starts_with(&format!("Error: Invalid settings in {}:1:3: ", settings.display())),
        "{}",
        text(&install.stderr)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ broken");
}
