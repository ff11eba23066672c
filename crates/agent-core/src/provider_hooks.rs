//! Hooks around one provider request (pi-ai's `onPayload` / `onResponse`): every wire API calls
//! [`PayloadHook`] with the JSON body it is about to send (the hook may replace it) and
//! [`ResponseHook`] with the status and headers of the response it streams.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::model::Model;

/// Sees (and may replace) the JSON body of a provider request before it is sent.
#[async_trait]
pub trait PayloadHook: Send + Sync {
    /// Returns the body to send instead of `payload`; `None` sends it unchanged.
    async fn on_payload(&self, payload: &Value, model: &Model) -> Option<Value>;
}

/// Told the status and headers (names lowercase) of a provider's successful response, before its
/// body is read.
#[async_trait]
pub trait ResponseHook: Send + Sync {
    /// Called once per request that got a response to stream.
    async fn on_response(&self, status: u16, headers: &BTreeMap<String, String>, model: &Model);
}

/// The hooks of a provider request; both empty by default (nothing is called).
#[derive(Clone, Default)]
pub struct ProviderHooks {
    /// pi-ai's `onPayload`.
    pub on_payload: Option<Arc<dyn PayloadHook>>,
    /// pi-ai's `onResponse`.
    pub on_response: Option<Arc<dyn ResponseHook>>,
}

impl std::fmt::Debug for ProviderHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderHooks")
            .field("on_payload", &self.on_payload.is_some())
            .field("on_response", &self.on_response.is_some())
            .finish()
    }
}

impl ProviderHooks {
    /// Whether neither hook is set.
    pub fn is_empty(&self) -> bool {
        self.on_payload.is_none() && self.on_response.is_none()
    }
}
