//! [`SessionBuilder`]: an [`AgentSession`] configured in one place, the way the `pi` command
//! configures it — settings, model and thinking level, API key, the active tools, custom tools
//! (discovered, `--tool` paths, MCP servers, native factories), the user interface tools may ask,
//! the steering and follow-up queues, and the system prompt.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::{Model, StreamFn, ThinkingLevel};
use pi_ai::{HttpClient, ModelRegistry, Providers, SharedRegistry};

pub use crate::build_error::BuildError;
use crate::config::{AgentPaths, Settings};
use crate::custom_tools::discover;
use crate::custom_tools::{CustomTool, CustomToolFactory, FactoryError, NamedFactory, ToolApi};
use crate::custom_tools::{CustomTools, LoadError, load_all};
use crate::extensions::{DiscoverOptions, ExtensionLoadError, Extensions, LoadOptions};
use crate::prompt_recipe::PromptRecipe;
use crate::resources::ResourceOptions;
use crate::session::{AgentSession, DEFAULT_ACTIVE_TOOLS, SessionOptions, SessionSettings};
use crate::ui::ToolUi;

/// Which tools start active (pi's `--tools`, `--no-builtin-tools` and `--no-tools`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolSelection {
    /// pi's defaults (`read`, `bash`, `edit`, `write`) and every custom tool.
    #[default]
    Default,
    /// Exactly these names (`--tools a,b`); custom tools still load and can be turned on later.
    Only(Vec<String>),
    /// Only the custom tools (`--no-builtin-tools`).
    CustomOnly,
    /// No tools at all, and no custom tools are loaded (`--no-tools`).
    None,
}

impl ToolSelection {
    /// The active tool names, given the names of the custom tools that loaded.
    ///
    /// ```
    /// use pi_coding_agent::ToolSelection;
    /// let custom = ["todo".to_owned()];
    /// assert_eq!(ToolSelection::Default.active(&custom), ["read", "bash", "edit", "write", "todo"]);
    /// assert_eq!(ToolSelection::Only(vec![" grep ".into(), "".into()]).active(&custom), ["grep"]);
    /// assert_eq!(ToolSelection::CustomOnly.active(&custom), ["todo"]);
    /// assert!(ToolSelection::None.active(&custom).is_empty());
    /// ```
    pub fn active(&self, custom: &[String]) -> Vec<String> {
        match self {
            ToolSelection::None => Vec::new(),
            ToolSelection::CustomOnly => custom.to_vec(),
            ToolSelection::Only(names) => names
                .iter()
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
                .collect(),
            ToolSelection::Default => DEFAULT_ACTIVE_TOOLS
                .iter()
                .map(|s| (*s).to_owned())
                .chain(custom.iter().cloned())
                .collect(),
        }
    }
}

/// A built session and what went wrong on the way that did not stop it.
#[derive(Debug)]
pub struct BuiltSession {
    /// The session, its tools active and its system prompt set.
    pub session: AgentSession,
    /// Custom tools that failed to load or to register (pi reports them and goes on).
    pub load_errors: Vec<LoadError>,
    /// The loaded extensions (none unless [`SessionBuilder::extensions`] asked for them); attach
    /// the [`App`](crate::App) once it exists.
    pub extensions: Extensions,
    /// Extensions that failed to load, and name conflicts between them (pi reports them and goes
    /// on).
    pub extension_errors: Vec<ExtensionLoadError>,
    /// What the resources and the system prompt were built from: [`PromptRecipe::extend`] adds
    /// the paths extensions return from `resources_discover`.
    pub prompt_recipe: PromptRecipe,
}

/// Which extensions a session loads (pi's `-e`, `--no-extensions`, and the packages' entries).
#[derive(Debug, Clone, Default)]
pub struct ExtensionSetup {
    /// `-e` / `--extension` paths.
    pub paths: Vec<PathBuf>,
    /// `--no-extensions`: only `paths` and `resolved`.
    pub no_extensions: bool,
    /// Entry files a package resolver found (`npm:` / `git:` sources), loaded after the others.
    pub resolved: Vec<PathBuf>,
}

