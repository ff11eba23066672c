use super::*;

struct Sandbox {
    _dir: tempfile::TempDir,
    home: PathBuf,
    agent: PathBuf,
    cwd: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = paths::canonical(dir.path());
        let home = root.join("home");
        let agent = home.join(".pi/agent");
        let cwd = root.join("repo/project");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        Sandbox {
            _dir: dir,
            home,
            agent,
            cwd,
        }
    }

    fn write(&self, path: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    fn skill(&self, dir: &Path, name: &str, description: &str) -> PathBuf {
        self.write(
            &dir.join(name).join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        )
    }

    fn options(&self) -> ResourceOptions {
        ResourceOptions {
            cwd: self.cwd.clone(),
            agent_dir: Some(self.agent.clone()),
            home: Some(self.home.clone()),
            ..ResourceOptions::default()
        }
    }
}

fn skill_names(resources: &Resources) -> Vec<(&str, &str)> {
    resources
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect()
}

#[test]
fn a_name_collision_keeps_the_first_and_reports_the_second() {
    let s = Sandbox::new();
    let global = s.skill(&s.agent.join("skills"), "dup", "global");
    let project = s.skill(&s.cwd.join(".pi/skills"), "dup", "project");
    let resources = Resources::load(&s.options());
    assert_eq!(skill_names(&resources), [("dup", "project")]);
    let [diagnostic] = resources.skill_diagnostics.as_slice() else {
        panic!("{:?}", resources.skill_diagnostics)
    };
    assert_eq!(diagnostic.kind, DiagnosticKind::Collision);
    assert_eq!(diagnostic.message, "name \"dup\" collision");
    let collision = diagnostic.collision.as_ref().unwrap();
    assert_eq!((&collision.winner_path, &collision.loser_path), (&project, &global));
}

#[test]
fn no_skills_keeps_only_the_command_lines_paths() {
    let s = Sandbox::new();
    s.skill(&s.agent.join("skills"), "global", "g");
    let extra = s.skill(&s.cwd.join("extra"), "extra", "e");
    let mut options = s.options();
    options.no_skills = true;
    assert!(Resources::load(&options).skills.is_empty());
    options.skill_paths = vec!["extra".into(), "missing".into(), "extra/extra/SKILL.md".into()];
    let resources = Resources::load(&options);
    assert_eq!(skill_names(&resources), [("extra", "e")]);
    assert_eq!(resources.skills[0].source_info.metadata.scope, "temporary");
    assert_eq!(resources.skills[0].source_info.metadata.source, "local");
    assert_eq!(resources.skills[0].file_path, extra);
    let [missing] = resources.skill_diagnostics.as_slice() else {
        panic!("{:?}", resources.skill_diagnostics)
    };
    assert_eq!(missing.message, "skill path does not exist");
    assert_eq!(missing.path.as_deref(), Some(s.cwd.join("missing").as_path()));
}

#[test]
fn settings_entries_add_and_exclude() {
    let s = Sandbox::new();
    s.skill(&s.home.join("claude-skills"), "from-settings", "s");
    s.skill(&s.agent.join("skills"), "unwanted", "u");
    s.skill(&s.agent.join("skills"), "wanted", "w");
    let mut options = s.options();
    options.global_settings.skills = vec!["~/claude-skills".into(), "!unwanted".into()];
    let resources = Resources::load(&options);
    assert_eq!(skill_names(&resources), [("from-settings", "s"), ("wanted", "w")]);
    assert_eq!(resources.skills[0].source_info.metadata.source, "local");
    assert_eq!(resources.skills[0].source_info.metadata.base_dir, None);
}

