//! Skills (the Agent Skills format pi follows): a `SKILL.md` (or, in pi's own skill directories,
//! any root `.md` file) whose front matter names and describes it. pi validates the name and the
//! description with the standard's rules, warns about every violation and still loads the skill —
//! unless the description is missing. The system prompt lists the skills the model may read
//! ([`format_for_prompt`]); `/skill:name args` puts a skill's body into the message
//! ([`expand_skill_command`]).

use std::path::{Path, PathBuf};

use super::frontmatter;
use super::source::{Diagnostic, SourceInfo};

/// The longest name the standard allows.
pub const MAX_NAME_LENGTH: usize = 64;
/// The longest description the standard allows.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (front matter `name`, else the directory's name).
    pub name: String,
    /// Its description.
    pub description: String,
    /// The Markdown file.
    pub file_path: PathBuf,
    /// The file's directory (relative references in the skill resolve against it).
    pub base_dir: PathBuf,
    /// Where it came from.
    pub source_info: SourceInfo,
    /// `disable-model-invocation: true`: left out of the system prompt, `/skill:name` only.
    pub disable_model_invocation: bool,
}

/// Reads one skill file: the skill (when it has a description) and the warnings about it.
pub(crate) fn load_skill_file(path: &Path, source_info: SourceInfo) -> (Option<Skill>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let content = match std::fs::read_to_string(path) {
        Ok(content) => content,
        Err(error) => {
            diagnostics.push(Diagnostic::warning(error.to_string(), path));
            return (None, diagnostics);
        }
    };
    let parsed = match frontmatter::parse(&content) {
        Ok(parsed) => parsed,
        Err(error) => {
            diagnostics.push(Diagnostic::warning(error.to_string(), path));
            return (None, diagnostics);
        }
    };
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent_name = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = parsed.string("description").unwrap_or_default();
    for message in validate_description(&description) {
        diagnostics.push(Diagnostic::warning(message, path));
    }
    let name = parsed
        .string("name")
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| parent_name.clone());
    for message in validate_name(&name, &parent_name) {
        diagnostics.push(Diagnostic::warning(message, path));
    }
    if description.trim().is_empty() {
        return (None, diagnostics);
    }
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        source_info,
        disable_model_invocation: parsed.is_true("disable-model-invocation"),
    };
    (Some(skill), diagnostics)
}

/// The standard's name rules, in pi's words (UTF-16 length, as JavaScript counts).
pub fn validate_name(name: &str, parent_dir_name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name != parent_dir_name {
        errors.push(format!(
            "name \"{name}\" does not match parent directory \"{parent_dir_name}\""
        ));
    }
    let length = name.encode_utf16().count();
    if length > MAX_NAME_LENGTH {
        errors.push(format!("name exceeds {MAX_NAME_LENGTH} characters ({length})"));
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errors.push("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".to_owned());
    }
    errors
}

/// The standard's description rules, in pi's words.
pub fn validate_description(description: &str) -> Vec<String> {
    let length = description.encode_utf16().count();
    if description.trim().is_empty() {
        vec!["description is required".to_owned()]
    } else if length > MAX_DESCRIPTION_LENGTH {
        vec![format!(
            "description exceeds {MAX_DESCRIPTION_LENGTH} characters ({length})"
        )]
    } else {
        Vec::new()
    }
}

/// The skills section of the system prompt, exactly as pi writes it (empty when no skill may be
/// invoked by the model).
pub fn format_for_prompt(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills.iter().filter(|s| !s.disable_model_invocation).collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "\n\nThe following skills provide specialized instructions for specific tasks.".to_owned(),
        "Use the read tool to load a skill's file when the task matches its description.".to_owned(),
        "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / \
         dirname of the path) and use that absolute path in tool commands."
            .to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.file_path.display().to_string())
        ));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// Why `/skill:name` could not be expanded (the text is then sent as typed).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SkillExpansionError(#[from] std::io::Error);

