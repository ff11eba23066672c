//! Extensions: pi 0.73's extension API (`docs/extensions.md`) — tools, commands, flags,
//! shortcuts, message renderers and providers an extension registers, the events it handles, and
//! what it may ask of pi — for TypeScript / JavaScript extensions (one Node host for all of them)
//! and for extensions in any language (a process of their own with an `extension.json`).
//!
//! Every extension process speaks the process-tool protocol in version 2 (`docs/extensions.md`,
//! "The extension protocol"), on the process-tool runtime (`custom_tools::process`: connection,
//! restart, time limits, the handlers of version 1), with the handlers of version 2 added.
//!
//! [`discover`] finds the extensions; [`Extensions::load`] starts their processes (all at once)
//! and collects what they registered; [`Extensions::install`] puts their tools into the session
//! (overriding built-ins as pi allows); [`Extensions::attach`] hands them the running [`App`].
//! Nothing an extension does wrong stops pi: load errors are collected
//! ([`Extensions::load_errors`]), handler errors reported.
//!
//! [`events`]: the lifecycle events extensions listen to, where the session and the app emit them
//! and how their results are applied; the seam ([`ExtensionRunner`]) the processes plug into.

mod calls;
mod commands;
mod context;
mod discovery;
mod flags;
mod handlers;
mod hub;
mod node;
mod registration;
mod tools;
pub use tools::OVERRIDABLE_TOOLS;

pub mod events;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pi_agent_core::{AgentTool, lock};
use serde_json::{Map, Value, json};

pub use commands::{Command, split_command};
pub(crate) use discovery::folder_entries;
pub use discovery::{DiscoverOptions, EXTENSION_MANIFEST, EntryKind, ExtensionEntry, MissingPath, Origin, discover};
pub use events::{EventListener, ExtensionError, ExtensionRunner};
pub use flags::{FlagError, GivenFlag, help_section};
pub use hub::ReportFn;
pub use node::host_spec;
pub use registration::{CommandInfo, ExtensionTool, FlagInfo, ProviderInfo, Registration, ShortcutInfo};

use crate::App;
use crate::custom_tools::ToolApi;
use crate::custom_tools::node::EnvLookup;
use crate::custom_tools::process::{Host, ProcessSpec, ProcessTool, Protocol, parse_manifest};
use crate::session::AgentSession;
use handlers::ExtensionHandlers;
use hub::{Hosted, Hub};

/// The protocol version of extension processes.
pub const EXTENSION_PROTOCOL_VERSION: u32 = 2;

/// An extension that failed to load, or something about it pi reports at load time (a tool or
/// flag name another extension took first). pi goes on without it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Failed to load extension \"{path}\": {error}")]
pub struct ExtensionLoadError {
    /// The extension's path.
    pub path: String,
    /// Why.
    pub error: String,
}

/// What [`Extensions::load`] needs besides the entries.
#[derive(Clone)]
pub struct LoadOptions {
    /// pi's directory (`initialize.agentDir`).
    pub agent_dir: Option<PathBuf>,
    /// The environment (`PI_NODE`, `PATH`, `HOME`, …) for finding Node.
    pub env: EnvLookup,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            agent_dir: None,
            env: Arc::new(|name: &str| std::env::var(name).ok()),
        }
    }
}

/// The loaded extensions of a session.
pub struct Extensions {
    hub: Arc<Hub>,
    builtins: Arc<Mutex<HashMap<String, Arc<dyn AgentTool>>>>,
    entries: Vec<ExtensionEntry>,
    errors: Mutex<Vec<ExtensionLoadError>>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("entries", &self.entries.len())
            .field("loaded", &self.hub.extensions().len())
            .finish()
    }
}

/// One process to start: the Node host with its entries, or one `extension.json` extension.
enum Launch {
    Node(Vec<PathBuf>),
    Manifest(ExtensionEntry, PathBuf),
}

impl Extensions {
    /// No extensions.
    pub fn none() -> Self {
        Extensions {
            hub: Arc::new(Hub::default()),
            builtins: Arc::default(),
            entries: Vec::new(),
            errors: Mutex::new(Vec::new()),
        }
    }

