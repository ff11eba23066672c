//! [`PromptRecipe`]: what a session's resources (skills, prompt templates) and system prompt are
//! built from, kept after [`SessionBuilder::build`](crate::SessionBuilder::build) so both can be
//! built again when extensions add resource paths (`resources_discover`), as pi 0.73.1 does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::build_error::BuildError;
use crate::extensions::Extensions;
use crate::extensions::events::{ResourcePath, ResourcePaths};
use crate::resources::{ExtraResource, Metadata, ResourceOptions, Resources, SystemPromptFiles};
use crate::session::AgentSession;
use crate::system_prompt::{
    DocsLocation, PromptParts, build_system_prompt, find_context_files, now_text, text_or_file,
};

/// The inputs of a session's resources and system prompt (not its tools: those are read from
/// the session each time).
#[derive(Debug, Clone, Default)]
pub struct PromptRecipe {
    /// Where resources are loaded from (`None`: none but what extensions add).
    pub(crate) resources: Option<ResourceOptions>,
    /// `--system-prompt`, else `SYSTEM.md` (text or a file).
    pub(crate) custom: Option<String>,
    /// `--append-system-prompt`s, else `APPEND_SYSTEM.md` (texts or files).
    pub(crate) append: Vec<String>,
    /// Whether `AGENTS.md` / `CLAUDE.md` files are read.
    pub(crate) context_files: bool,
    /// The working directory.
    pub(crate) cwd: PathBuf,
    /// The global context file (`~/.pi/agent/AGENTS.md`).
    pub(crate) global_context: Option<PathBuf>,
}

impl PromptRecipe {
    /// Loads the resources and finds `SYSTEM.md` / `APPEND_SYSTEM.md` (off the runtime); the
    /// flags win over the files (`--system-prompt` over `SYSTEM.md`, any `--append-system-prompt`
    /// over `APPEND_SYSTEM.md`). The recipe returned has the files resolved, the settings files'
    /// `skills` / `prompts` entries included (a broken settings file is
    /// [`BuildError::Settings`]).
    pub(crate) async fn load(mut self) -> Result<(Self, Resources), BuildError> {
        let (resources, files) = match self.resources.take() {
            Some(mut options) => {
                let (options, resources, files) = tokio::task::spawn_blocking(move || {
                    options.read_settings_files()?;
                    let files = SystemPromptFiles::discover(&options.cwd, options.agent_dir.as_deref());
                    let resources = Resources::load(&options);
                    Ok::<_, BuildError>((options, resources, files))
                })
                .await??;
                self.resources = Some(options);
                (resources, files)
            }
            None => (Resources::default(), SystemPromptFiles::default()),
        };
        if self.custom.is_none() {
            self.custom = files.system.map(|path| path.display().to_string());
        }
        if self.append.is_empty() {
            self.append = files
                .append
                .into_iter()
                .map(|path| path.display().to_string())
                .collect();
        }
        Ok((self, resources))
    }

    /// pi's system prompt for the session's active tools, `resources`' skills and the extensions'
    /// prompt snippets and guidelines (context files read off the runtime).
    pub(crate) async fn prompt(
        &self,
        session: &AgentSession,
        resources: &Resources,
        extensions: &Extensions,
    ) -> Result<String, BuildError> {
        let (snippets, guidelines) = extensions.prompt_metadata();
        let tools: Vec<(String, String)> = session
            .agent()
            .tools()
            .iter()
            .map(|t| (t.name().to_owned(), t.description().to_owned()))
            .collect();
        let recipe = self.clone();
        let skills = resources.skills.clone();
        let prompt = tokio::task::spawn_blocking(move || {
            let cwd = &recipe.cwd;
            let context_files = if recipe.context_files {
                find_context_files(cwd, recipe.global_context.as_deref())
            } else {
                Vec::new()
            };
            build_system_prompt(&PromptParts {
                tools: tools.iter().map(|(n, d)| (n.as_str(), d.as_str())).collect(),
                custom: recipe.custom.as_deref().map(|c| text_or_file(c, cwd)),
                append: (!recipe.append.is_empty()).then(|| {
                    recipe
                        .append
                        .iter()
                        .map(|a| text_or_file(a, cwd))
                        .collect::<Vec<_>>()
                        .join("\n\n")
                }),
                context_files,
                now: now_text(),
                cwd: cwd.display().to_string(),
                docs: DocsLocation::bundled(),
                skills,
                snippets,
                guidelines,
            })
        })
        .await?;
        Ok(prompt)
    }

    /// What pi does with the paths `resources_discover` returned: loads the skill and prompt
    /// paths after every other (themes are not supported yet), sets them as the session's
    /// resources and rebuilds its system prompt. Nothing happens when no path was added; returns
    /// whether something was.
    ///
    /// # Errors
    /// Loading off the runtime was interrupted.
    pub async fn extend(
        &mut self,
        session: &AgentSession,
        extensions: &Extensions,
        paths: &ResourcePaths,
    ) -> Result<bool, BuildError> {
        if paths.skill_paths.is_empty() && paths.prompt_paths.is_empty() {
            return Ok(false);
        }
        let mut options = self.resources.clone().unwrap_or_else(|| ResourceOptions {
            cwd: self.cwd.clone(),
            no_skills: true,
            no_prompt_templates: true,
            ..ResourceOptions::default()
        });
        options.extension_skills.extend(paths.skill_paths.iter().map(extra));
        options.extension_prompts.extend(paths.prompt_paths.iter().map(extra));
        self.resources = Some(options.clone());
        let resources = tokio::task::spawn_blocking(move || Resources::load(&options)).await?;
        let resources = Arc::new(resources);
        session.set_resources(resources.clone());
        let prompt = self.prompt(session, &resources, extensions).await?;
        session.agent().set_system_prompt(prompt);
        Ok(true)
    }
}

/// An extension's path with pi's metadata: `extension:<name>` (the file name without `.ts` /
/// `.js`, or the `<name>` of an inline extension), temporary, based at the extension's directory.
fn extra(path: &ResourcePath) -> ExtraResource {
    let extension = &path.extension_path;
    let (source, base_dir) = if extension.starts_with('<') {
        (format!("extension:{}", extension.replace(['<', '>'], "")), None)
    } else {
        let file = Path::new(extension);
        let base = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = base
            .strip_suffix(".ts")
            .or_else(|| base.strip_suffix(".js"))
            .unwrap_or(&base)
            .to_owned();
        (format!("extension:{name}"), file.parent().map(Path::to_path_buf))
    };
    ExtraResource {
        path: PathBuf::from(&path.path),
        metadata: Metadata {
            source,
            scope: "temporary".into(),
            origin: "top-level".into(),
            base_dir,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_paths_get_pis_source_labels() {
        let of = |extension: &str| {
            extra(&ResourcePath {
                path: "skills".into(),
                extension_path: extension.into(),
            })
            .metadata
        };
        let file = of("/x/exts/finder.ts");
        assert_eq!(file.source, "extension:finder");
        assert_eq!(file.base_dir.as_deref(), Some(Path::new("/x/exts")));
        assert_eq!(file.scope, "temporary");
        let inline = of("<inline:1>");
        assert_eq!(inline.source, "extension:inline:1");
        assert_eq!(inline.base_dir, None);
    }
}
