//! What a run starts from: the settings, the model registry (built-ins, `models.json`, `auth.json`)
//! and the model the command line and the settings choose.

use std::path::Path;
use std::sync::Arc;

use pi_ai::ModelRegistry;
use pi_coding_agent::config::{AgentPaths, Settings, project_settings_file, thinking_level_name};
use pi_coding_agent::{
    ModelChoice, ModelRequest, ScopedModel, choose_model, initial_scoped_model, resolve_model_scope,
};

use crate::args::Args;
use crate::error::CliError;
use crate::io::{Io, say};

/// `auth.json`, or why it could not be read (pi goes on without it, as we do).
pub(crate) type LoadedAuth = (Option<Arc<pi_coding_agent::auth::AuthStorage>>, Option<String>);

pub(crate) fn load_config(paths: &AgentPaths, cwd: &Path) -> Result<(Settings, ModelRegistry, LoadedAuth), CliError> {
    let settings = Settings::load(&paths.settings_file(), Some(&project_settings_file(cwd)))?;
    let registry = ModelRegistry::load(&paths.models_file())?;
    // pi reads `auth.json` before the environment and `models.json`.
    let (registry, auth) = match pi_coding_agent::auth::AuthStorage::open(paths.auth_file()) {
        Ok(storage) => {
            let storage = Arc::new(storage);
            let store = Arc::new(pi_coding_agent::auth::SharedAuth(storage.clone()));
            (registry.with_credentials(store), (Some(storage), None))
        }
        Err(error) => (registry, (None, Some(error.to_string()))),
    };
    Ok((settings, registry, auth))
}

/// The scoped models (`--models`, else `enabledModels`: what model cycling goes through) and the
/// model to start with; scope warnings go to `io`'s stderr when given.
pub(crate) fn choose(
    args: &Args,
    settings: &Settings,
    registry: &ModelRegistry,
    io: Option<&Io>,
) -> Result<(Vec<ScopedModel>, ModelChoice), CliError> {
    let scope = match args.models.as_ref().or(settings.enabled_models.as_ref()) {
        Some(patterns) if !patterns.is_empty() => {
            let (scope, warnings) = resolve_model_scope(patterns, registry);
            if let Some(io) = io {
                for warning in warnings {
                    say(&io.stderr, &format!("pi: warning: {warning}"));
                }
            }
            scope
        }
        _ => Vec::new(),
    };
    // The model a run without `--model` starts with comes from the scope.
    let scoped_start = if args.model.is_none() {
        initial_scoped_model(
            &scope,
            settings.default_provider.as_deref(),
            settings.default_model.as_deref(),
        )
    } else {
        None
    };
    let scoped_pattern = scoped_start.map(|s| format!("{}/{}", s.model.provider, s.model.id));
    let scoped_thinking = scoped_start.and_then(|s| s.thinking).map(thinking_level_name);
    let request = ModelRequest {
        provider: if scoped_pattern.is_some() {
            None
        } else {
            args.provider.as_deref()
        },
        model: args.model.as_deref().or(scoped_pattern.as_deref()),
        thinking: args.thinking.as_deref().or(scoped_thinking),
    };
    let choice = choose_model(&request, settings, registry)?.ok_or(CliError::NoModel)?;
    Ok((scope, choice))
}
