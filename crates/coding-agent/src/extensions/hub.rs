//! [`Hub`]: what every extension process of a session shares — the [`App`] once it exists, the
//! registrations of every extension, the processes (for `pi.events.emit`), the CLI values of
//! their flags, and where failures are reported.

use std::sync::{Arc, Mutex, RwLock};

use pi_agent_core::lock;
use serde_json::Value;

use super::events::ExtensionError;
use super::registration::Registration;
use crate::App;
use crate::custom_tools::process::Host;

/// Receives what must be reported without stopping pi (an extension's error).
pub type ReportFn = Arc<dyn Fn(&ExtensionError) + Send + Sync>;

/// One extension's registration and the process that hosts it.
#[derive(Clone)]
pub(crate) struct Hosted {
    /// The process (index into [`Hub::processes`]).
    pub(crate) process: usize,
    /// What it registered.
    pub(crate) registration: Registration,
}

/// The state the extension handlers share.
#[derive(Default)]
pub(crate) struct Hub {
    app: RwLock<Option<App>>,
    extensions: Mutex<Vec<Hosted>>,
    processes: Mutex<Vec<Arc<Host>>>,
    report: RwLock<Option<ReportFn>>,
    /// `ctx.shutdown()` was called (never reset: pi ends).
    shutdown: tokio::sync::watch::Sender<bool>,
}

impl Hub {
    /// The running app, once attached.
    pub(crate) fn app(&self) -> Option<App> {
        self.app.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn attach(&self, app: App) {
        *self.app.write().unwrap_or_else(|p| p.into_inner()) = Some(app);
    }

    pub(crate) fn set_report(&self, report: ReportFn) {
        *self.report.write().unwrap_or_else(|p| p.into_inner()) = Some(report);
    }

    /// Reports `error` (stderr in print mode, an `extension_error` line in RPC mode, a notice
    /// interactively); logged when nothing listens.
    pub(crate) fn report(&self, error: &ExtensionError) {
        let report = self.report.read().unwrap_or_else(|p| p.into_inner()).clone();
        match report {
            Some(report) => report(error),
            None => tracing::warn!(%error, "extension error"),
        }
    }

    /// Adds a started process; its index.
    pub(crate) fn add_process(&self, host: Arc<Host>) -> usize {
        let mut processes = lock(&self.processes);
        processes.push(host);
        processes.len() - 1
    }

    pub(crate) fn processes(&self) -> Vec<Arc<Host>> {
        lock(&self.processes).clone()
    }

    pub(crate) fn process(&self, index: usize) -> Option<Arc<Host>> {
        lock(&self.processes).get(index).cloned()
    }

    pub(crate) fn add_extension(&self, hosted: Hosted) {
        lock(&self.extensions).push(hosted);
    }

    /// Every loaded extension (failed ones excluded), in load order.
    pub(crate) fn extensions(&self) -> Vec<Hosted> {
        lock(&self.extensions).clone()
    }

    /// For each process with an extension listening to `event_type`, in load order: the process
    /// and its first such extension's path (without copying the registrations).
    pub(crate) fn listening(&self, event_type: &str) -> Vec<(usize, String)> {
        let mut found: Vec<(usize, String)> = Vec::new();
        for hosted in lock(&self.extensions).iter() {
            if !found.iter().any(|(process, _)| *process == hosted.process)
                && hosted.registration.events.iter().any(|e| e == event_type)
            {
                found.push((hosted.process, hosted.registration.path.clone()));
            }
        }
        found
    }

    /// Whether an extension listens to `event_type`.
    pub(crate) fn listens(&self, event_type: &str) -> bool {
        lock(&self.extensions)
            .iter()
            .any(|hosted| hosted.registration.events.iter().any(|e| e == event_type))
    }

    /// A `register` notification: adds to the registration of the extension `path` of process
    /// `process`.
    pub(crate) fn register(&self, process: usize, params: &Value) -> Result<(), String> {
        let path = params.get("path").and_then(Value::as_str).unwrap_or_default();
        let mut extensions = lock(&self.extensions);
        let hosted = extensions
            .iter_mut()
            .filter(|hosted| hosted.process == process)
            .find(|hosted| hosted.registration.path == path || path.is_empty())
            .ok_or_else(|| format!("register: no extension \"{path}\" in this process"))?;
        hosted.registration.add(params)
    }

    /// `ctx.shutdown()`: pi ends once the current work is done.
    pub(crate) fn request_shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    pub(crate) fn shutdown_requested(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Resolves once `ctx.shutdown()` has been called (at once when it already was).
    pub(crate) async fn shutdown_wanted(&self) {
        let mut requested = self.shutdown.subscribe();
        // The sender lives in the hub, which outlives this borrow: the wait cannot fail.
        let _ = requested.wait_for(|requested| *requested).await;
    }
}