    /// Starts the processes of `entries` — one Node host for every TypeScript / JavaScript
    /// extension, one process per `extension.json` — all at once, and collects what each
    /// extension registered; everything that failed is in [`Extensions::load_errors`].
    pub async fn load(entries: Vec<ExtensionEntry>, api: &ToolApi, options: LoadOptions) -> Self {
        let extensions = Extensions {
            entries,
            ..Extensions::none()
        };
        let scripts: Vec<PathBuf> = extensions
            .entries
            .iter()
            .filter(|entry| entry.kind == EntryKind::Script)
            .map(|entry| entry.path.clone())
            .collect();
        let mut launches = Vec::new();
        if !scripts.is_empty() {
            launches.push(Launch::Node(scripts));
        }
        for entry in &extensions.entries {
            if let EntryKind::Process { manifest } = &entry.kind {
                launches.push(Launch::Manifest(entry.clone(), manifest.clone()));
            }
        }
        let started = futures::future::join_all(
            launches
                .into_iter()
                .map(|launch| extensions.launch(launch, api, &options)),
        )
        .await;
        // Registered in load order: the Node host's extensions, then the processes, by entry.
        let mut hosted: Vec<(usize, Hosted)> = Vec::new();
        for outcome in started {
            match outcome {
                Ok(list) => hosted.extend(list),
                Err(errors) => lock(&extensions.errors).extend(errors),
            }
        }
        hosted.sort_by_key(|(order, _)| *order);
        for (_, hosted) in hosted {
            extensions.hub.add_extension(hosted);
        }
        extensions.check_flag_conflicts();
        extensions
    }

    /// The position of `path` among the entries (load order).
    fn order_of(&self, path: &str) -> usize {
        self.entries
            .iter()
            .position(|entry| entry.path.display().to_string() == path)
            .unwrap_or(usize::MAX)
    }

    /// Starts one process; its extensions (with their load order), or the load errors.
    async fn launch(
        &self,
        launch: Launch,
        api: &ToolApi,
        options: &LoadOptions,
    ) -> Result<Vec<(usize, Hosted)>, Vec<ExtensionLoadError>> {
        // A manifest's process runs where its manifest says, and registers under the manifest's
        // path; the Node host runs in the session's working directory.
        let (spec, paths, mut failed, forced_path) = match launch {
            Launch::Node(entries) => {
                let names: Vec<String> = entries.iter().map(|e| e.display().to_string()).collect();
                match node::host_spec(&entries, api.cwd(), options.env.clone(), api.cache_dir()).await {
                    Ok((spec, loadable, failed)) => {
                        let failed: Vec<ExtensionLoadError> = failed
                            .into_iter()
                            .map(|(path, error)| ExtensionLoadError {
                                path: path.display().to_string(),
                                error,
                            })
                            .collect();
                        if loadable.is_empty() {
                            return Err(failed);
                        }
                        let paths = loadable.iter().map(|e| e.display().to_string()).collect();
                        (spec, paths, failed, None)
                    }
                    Err(error) => return Err(every(&names, &error.to_string())),
                }
            }
            Launch::Manifest(entry, manifest) => {
                let path = entry.path.display().to_string();
                let spec = match read_manifest(&entry.path, &manifest).await {
                    Ok(spec) => spec,
                    Err(error) => return Err(every(std::slice::from_ref(&path), &error)),
                };
                (spec, vec![path.clone()], Vec::new(), Some(path))
            }
        };
        let handlers = Arc::new(ExtensionHandlers::new(self.hub.clone(), self.builtins.clone()));
        let protocol = self.protocol(api, options, handlers.clone());
        let (host, answer) = match Host::start_with(spec, api.clone(), protocol).await {
            Ok(started) => started,
            Err(error) => {
                failed.extend(every(&paths, &error.to_string()));
                return Err(failed);
            }
        };
        let index = self.hub.add_process(host.clone());
        handlers.set_process(index);
        host.set_name(paths.first().map_or("extension", String::as_str));
        let registrations = registration::parse_initialize(&answer).unwrap_or_default();
        let mut hosted = Vec::new();
        for mut registration in registrations {
            if let Some(path) = &forced_path {
                registration.path = path.clone();
            }
            if let Some(error) = registration.error.take() {
                failed.push(ExtensionLoadError {
                    path: registration.path,
                    error,
                });
                continue;
            }
            hosted.push((
                self.order_of(&registration.path),
                Hosted {
                    process: index,
                    registration,
                },
            ));
        }
        if !failed.is_empty() {
            lock(&self.errors).extend(failed);
        }
        Ok(hosted)
    }

