//! What the interactive mode says at start-up about pi's resources, as pi does: `[Skills]` and
//! `[Prompts]` with the names loaded (with the header), and `[Skill conflicts]` / `[Prompt
//! conflicts]` with the problems found (always, even with `quietStartup`).

use pi_coding_agent::resources::{Diagnostic, DiagnosticKind, Resources};

/// The notices to show: the listing when `listing`, the problems in any case.
///
/// ```
/// use pi_coding_agent::resources::Resources;
/// assert!(pi_cli::resource_notices(&Resources::default(), true).is_empty());
/// ```
pub fn resource_notices(resources: &Resources, listing: bool) -> Vec<String> {
    let mut notices = Vec::new();
    if listing {
        let mut skills: Vec<&str> = resources.skills.iter().map(|s| s.name.as_str()).collect();
        if !skills.is_empty() {
            skills.sort_unstable();
            notices.push(format!("[Skills]\n  {}", skills.join(", ")));
        }
        let mut prompts: Vec<String> = resources.prompts.iter().map(|p| format!("/{}", p.name)).collect();
        if !prompts.is_empty() {
            prompts.sort_unstable();
            notices.push(format!("[Prompts]\n  {}", prompts.join(", ")));
        }
    }
    if !resources.skill_diagnostics.is_empty() {
        notices.push(format!(
            "[Skill conflicts]\n{}",
            diagnostics(&resources.skill_diagnostics)
        ));
    }
    if !resources.prompt_diagnostics.is_empty() {
        notices.push(format!(
            "[Prompt conflicts]\n{}",
            diagnostics(&resources.prompt_diagnostics)
        ));
    }
    notices
}

/// What the interactive mode says about the themes: `[Themes]` with the custom themes' names
/// (with the header), `[Theme conflicts]` with the problems (always), as pi does.
pub(crate) fn theme_notices(themes: &crate::themes::Themes, listing: bool) -> Vec<String> {
    let mut notices = Vec::new();
    if listing && !themes.loaded.is_empty() {
        let mut names: Vec<&str> = themes.loaded.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        notices.push(format!("[Themes]\n  {}", names.join(", ")));
    }
    if !themes.diagnostics.is_empty() {
        notices.push(format!("[Theme conflicts]\n{}", diagnostics(&themes.diagnostics)));
    }
    notices
}

/// pi's `formatDiagnostics`: collisions grouped by name (the winner, then each loser "(skipped)"),
/// then every other problem as its path and, below it, the message.
fn diagnostics(list: &[Diagnostic]) -> String {
    let mut lines = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for d in list {
        if let Some(c) = &d.collision
            && !names.contains(&c.name.as_str())
        {
            names.push(&c.name);
        }
    }
    for name in names {
        let group: Vec<_> = list
            .iter()
            .filter_map(|d| d.collision.as_ref())
            .filter(|c| c.name == name)
            .collect();
        lines.push(format!("  \"{name}\" collision:"));
        lines.push(format!("    ✓ {}", group[0].winner_path.display()));
        for c in group {
            lines.push(format!("    ✗ {} (skipped)", c.loser_path.display()));
        }
    }
    for d in list.iter().filter(|d| d.kind != DiagnosticKind::Collision) {
        match &d.path {
            Some(path) => {
                lines.push(format!("  {}", path.display()));
                lines.push(format!("    {}", d.message));
            }
            None => lines.push(format!("  {}", d.message)),
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_coding_agent::resources::{Collision, PromptTemplate, SourceInfo};
    use std::path::Path;

    #[test]
    fn listing_and_problems_as_pi_shows_them() {
        let template = |name: &str| PromptTemplate {
            name: name.into(),
            description: String::new(),
            argument_hint: None,
            content: String::new(),
            file_path: format!("/p/{name}.md").into(),
            source_info: SourceInfo::path(Path::new("/p")),
        };
        let resources = Resources {
            prompts: vec![template("review"), template("fix")],
            skill_diagnostics: vec![
                Diagnostic {
                    kind: DiagnosticKind::Warning,
                    message: "description is required".into(),
                    path: Some("/s/a/SKILL.md".into()),
                    collision: None,
                },
                Diagnostic {
                    kind: DiagnosticKind::Collision,
                    message: "name \"dup\" collision".into(),
                    path: Some("/g/dup/SKILL.md".into()),
                    collision: Some(Collision {
                        resource_type: "skill",
                        name: "dup".into(),
                        winner_path: "/p/dup/SKILL.md".into(),
                        loser_path: "/g/dup/SKILL.md".into(),
                    }),
                },
            ],
            ..Resources::default()
        };
        assert_eq!(
            resource_notices(&resources, true),
            [
                "[Prompts]\n  /fix, /review",
                "[Skill conflicts]\n  \"dup\" collision:\n    ✓ /p/dup/SKILL.md\n    ✗ /g/dup/SKILL.md (skipped)\n  \
                 /s/a/SKILL.md\n    description is required",
            ]
        );
        assert_eq!(resource_notices(&resources, false).len(), 1);
    }
}
