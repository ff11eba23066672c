//! What the wire-API tests share (each test file is its own binary and includes this module).

use std::time::Duration;

use pi_ai::{HttpClient, HttpOptions};

/// A client for a mock server on 127.0.0.1: two quick retries, short timeouts.
pub(crate) fn client() -> HttpClient {
    HttpClient::new(HttpOptions {
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_retry_delay: Duration::from_millis(50),
        connect_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(30),
    })
}