#[test]
fn settings_files_are_read_when_the_resources_load() {
    let s = Sandbox::new();
    s.skill(&s.home.join("claude-skills"), "from-settings", "s");
    s.skill(&s.agent.join("skills"), "unwanted", "u");
    s.write(&s.cwd.join(".pi/prompts/keep.md"), "keep");
    s.write(&s.cwd.join(".pi/prompts/drop.md"), "drop");
    let global = s.write(
        &s.agent.join("settings.json"),
        r#"{"skills": ["~/claude-skills", "!unwanted"]}"#,
    );
    let project = s.write(&s.cwd.join(".pi/settings.json"), r#"{"prompts": ["!drop.md"]}"#);
    let mut options = ResourceOptions {
        global_settings_file: Some(global.clone()),
        project_settings_file: Some(project),
        ..s.options()
    };
    options.read_settings_files().unwrap();
    assert_eq!(options.global_settings_file, None);
    let resources = Resources::load(&options);
    assert_eq!(skill_names(&resources), [("from-settings", "s")]);
    let prompts: Vec<&str> = resources.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, ["keep"]);
    // A broken file is the settings loader's error, not an empty list.
    s.write(&global, "{\"skills\": [");
    let mut options = ResourceOptions {
        global_settings_file: Some(global.clone()),
        ..s.options()
    };
    let error = options.read_settings_files().unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("Invalid settings in {}:", global.display())),
        "{error}"
    );
    // A missing file has no entries.
    let mut options = ResourceOptions {
        global_settings_file: Some(s.agent.join("absent.json")),
        ..s.options()
    };
    options.read_settings_files().unwrap();
    assert_eq!(options.global_settings, ResourceSettings::default());
}

#[test]
fn package_resources_come_after_the_global_ones_and_before_the_command_line() {
    let s = Sandbox::new();
    let package_root = s.home.join("pkgs/tools");
    s.skill(&s.agent.join("skills"), "shared", "global");
    let from_package = s.skill(&package_root.join("skills"), "shared", "package");
    s.skill(&package_root.join("skills"), "packaged", "package");
    s.skill(&s.cwd.join("cli"), "packaged", "command line");
    s.skill(&s.cwd.join("cli"), "cli-only", "command line");
    s.write(&s.agent.join("prompts/review.md"), "global");
    s.write(&package_root.join("prompts/review.md"), "package");
    s.write(&package_root.join("prompts/ship.md"), "package");
    s.write(&s.cwd.join("ship.md"), "command line");
    let metadata = Metadata::new("npm:tools", "user", Some(package_root.clone()));
    let extra = |path: PathBuf| ExtraResource {
        path,
        metadata: metadata.clone(),
    };
    let options = ResourceOptions {
        package_skills: vec![
            extra(package_root.join("skills/shared")),
            extra(package_root.join("skills/packaged")),
        ],
        package_prompts: vec![
            extra(package_root.join("prompts/review.md")),
            extra(package_root.join("prompts/ship.md")),
        ],
        skill_paths: vec!["cli".into()],
        prompt_paths: vec!["ship.md".into()],
        ..s.options()
    };
    let resources = Resources::load(&options);
    assert_eq!(
        skill_names(&resources),
        [
            ("shared", "global"),
            ("packaged", "package"),
            ("cli-only", "command line")
        ]
    );
    assert_eq!(resources.skills[1].source_info.metadata, metadata);
    let collisions: Vec<(&str, PathBuf, PathBuf)> = resources
        .skill_diagnostics
        .iter()
        .filter_map(|d| {
            let c = d.collision.as_ref()?;
            Some((d.message.as_str(), c.winner_path.clone(), c.loser_path.clone()))
        })
        .collect();
    assert_eq!(
        collisions,
        [
            (
                "name \"shared\" collision",
                s.agent.join("skills/shared/SKILL.md"),
                from_package
            ),
            (
                "name \"packaged\" collision",
                package_root.join("skills/packaged/SKILL.md"),
                s.cwd.join("cli/packaged/SKILL.md")
            ),
        ]
    );
    let prompts: Vec<(&str, &str)> = resources
        .prompts
        .iter()
        .map(|p| (p.name.as_str(), p.content.as_str()))
        .collect();
    assert_eq!(prompts, [("review", "global"), ("ship", "package")]);
    let collisions: Vec<&str> = resources
        .prompt_diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(collisions, ["name \"/review\" collision", "name \"/ship\" collision"]);
}

