//! `~/.pi/agent/auth.json`: API keys and subscription logins, read and written as pi 0.73.1
//! does (its `AuthStorage`).
//!
//! The file is a JSON object of providers:
//!
//! ```json
//! {
//!   "anthropic": { "type": "api_key", "key": "sk-ant-..." },
//!   "openai-codex": { "type": "oauth", "access": "…", "refresh": "…", "expires": 1767225600000, "accountId": "…" }
//! }
//! ```
//!
//! written with two-space indentation, mode 0600 (its directory 0700 when created), under pi's
//! lock (`auth.json.lock`, see `lock.rs`) so that two processes never lose each other's changes;
//! every write re-reads the file and changes only its own provider. Entries of kinds this
//! program does not know are kept as they are.
//!
//! [`AuthStorage`] is a [`pi_ai::CredentialStore`]: give it to
//! [`ModelRegistry::with_credentials`](pi_ai::ModelRegistry::with_credentials) and `auth.json`
//! comes before the environment and `models.json`; an expired login is refreshed (under the
//! lock, re-reading first: another process may have refreshed it already) before the request
//! that needs it.

mod lock;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use pi_ai::oauth::{LoginCallbacks, OAuthCredentials, OAuthEndpoints, OAuthError, OAuthProvider};
use pi_ai::{CredentialStore, StoredCredential};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// Why `auth.json` could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// Reading, writing or locking failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The file is not a JSON object.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// The parser's complaint.
        message: String,
    },
    /// The login failed (or was cancelled: [`OAuthError::Cancelled`]).
    #[error(transparent)]
    Login(#[from] OAuthError),
}

/// One provider's entry.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthCredential {
    /// `{"type": "api_key", "key": …}`.
    ApiKey {
        /// The key as written (`!command`, a variable's name, or the key).
        key: String,
    },
    /// `{"type": "oauth", …}`.
    OAuth(OAuthCredentials),
}

impl AuthCredential {
    /// pi's `type`: `api_key` or `oauth`.
    pub fn kind(&self) -> &'static str {
        match self {
            AuthCredential::ApiKey { .. } => "api_key",
            AuthCredential::OAuth(_) => "oauth",
        }
    }

    fn from_value(value: &Value) -> Option<AuthCredential> {
        match value.get("type")?.as_str()? {
            "api_key" => Some(AuthCredential::ApiKey {
                key: value.get("key")?.as_str()?.to_owned(),
            }),
            "oauth" => {
                let mut fields = value.as_object()?.clone();
                fields.remove("type");
                serde_json::from_value(Value::Object(fields))
                    .ok()
                    .map(AuthCredential::OAuth)
            }
            _ => None,
        }
    }

    /// The entry as pi writes it: `type` first, then the fields in the order pi's login gives
    /// them (Codex: `access`, `refresh`, `expires`, `accountId`; the others `refresh` first).
    fn to_value(&self, provider: &str) -> Value {
        let mut object = Map::new();
        match self {
            AuthCredential::ApiKey { key } => {
                object.insert("type".into(), "api_key".into());
                object.insert("key".into(), key.clone().into());
            }
            AuthCredential::OAuth(login) => {
                object.insert("type".into(), "oauth".into());
                if provider == OAuthProvider::OpenAiCodex.id() {
                    object.insert("access".into(), login.access.clone().into());
                    object.insert("refresh".into(), login.refresh.clone().into());
                } else {
                    object.insert("refresh".into(), login.refresh.clone().into());
                    object.insert("access".into(), login.access.clone().into());
                }
                object.insert("expires".into(), login.expires.into());
                for (name, value) in &login.extra {
                    object.insert(name.clone(), value.clone());
                }
            }
        }
        Value::Object(object)
    }
}

/// `auth.json`, held in memory and written through (see the module docs).
#[derive(Debug)]
pub struct AuthStorage {
    path: PathBuf,
    data: RwLock<Map<String, Value>>,
    endpoints: OAuthEndpoints,
}

