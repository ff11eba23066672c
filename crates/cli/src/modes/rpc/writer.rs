//! [`Writer`]: the RPC output, one JSON line at a time.

use crate::io::write_redacted;
use serde_json::Value;

use crate::modes::print::Output;

/// Writes whole lines to stdout, one at a time.
#[derive(Clone)]
pub struct Writer {
    output: Output,
}

impl Writer {
    /// Lines go to `output`.
    pub fn new(output: Output) -> Self {
        Writer { output }
    }

    /// Writes `value` as one line, every secret redacted ([`pi_ai::redact`]), and flushes.
    pub fn line(&self, value: &Value) {
        self.text(&value.to_string());
    }

    /// Writes `line` (one JSON object, already serialized) as one line, every secret redacted,
    /// and flushes.
    pub fn text(&self, line: &str) {
        write_redacted(&self.output, line, true);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn every_line_is_redacted() {
        pi_ai::register_secret("rpc-writer-secret-0123");
        let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
        let writer = Writer::new(buffer.clone());
        writer.line(&serde_json::json!({"type": "agent_end", "errorMessage": "bad key rpc-writer-secret-0123"}));
        let written = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
        assert_eq!(
            written,
            "{\"type\":\"agent_end\",\"errorMessage\":\"bad key [redacted]\"}\n"
        );
    }
}