/// Builds an [`AgentSession`] as `pi` does.
///
/// Defaults: pi's default settings, thinking off, the providers of a built-in [`ModelRegistry`]
/// (keys from the environment) as the model boundary, pi's four default tools active, no custom
/// tools discovered (set [`agent_paths`](Self::agent_paths) or add [`tool_path`](Self::tool_path)s
/// and [`factory`](Self::factory)s), no user interface, context files (`AGENTS.md`) read.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use pi_agent_core::faux::{FauxModel, faux_assistant_text};
/// use pi_coding_agent::{SessionBuilder, ToolSelection};
///
/// let faux = FauxModel::new();
/// faux.append_responses([faux_assistant_text("Hello.")]);
/// let built = SessionBuilder::new(std::env::temp_dir(), faux.model())
///     .stream_fn(Arc::new(faux.clone()))
///     .tools(ToolSelection::Only(vec!["read".into()]))
///     .context_files(false)
///     .build()
///     .await
///     .unwrap();
/// assert_eq!(built.session.active_tool_names(), ["read"]);
/// built.session.prompt("Hi").await.unwrap();
/// assert_eq!(built.session.agent().messages().len(), 2);
/// # });
/// ```
pub struct SessionBuilder {
    cwd: PathBuf,
    model: Model,
    thinking: ThinkingLevel,
    settings: Settings,
    paths: Option<AgentPaths>,
    registry: Option<SharedRegistry>,
    stream_fn: Option<Arc<dyn StreamFn>>,
    api_key: Option<String>,
    tools: ToolSelection,
    tool_paths: Vec<PathBuf>,
    factories: Vec<NamedFactory>,
    ui: Option<Arc<dyn ToolUi>>,
    system_prompt: Option<String>,
    append_system_prompt: Vec<String>,
    context_files: bool,
    resources: Option<ResourceOptions>,
    extensions: Option<ExtensionSetup>,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("cwd", &self.cwd)
            .field("model", &format!("{}/{}", self.model.provider, self.model.id))
            .field("thinking", &self.thinking)
            .field("tools", &self.tools)
            .field("factories", &self.factories)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// A session in `cwd` talking to `model`.
    pub fn new(cwd: impl Into<PathBuf>, model: Model) -> Self {
        SessionBuilder {
            cwd: cwd.into(),
            model,
            thinking: ThinkingLevel::Off,
            settings: Settings::default(),
            paths: None,
            registry: None,
            stream_fn: None,
            api_key: None,
            tools: ToolSelection::Default,
            tool_paths: Vec::new(),
            factories: Vec::new(),
            ui: None,
            system_prompt: None,
            append_system_prompt: Vec::new(),
            context_files: true,
            resources: None,
            extensions: None,
        }
    }

    /// Loads extensions (`docs/extensions.md`): those `setup` names and — unless it says
    /// `no_extensions` — the discovered ones (`.pi/extensions/`, `extensions/` of pi's directory,
    /// the settings files' `extensions`). They load while the custom tools load; their tools are
    /// active like custom tools.
    #[must_use]
    pub fn extensions(mut self, setup: ExtensionSetup) -> Self {
        self.extensions = Some(setup);
        self
    }

    /// The thinking level (pi turns it off for models that do not reason; see
    /// [`choose_model`](crate::choose_model)).
    #[must_use]
    pub fn thinking(mut self, level: ThinkingLevel) -> Self {
        self.thinking = level;
        self
    }

    /// pi's merged `settings.json` (global and project): tool execution, shell, `ast_edit` /
    /// `ast_grep`, custom tool paths, MCP servers, steering and follow-up modes, the session's
    /// retry of failed turns (`retry.*`) and the provider timeouts and retries (`retry.provider`)
    /// of the default model boundary.
    #[must_use]
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// pi's directory: its `tools/` are discovered and its `AGENTS.md` read. Without it neither is.
    #[must_use]
    pub fn agent_paths(mut self, paths: AgentPaths) -> Self {
        self.paths = Some(paths);
        self
    }

    /// The model registry whose providers and keys the default model boundary uses.
    #[must_use]
    pub fn registry(mut self, registry: impl Into<SharedRegistry>) -> Self {
        self.registry = Some(registry.into());
        self
    }

