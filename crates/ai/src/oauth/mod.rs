//! Subscription login, as pi-ai 0.73.1's `utils/oauth` does it: OAuth with PKCE and a loopback
//! callback for Anthropic (Claude Pro/Max) and OpenAI Codex (ChatGPT Plus/Pro), GitHub's
//! device-code flow and Copilot's token exchange, and the refresh of each.
//!
//! The flows are written on reqwest with sha2 and base64 (already used here) rather than the
//! `oauth2` crate: pi's endpoints are not plain RFC 6749 (Anthropic's token endpoint takes JSON
//! and a `state`, Copilot's "token" is a second exchange with a GitHub token as the refresh
//! token), and the texts, timings and fields must be pi's.
//!
//! Every token a flow receives is registered with the redactor
//! ([`register_secret`](crate::register_secret)) before anything can print it, and every error
//! text is redacted.
//!
//! Storing the credentials (`auth.json`) is `pi-coding-agent`'s job; asking the user is the
//! program's ([`LoginCallbacks`]).

mod anthropic;
mod callback;
mod codex;
mod common;
mod copilot;
mod pkce;

use tokio_util::sync::CancellationToken;

pub use common::{LoginCallbacks, OAuthCredentials, OAuthEndpoints, OAuthError, now_ms};
pub use copilot::{copilot_base_url, normalize_domain};

/// A subscription pi can log in to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OAuthProvider {
    /// `anthropic`: Claude Pro/Max.
    Anthropic,
    /// `github-copilot`.
    GithubCopilot,
    /// `openai-codex`: ChatGPT Plus/Pro.
    OpenAiCodex,
}

impl OAuthProvider {
    /// Every one, in pi-ai's order.
    pub const ALL: [OAuthProvider; 3] = [
        OAuthProvider::Anthropic,
        OAuthProvider::GithubCopilot,
        OAuthProvider::OpenAiCodex,
    ];

    /// The provider id (`anthropic`, `github-copilot`, `openai-codex`), also its `auth.json` key.
    pub fn id(self) -> &'static str {
        match self {
            OAuthProvider::Anthropic => "anthropic",
            OAuthProvider::GithubCopilot => "github-copilot",
            OAuthProvider::OpenAiCodex => "openai-codex",
        }
    }

    /// pi's name for it (`Anthropic (Claude Pro/Max)`, `GitHub Copilot`, `ChatGPT Plus/Pro (Codex
    /// Subscription)`).
    pub fn name(self) -> &'static str {
        match self {
            OAuthProvider::Anthropic => "Anthropic (Claude Pro/Max)",
            OAuthProvider::GithubCopilot => "GitHub Copilot",
            OAuthProvider::OpenAiCodex => "ChatGPT Plus/Pro (Codex Subscription)",
        }
    }

    /// Whether the login waits for a browser redirect (and so also takes a pasted redirect URL).
    pub fn uses_callback_server(self) -> bool {
        !matches!(self, OAuthProvider::GithubCopilot)
    }

    /// The provider of an id.
    ///
    /// ```
    /// use pi_ai::oauth::OAuthProvider;
    /// assert_eq!(OAuthProvider::from_id("openai-codex"), Some(OAuthProvider::OpenAiCodex));
    /// assert_eq!(OAuthProvider::from_id("openai"), None);
    /// ```
    pub fn from_id(id: &str) -> Option<OAuthProvider> {
        OAuthProvider::ALL.into_iter().find(|provider| provider.id() == id)
    }
}

/// Logs in to `provider`: the flow, the token exchange, and (Copilot) enabling its models.
/// `cancel` stops it with [`OAuthError::Cancelled`].
pub async fn login(
    provider: OAuthProvider,
    callbacks: &dyn LoginCallbacks,
    endpoints: &OAuthEndpoints,
    cancel: &CancellationToken,
) -> Result<OAuthCredentials, OAuthError> {
    let flow = async {
        match provider {
            OAuthProvider::Anthropic => anthropic::login(callbacks, endpoints).await,
            OAuthProvider::OpenAiCodex => codex::login(callbacks, endpoints).await,
            OAuthProvider::GithubCopilot => copilot::login(callbacks, endpoints, cancel).await,
        }
    };
    let credentials = tokio::select! {
        result = flow => result?,
        () = cancel.cancelled() => return Err(OAuthError::Cancelled),
    };
    credentials.register_secrets();
    Ok(credentials)
}

/// New credentials for expired ones (pi's `refreshToken`); fails with pi's text.
pub async fn refresh(
    provider: OAuthProvider,
    credentials: &OAuthCredentials,
    endpoints: &OAuthEndpoints,
) -> Result<OAuthCredentials, OAuthError> {
    credentials.register_secrets();
    let refreshed = match provider {
        OAuthProvider::Anthropic => anthropic::refresh(&credentials.refresh, endpoints).await,
        OAuthProvider::OpenAiCodex => codex::refresh(&credentials.refresh, endpoints).await,
        OAuthProvider::GithubCopilot => {
            copilot::copilot_token(&credentials.refresh, credentials.enterprise_url(), endpoints).await
        }
    }?;
    refreshed.register_secrets();
    Ok(refreshed)
}
