//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the guard even when another thread panicked while holding it.
///
/// The crates guard plain state (listener lists, queues, maps) whose every update is a single
/// step, so a panic cannot leave it half-written; refusing to work after one would only turn a
/// caught tool panic into a second failure.
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// let counter = Arc::new(Mutex::new(0));
/// let poisoner = counter.clone();
/// let _ = std::thread::spawn(move || {
///     let _guard = poisoner.lock().unwrap();
///     panic!("poisoned");
/// })
/// .join();
/// assert!(counter.is_poisoned());
/// *pi_agent_core::lock(&counter) += 1;
/// assert_eq!(*pi_agent_core::lock(&counter), 1);
/// ```
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