    /// The model boundary (a faux model in tests); replaces the registry's providers.
    #[must_use]
    pub fn stream_fn(mut self, stream_fn: Arc<dyn StreamFn>) -> Self {
        self.stream_fn = Some(stream_fn);
        self
    }

    /// An API key that wins over the registry's (pi's `--api-key`).
    #[must_use]
    pub fn api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key;
        self
    }

    /// Which tools start active.
    #[must_use]
    pub fn tools(mut self, selection: ToolSelection) -> Self {
        self.tools = selection;
        self
    }

    /// One more custom tool path (pi's `--tool`): a file or folder, loaded after the discovered
    /// ones.
    #[must_use]
    pub fn tool_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.tool_paths.push(path.into());
        self
    }

    /// One more native custom-tool factory; factories load last, so they win a name conflict (as
    /// the `customTools` of pi's SDK do).
    #[must_use]
    pub fn factory(mut self, factory: NamedFactory) -> Self {
        self.factories.push(factory);
        self
    }

    /// One more native tool, as a custom tool named after itself.
    #[must_use]
    pub fn tool(self, tool: Arc<dyn CustomTool>) -> Self {
        let name = tool.name().to_owned();
        let factory = move |_: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> { Ok(vec![tool.clone()]) };
        self.factory(NamedFactory {
            name,
            factory: Arc::new(factory) as Arc<dyn CustomToolFactory>,
        })
    }

    /// The user interface tools may ask (confirm, select, input, notify), installed before custom
    /// tools load so that they see it.
    #[must_use]
    pub fn ui(mut self, ui: Arc<dyn ToolUi>) -> Self {
        self.ui = Some(ui);
        self
    }

    /// Replaces pi's system prompt (pi's `--system-prompt`: text, or a file to read).
    #[must_use]
    pub fn system_prompt(mut self, text_or_file: Option<String>) -> Self {
        self.system_prompt = text_or_file;
        self
    }

    /// Appends to the system prompt (pi's `--append-system-prompt`: text, or a file to read).
    #[must_use]
    pub fn append_system_prompt(mut self, text_or_file: Option<String>) -> Self {
        self.append_system_prompt = text_or_file.into_iter().collect();
        self
    }

    /// Appends several texts (or files) to the system prompt, separated by a blank line (pi's
    /// repeated `--append-system-prompt`).
    #[must_use]
    pub fn append_system_prompts(mut self, texts_or_files: Vec<String>) -> Self {
        self.append_system_prompt = texts_or_files;
        self
    }

    /// Whether `AGENTS.md` / `CLAUDE.md` files are read into the system prompt (default true;
    /// pi's `--no-context-files` turns it off).
    #[must_use]
    pub fn context_files(mut self, read: bool) -> Self {
        self.context_files = read;
        self
    }

    /// Loads pi's resources from these places: skills (listed in the system prompt, `/skill:name`),
    /// prompt templates (`/name args`), and `SYSTEM.md` / `APPEND_SYSTEM.md` (in the project's
    /// `.pi/`, else in `options.agent_dir`), which `--system-prompt` / `--append-system-prompt`
    /// override. Without it none of these are read.
    #[must_use]
    pub fn resources(mut self, options: ResourceOptions) -> Self {
        self.resources = Some(options);
        self
    }

    /// Builds the session: registers the tools, installs the user interface, loads the custom
    /// tools, activates the selection, and sets the key, the queue modes and the system prompt.
    pub async fn build(self) -> Result<BuiltSession, BuildError> {
        let settings = &self.settings;
        let mut session_settings = SessionSettings {
            ast_edit: settings.ast_edit_enabled.unwrap_or(true),
            ast_grep: settings.ast_grep_enabled.unwrap_or(true),
            shell: settings.shell_path.as_ref().map(PathBuf::from),
            shell_command_prefix: settings.shell_command_prefix.clone(),
            sandbox: sandbox_of(settings, &self.cwd),
            retry: settings.retry,
            auto_resize_images: settings.images.auto_resize,
            block_images: settings.images.block_images,
            ..SessionSettings::default()
        };
        if let Some(sandbox) = &session_settings.sandbox {
            // Fails early and clearly where the kernel cannot enforce it; every start checks again.
            sandbox.check()?;
        }
        if let Some(mode) = settings.tool_execution {
            session_settings.tool_execution = mode;
        }
        let stream_fn = match self.stream_fn.clone() {
            Some(stream_fn) => stream_fn,
            None => {
                let registry = self
                    .registry
                    .clone()
                    .unwrap_or_else(|| SharedRegistry::new(ModelRegistry::builtin()));
                let client = HttpClient::new(settings.provider_retry.http_options());
                Arc::new(Providers::new(client).with_registry(registry))
            }
        };
        let mut options = SessionOptions::new(&self.cwd, self.model.clone())
            .stream_fn(stream_fn)
            .settings(session_settings)
            .tools(Vec::<String>::new());
        options.thinking_level = self.thinking;
        let session = AgentSession::new(options)?;
        if let Some(ui) = &self.ui {
            session.set_ui(ui.clone());
        }
        // Custom tools and extensions load at the same time.
        let (tools, loaded) = tokio::join!(self.load_custom_tools(&session), self.load_extensions(&session));
        let (mut custom, load_errors) = tools?;
        let (extensions, missing) = loaded?;
        custom.extend(extensions.install(&session));
        // pi's order: load failures, name conflicts, then paths that hold nothing.
        extensions.add_load_errors(missing);
        let extension_errors = extensions.load_errors();
        session.set_active_tools(self.tools.active(&custom))?;
        let agent = session.agent();
        agent.update_config(|config| config.api_key = self.api_key.clone());
        if let Some(mode) = settings.steering_mode {
            agent.set_steering_mode(mode);
        }
        if let Some(mode) = settings.follow_up_mode {
            agent.set_follow_up_mode(mode);
        }
        let recipe = PromptRecipe {
            resources: self.resources.clone(),
            custom: self.system_prompt.clone(),
            append: self.append_system_prompt.clone(),
            context_files: self.context_files,
            cwd: self.cwd.clone(),
            global_context: self.paths.as_ref().map(AgentPaths::global_context_file),
        };
        let (prompt_recipe, resources) = recipe.load().await?;
        let resources = Arc::new(resources);
        session.set_resources(resources.clone());
        let prompt = prompt_recipe.prompt(&session, &resources, &extensions).await?;
        agent.set_system_prompt(prompt);
        Ok(BuiltSession {
            session,
            load_errors,
            extensions,
            extension_errors,
            prompt_recipe,
        })
    }

    /// Discovers and loads the extensions [`SessionBuilder::extensions`] asked for (their tools
    /// are not registered yet); the paths that hold no extension, as errors.
    /// A panic in discovery is [`BuildError::Interrupted`], as in the other blocking steps.
    async fn load_extensions(
        &self,
        session: &AgentSession,
    ) -> Result<(Extensions, Vec<ExtensionLoadError>), BuildError> {
        let Some(setup) = &self.extensions else {
            return Ok((Extensions::none(), Vec::new()));
        };
        let options = DiscoverOptions {
            cwd: self.cwd.clone(),
            agent_dir: self.paths.as_ref().map(|paths| paths.agent_dir.clone()),
            cli: setup.paths.clone(),
            no_extensions: setup.no_extensions,
            resolved: setup.resolved.clone(),
            home: std::env::var("HOME").ok(),
        };
        let (entries, missing) = blocking(move || crate::extensions::discover(&options)).await?;
        let mut api = session.tool_api();
        if let Some(paths) = &self.paths {
            api = api.with_cache_dir(paths.cache_dir());
        }
        let load = LoadOptions {
            agent_dir: self.paths.as_ref().map(|paths| paths.agent_dir.clone()),
            ..LoadOptions::default()
        };
        let extensions = if entries.is_empty() {
            Extensions::none()
        } else {
            Extensions::load(entries, &api, load).await
        };
        let missing = missing
            .into_iter()
            .map(|missing| ExtensionLoadError {
                path: missing.path.display().to_string(),
                error: missing.to_string(),
            })
            .collect();
        Ok((extensions, missing))
    }

    /// Discovers and loads the custom tools into `session`; returns the names registered and
    /// everything that failed. A panic in discovery is [`BuildError::Interrupted`] (it was taken
    /// for "no custom tools").
    async fn load_custom_tools(&self, session: &AgentSession) -> Result<(Vec<String>, Vec<LoadError>), BuildError> {
        if self.tools == ToolSelection::None {
            return Ok((Vec::new(), Vec::new()));
        }
        let locations = {
            let global = self.paths.as_ref().map(AgentPaths::tools_dir);
            let cwd = self.cwd.clone();
            let configured = self.settings.custom_tools.clone();
            let cli = self.tool_paths.clone();
            blocking(move || {
                discover(global.as_deref(), &cwd, &configured, &cli, &|name| {
                    std::env::var(name).ok()
                })
            })
            .await?
        };
        let reserved: Vec<String> = session.tool_registry().iter().map(|t| t.name().to_owned()).collect();
        let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
        let mut api = session.tool_api();
        if let Some(paths) = &self.paths {
            api = api.with_cache_dir(paths.cache_dir());
        }
        let loaded: CustomTools =
            load_all(&self.factories, &locations, &self.settings.mcp_servers, &api, &reserved).await;
        let (names, more_errors) = session.add_custom_tools(&loaded);
        let mut errors = loaded.errors;
        errors.extend(more_errors);
        Ok((names, errors))
    }
}

