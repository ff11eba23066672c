//! `/login` and `/logout`: pi's dialogs (`showLoginAuthTypeSelector`, the provider selector, the
//! login dialog) asked through the interactive mode's dialogs ([`ToolUi`]), with pi's texts.
//!
//! `/login` asks for the method (`Use a subscription` / `Use an API key`), then the provider
//! (with its status: ` ✓ configured`, ` ✓ env: OPENAI_API_KEY`, ` • unconfigured` …); a
//! subscription opens the browser (the URL is shown too) and, for Anthropic and Codex, offers a
//! field to paste the redirect URL into while the browser's redirect is awaited; GitHub Copilot
//! asks for an Enterprise domain, shows the device code and waits (Esc cancels). An API key is
//! asked for and stored. `/logout` removes an entry of `auth.json`.

use std::sync::Arc;

use async_trait::async_trait;
use pi_ai::ModelRegistry;
use pi_ai::oauth::{LoginCallbacks, OAuthError, OAuthProvider};
use pi_coding_agent::auth::{AuthCredential, AuthError, AuthStorage};
use pi_coding_agent::{NotifyKind, ToolUi};
use tokio_util::sync::CancellationToken;

const SUBSCRIPTION: &str = "Use a subscription";
const API_KEY: &str = "Use an API key";

/// Opens a URL in the browser.
pub(super) type Opener = Arc<dyn Fn(&str) + Send + Sync>;

/// Opens `url` as pi does (`open` on macOS, `start` on Windows, `xdg-open` elsewhere); failures
/// are ignored (the URL is on screen).
fn open_in_browser(url: &str) {
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut command = std::process::Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        std::process::Command::new("xdg-open")
    };
    let _ = command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// One provider of the selector.
#[derive(Debug, Clone, PartialEq)]
struct ProviderOption {
    id: String,
    name: String,
    oauth: bool,
}

/// The dialogs of `/login` and `/logout`.
pub(super) struct LoginDialogs {
    ui: Arc<dyn ToolUi>,
    auth: Arc<AuthStorage>,
    registry: ModelRegistry,
    open: Opener,
}

impl LoginDialogs {
    pub(super) fn new(ui: Arc<dyn ToolUi>, auth: Arc<AuthStorage>, registry: ModelRegistry) -> LoginDialogs {
        LoginDialogs {
            ui,
            auth,
            registry,
            open: Arc::new(open_in_browser),
        }
    }

    #[cfg(test)]
    fn with_opener(mut self, open: Opener) -> LoginDialogs {
        self.open = open;
        self
    }

    fn status(&self, text: impl Into<String>) {
        self.ui.notify(&text.into(), NotifyKind::Info);
    }

    fn error(&self, text: impl Into<String>) {
        self.ui.notify(&text.into(), NotifyKind::Error);
    }

    /// The providers a method can configure, by name (pi's `getLoginProviderOptions`).
    fn options(&self, oauth: bool) -> Vec<ProviderOption> {
        let mut options: Vec<ProviderOption> = if oauth {
            OAuthProvider::ALL
                .iter()
                .map(|provider| ProviderOption {
                    id: provider.id().to_owned(),
                    name: provider.name().to_owned(),
                    oauth: true,
                })
                .collect()
        } else {
            let mut ids: Vec<&str> = Vec::new();
            for model in self.registry.all() {
                let id = model.provider.as_str();
                // Subscription-only providers take no key.
                if !ids.contains(&id) && id != "openai-codex" && id != "github-copilot" {
                    ids.push(id);
                }
            }
            ids.into_iter()
                .map(|id| ProviderOption {
                    id: id.to_owned(),
                    name: id.to_owned(),
                    oauth: false,
                })
                .collect()
        };
        options.sort_by_key(|option| option.name.to_lowercase());
        options
    }

    /// pi's status after a provider's name in the selector.
    fn indicator(&self, option: &ProviderOption) -> String {
        match self.auth.get(&option.id) {
            Some(credential) if (credential.kind() == "oauth") == option.oauth => " ✓ configured".to_owned(),
            Some(AuthCredential::OAuth(_)) => " • subscription configured".to_owned(),
            Some(AuthCredential::ApiKey { .. }) => " • API key configured".to_owned(),
            None if option.oauth => " • unconfigured".to_owned(),
            None => match pi_ai::env_vars_for_provider(&option.id)
                .iter()
                .find(|var| self.registry.env(var).is_some_and(|value| !value.is_empty()))
            {
                Some(var) => format!(" ✓ env: {var}"),
                None => " • unconfigured".to_owned(),
            },
        }
    }

    /// `/login`.
    pub(super) async fn login(&self) {
        loop {
            let methods = [SUBSCRIPTION.to_owned(), API_KEY.to_owned()];
            let Some(method) = self.ui.select("Select authentication method:", &methods).await else {
                return;
            };
            let oauth = method == SUBSCRIPTION;
            let options = self.options(oauth);
            if options.is_empty() {
                self.status(if oauth {
                    "No subscription providers available."
                } else {
                    "No API key providers available."
                });
                return;
            }
            let labels: Vec<String> = options
                .iter()
                .map(|option| format!("{}{}", option.name, self.indicator(option)))
                .collect();
            // Esc goes back to the method, as in pi.
            let Some(label) = self.ui.select("Select provider to configure:", &labels).await else {
                continue;
            };
            let Some(option) = labels.iter().position(|l| *l == label).and_then(|i| options.get(i)) else {
                return;
            };
            if option.oauth {
                self.subscription(option).await;
            } else if option.id == "amazon-bedrock" {
                self.status(
                    "Amazon Bedrock setup\nAmazon Bedrock uses AWS credentials instead of a single API key.\nConfigure an AWS profile, IAM keys, bearer token, or role-based credentials.\nSee: docs/providers.md",
                );
            } else {
                self.api_key(option).await;
            }
            return;
        }
    }

