//! `retry` of `settings.json`, the one retry policy in two nested layers, as pi 0.73.1 has it:
//!
//! * `retry.provider` ([`ProviderRetry`]): the timeouts and quick retries *within* one request to
//!   a model provider (pi's SDK options `timeoutMs`, `maxRetries`, `maxRetryDelayMs`, plus the
//!   total deadline pi does not have, `totalTimeoutMs`); no events, the user sees nothing;
//! * `retry.enabled` / `maxRetries` / `baseDelayMs` ([`AgentRetry`]): when a request has failed
//!   for good with a transient error, the session waits `baseDelayMs * 2^(n-1)` and sends the
//!   turn again, announcing it (`auto_retry_start` / `auto_retry_end`).
//!
//! One agent attempt is one request with its provider retries, so a prompt makes at most
//! `(1 + retry.provider.maxRetries) * (1 + retry.maxRetries)` requests (3 × 4 by default).

use std::time::Duration;

use pi_ai::HttpOptions;
use serde_json::{Map, Value};

use super::error::SettingsError;

/// `retry.provider`; `None` keeps [`HttpOptions::default`]'s value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProviderRetry {
    /// `retry.provider.timeoutMs`: per attempt, the longest wait for the response headers and the
    /// longest silence of a streaming response.
    pub timeout_ms: Option<u64>,
    /// `retry.provider.maxRetries`: retries after the first attempt.
    pub max_retries: Option<u32>,
    /// `retry.provider.maxRetryDelayMs` (pi's older `retry.maxDelayMs` when it is unset): the
    /// longest wait before a retry; a server asking for more fails the request at once; 0: no
    /// limit.
    pub max_retry_delay_ms: Option<u64>,
    /// `retry.provider.totalTimeoutMs` (beyond pi): the longest time from the first attempt until
    /// a response starts, across every attempt and every wait between them.
    pub total_timeout_ms: Option<u64>,
}

impl ProviderRetry {
    /// The HTTP client options these settings ask for, the rest default.
    ///
    /// ```
    /// use std::time::Duration;
    /// use pi_coding_agent::config::Settings;
    /// let settings = Settings::from_json(
    ///     r#"{"retry": {"provider": {"timeoutMs": 30000, "maxRetries": 1, "totalTimeoutMs": 90000}}}"#,
    ///     "settings.json",
    /// )
    /// .unwrap();
    /// let options = settings.provider_retry.http_options();
    /// assert_eq!(options.idle_timeout, Duration::from_secs(30));
    /// assert_eq!(options.total_timeout, Duration::from_secs(90));
    /// assert_eq!(options.max_retries, 1);
    /// assert_eq!(options.max_retry_delay, Duration::from_secs(60));
    /// ```
    pub fn http_options(&self) -> HttpOptions {
        let mut options = HttpOptions::default();
        if let Some(ms) = self.timeout_ms {
            options.idle_timeout = Duration::from_millis(ms);
        }
        if let Some(retries) = self.max_retries {
            options.max_retries = retries;
        }
        if let Some(ms) = self.max_retry_delay_ms {
            options.max_retry_delay = Duration::from_millis(ms);
        }
        if let Some(ms) = self.total_timeout_ms {
            options.total_timeout = Duration::from_millis(ms);
        }
        options
    }
}

/// The agent-level retry of `retry` (pi's `getRetrySettings`): on a transient error (see
/// `docs/retry.md`) the session sends the turn again after `base_delay_ms * 2^(attempt-1)`, up to
/// `max_retries` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentRetry {
    /// `retry.enabled` (default true).
    pub enabled: bool,
    /// `retry.maxRetries` (default 3): retries after the first attempt.
    pub max_retries: u32,
    /// `retry.baseDelayMs` (default 2000): the first wait; doubled on each retry (2 s, 4 s, 8 s).
    /// pi caps nothing here (its older `retry.maxDelayMs` became `retry.provider.maxRetryDelayMs`).
    pub base_delay_ms: u64,
}

impl Default for AgentRetry {
    fn default() -> Self {
        AgentRetry {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
        }
    }
}

impl AgentRetry {
    /// The wait before retry number `attempt` (1 for the first): `base_delay_ms * 2^(attempt-1)`,
    /// saturating.
    ///
    /// ```
    /// let retry = pi_coding_agent::config::AgentRetry::default();
    /// assert_eq!([1, 2, 3].map(|n| retry.delay_ms(n)), [2000, 4000, 8000]);
    /// ```
    pub fn delay_ms(&self, attempt: u32) -> u64 {
        let doublings = attempt.saturating_sub(1);
        self.base_delay_ms
            .saturating_mul(2u64.checked_pow(doublings).unwrap_or(u64::MAX))
    }
}

/// Reads `retry.enabled`, `retry.maxRetries` and `retry.baseDelayMs` from the merged settings
/// object.
pub(super) fn read_agent(raw: &Map<String, Value>, file: &str) -> Result<AgentRetry, SettingsError> {
    let error = |key: &str, message: &str| SettingsError::Value {
        file: file.to_owned(),
        key: key.to_owned(),
        message: message.to_owned(),
    };
    let mut retry = AgentRetry::default();
    let object = match raw.get("retry") {
        Some(Value::Object(object)) => object,
        // `read` reports a `retry` that is not an object.
        _ => return Ok(retry),
    };
    match object.get("enabled") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(enabled)) => retry.enabled = *enabled,
        Some(_) => return Err(error("retry.enabled", "must be true or false")),
    }
    let whole = |key: &str| -> Result<Option<u64>, SettingsError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .or_else(|| {
                    value
                        .as_f64()
                        .filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0 && *n < u64::MAX as f64)
                        .map(|n| n as u64)
                })
                .map(Some)
                .ok_or_else(|| error(&format!("retry.{key}"), "must be a whole number, 0 or more")),
        }
    };
    if let Some(n) = whole("maxRetries")? {
        retry.max_retries = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(ms) = whole("baseDelayMs")? {
        retry.base_delay_ms = ms;
    }
    Ok(retry)
}