/// `/skill:name [args]` → the skill's body in a `<skill>` block, the arguments after it; `None`
/// when `text` is not a skill command or names no loaded skill. Blocking (reads the file).
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Option<Result<String, SkillExpansionError>> {
    let rest = text.strip_prefix("/skill:")?;
    let (name, args) = match rest.split_once(' ') {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    let skill = skills.iter().find(|s| s.name == name)?;
    Some(
        std::fs::read_to_string(&skill.file_path)
            .map_err(SkillExpansionError::from)
            .map(|content| {
                let body = frontmatter::strip(&content);
                let block = format!(
                    "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
                    skill.name,
                    skill.file_path.display(),
                    skill.base_dir.display(),
                    body.trim()
                );
                if args.is_empty() {
                    block
                } else {
                    format!("{block}\n\n{args}")
                }
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(path: &Path) -> SourceInfo {
        SourceInfo::path(path)
    }

    fn skill_file(dir: &Path, folder: &str, text: &str) -> PathBuf {
        let path = dir.join(folder).join("SKILL.md");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn messages(diagnostics: &[Diagnostic]) -> Vec<&str> {
        diagnostics.iter().map(|d| d.message.as_str()).collect()
    }

    #[test]
    fn name_rules_in_pis_words() {
        assert!(validate_name("pdf-tools", "pdf-tools").is_empty());
        assert_eq!(
            validate_name("PDF--x-", "pdf"),
            [
                "name \"PDF--x-\" does not match parent directory \"pdf\"",
                "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
                "name must not start or end with a hyphen",
                "name must not contain consecutive hyphens",
            ]
        );
        let long = "a".repeat(65);
        assert_eq!(validate_name(&long, &long), ["name exceeds 64 characters (65)"]);
    }

    #[test]
    fn description_rules_in_pis_words() {
        assert_eq!(validate_description("  "), ["description is required"]);
        assert_eq!(
            validate_description(&"d".repeat(1025)),
            ["description exceeds 1024 characters (1025)"]
        );
        assert!(validate_description(&"d".repeat(1024)).is_empty());
    }

    #[test]
    fn a_skill_loads_with_warnings_but_not_without_a_description() {
        let dir = tempfile::tempdir().unwrap();
        let path = skill_file(
            dir.path(),
            "my-skill",
            "---\nname: Other\ndescription: Does it.\n---\nBody",
        );
        let (skill, diagnostics) = load_skill_file(&path, info(&path));
        let skill = skill.unwrap();
        assert_eq!(skill.name, "Other");
        assert_eq!(
            messages(&diagnostics),
            [
                "name \"Other\" does not match parent directory \"my-skill\"",
                "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
            ]
        );
        let path = skill_file(dir.path(), "nameless", "---\nlicense: MIT\n---\nBody");
        let (skill, diagnostics) = load_skill_file(&path, info(&path));
        assert!(skill.is_none());
        assert_eq!(messages(&diagnostics), ["description is required"]);
        let path = skill_file(dir.path(), "from-dir", "---\ndescription: x\n---\n");
        assert_eq!(load_skill_file(&path, info(&path)).0.unwrap().name, "from-dir");
    }

    #[test]
    fn the_prompt_section_escapes_and_hides_disabled_skills() {
        let skill = |name: &str, disabled: bool| Skill {
            name: name.into(),
            description: "Use <this> & \"that\"".into(),
            file_path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            base_dir: PathBuf::from(format!("/s/{name}")),
            source_info: SourceInfo::path(Path::new("/s")),
            disable_model_invocation: disabled,
        };
        assert_eq!(format_for_prompt(&[skill("hidden", true)]), "");
        let text = format_for_prompt(&[skill("a", false), skill("hidden", true)]);
        assert!(text.starts_with("\n\nThe following skills"), "{text}");
        assert!(
            text.ends_with(
                "<available_skills>\n  <skill>\n    <name>a</name>\n    <description>Use &lt;this&gt; &amp; \
                 &quot;that&quot;</description>\n    <location>/s/a/SKILL.md</location>\n  </skill>\n</available_skills>"
            ),
            "{text}"
        );
    }

    #[test]
    fn skill_commands_expand_to_the_body_and_the_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let path = skill_file(
            dir.path(),
            "hello",
            "---\ndescription: Greets.\n---\n\n# Hello\n\nSay hi.\n",
        );
        let (skill, _) = load_skill_file(&path, info(&path));
        let skills = vec![skill.unwrap()];
        let base = path.parent().unwrap().display().to_string();
        let block = format!(
            "<skill name=\"hello\" location=\"{}\">\nReferences are relative to {base}.\n\n# Hello\n\nSay hi.\n</skill>",
            path.display()
        );
        assert_eq!(expand_skill_command("/skill:hello", &skills).unwrap().unwrap(), block);
        assert_eq!(
            expand_skill_command("/skill:hello   to  Ada ", &skills)
                .unwrap()
                .unwrap(),
            format!("{block}\n\nto  Ada")
        );
        assert!(expand_skill_command("/skill:nope x", &skills).is_none());
        assert!(expand_skill_command("/hello", &skills).is_none());
    }
}
