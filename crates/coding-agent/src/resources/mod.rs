//! pi's resources found on disk: skills ([`Skill`]), prompt templates ([`PromptTemplate`]), theme
//! files ([`theme_files`]; pi-tui parses them) and the system-prompt files ([`SystemPromptFiles`]),
//! discovered where and in the order pi 0.73.1 finds them, with pi's warnings ([`Diagnostic`]).
//!
//! Order (the first of two resources with one name wins; the loser is reported as a collision):
//! the project's `settings.json` entries, the project's own directories (`.pi/skills`, the
//! `.agents/skills` of the working directory and its parents up to the git root, `.pi/prompts`),
//! the global `settings.json` entries, the global directories (`~/.pi/agent/skills`,
//! `~/.agents/skills`, `~/.pi/agent/prompts`), package resources ([`ResourceOptions::package_skills`]),
//! then the command line's `--skill` / `--prompt-template` / `--theme` paths. `--no-skills` /
//! `--no-prompt-templates` / `--no-themes` keep only the command line's. Themes are found like
//! prompt templates, as `.json` files in `.pi/themes` and `~/.pi/agent/themes`.

mod frontmatter;
pub(crate) mod patterns;
mod prompt_templates;
mod skills;
mod source;
mod system_files;
pub(crate) mod walk;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub use prompt_templates::{PromptTemplate, expand_prompt_template, parse_command_args, substitute_args};
pub use skills::{
    MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, Skill, SkillExpansionError, expand_skill_command, format_for_prompt,
    validate_description, validate_name,
};
pub use source::{Collision, Diagnostic, DiagnosticKind, Metadata, SourceInfo};
pub use system_files::SystemPromptFiles;

use walk::SkillDirMode;

use crate::config::SettingsError;
use crate::paths;

/// The `skills`, `prompts` and `themes` entries of one `settings.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceSettings {
    /// `skills`: files, directories and patterns.
    pub skills: Vec<String>,
    /// `prompts`: files, directories and patterns.
    pub prompts: Vec<String>,
    /// `themes`: files, directories and patterns.
    pub themes: Vec<String>,
}

impl ResourceSettings {
    /// The entries of the settings file at `path` (none when it is missing), read with the
    /// settings loader's reader: a file that is not a JSON object is its error. Blocking.
    pub fn read(path: &Path) -> Result<Self, SettingsError> {
        let value = crate::config::read_object(path)?.unwrap_or_default();
        let strings = |key: &str| -> Vec<String> {
            value
                .get(key)
                .and_then(serde_json::Value::as_array)
                .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        Ok(ResourceSettings {
            skills: strings("skills"),
            prompts: strings("prompts"),
            themes: strings("themes"),
        })
    }
}

/// A resource path added from outside (a package's, or an extension's `resources_discover`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraResource {
    /// A file, or a directory searched like a settings entry.
    pub path: PathBuf,
    /// How it is reported.
    pub metadata: Metadata,
}

/// Where to look for resources.
#[derive(Debug, Clone, Default)]
pub struct ResourceOptions {
    /// The working directory (its `.pi/` is the project's).
    pub cwd: PathBuf,
    /// pi's agent directory (`~/.pi/agent`); without it no global resources are read.
    pub agent_dir: Option<PathBuf>,
    /// The home directory (`~` in paths, `~/.agents/skills`).
    pub home: Option<PathBuf>,
    /// The global `settings.json` entries (relative to the agent directory).
    pub global_settings: ResourceSettings,
    /// The project's `.pi/settings.json` entries (relative to `.pi/`).
    pub project_settings: ResourceSettings,
    /// The global `settings.json` to read [`ResourceOptions::global_settings`] from when the
    /// resources are loaded (off the async runtime; its entries replace the field's).
    pub global_settings_file: Option<PathBuf>,
    /// The project's `.pi/settings.json`, read into [`ResourceOptions::project_settings`] the same
    /// way.
    pub project_settings_file: Option<PathBuf>,
    /// `--skill` paths (relative to the working directory).
    pub skill_paths: Vec<String>,
    /// `--prompt-template` paths (relative to the working directory).
    pub prompt_paths: Vec<String>,
    /// `--theme` paths (relative to the working directory).
    pub theme_paths: Vec<String>,
    /// Skills from packages, after the global ones.
    pub package_skills: Vec<ExtraResource>,
    /// Prompt templates from packages, after the global ones.
    pub package_prompts: Vec<ExtraResource>,
    /// Themes from packages, after the global ones.
    pub package_themes: Vec<ExtraResource>,
    /// Skill paths extensions added (`resources_discover`), loaded after all others — even with
    /// `--no-skills`, as in pi; relative paths are taken from the working directory.
    pub extension_skills: Vec<ExtraResource>,
    /// Prompt-template paths extensions added, as [`ResourceOptions::extension_skills`].
    pub extension_prompts: Vec<ExtraResource>,
    /// `--no-skills`: only `skill_paths` (and the extensions').
    pub no_skills: bool,
    /// `--no-prompt-templates`: only `prompt_paths`.
    pub no_prompt_templates: bool,
    /// `--no-themes`: only `theme_paths`.
    pub no_themes: bool,
}

