//! The manager without npm or git: local packages of both scopes, filters, precedence, `pi config`'s
//! switch, pi's temporary directories and its "did you mean" suggestion.

use std::path::Path;

use serde_json::json;

use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cwd: PathBuf,
    agent: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let cwd = root.join("project");
        let agent = root.join("home/.pi/agent");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        World {
            _dir: dir,
            root,
            cwd,
            agent,
        }
    }

    fn manager(&self) -> PackageManager {
        let home = self.root.join("home").display().to_string();
        let tmp = self.root.join("tmp").display().to_string();
        PackageManager::from_env(&self.cwd, &self.agent, &move |name| match name {
            "HOME" => Some(home.clone()),
            "TMPDIR" => Some(tmp.clone()),
            _ => None,
        })
    }

    fn settings(&self, scope: Scope, value: serde_json::Value) {
        let file = match scope {
            Scope::Project => self.cwd.join(".pi/settings.json"),
            _ => self.agent.join("settings.json"),
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, value.to_string()).unwrap();
    }

    /// A package with one resource of each kind under `root/<name>`.
    fn package(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        write(&dir, "extensions/main.ts", "export default function () {}");
        write(&dir, "extensions/legacy.ts", "export default function () {}");
        write(&dir, "skills/review/SKILL.md", "---\nname: review\n---\n");
        write(&dir, "prompts/hi.md", "hi");
        write(&dir, "themes/dark.json", "{}");
        dir
    }
}

fn names(resources: &[PackageResource]) -> Vec<String> {
    resources
        .iter()
        .map(|r| {
            format!(
                "{} {} {}{}",
                r.package.source,
                r.package.scope.as_str(),
                r.path.file_name().unwrap().to_string_lossy(),
                if r.enabled { "" } else { " (off)" }
            )
        })
        .collect()
}

#[tokio::test]
async fn local_packages_of_both_scopes_project_first() {
    let world = World::new();
    world.package("one");
    world.package("two");
    write(&world.root, "single.ts", "export default function () {}");
    // Relative to the settings file's directory: `~/.pi/agent` and `.pi`.
    world.settings(Scope::User, json!({"packages": ["../../../one", "../../../single.ts"]}));
    world.settings(Scope::Project, json!({"packages": ["../../two"]}));
    let all = resources(&world.manager()).await.unwrap();
    assert_eq!(
        names(&all.extensions),
        [
            "../../two project legacy.ts",
            "../../two project main.ts",
            "../../../one user legacy.ts",
            "../../../one user main.ts",
            "../../../single.ts user single.ts",
        ]
    );
    assert_eq!(
        names(&all.skills),
        ["../../two project SKILL.md", "../../../one user SKILL.md"]
    );
    assert_eq!(all.prompts.len(), 2);
    assert_eq!(all.themes.len(), 2);
    assert_eq!(all.extensions[4].package.root, world.root);
}

#[tokio::test]
async fn the_project_entry_of_a_package_wins_and_filters_narrow_it() {
    let world = World::new();
    world.package("pkg");
    world.settings(Scope::User, json!({"packages": ["../../../pkg"]}));
    world.settings(
        Scope::Project,
        json!({"packages": [{"source": "../../pkg", "extensions": ["!extensions/legacy.ts"], "skills": []}]}),
    );
    let manager = world.manager();
    let all = manager.resolve().await.unwrap();
    assert_eq!(
        names(&all.extensions),
        ["../../pkg project legacy.ts (off)", "../../pkg project main.ts"]
    );
    assert_eq!(names(&all.skills), ["../../pkg project SKILL.md (off)"]);
    let enabled = resources(&manager).await.unwrap();
    assert_eq!(names(&enabled.extensions), ["../../pkg project main.ts"]);
    assert!(enabled.skills.is_empty());
    assert_eq!(enabled.prompts.len(), 1);
}