/// `work` run off the async runtime; its panic (or cancellation) is [`BuildError::Interrupted`].
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, BuildError> {
    Ok(tokio::task::spawn_blocking(work).await?)
}

/// The sandbox the `sandbox` setting asks for, if it is enabled: the project is `cwd`; the
/// `writablePaths` have `~` expanded and are taken relative to `cwd`.
fn sandbox_of(settings: &Settings, cwd: &std::path::Path) -> Option<pi_tools::Sandbox> {
    let config = &settings.sandbox;
    if config.enabled != Some(true) {
        return None;
    }
    let env_var = |name: &str| std::env::var(name).ok();
    let sandbox = pi_tools::Sandbox::new(cwd).network(config.network.unwrap_or(true));
    Some(config.writable_paths.iter().fold(sandbox, |sandbox, path| {
        sandbox.writable(cwd.join(crate::config::expand_home(path, &env_var)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::faux::{FauxModel, faux_assistant_text};

    #[tokio::test]
    async fn a_panic_in_a_blocking_step_is_interrupted_not_nothing() {
        let result: Result<Vec<u8>, BuildError> = blocking(|| panic!("discovery broke")).await;
        assert!(matches!(result, Err(BuildError::Interrupted(_))), "{result:?}");
        assert_eq!(blocking(|| 7).await.ok(), Some(7));
    }

    #[tokio::test]
    async fn a_native_tool_loads_as_a_custom_tool_and_starts_active() {
        let faux = FauxModel::new();
        faux.append_responses([faux_assistant_text("ok")]);
        let echo = pi_agent_core::FnTool::new("echo", "Echo", serde_json::json!({"type": "object"}), |_, _, _| {
            Box::pin(async { Ok(pi_agent_core::ToolResult::text("echoed")) })
        });
        let tool = crate::custom_tools::plain(echo);
        let built = SessionBuilder::new(std::env::temp_dir(), faux.model())
            .stream_fn(Arc::new(faux.clone()))
            .tool(tool)
            .context_files(false)
            .build()
            .await
            .unwrap();
        assert!(built.load_errors.is_empty(), "{:?}", built.load_errors);
        // A custom tool may stage previews, so `resolve` comes with it.
        assert_eq!(
            built.session.active_tool_names(),
            ["read", "bash", "edit", "write", "echo", "resolve"]
        );
        assert!(built.session.agent().state().system_prompt.contains("- echo: Echo"));
    }

    #[tokio::test]
    async fn an_unknown_selected_tool_is_an_error_with_pis_text() {
        let faux = FauxModel::new();
        let error = SessionBuilder::new(std::env::temp_dir(), faux.model())
            .stream_fn(Arc::new(faux))
            .tools(ToolSelection::Only(vec!["nope".into()]))
            .build()
            .await
            .unwrap_err();
        assert_eq!(error.to_string(), "Unknown tool: nope");
    }
}