#[test]
fn prompt_templates_project_first_then_global_then_the_command_line() {
    let s = Sandbox::new();
    s.write(&s.agent.join("prompts/review.md"), "global review");
    s.write(&s.agent.join("prompts/fix.md"), "---\ndescription: Fix it\n---\nFix $1");
    s.write(&s.cwd.join(".pi/prompts/review.md"), "project review $@");
    s.write(&s.cwd.join(".pi/prompts/sub/deep.md"), "not read: prompts/ is flat");
    s.write(&s.cwd.join("one.md"), "one");
    let mut options = s.options();
    options.prompt_paths = vec!["one.md".into()];
    let resources = Resources::load(&options);
    let names: Vec<&str> = resources.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["review", "fix", "one"]);
    assert_eq!(resources.prompts[0].content, "project review $@");
    assert_eq!(
        resources
            .prompt_diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>(),
        ["name \"/review\" collision"]
    );
    assert_eq!(resources.expand("/fix a.rs now").unwrap(), "Fix a.rs");
    assert_eq!(resources.expand("/review x \"y z\"").unwrap(), "project review x y z");
    assert_eq!(resources.expand("/unknown x").unwrap(), "/unknown x");
    options.no_prompt_templates = true;
    let names: Vec<String> = Resources::load(&options).prompts.into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["one"]);
}

#[test]
fn a_skill_command_expands_then_counts_as_a_template_too() {
    let s = Sandbox::new();
    let file = s.skill(&s.cwd.join(".pi/skills"), "hello", "Greets");
    let resources = Resources::load(&s.options());
    let expanded = resources.expand("/skill:hello Ada").unwrap();
    assert!(
        expanded.starts_with(&format!("<skill name=\"hello\" location=\"{}\">", file.display())),
        "{expanded}"
    );
    assert!(expanded.ends_with("# hello\n</skill>\n\nAda"), "{expanded}");
}

#[test]
fn source_info_serializes_as_pis_json() {
    let info = SourceInfo {
        path: "/p/.pi/prompts/a.md".into(),
        metadata: Metadata::new("auto", "project", Some("/p/.pi".into())),
    };
    assert_eq!(
        serde_json::to_string(&info).unwrap(),
        r#"{"path":"/p/.pi/prompts/a.md","source":"auto","scope":"project","origin":"top-level","baseDir":"/p/.pi"}"#
    );
    let info = SourceInfo {
        metadata: Metadata::new("local", "user", None),
        ..info
    };
    assert!(!serde_json::to_string(&info).unwrap().contains("baseDir"));
}