/// The skills and templates found, each list with its problems.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    /// The skills, in precedence order.
    pub skills: Vec<Skill>,
    /// Warnings and collisions of the skills (collisions last).
    pub skill_diagnostics: Vec<Diagnostic>,
    /// The prompt templates, in precedence order.
    pub prompts: Vec<PromptTemplate>,
    /// Collisions of the templates.
    pub prompt_diagnostics: Vec<Diagnostic>,
}

impl ResourceOptions {
    /// Reads the settings files named in [`ResourceOptions::global_settings_file`] and
    /// [`ResourceOptions::project_settings_file`] into the entries (and forgets the paths, so a
    /// reload does not read them again). Blocking.
    pub fn read_settings_files(&mut self) -> Result<(), SettingsError> {
        if let Some(path) = self.global_settings_file.take() {
            self.global_settings = ResourceSettings::read(&path)?;
        }
        if let Some(path) = self.project_settings_file.take() {
            self.project_settings = ResourceSettings::read(&path)?;
        }
        Ok(())
    }
}

impl Resources {
    /// Loads everything `options` names (blocking: run it off the async runtime).
    pub fn load(options: &ResourceOptions) -> Self {
        let (skills, skill_diagnostics) = load_skills(options);
        let (prompts, prompt_diagnostics) = load_prompts(options);
        Resources {
            skills,
            skill_diagnostics,
            prompts,
            prompt_diagnostics,
        }
    }

    /// What a typed message becomes: `/skill:name args` the skill's block, `/template args` the
    /// template with the arguments (pi expands a skill first, then the result as a template).
    /// Blocking (a skill's file is read).
    ///
    /// # Errors
    /// The skill's file could not be read (pi reports it and sends the text as typed).
    pub fn expand(&self, text: &str) -> Result<String, SkillExpansionError> {
        let text = match expand_skill_command(text, &self.skills) {
            Some(expanded) => expanded?,
            None => text.to_owned(),
        };
        Ok(expand_prompt_template(&text, &self.prompts).unwrap_or(text))
    }
}

/// One resource file found in the default places, settings or packages.
struct Found {
    path: PathBuf,
    metadata: Metadata,
    enabled: bool,
    rank: u8,
}

/// pi's resource accumulator: the first time a path is added counts.
#[derive(Default)]
struct Accumulator(Vec<Found>);

impl Accumulator {
    fn add(&mut self, path: PathBuf, metadata: &Metadata, enabled: bool, rank: u8) {
        if !self.0.iter().any(|f| f.path == path) {
            self.0.push(Found {
                path,
                metadata: metadata.clone(),
                enabled,
                rank,
            });
        }
    }

    /// Sorted by precedence, duplicates (by real path) removed.
    fn resolved(mut self) -> Vec<Found> {
        self.0.sort_by_key(|f| f.rank);
        let mut seen = HashSet::new();
        self.0.retain(|f| seen.insert(paths::canonical(&f.path)));
        self.0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skills,
    Prompts,
    Themes,
}

/// The files of a settings entry or a package path.
fn files_of(path: &Path, kind: Kind) -> Vec<PathBuf> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => vec![path.to_path_buf()],
        Ok(meta) if meta.is_dir() => match kind {
            Kind::Skills => walk::skill_files(path, SkillDirMode::Pi),
            Kind::Prompts => walk::markdown_files(path),
            Kind::Themes => walk::files_ending(path, ".json"),
        },
        _ => Vec::new(),
    }
}