    fn protocol(&self, api: &ToolApi, options: &LoadOptions, handlers: Arc<ExtensionHandlers>) -> Protocol {
        let mut initialize = Map::new();
        initialize.insert("agentDir".into(), json!(options.agent_dir));
        let (hub, api) = (self.hub.clone(), api.clone());
        Protocol {
            version: EXTENSION_PROTOCOL_VERSION,
            initialize,
            check: registration::check_initialize,
            handler: handlers,
            extra_context: Some(Arc::new(move || context::snapshot(&hub, api.has_ui()))),
        }
    }

    /// Every load error so far (load failures, name conflicts found by [`Extensions::install`]).
    pub fn load_errors(&self) -> Vec<ExtensionLoadError> {
        lock(&self.errors).clone()
    }

    /// Adds load errors found elsewhere (paths that hold no extension).
    pub fn add_load_errors(&self, errors: impl IntoIterator<Item = ExtensionLoadError>) {
        lock(&self.errors).extend(errors);
    }

    /// Every extension that loaded, with what it registered, in load order.
    pub fn registrations(&self) -> Vec<Registration> {
        self.hub
            .extensions()
            .into_iter()
            .map(|hosted| hosted.registration)
            .collect()
    }

    /// Registers the extensions' tools in `session`: the first extension to register a name
    /// wins (a later one is reported: `Tool "<name>" conflicts with <path>`); a tool named like
    /// one of [`OVERRIDABLE_TOOLS`] replaces that built-in; any other name the session knows is
    /// reported. Returns the names of the tools added (active by default).
    pub fn install(&self, session: &AgentSession) -> Vec<String> {
        {
            let mut builtins = lock(&self.builtins);
            for tool in session.tool_registry().iter() {
                if tool.origin == crate::session::ToolOrigin::Builtin {
                    builtins.insert(tool.name().to_owned(), tool.tool.clone());
                }
            }
        }
        let mut owners: HashMap<String, String> = HashMap::new();
        let mut names = Vec::new();
        let mut errors = Vec::new();
        // A tool's index is its place among the tools of its process (extensions share a Node
        // host): the host sends a session event once per process, told apart by these indexes.
        let mut next_index: HashMap<usize, usize> = HashMap::new();
        for hosted in self.hub.extensions() {
            let Some(host) = self.hub.process(hosted.process) else {
                continue;
            };
            let path = hosted.registration.path.clone();
            for tool in &hosted.registration.tools {
                let name = tool.name().to_owned();
                if let Some(owner) = owners.get(&name) {
                    errors.push(ExtensionLoadError {
                        path: path.clone(),
                        error: format!("Tool \"{name}\" conflicts with {owner}"),
                    });
                    continue;
                }
                owners.insert(name.clone(), path.clone());
                let index = next_index.entry(hosted.process).or_insert(0);
                let tool = ProcessTool::new(host.clone(), *index, tool.definition.clone());
                *index += 1;
                let (added, failed) = tools::add_process_tool(session, tool, &path);
                names.extend(added);
                errors.extend(failed.into_iter().map(|error| ExtensionLoadError {
                    path: error.origin,
                    error: error.error,
                }));
            }
        }
        lock(&self.errors).extend(errors);
        names
    }

    /// The `promptSnippet` and `promptGuidelines` of the extensions' tools, by tool name.
    pub fn prompt_metadata(&self) -> (HashMap<String, String>, HashMap<String, Vec<String>>) {
        let mut snippets = HashMap::new();
        let mut guidelines = HashMap::new();
        for registration in self.registrations() {
            for tool in registration.tools {
                let name = tool.name().to_owned();
                if let Some(snippet) = tool.prompt_snippet.filter(|s| !s.trim().is_empty()) {
                    snippets.entry(name.clone()).or_insert(snippet);
                }
                if !tool.prompt_guidelines.is_empty() {
                    guidelines.entry(name).or_insert(tool.prompt_guidelines);
                }
            }
        }
        (snippets, guidelines)
    }

    /// Hands the extensions the running app (`pi.*`, `ctx.*`, the `Context` snapshot).
    pub fn attach(&self, app: &App) {
        self.hub.attach(app.clone());
    }

    /// Reports `error` where [`Extensions::set_report`] said (a command's failure, from a mode).
    pub fn report(&self, error: &ExtensionError) {
        self.hub.report(error);
    }