impl AuthStorage {
    /// Opens `path` (pi's `~/.pi/agent/auth.json`: [`AgentPaths::auth_file`](crate::config::AgentPaths::auth_file)),
    /// creating it (`{}`, 0600) as pi does. Blocking: file I/O and the lock.
    pub fn open(path: impl Into<PathBuf>) -> Result<AuthStorage, AuthError> {
        let storage = AuthStorage {
            path: path.into(),
            data: RwLock::new(Map::new()),
            endpoints: OAuthEndpoints::from_env(&|name| std::env::var(name).ok()),
        };
        storage.reload()?;
        Ok(storage)
    }

    /// Uses `endpoints` for logins and refreshes (tests: a local server).
    #[must_use]
    pub fn with_endpoints(mut self, endpoints: OAuthEndpoints) -> AuthStorage {
        self.endpoints = endpoints;
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The OAuth endpoints in use.
    pub fn endpoints(&self) -> &OAuthEndpoints {
        &self.endpoints
    }

    fn io_error(&self, error: impl std::fmt::Display) -> AuthError {
        AuthError::Io {
            path: self.path.display().to_string(),
            message: error.to_string(),
        }
    }

    fn parse(&self, text: &str) -> Result<Map<String, Value>, AuthError> {
        if text.trim().is_empty() {
            return Ok(Map::new());
        }
        serde_json::from_str(text).map_err(|error| AuthError::Invalid {
            path: self.path.display().to_string(),
            message: error.to_string(),
        })
    }

    /// The parent directory (0700) and the file (`{}`, 0600), when missing.
    fn ensure_file(&self) -> Result<(), AuthError> {
        if let Some(dir) = self.path.parent()
            && !dir.exists()
        {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(|e| self.io_error(e))?;
        }
        if !self.path.exists() {
            self.write_file("{}")?;
        }
        Ok(())
    }

    fn write_file(&self, text: &str) -> Result<(), AuthError> {
        std::fs::write(&self.path, text).map_err(|e| self.io_error(e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| self.io_error(e))?;
        }
        Ok(())
    }

    /// Runs `change` on the file's current content under the lock; writes what it returns.
    fn with_lock<T>(
        &self,
        retry: lock::Retry,
        change: impl FnOnce(Map<String, Value>) -> (T, Option<Map<String, Value>>),
    ) -> Result<T, AuthError> {
        self.ensure_file()?;
        let _lock = lock::acquire(&self.path, retry).map_err(|e| self.io_error(e))?;
        let text = std::fs::read_to_string(&self.path).map_err(|e| self.io_error(e))?;
        let current = self.parse(&text)?;
        let (result, next) = change(current);
        if let Some(next) = next {
            let text = serde_json::to_string_pretty(&Value::Object(next.clone())).map_err(|e| self.io_error(e))?;
            self.write_file(&text)?;
            *self.data.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
        }
        Ok(result)
    }

    /// Reads the file again. Blocking.
    pub fn reload(&self) -> Result<(), AuthError> {
        let data = self.with_lock(lock::QUICK, |current| (current, None))?;
        for value in data.values() {
            if let Some(AuthCredential::OAuth(login)) = AuthCredential::from_value(value) {
                login.register_secrets();
            }
        }
        *self.data.write().unwrap_or_else(std::sync::PoisonError::into_inner) = data;
        Ok(())
    }

    /// The entry of `provider`, if it is one pi knows.
    pub fn get(&self, provider: &str) -> Option<AuthCredential> {
        let data = self.data.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        AuthCredential::from_value(data.get(provider)?)
    }

    /// The providers with an entry, in the file's order.
    pub fn list(&self) -> Vec<String> {
        let data = self.data.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        data.keys().cloned().collect()
    }

    /// Stores `credential` for `provider` (re-reading the file under the lock, so other
    /// providers' entries written meanwhile are kept). Blocking.
    pub fn set(&self, provider: &str, credential: &AuthCredential) -> Result<(), AuthError> {
        let value = credential.to_value(provider);
        self.with_lock(lock::QUICK, |mut current| {
            current.insert(provider.to_owned(), value);
            ((), Some(current))
        })
    }

    /// Removes `provider`'s entry (pi's `/logout`). Blocking.
    pub fn remove(&self, provider: &str) -> Result<(), AuthError> {
        self.with_lock(lock::QUICK, |mut current| {
            current.shift_remove(provider);
            ((), Some(current))
        })
    }

    /// Logs in to `provider` and stores the login (pi's `AuthStorage.login`).
    pub async fn login(
        self: &Arc<Self>,
        provider: OAuthProvider,
        callbacks: &dyn LoginCallbacks,
        cancel: &CancellationToken,
    ) -> Result<(), AuthError> {
        let login = pi_ai::oauth::login(provider, callbacks, &self.endpoints, cancel).await?;
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.set(provider.id(), &AuthCredential::OAuth(login)))
            .await
            .map_err(|e| self.io_error(e))?
    }