/// pi's `resolveLocalEntries`: the plain entries' files, enabled by the pattern entries.
fn add_settings_entries(
    acc: &mut Accumulator,
    entries: &[String],
    kind: Kind,
    base: &Path,
    home: &Path,
    meta: &Metadata,
    rank: u8,
) {
    let (plain, pats): (Vec<&String>, Vec<&String>) = entries.iter().partition(|e| !patterns::is_pattern(e));
    let pats: Vec<&str> = pats.iter().map(|s| s.as_str()).collect();
    for entry in plain {
        for file in files_of(&paths::resolve_from_base(entry, base, home), kind) {
            let enabled = patterns::enabled_by_patterns(&file, &pats, base);
            acc.add(file, meta, enabled, rank);
        }
    }
}

fn add_auto(acc: &mut Accumulator, files: Vec<PathBuf>, entries: &[String], base: &Path, meta: &Metadata, rank: u8) {
    for file in files {
        let enabled = patterns::enabled_by_overrides(&file, entries, base);
        acc.add(file, meta, enabled, rank);
    }
}

/// pi's package manager's `resolve()` for one resource type: every file found, in precedence
/// order.
fn discovered(options: &ResourceOptions, kind: Kind) -> Vec<Found> {
    let home = options.home.clone().unwrap_or_default();
    let project_base = options.cwd.join(".pi");
    let mut acc = Accumulator::default();
    let packages = match kind {
        Kind::Skills => &options.package_skills,
        Kind::Prompts => &options.package_prompts,
        Kind::Themes => &options.package_themes,
    };
    for extra in packages {
        for file in files_of(&extra.path, kind) {
            acc.add(file, &extra.metadata, true, 4);
        }
    }
    let entries = |settings: &ResourceSettings| match kind {
        Kind::Skills => settings.skills.clone(),
        Kind::Prompts => settings.prompts.clone(),
        Kind::Themes => settings.themes.clone(),
    };
    let (project_entries, global_entries) = (entries(&options.project_settings), entries(&options.global_settings));
    let local_project = Metadata::new("local", "project", None);
    add_settings_entries(
        &mut acc,
        &project_entries,
        kind,
        &project_base,
        &home,
        &local_project,
        0,
    );
    if let Some(agent_dir) = &options.agent_dir {
        let local_user = Metadata::new("local", "user", None);
        add_settings_entries(&mut acc, &global_entries, kind, agent_dir, &home, &local_user, 2);
    }
    let auto_project = Metadata::new("auto", "project", Some(project_base.clone()));
    let user_agents = paths::normalize(&home.join(".agents").join("skills"));
    let project_files = match kind {
        Kind::Skills => {
            let mut files = walk::skill_files(&project_base.join("skills"), SkillDirMode::Pi);
            for dir in walk::ancestor_agents_skill_dirs(&options.cwd) {
                if options.home.is_none() || dir != user_agents {
                    files.extend(walk::skill_files(&dir, SkillDirMode::Agents));
                }
            }
            files
        }
        Kind::Prompts => walk::prompt_files(&project_base.join("prompts")),
        Kind::Themes => walk::files_directly_in(&project_base.join("themes"), ".json"),
    };
    add_auto(
        &mut acc,
        project_files,
        &project_entries,
        &project_base,
        &auto_project,
        1,
    );
    if let Some(agent_dir) = &options.agent_dir {
        let auto_user = Metadata::new("auto", "user", Some(agent_dir.clone()));
        let user_files = match kind {
            Kind::Skills => {
                let mut files = walk::skill_files(&agent_dir.join("skills"), SkillDirMode::Pi);
                if options.home.is_some() {
                    files.extend(walk::skill_files(&user_agents, SkillDirMode::Agents));
                }
                files
            }
            Kind::Prompts => walk::prompt_files(&agent_dir.join("prompts")),
            Kind::Themes => walk::files_directly_in(&agent_dir.join("themes"), ".json"),
        };
        add_auto(&mut acc, user_files, &global_entries, agent_dir, &auto_user, 3);
    }
    acc.resolved()
}