    /// Where handler errors are reported from now on.
    pub fn set_report(&self, report: ReportFn) {
        self.hub.set_report(report);
    }

    /// Every registered flag with its extension's path, in load order (the first of a name).
    pub fn flags(&self) -> Vec<(String, FlagInfo)> {
        let mut flags: Vec<(String, FlagInfo)> = Vec::new();
        for registration in self.registrations() {
            for flag in registration.flags {
                if !flags.iter().any(|(_, known)| known.name == flag.name) {
                    flags.push((registration.path.clone(), flag));
                }
            }
        }
        flags
    }

    fn check_flag_conflicts(&self) {
        let mut owners: HashMap<String, String> = HashMap::new();
        let mut errors = Vec::new();
        for registration in self.registrations() {
            for flag in &registration.flags {
                match owners.get(&flag.name) {
                    Some(owner) if *owner != registration.path => errors.push(ExtensionLoadError {
                        path: registration.path.clone(),
                        error: format!("Flag \"--{}\" conflicts with {owner}", flag.name),
                    }),
                    Some(_) => {}
                    None => {
                        owners.insert(flag.name.clone(), registration.path.clone());
                    }
                }
            }
        }
        lock(&self.errors).extend(errors);
    }

    /// Parses the flags the command line did not know by the registered flags' types and sends
    /// every process their values (the `flags` notification: registered defaults, then the
    /// command line's; again to a process restarted later). An unregistered flag, or a string flag without a value, is an error (pi's
    /// texts); nothing is sent then.
    pub async fn apply_flags(&self, given: &[GivenFlag]) -> Result<(), Vec<FlagError>> {
        let values = flags::values(&self.flags(), given)?;
        let params = json!({"values": values});
        for host in self.hub.processes() {
            host.notify_remembered("flags", params.clone()).await;
        }
        Ok(())
    }

    /// Every extension command with pi's invocation names, in load order.
    pub fn commands(&self) -> Vec<Command> {
        commands::resolve(&self.hub)
    }

    /// RPC `get_commands`'s entries of the extension commands, as pi 0.73.1 writes them:
    /// `{name, description, source: "extension", sourceInfo}`.
    pub fn commands_json(&self) -> Vec<Value> {
        self.commands()
            .into_iter()
            .map(|command| {
                // pi's key order: name, description, source, sourceInfo.
                let mut item = json!({"name": command.invocation_name});
                if let Some(description) = &command.description {
                    item["description"] = json!(description);
                }
                item["source"] = json!("extension");
                if let Some(entry) = self
                    .entries
                    .iter()
                    .find(|e| e.path.display().to_string() == command.path)
                {
                    item["sourceInfo"] = entry.source_info();
                }
                item
            })
            .collect()
    }

    /// Whether `text` is `/name args` for one of the extensions' commands (pi runs those at once,
    /// even while the agent streams, instead of queueing them as messages).
    pub fn is_command(&self, text: &str) -> bool {
        split_command(text).is_some_and(|(name, _)| self.commands().iter().any(|c| c.invocation_name == name))
    }

    /// When `text` is `/name args` for an extension command: runs it (the `command` request,
    /// with the `Context`), `Some` with its outcome; `None` for any other text. pi checks
    /// extension commands before anything else does with the text.
    pub async fn run_command(&self, text: &str) -> Option<Result<(), ExtensionError>> {
        let (name, args) = split_command(text)?;
        let command = self.commands().into_iter().find(|c| c.invocation_name == name)?;
        let host = self.hub.process(command.process)?;
        let params = calls::command_params(&command.name, args);
        let outcome = calls::call(
            &self.hub,
            &host,
            "command",
            params,
            &format!("command:{}", command.name),
            "command",
        )
        .await;
        Some(outcome.map(drop))
    }

    /// The argument completions of command `invocation_name` for `prefix`
    /// (`getArgumentCompletions`): `[{value, label, description?}]`, or `None`.
    pub async fn complete(&self, invocation_name: &str, prefix: &str) -> Option<Vec<Value>> {
        let command = self
            .commands()
            .into_iter()
            .find(|c| c.invocation_name == invocation_name && c.has_completions)?;
        let host = self.hub.process(command.process)?;
        let connection = host.connection().await.ok()?;
        let params = json!({"name": command.name, "prefix": prefix});
        let answer = connection
            .call_within("command.complete", &params, connection.timeout(), &command.path)
            .await
            .ok()?;
        answer.as_array().cloned()
    }