    /// Refreshes `provider`'s expired login as pi does: under the refresh lock, re-reading the
    /// file first (another process may have refreshed it: then that login is used), writing the
    /// new tokens. A failed refresh leaves the entry as it was (a later `/login` replaces it).
    pub async fn refresh_login(self: &Arc<Self>, provider: &str) -> Result<(), OAuthError> {
        let Some(oauth) = OAuthProvider::from_id(provider) else {
            return Ok(());
        };
        let this = self.clone();
        let path = self.path.clone();
        let lock = tokio::task::spawn_blocking(move || -> Result<(lock::FileLock, Map<String, Value>), AuthError> {
            this.ensure_file()?;
            let held = lock::acquire(&path, lock::REFRESH).map_err(|e| this.io_error(e))?;
            let text = std::fs::read_to_string(&path).map_err(|e| this.io_error(e))?;
            Ok((held, this.parse(&text)?))
        })
        .await
        .map_err(|e| OAuthError::Failed(e.to_string()))?
        .map_err(|e| OAuthError::Failed(pi_ai::redact(&e.to_string(), None)))?;
        let (held, mut current) = lock;
        let stored = current.get(provider).and_then(AuthCredential::from_value);
        let Some(AuthCredential::OAuth(login)) = stored else {
            *self.data.write().unwrap_or_else(std::sync::PoisonError::into_inner) = current;
            return Ok(());
        };
        if !login.is_expired(pi_ai::oauth::now_ms()) {
            // Another process refreshed it meanwhile.
            login.register_secrets();
            *self.data.write().unwrap_or_else(std::sync::PoisonError::into_inner) = current;
            return Ok(());
        }
        let refreshed = pi_ai::oauth::refresh(oauth, &login, &self.endpoints).await?;
        current.insert(provider.to_owned(), AuthCredential::OAuth(refreshed).to_value(provider));
        let this = self.clone();
        tokio::task::spawn_blocking(move || -> Result<(), AuthError> {
            let text = serde_json::to_string_pretty(&Value::Object(current.clone())).map_err(|e| this.io_error(e))?;
            this.write_file(&text)?;
            *this.data.write().unwrap_or_else(std::sync::PoisonError::into_inner) = current;
            drop(held);
            Ok(())
        })
        .await
        .map_err(|e| OAuthError::Failed(e.to_string()))?
        .map_err(|e| OAuthError::Failed(pi_ai::redact(&e.to_string(), None)))
    }
}

/// The store as the registry reads it.
#[derive(Debug, Clone)]
pub struct SharedAuth(pub Arc<AuthStorage>);

impl CredentialStore for SharedAuth {
    fn get(&self, provider: &str) -> Option<StoredCredential> {
        Some(match self.0.get(provider)? {
            AuthCredential::ApiKey { key } => StoredCredential::ApiKey(key),
            AuthCredential::OAuth(login) => StoredCredential::OAuth(login),
        })
    }

    fn refresh(&self, provider: &str) -> futures::future::BoxFuture<'static, Result<(), OAuthError>> {
        let (storage, provider) = (self.0.clone(), provider.to_owned());
        Box::pin(async move { storage.refresh_login(&provider).await })
    }
}

#[cfg(test)]
mod tests;