/// The paths to load, in order: the enabled discovered ones (unless `--no-…`), then the command
/// line's, each real path once; and the metadata of every discovered file.
fn paths_to_load(options: &ResourceOptions, kind: Kind) -> (Vec<PathBuf>, Vec<(PathBuf, Metadata)>) {
    let found = discovered(options, kind);
    let (disabled, cli, extension) = match kind {
        Kind::Skills => (options.no_skills, &options.skill_paths, &options.extension_skills),
        Kind::Prompts => (
            options.no_prompt_templates,
            &options.prompt_paths,
            &options.extension_prompts,
        ),
        Kind::Themes => (options.no_themes, &options.theme_paths, &Vec::new()),
    };
    let home = options.home.clone().unwrap_or_default();
    let mut paths = Vec::new();
    let mut seen = HashSet::new();
    let enabled = found.iter().filter(|f| f.enabled && !disabled).map(|f| f.path.clone());
    let from_cli = cli.iter().map(|p| paths::resolve_from_base(p, &options.cwd, &home));
    // pi merges the extensions' paths after everything else it loaded.
    let from_extensions: Vec<(PathBuf, Metadata)> = extension
        .iter()
        .map(|extra| {
            let path = paths::resolve_from_base(&extra.path.to_string_lossy(), &options.cwd, &home);
            (path, extra.metadata.clone())
        })
        .collect();
    let extension_paths = from_extensions.iter().map(|(path, _)| path.clone());
    for path in enabled.chain(from_cli).chain(extension_paths) {
        if seen.insert(paths::canonical(&path)) {
            paths.push(path);
        }
    }
    let metadata = found
        .into_iter()
        .map(|f| (f.path, f.metadata))
        .chain(from_extensions)
        .collect();
    (paths, metadata)
}

/// The metadata of `file` from the discovered resources: its own, else that of a directory
/// holding it.
fn lookup(metadata: &[(PathBuf, Metadata)], file: &Path) -> Option<SourceInfo> {
    let exact = metadata.iter().find(|(p, _)| p == file);
    let within = || metadata.iter().find(|(p, _)| file.starts_with(p));
    exact.or_else(within).map(|(_, meta)| SourceInfo {
        path: file.to_path_buf(),
        metadata: meta.clone(),
    })
}

fn is_under(path: &Path, root: &Path) -> bool {
    paths::normalize(path).starts_with(paths::normalize(root))
}

fn load_skills(options: &ResourceOptions) -> (Vec<Skill>, Vec<Diagnostic>) {
    let (paths, metadata) = paths_to_load(options, Kind::Skills);
    if paths.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let user_dir = options.agent_dir.as_ref().map(|d| d.join("skills"));
    let project_dir = options.cwd.join(".pi").join("skills");
    let mut skills: Vec<Skill> = Vec::new();
    let mut real_paths = HashSet::new();
    let mut diagnostics = Vec::new();
    let mut collisions = Vec::new();
    for path in paths {
        // Found under a default directory but given as a path: reported with that scope.
        let scope = if user_dir.as_ref().is_some_and(|d| is_under(&path, d)) {
            "user"
        } else if is_under(&path, &project_dir) {
            "project"
        } else {
            "temporary"
        };
        let info_for = |file: &Path| {
            lookup(&metadata, file).unwrap_or_else(|| SourceInfo {
                path: file.to_path_buf(),
                metadata: Metadata::new("local", scope, file.parent().map(Path::to_path_buf)),
            })
        };
        let files = match std::fs::metadata(&path) {
            Err(_) => {
                diagnostics.push(Diagnostic::warning("skill path does not exist", &path));
                continue;
            }
            Ok(meta) if meta.is_dir() => walk::skill_files(&path, SkillDirMode::Pi),
            Ok(meta) if meta.is_file() && path.to_string_lossy().ends_with(".md") => vec![path.clone()],
            Ok(_) => {
                diagnostics.push(Diagnostic::warning("skill path is not a markdown file", &path));
                continue;
            }
        };
        for file in files {
            let (skill, warnings) = skills::load_skill_file(&file, info_for(&file));
            diagnostics.extend(warnings);
            let Some(skill) = skill else { continue };
            let real = paths::canonical(&skill.file_path);
            if real_paths.contains(&real) {
                continue;
            }
            if let Some(existing) = skills.iter().find(|s| s.name == skill.name) {
                collisions.push(Diagnostic::collision(
                    "skill",
                    &skill.name,
                    format!("name \"{}\" collision", skill.name),
                    &existing.file_path,
                    &skill.file_path,
                ));
            } else {
                real_paths.insert(real);
                skills.push(skill);
            }
        }
    }
    diagnostics.extend(collisions);
    (skills, diagnostics)
}