    /// Every registered shortcut with its extension's path.
    pub fn shortcuts(&self) -> Vec<(String, ShortcutInfo)> {
        self.registrations()
            .into_iter()
            .flat_map(|r| {
                let path = r.path.clone();
                r.shortcuts.into_iter().map(move |s| (path.clone(), s))
            })
            .collect()
    }

    /// Every custom message type an extension renders (rendering comes with the UI bridge).
    pub fn message_renderers(&self) -> Vec<String> {
        self.registrations()
            .into_iter()
            .flat_map(|r| r.message_renderers)
            .collect()
    }

    /// Every provider extensions registered while loading.
    pub fn providers(&self) -> Vec<ProviderInfo> {
        self.registrations().into_iter().flat_map(|r| r.providers).collect()
    }

    /// Applies the providers the extensions registered while loading to `registry`, in load
    /// order, as pi flushes them once every extension has loaded (before the model is chosen, so
    /// `--model` and `--list-models` see them). Each refused one is returned in pi's words:
    /// `Extension "<path>" error: <why>`. Later calls register at once (`App::register_provider`).
    pub fn register_providers(&self, registry: &pi_ai::SharedRegistry) -> Vec<String> {
        let mut errors = Vec::new();
        for registration in self.registrations() {
            for provider in registration.providers {
                if let Err(error) = registry.register_provider(&provider.name, &provider.config) {
                    errors.push(format!("Extension \"{}\" error: {error}", registration.path));
                }
            }
        }
        errors
    }

    /// Whether no extension loaded (then pi installs no event hooks at all).
    pub fn is_empty(&self) -> bool {
        self.hub.extensions().is_empty()
    }

    /// The [`ExtensionRunner`] over the loaded processes.
    pub fn runner(&self) -> Arc<dyn ExtensionRunner> {
        Arc::new(ProcessRunner { hub: self.hub.clone() })
    }

    /// Whether an extension called `ctx.shutdown()`. pi ends once idle: the interactive mode
    /// when no run is active, RPC after the response to the command it is handling; print mode
    /// ignores it (it ends after its prompts anyway).
    pub fn shutdown_requested(&self) -> bool {
        self.hub.shutdown_requested()
    }

    /// Resolves once an extension has called `ctx.shutdown()` (at once when one already has);
    /// cancellation-safe.
    pub async fn shutdown_wanted(&self) {
        self.hub.shutdown_wanted().await;
    }

    /// Sends every process `shutdown`, closes its stdin and, when it does not exit, kills it.
    pub async fn shutdown(&self) {
        let processes = self.hub.processes();
        futures::future::join_all(processes.iter().map(|host| host.shutdown())).await;
    }
}

/// `error` for every path.
fn every(paths: &[String], error: &str) -> Vec<ExtensionLoadError> {
    paths
        .iter()
        .map(|path| ExtensionLoadError {
            path: path.clone(),
            error: error.to_owned(),
        })
        .collect()
}

/// The process of an `extension.json` (the fields of `tool.json`).
async fn read_manifest(dir: &std::path::Path, manifest: &std::path::Path) -> Result<ProcessSpec, String> {
    let text = tokio::fs::read_to_string(manifest)
        .await
        .map_err(|error| format!("Cannot read {}: {error}", manifest.display()))?;
    parse_manifest(dir, manifest, &text).map_err(|error| error.to_string())
}

/// The [`ExtensionRunner`] of the loaded processes: one listener per process and event type.
struct ProcessRunner {
    hub: Arc<Hub>,
}

#[async_trait::async_trait]
impl ExtensionRunner for ProcessRunner {
    fn listeners(&self, event_type: &str) -> Vec<Arc<dyn EventListener>> {
        self.hub
            .listening(event_type)
            .into_iter()
            .filter_map(|(process, extension)| {
                let host = self.hub.process(process)?;
                Some(Arc::new(calls::ProcessListener {
                    hub: self.hub.clone(),
                    host,
                    extension,
                    event_type: event_type.to_owned(),
                }) as Arc<dyn EventListener>)
            })
            .collect()
    }

    fn listens(&self, event_type: &str) -> bool {
        self.hub.listens(event_type)
    }

    fn report(&self, error: ExtensionError) {
        self.hub.report(&error);
    }
}