/// One sandbox with every location, a collision, a settings entry and an exclusion; the lists
/// are pi 0.73.1's `DefaultResourceLoader` answer for the same files (recorded with Node 20).
#[test]
fn everything_at_once_as_pi_0_73_1_loads_it() {
    let s = Sandbox::new();
    s.skill(&s.agent.join("skills"), "global", "g");
    s.write(
        &s.agent.join("skills/loose.md"),
        "---\ndescription: a root .md file\n---\n",
    );
    s.skill(&s.home.join(".agents/skills"), "agents-home", "h");
    s.write(&s.home.join(".agents/skills/ignored.md"), "---\ndescription: x\n---\n");
    s.skill(&s.cwd.join(".pi/skills"), "project", "p");
    s.skill(&s.cwd.join(".agents/skills"), "agents-cwd", "c");
    s.skill(&s.cwd.join("../.agents/skills"), "agents-repo", "r");
    s.skill(&s.cwd.join("../../.agents/skills"), "above-repo", "x");
    s.skill(&s.agent.join("skills"), "dup", "global");
    s.skill(&s.cwd.join(".pi/skills"), "dup", "project");
    s.skill(&s.home.join("claude-skills"), "from-settings", "s");
    s.skill(&s.agent.join("skills"), "unwanted", "u");
    s.write(&s.agent.join("prompts/review.md"), "global review");
    s.write(&s.agent.join("prompts/fix.md"), "---\ndescription: Fix it\n---\nFix $1");
    s.write(&s.cwd.join(".pi/prompts/review.md"), "project review $@");
    s.write(&s.cwd.join(".pi/prompts/sub/deep.md"), "x");
    s.write(&s.cwd.join("one.md"), "one");
    let mut options = s.options();
    options.global_settings.skills = vec!["~/claude-skills".into(), "!unwanted".into()];
    options.prompt_paths = vec![s.cwd.join("one.md").display().to_string()];
    let resources = Resources::load(&options);
    let root = s.home.parent().unwrap().display().to_string();
    let rel = |p: Option<&Path>| p.map(|p| p.display().to_string().replace(&root, "<root>"));
    let skills: Vec<(String, String, String, String, Option<String>)> = resources
        .skills
        .iter()
        .map(|k| {
            let m = &k.source_info.metadata;
            (
                k.name.clone(),
                k.description.clone(),
                m.source.clone(),
                m.scope.clone(),
                rel(m.base_dir.as_deref()),
            )
        })
        .collect();
    let row = |n: &str, d: &str, src: &str, scope: &str, base: Option<&str>| {
        (
            n.to_owned(),
            d.to_owned(),
            src.to_owned(),
            scope.to_owned(),
            base.map(str::to_owned),
        )
    };
    assert_eq!(
        skills,
        [
            row("dup", "project", "auto", "project", Some("<root>/repo/project/.pi")),
            row("project", "p", "auto", "project", Some("<root>/repo/project/.pi")),
            row("agents-cwd", "c", "auto", "project", Some("<root>/repo/project/.pi")),
            row("agents-repo", "r", "auto", "project", Some("<root>/repo/project/.pi")),
            row("from-settings", "s", "local", "user", None),
            row("global", "g", "auto", "user", Some("<root>/home/.pi/agent")),
            row(
                "skills",
                "a root .md file",
                "auto",
                "user",
                Some("<root>/home/.pi/agent")
            ),
            row("agents-home", "h", "auto", "user", Some("<root>/home/.pi/agent")),
        ]
    );
    let diagnostics: Vec<(DiagnosticKind, &str, Option<String>)> = resources
        .skill_diagnostics
        .iter()
        .map(|d| (d.kind, d.message.as_str(), rel(d.path.as_deref())))
        .collect();
    assert_eq!(
        diagnostics,
        [(
            DiagnosticKind::Collision,
            "name \"dup\" collision",
            Some("<root>/home/.pi/agent/skills/dup/SKILL.md".to_owned())
        )]
    );
    let prompts: Vec<(&str, &str, &str, Option<String>)> = resources
        .prompts
        .iter()
        .map(|p| {
            let m = &p.source_info.metadata;
            (
                p.name.as_str(),
                m.source.as_str(),
                m.scope.as_str(),
                rel(m.base_dir.as_deref()),
            )
        })
        .collect();
    assert_eq!(
        prompts,
        [
            ("review", "auto", "project", Some("<root>/repo/project/.pi".to_owned())),
            ("fix", "auto", "user", Some("<root>/home/.pi/agent".to_owned())),
            ("one", "local", "temporary", Some("<root>/repo/project".to_owned())),
        ]
    );
    assert_eq!(
        resources.prompt_diagnostics[0].path.as_deref().map(|p| rel(Some(p))),
        Some(Some("<root>/home/.pi/agent/prompts/review.md".to_owned()))
    );
}