/// The theme files to load, in precedence order (the first of two themes with one name wins),
/// and pi's warnings about the paths: the discovered `.json` files (unless `--no-themes`), then
/// each `--theme` path, a directory giving the `.json` files directly in it. Blocking.
///
/// ```
/// use pi_coding_agent::resources::{ResourceOptions, theme_files};
/// let dir = std::env::temp_dir().join(format!("pi-theme-doc-{}", std::process::id()));
/// let options = ResourceOptions { cwd: dir.clone(), theme_paths: vec!["missing.json".into()], ..Default::default() };
/// let (files, diagnostics) = theme_files(&options);
/// assert!(files.is_empty());
/// assert_eq!(diagnostics[0].message, "theme path does not exist");
/// ```
pub fn theme_files(options: &ResourceOptions) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let (paths, _) = paths_to_load(options, Kind::Themes);
    let mut files = Vec::new();
    let mut diagnostics = Vec::new();
    for path in paths {
        match std::fs::metadata(&path) {
            Err(_) => diagnostics.push(Diagnostic::warning("theme path does not exist", &path)),
            Ok(meta) if meta.is_dir() => files.extend(walk::theme_files_of_path_dir(&path)),
            Ok(meta) if meta.is_file() && path.to_string_lossy().ends_with(".json") => files.push(path),
            Ok(_) => diagnostics.push(Diagnostic::warning("theme path is not a json file", &path)),
        }
    }
    (files, diagnostics)
}

fn load_prompts(options: &ResourceOptions) -> (Vec<PromptTemplate>, Vec<Diagnostic>) {
    let (paths, metadata) = paths_to_load(options, Kind::Prompts);
    let user_dir = options.agent_dir.as_ref().map(|d| d.join("prompts"));
    let project_dir = options.cwd.join(".pi").join("prompts");
    let info_for = |file: &Path| {
        lookup(&metadata, file).unwrap_or_else(|| {
            let (scope, base) = match &user_dir {
                Some(user) if is_under(file, user) => ("user", Some(user.clone())),
                _ if is_under(file, &project_dir) => ("project", Some(project_dir.clone())),
                _ => ("temporary", file.parent().map(Path::to_path_buf)),
            };
            SourceInfo {
                path: file.to_path_buf(),
                metadata: Metadata::new("local", scope, base),
            }
        })
    };
    let mut prompts: Vec<PromptTemplate> = Vec::new();
    let mut diagnostics = Vec::new();
    for path in paths {
        let files = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk::template_files_of_path_dir(&path),
            Ok(meta) if meta.is_file() && path.to_string_lossy().ends_with(".md") => vec![path.clone()],
            _ => continue,
        };
        for file in files {
            let Some(template) = prompt_templates::load_template_file(&file, info_for(&file)) else {
                continue;
            };
            if let Some(existing) = prompts.iter().find(|t| t.name == template.name) {
                diagnostics.push(Diagnostic::collision(
                    "prompt",
                    &template.name,
                    format!("name \"/{}\" collision", template.name),
                    &existing.file_path,
                    &template.file_path,
                ));
            } else {
                prompts.push(template);
            }
        }
    }
    (prompts, diagnostics)
}

#[cfg(test)]
mod tests;