/// Reads `retry.provider` from the merged settings object.
pub(super) fn read(raw: &Map<String, Value>, file: &str) -> Result<ProviderRetry, SettingsError> {
    let error = |key: &str, message: &str| SettingsError::Value {
        file: file.to_owned(),
        key: key.to_owned(),
        message: message.to_owned(),
    };
    let retry = match raw.get("retry") {
        None | Some(Value::Null) => return Ok(ProviderRetry::default()),
        Some(Value::Object(retry)) => retry,
        Some(_) => return Err(error("retry", "must be an object")),
    };
    let empty = Map::new();
    let provider = match retry.get("provider") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(provider)) => provider,
        Some(_) => return Err(error("retry.provider", "must be an object")),
    };
    // Milliseconds: a whole number, 0 or more (or at least 1 where 0 would mean "fail at once").
    let millis = |object: &Map<String, Value>, key: &str, path: &str, min: u64| -> Result<Option<u64>, SettingsError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_u64().or_else(|| {
                value
                    .as_f64()
                    .filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0 && *n < u64::MAX as f64)
                    .map(|n| n as u64)
            }) {
                Some(n) if n >= min => Ok(Some(n)),
                _ if min > 0 => Err(error(path, "must be a whole number of milliseconds, 1 or more")),
                _ => Err(error(path, "must be a whole number, 0 or more")),
            },
        }
    };
    let max_retries =
        millis(provider, "maxRetries", "retry.provider.maxRetries", 0)?.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let max_retry_delay_ms = match millis(provider, "maxRetryDelayMs", "retry.provider.maxRetryDelayMs", 0)? {
        Some(ms) => Some(ms),
        // pi migrates its older key to this one.
        None => millis(retry, "maxDelayMs", "retry.maxDelayMs", 0)?,
    };
    Ok(ProviderRetry {
        timeout_ms: millis(provider, "timeoutMs", "retry.provider.timeoutMs", 1)?,
        max_retries,
        max_retry_delay_ms,
        total_timeout_ms: millis(provider, "totalTimeoutMs", "retry.provider.totalTimeoutMs", 1)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::Settings;
    use super::*;

    #[test]
    fn pi_keys_and_the_total_deadline_are_read() {
        let settings = Settings::from_json(
            r#"{"retry": {"enabled": true, "maxRetries": 5, "provider":
                {"timeoutMs": 1500, "maxRetries": 0, "maxRetryDelayMs": 0, "totalTimeoutMs": 4000}}}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(
            settings.provider_retry,
            ProviderRetry {
                timeout_ms: Some(1500),
                max_retries: Some(0),
                max_retry_delay_ms: Some(0),
                total_timeout_ms: Some(4000),
            }
        );
        let options = settings.provider_retry.http_options();
        assert_eq!(options.idle_timeout, Duration::from_millis(1500));
        assert_eq!(options.max_retry_delay, Duration::ZERO);
        assert_eq!(options.total_timeout, Duration::from_secs(4));
    }

    #[test]
    fn without_them_the_client_defaults_apply() {
        let settings = Settings::from_json("{}", "s.json").unwrap();
        assert_eq!(settings.provider_retry.http_options(), HttpOptions::default());
        // pi's older key.
        let settings = Settings::from_json(r#"{"retry": {"maxDelayMs": 5000}}"#, "s.json").unwrap();
        assert_eq!(settings.provider_retry.max_retry_delay_ms, Some(5000));
    }

    #[test]
    fn agent_retry_has_pis_defaults_and_reads_its_keys() {
        let settings = Settings::from_json("{}", "s.json").unwrap();
        assert_eq!(
            settings.retry,
            AgentRetry {
                enabled: true,
                max_retries: 3,
                base_delay_ms: 2000
            }
        );
        let settings = Settings::from_json(
            r#"{"retry": {"enabled": false, "maxRetries": 5, "baseDelayMs": 100, "maxDelayMs": 7}}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(
            settings.retry,
            AgentRetry {
                enabled: false,
                max_retries: 5,
                base_delay_ms: 100
            }
        );
        assert_eq!(settings.retry.delay_ms(3), 400);
        assert_eq!(AgentRetry::default().delay_ms(200), u64::MAX, "saturates");
        let error = Settings::from_json(r#"{"retry": {"enabled": "yes"}}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"retry.enabled\" must be true or false"
        );
        let error = Settings::from_json(r#"{"retry": {"baseDelayMs": -1}}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"retry.baseDelayMs\" must be a whole number, 0 or more"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let error = Settings::from_json(r#"{"retry": {"provider": {"timeoutMs": 0}}}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"retry.provider.timeoutMs\" must be a whole number of milliseconds, 1 or more"
        );
        let error = Settings::from_json(r#"{"retry": {"provider": {"maxRetries": "3"}}}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"retry.provider.maxRetries\" must be a whole number, 0 or more"
        );
        let error = Settings::from_json(r#"{"retry": 3}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"retry\" must be an object"
        );
    }
}