#[tokio::test]
async fn a_directory_without_resources_is_one_extension_and_a_missing_path_nothing() {
    let world = World::new();
    write(&world.root, "bare/index.ts", "export default function () {}");
    world.settings(Scope::User, json!({"packages": ["../../../bare", "../../../gone"]}));
    let all = resources(&world.manager()).await.unwrap();
    assert_eq!(names(&all.extensions), ["../../../bare user bare"]);
}

#[tokio::test]
async fn set_enabled_writes_pi_configs_patterns() {
    let world = World::new();
    world.package("pkg");
    world.settings(
        Scope::User,
        json!({"theme": "dark", "packages": ["../../../pkg", "git:git.test/x/y"]}),
    );
    let manager = world.manager().offline(true);
    let all = manager.resolve().await.unwrap();
    let legacy = all.extensions.iter().find(|r| r.path.ends_with("legacy.ts")).unwrap();
    manager
        .set_enabled(legacy, ResourceKind::Extensions, false)
        .await
        .unwrap();
    let saved = std::fs::read_to_string(world.agent.join("settings.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(
        saved,
        json!({"theme": "dark", "packages": [{"source": "../../../pkg", "extensions": ["-extensions/legacy.ts"]}, "git:git.test/x/y"]})
    );
    let enabled = resources(&manager).await.unwrap();
    assert_eq!(names(&enabled.extensions), ["../../../pkg user main.ts"]);
    manager
        .set_enabled(legacy, ResourceKind::Extensions, true)
        .await
        .unwrap();
    let saved = std::fs::read_to_string(world.agent.join("settings.json")).unwrap();
    assert!(saved.contains("\"+extensions/legacy.ts\""), "{saved}");
    assert!(!saved.contains("-extensions/legacy.ts"), "{saved}");
    assert_eq!(resources(&manager).await.unwrap().extensions.len(), 2);
}

#[tokio::test]
async fn offline_a_missing_git_package_is_skipped_not_cloned() {
    let world = World::new();
    world.settings(Scope::User, json!({"packages": ["git:git.test/user/demo"]}));
    let all = resources(&world.manager().offline(true)).await.unwrap();
    assert_eq!(all, PackageResources::default());
    assert!(!world.agent.join("git").exists());
}

#[test]
fn temporary_directories_are_pis() {
    let world = World::new();
    let manager = world.manager();
    let tmp = world.root.join("tmp/pi-extensions");
    // The hashes are pi's: sha256 of "npm-" and of "git-git.test-user/demo", 8 hex digits.
    assert_eq!(manager.temporary_dir("npm", None), tmp.join("npm/f35b2129"));
    assert_eq!(
        manager.git_install_path(
            &match PackageSource::parse("git:git.test/user/demo") {
                PackageSource::Git(git) => git,
                other => panic!("{other:?}"),
            },
            Scope::Temporary
        ),
        tmp.join("git-git.test/d66aaa44/user/demo")
    );
}

#[tokio::test]
async fn update_of_an_unknown_package_suggests_the_configured_one() {
    let world = World::new();
    world.settings(
        Scope::User,
        json!({"packages": ["npm:@foo/bar@1.0.0", "git:github.com/user/repo@v1"]}),
    );
    let manager = world.manager();
    let error = manager.update(Some("@foo/bar")).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "No matching package found for @foo/bar. Did you mean npm:@foo/bar@1.0.0?"
    );
    let error = manager.update(Some("github.com/user/repo@v1")).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "No matching package found for github.com/user/repo@v1. Did you mean git:github.com/user/repo@v1?"
    );
    // Both are pinned: nothing to update, nothing run.
    manager.update(Some("npm:@foo/bar")).await.unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn a_file_reached_through_a_link_loads_once() {
    let world = World::new();
    world.package("one");
    std::os::unix::fs::symlink(world.root.join("one"), world.root.join("alias")).unwrap();
    world.settings(Scope::User, json!({"packages": ["../../../one", "../../../alias"]}));
    let all = resources(&world.manager()).await.unwrap();
    assert_eq!(
        names(&all.extensions),
        ["../../../one user legacy.ts", "../../../one user main.ts"]
    );
    assert_eq!(all.prompts.len(), 1);
}