    async fn api_key(&self, option: &ProviderOption) {
        let Some(key) = self
            .ui
            .input(&format!("Login to {}\nEnter API key:", option.name), None)
            .await
        else {
            return;
        };
        let key = key.trim().to_owned();
        if key.is_empty() {
            self.error(format!(
                "Failed to save API key for {}: API key cannot be empty.",
                option.name
            ));
            return;
        }
        pi_ai::register_secret(&key);
        let (auth, id) = (self.auth.clone(), option.id.clone());
        let saved = tokio::task::spawn_blocking(move || auth.set(&id, &AuthCredential::ApiKey { key })).await;
        match saved {
            Ok(Ok(())) => self.status(format!(
                "Saved API key for {}. Credentials saved to {}",
                option.name,
                self.auth.path().display()
            )),
            Ok(Err(error)) => self.error(format!("Failed to save API key for {}: {error}", option.name)),
            Err(error) => self.error(format!("Failed to save API key for {}: {error}", option.name)),
        }
    }

    async fn subscription(&self, option: &ProviderOption) {
        let Some(provider) = OAuthProvider::from_id(&option.id) else {
            return;
        };
        let cancel = CancellationToken::new();
        let callbacks = DialogCallbacks {
            ui: self.ui.clone(),
            title: format!("Login to {}", option.name),
            provider,
            open: self.open.clone(),
            cancel: cancel.clone(),
        };
        match self.auth.login(provider, &callbacks, &cancel).await {
            Ok(()) => self.status(format!(
                "Logged in to {}. Credentials saved to {}",
                option.name,
                self.auth.path().display()
            )),
            Err(AuthError::Login(OAuthError::Cancelled)) => {}
            Err(error) => self.error(format!("Failed to login to {}: {error}", option.name)),
        }
        cancel.cancel();
    }

    /// `/logout`.
    pub(super) async fn logout(&self) {
        let mut options: Vec<ProviderOption> = self
            .auth
            .list()
            .into_iter()
            .filter_map(|id| {
                let credential = self.auth.get(&id)?;
                let oauth = matches!(credential, AuthCredential::OAuth(_));
                let name = match OAuthProvider::from_id(&id) {
                    Some(provider) if oauth => provider.name().to_owned(),
                    _ => id.clone(),
                };
                Some(ProviderOption { id, name, oauth })
            })
            .collect();
        if options.is_empty() {
            self.status(
                "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.",
            );
            return;
        }
        options.sort_by_key(|option| option.name.to_lowercase());
        let labels: Vec<String> = options
            .iter()
            .map(|option| format!("{}{}", option.name, self.indicator(option)))
            .collect();
        let Some(label) = self.ui.select("Select provider to logout:", &labels).await else {
            return;
        };
        let Some(option) = labels
            .iter()
            .position(|l| *l == label)
            .and_then(|i| options.get(i))
            .cloned()
        else {
            return;
        };
        let (auth, id) = (self.auth.clone(), option.id.clone());
        match tokio::task::spawn_blocking(move || auth.remove(&id)).await {
            Ok(Ok(())) if option.oauth => self.status(format!("Logged out of {}", option.name)),
            Ok(Ok(())) => self.status(format!(
                "Removed stored API key for {}. Environment variables and models.json config are unchanged.",
                option.name
            )),
            Ok(Err(error)) => self.error(format!("Logout failed: {error}")),
            Err(error) => self.error(format!("Logout failed: {error}")),
        }
    }
}

/// The login dialog: pi's `LoginDialogComponent` as notices and input fields.
struct DialogCallbacks {
    ui: Arc<dyn ToolUi>,
    title: String,
    provider: OAuthProvider,
    open: Opener,
    cancel: CancellationToken,
}

#[async_trait]
impl LoginCallbacks for DialogCallbacks {
    fn on_auth(&self, url: &str, instructions: Option<&str>) {
        let mut text = format!("{}\n{url}", self.title);
        if let Some(instructions) = instructions {
            text.push_str(&format!("\n{instructions}"));
        }
        self.ui.notify(&text, NotifyKind::Info);
        (self.open)(url);
        if self.provider == OAuthProvider::GithubCopilot {
            // pi's "Waiting for browser authentication..." with Esc to cancel.
            let (ui, cancel) = (self.ui.clone(), self.cancel.clone());
            tokio::spawn(async move {
                let dismissed = tokio::select! {
                    answer = ui.input("Waiting for browser authentication... (Esc to cancel)", None) => answer.is_none(),
                    () = cancel.cancelled() => false,
                };
                if dismissed {
                    cancel.cancel();
                }
            });
        }
    }

    async fn prompt(&self, message: &str, placeholder: Option<&str>) -> Option<String> {
        let placeholder = placeholder.map(|p| format!("e.g., {p}"));
        self.ui
            .input(&format!("{}\n{message}", self.title), placeholder.as_deref())
            .await
    }

    fn progress(&self, message: &str) {
        self.ui.notify(message, NotifyKind::Info);
    }

    fn offers_manual_input(&self) -> bool {
        self.provider.uses_callback_server()
    }

    async fn manual_input(&self) -> Option<String> {
        self.ui
            .input("Paste redirect URL below, or complete login in browser:", None)
            .await
    }
}

#[cfg(test)]
mod tests;
