//! Waiting in async tests without hanging the suite: [`until`] polls a condition and
//! [`within`] bounds a future, each failing the test with a message naming what it waited for.
//! Both use tokio's clock, so under a paused clock (`#[tokio::test(start_paused = true)]`) their
//! limits pass at once.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicBool, Ordering};
//!
//! use pi_test_support::wait;
//!
//! let done = Arc::new(AtomicBool::new(false));
//! let flag = done.clone();
//! tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
//! wait::until("the task", || done.load(Ordering::SeqCst)).await;
//! assert_eq!(wait::within("an answer", async { 42 }).await, 42);
//! # });
//! ```

use std::future::Future;
use std::time::Duration;

/// How long [`until`] waits before it fails the test.
pub const UNTIL_LIMIT: Duration = Duration::from_secs(10);

/// How long [`within`] waits before it fails the test.
pub const WITHIN_LIMIT: Duration = Duration::from_secs(30);

/// Waits until `ready` holds, checking every 10 ms; panics naming `what` after [`UNTIL_LIMIT`],
/// so that a regression fails its test instead of hanging the suite.
pub async fn until(what: &str, ready: impl FnMut() -> bool) {
    until_limit(UNTIL_LIMIT, what, ready).await;
}

/// [`until`] with another limit than [`UNTIL_LIMIT`].
///
/// # Panics
///
/// With `timed out after <limit> s waiting for <what>` once `limit` has passed.
pub async fn until_limit(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !ready() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {} s waiting for {what}",
            limit.as_secs()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The output of `future`; panics naming `what` when it takes more than [`WITHIN_LIMIT`].
///
/// # Panics
///
/// With `<what> took more than 30 s`.
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WITHIN_LIMIT, future)
        .await
        .unwrap_or_else(|_| panic!("{what} took more than {} s", WITHIN_LIMIT.as_secs()))
}