#[test]
fn extension_paths_load_after_everything_even_with_no_skills() {
    let s = Sandbox::new();
    s.skill(&s.cwd.join(".pi/skills"), "shared", "project's");
    s.skill(&s.cwd.join("ext/skills"), "shared", "extension's");
    s.skill(&s.cwd.join("ext/skills"), "extra", "only the extension's");
    let metadata = Metadata::new("extension:finder", "temporary", Some(s.cwd.join("ext")));
    let extension = ExtraResource {
        path: PathBuf::from("ext/skills"),
        metadata: metadata.clone(),
    };
    let loaded = Resources::load(&ResourceOptions {
        extension_skills: vec![extension.clone()],
        ..s.options()
    });
    // The project's skill keeps its name; the extension's comes last.
    assert_eq!(
        skill_names(&loaded),
        [("shared", "project's"), ("extra", "only the extension's")]
    );
    assert_eq!(loaded.skills[1].source_info.metadata, metadata);
    let alone = Resources::load(&ResourceOptions {
        extension_skills: vec![extension],
        no_skills: true,
        ..s.options()
    });
    assert_eq!(
        skill_names(&alone),
        [("extra", "only the extension's"), ("shared", "extension's")]
    );
}

/// pi's order for themes: project settings entries, `.pi/themes`, global settings entries,
/// `~/.pi/agent/themes`, packages, then `--theme` (files, or a directory's `.json` files).
#[test]
fn theme_files_come_in_pis_order() {
    let sb = Sandbox::new();
    let global = sb.write(&sb.agent.join("themes/global.json"), "{}");
    sb.write(&sb.agent.join("themes/notes.txt"), "");
    sb.write(&sb.agent.join("themes/nested/deep.json"), "{}");
    let project = sb.write(&sb.cwd.join(".pi/themes/project.json"), "{}");
    let from_settings = sb.write(&sb.cwd.join("extra/a/set.json"), "{}");
    let from_package = sb.write(&sb.home.join("pkg/themes/pkg.json"), "{}");
    let cli_dir = sb.write(&sb.cwd.join("cli/one.json"), "{}");
    sb.write(&sb.cwd.join("cli/sub/two.json"), "{}");
    let cli_file = sb.write(&sb.cwd.join("single.json"), "{}");
    sb.write(&sb.cwd.join("not-json.txt"), "");
    let mut options = sb.options();
    options.project_settings.themes = vec!["../extra".into()];
    options.package_themes = vec![ExtraResource {
        path: sb.home.join("pkg/themes"),
        metadata: Metadata::new("npm:pkg", "user", None),
    }];
    options.theme_paths = vec![
        "cli".into(),
        "single.json".into(),
        "not-json.txt".into(),
        "gone.json".into(),
    ];
    let (files, diagnostics) = theme_files(&options);
    assert_eq!(
        files,
        [
            from_settings,
            project,
            global,
            from_package,
            cli_dir.clone(),
            cli_file.clone()
        ]
    );
    let messages: Vec<(&str, Option<PathBuf>)> = diagnostics
        .iter()
        .map(|d| (d.message.as_str(), d.path.clone()))
        .collect();
    assert_eq!(
        messages,
        [
            ("theme path is not a json file", Some(sb.cwd.join("not-json.txt"))),
            ("theme path does not exist", Some(sb.cwd.join("gone.json"))),
        ]
    );

    // `--no-themes`: only the command line's.
    options.no_themes = true;
    options.theme_paths = vec!["single.json".into()];
    assert_eq!(theme_files(&options).0, [cli_file]);
    options.theme_paths.clear();
    assert_eq!(theme_files(&options), (Vec::new(), Vec::new()));
}

#[test]
fn theme_settings_entries_are_read_from_settings_files() {
    let sb = Sandbox::new();
    let file = sb.write(
        &sb.agent.join("settings.json"),
        r#"{"themes": ["a.json", "dir"], "skills": []}"#,
    );
    let settings = ResourceSettings::read(&file).unwrap();
    assert_eq!(settings.themes, ["a.json", "dir"]);
}
