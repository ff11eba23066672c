//! The per-file mutation queue: calls that change the same file run one at a time, in the order
//! they took their place, while calls on different files run in parallel.
//!
//! A place is a [`MutationTicket`]: [`MutationTicket::reserve`] queues it behind every earlier
//! ticket of any of its files, in one step for all of them, without waiting; [`MutationTicket::acquire`]
//! waits until it is first in every queue and turns it into a [`MutationGuard`]; dropping the
//! ticket or the guard (also by an error, a cancelled future or a panic) gives the place up.
//!
//! The agent loop reserves the tickets of a batch while it prepares the calls one after the other
//! in source order ([`AgentTool::mutated_files`](crate::AgentTool::mutated_files)), so that the
//! mutations of one file land in the order the model wrote them however the parallel calls are
//! scheduled. Every ticket is queued on all its files at once and tickets are numbered in the order
//! they were reserved, so every queue holds them in the same order: the oldest ticket is always
//! first in all its queues and can run, and two calls that share several files never wait for
//! each other crosswise.
//!
//! While a call runs, the files its guard holds are *held* by the task ([`MutationGuard::hold`]):
//! [`lock_files`] of a held file inside it takes no second place (it would wait for itself),
//! and a task that runs part of a call on another task carries the held files along with
//! [`carry_held_mutations`].
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use pi_agent_core::{MutationTicket, lock_files, mutation_key};
//!
//! let dir = std::env::temp_dir();
//! let key = mutation_key(&dir.join("example.txt"));
//! let first = MutationTicket::reserve([key.clone()]);
//! let second = MutationTicket::reserve([key.clone()]);
//! assert!(first.is_first() && !second.is_first());
//! let guard = first.acquire().await;
//! // Inside the guard's hold, locking the same file again does not wait.
//! guard.hold(async { drop(lock_files(vec![dir.join("example.txt")]).await) }).await;
//! assert!(second.is_first());
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::Notify;

use crate::sync::lock;

/// The queue of every file, by its key: the tickets in the order they were reserved.
#[derive(Default)]
struct Queues {
    next_id: u64,
    by_key: HashMap<PathBuf, VecDeque<Waiter>>,
}

/// A ticket's entry in one file's queue.
struct Waiter {
    id: u64,
    notify: Arc<Notify>,
}

fn queues() -> &'static Mutex<Queues> {
    static QUEUES: OnceLock<Mutex<Queues>> = OnceLock::new();
    QUEUES.get_or_init(Default::default)
}

/// One reserved place; it leaves every queue when the last handle to it is dropped.
struct Place {
    id: u64,
    /// Sorted and without duplicates.
    keys: Vec<PathBuf>,
    notify: Arc<Notify>,
}

impl Place {
    fn reserve(keys: impl IntoIterator<Item = PathBuf>) -> Arc<Place> {
        let mut keys: Vec<PathBuf> = keys.into_iter().collect();
        keys.sort();
        keys.dedup();
        let notify = Arc::new(Notify::new());
        let mut queues = lock(queues());
        let id = queues.next_id;
        queues.next_id += 1;
        for key in &keys {
            queues.by_key.entry(key.clone()).or_default().push_back(Waiter {
                id,
                notify: notify.clone(),
            });
        }
        Arc::new(Place { id, keys, notify })
    }

    fn is_first(&self) -> bool {
        let queues = lock(queues());
        self.keys.iter().all(|key| {
            queues
                .by_key
                .get(key)
                .and_then(VecDeque::front)
                .is_some_and(|w| w.id == self.id)
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut queues = lock(queues());
        for key in &self.keys {
            let Some(queue) = queues.by_key.get_mut(key) else {
                continue;
            };
            let was_first = queue.front().is_some_and(|w| w.id == self.id);
            queue.retain(|w| w.id != self.id);
            match queue.front() {
                None => {
                    queues.by_key.remove(key);
                }
                // The next ticket may now be first everywhere; it checks again when woken.
                Some(next) if was_first => next.notify.notify_one(),
                Some(_) => {}
            }
        }
    }
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Place")
            .field("id", &self.id)
            .field("keys", &self.keys)
            .finish()
    }
}

/// A place in the queues of some files, reserved but not yet holding them.
///
/// Dropping it gives the place up: the tickets behind it move on.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use pi_agent_core::{MutationTicket, mutation_key};
///
/// let (a, b) = (mutation_key(&std::env::temp_dir().join("a.txt")), mutation_key(&std::env::temp_dir().join("b.txt")));
/// let both = MutationTicket::reserve([a.clone(), b.clone()]);
/// let only_b = MutationTicket::reserve([b.clone()]);
/// let only_a = MutationTicket::reserve([a]);
/// // `only_b` waits for `both`, which holds b; so does `only_a`.
/// assert!(both.is_first() && !only_b.is_first() && !only_a.is_first());
/// drop(both);
/// assert!(only_b.is_first() && only_a.is_first());
/// # });
/// ```
#[derive(Debug)]
pub struct MutationTicket {
    place: Arc<Place>,
}

impl MutationTicket {
    /// Queues a ticket behind every earlier ticket of any of `keys` — all of them in one step, so
    /// that a ticket reserved later is behind this one in every queue they share. It does not
    /// wait. `keys` must be queue keys ([`mutation_key`]); duplicates count once, and a ticket
    /// without keys is first at once.
    pub fn reserve(keys: impl IntoIterator<Item = PathBuf>) -> Self {
        MutationTicket {
            place: Place::reserve(keys),
        }
    }

    /// The files' queue keys, sorted.
    pub fn keys(&self) -> &[PathBuf] {
        &self.place.keys
    }

    /// Whether the ticket is first in the queue of each of its files (no earlier ticket is left).
    pub fn is_first(&self) -> bool {
        self.place.is_first()
    }

    /// Waits until the ticket is first in the queue of each of its files and returns the guard
    /// that holds them. Cancel-safe: dropping the future gives the place up.
    pub async fn acquire(self) -> MutationGuard {
        loop {
            if self.place.is_first() {
                return MutationGuard { place: self.place };
            }
            // A release wakes the ticket that became first in that queue; a wake-up that
            // comes before this wait is kept by `Notify` as a permit.
            self.place.notify.notified().await;
        }
    }
}

/// Holds some files: no other ticket of them gets its turn until it is dropped.
#[derive(Debug)]
pub struct MutationGuard {
    place: Arc<Place>,
}

tokio::task_local! {
    /// The places the current task holds (its own and those it was given).
    static HELD: Arc<Vec<Arc<Place>>>;
}

fn held_places() -> Arc<Vec<Arc<Place>>> {
    HELD.try_with(Arc::clone).unwrap_or_default()
}

fn held_by_task(key: &Path) -> bool {
    HELD.try_with(|held| {
        held.iter()
            .any(|place| place.keys.binary_search_by(|k| k.as_path().cmp(key)).is_ok())
    })
    .unwrap_or(false)
}

impl MutationGuard {
    /// The files' queue keys, sorted.
    pub fn keys(&self) -> &[PathBuf] {
        &self.place.keys
    }

    /// Runs `operation` holding the files, then releases them: inside it, [`lock_files`] of these
    /// files returns at once. The agent loop runs every call that reserved files this way.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use pi_agent_core::{MutationTicket, lock_files, mutation_key};
    ///
    /// let path = std::env::temp_dir().join("held.txt");
    /// let guard = MutationTicket::reserve([mutation_key(&path)]).acquire().await;
    /// let inner = guard.hold(async { lock_files(vec![path.clone()]).await.is_none() }).await;
    /// assert!(inner, "held by the task: no second place");
    /// assert!(MutationTicket::reserve([mutation_key(&path)]).is_first(), "released after the hold");
    /// # });
    /// ```
    pub async fn hold<T>(self, operation: impl Future<Output = T>) -> T {
        let mut places = (*held_places()).clone();
        places.push(self.place.clone());
        HELD.scope(Arc::new(places), operation).await
    }
}

/// The files the current task holds, kept to hold them again in other work done for the same
/// call ([`HeldMutations::scope`]) — e.g. a request a tool process sends while its call runs.
/// The files stay held while a `HeldMutations` of them lives.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use pi_agent_core::{HeldMutations, MutationTicket, lock_files, mutation_key};
///
/// let path = std::env::temp_dir().join("held-later.txt");
/// let guard = MutationTicket::reserve([mutation_key(&path)]).acquire().await;
/// let held = guard.hold(async { HeldMutations::current() }).await;
/// // Later, elsewhere: the file is still held for the call.
/// assert!(held.scope(lock_files(vec![path])).await.is_none());
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct HeldMutations {
    places: Arc<Vec<Arc<Place>>>,
}

impl HeldMutations {
    /// The files the current task holds (none outside a [`MutationGuard::hold`]).
    pub fn current() -> Self {
        HeldMutations { places: held_places() }
    }

    /// Whether no file is held.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// `operation` holding these files (and those the current task holds already).
    pub async fn scope<T>(&self, operation: impl Future<Output = T>) -> T {
        let mut places = (*held_places()).clone();
        places.extend(self.places.iter().cloned());
        HELD.scope(Arc::new(places), operation).await
    }
}

/// `operation` holding the files the current task holds — for work a call hands to another task
/// (`tokio::spawn(carry_held_mutations(work))`), so that its [`lock_files`] of those files does not
/// wait for the call that waits for it. The files stay held until both are done.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use pi_agent_core::{MutationTicket, carry_held_mutations, lock_files, mutation_key};
///
/// let path = std::env::temp_dir().join("carried.txt");
/// let guard = MutationTicket::reserve([mutation_key(&path)]).acquire().await;
/// guard
///     .hold(async {
///         let task = tokio::spawn(carry_held_mutations(async move { drop(lock_files(vec![path]).await) }));
///         task.await.unwrap();
///     })
///     .await;
/// # });
/// ```
pub fn carry_held_mutations<F: Future>(operation: F) -> impl Future<Output = F::Output> {
    HELD.scope(held_places(), operation)
}

/// Waits for the turn of `paths` (all of them, taken in one step) and returns the guard holding
/// them, or `None` when the current task holds them all already. Files the task holds are left
/// out; the others queue behind every ticket reserved before. The keys are computed on the
/// blocking pool ([`mutation_key`]).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir();
/// let guard = pi_agent_core::lock_files(vec![dir.join("x.txt"), dir.join("y.txt")]).await.unwrap();
/// assert_eq!(guard.keys().len(), 2);
/// // Read, change and write both files here; dropping the guard lets the next one in.
/// drop(guard);
/// # });
/// ```
pub async fn lock_files(paths: Vec<PathBuf>) -> Option<MutationGuard> {
    let keys = mutation_keys(paths).await;
    let missing: Vec<PathBuf> = keys.into_iter().filter(|key| !held_by_task(key)).collect();
    if missing.is_empty() {
        return None;
    }
    Some(MutationTicket::reserve(missing).acquire().await)
}

/// The queue keys of `paths` ([`mutation_key`]), computed on the blocking pool.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let path = std::env::temp_dir().join("k.txt");
/// let keys = pi_agent_core::mutation_keys(vec![path.clone()]).await;
/// assert_eq!(keys, [pi_agent_core::mutation_key(&path)]);
/// # });
/// ```
pub async fn mutation_keys(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if paths.is_empty() {
        return paths;
    }
    let fallback = paths.clone();
    tokio::task::spawn_blocking(move || paths.iter().map(|p| mutation_key(p)).collect())
        .await
        .unwrap_or(fallback)
}

/// The key a file is queued under (blocking: it reads the file system): its real path, or for a
/// file that does not exist yet the real path of its nearest existing ancestor joined with the
/// rest (`.` and `..` in the rest resolved lexically), so that symlinked names of one file share
/// one queue.
///
/// ```
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// assert_eq!(pi_agent_core::mutation_key(&dir.join("new/../made.txt")), dir.join("made.txt"));
/// ```
pub fn mutation_key(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut missing = Vec::new();
    let mut current = path;
    while let Some(parent) = current.parent() {
        if let Some(name) = current.file_name() {
            missing.push(name.to_owned());
        } else if let Some(Component::ParentDir) = current.components().next_back() {
            missing.push("..".into());
        }
        if let Ok(real) = std::fs::canonicalize(parent) {
            let mut key = real;
            for part in missing.iter().rev() {
                if part == ".." {
                    key.pop();
                } else {
                    key.push(part);
                }
            }
            return key;
        }
        current = parent;
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn key(name: &str) -> PathBuf {
        PathBuf::from(format!("/mutation-test/{name}"))
    }

    #[tokio::test(start_paused = true)]
    async fn same_file_operations_never_overlap() {
        let active = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..10 {
            let active = active.clone();
            tasks.push(tokio::spawn(async move {
                let _guard = MutationTicket::reserve([key("overlap")]).acquire().await;
                assert_eq!(active.fetch_add(1, Ordering::SeqCst), 0);
                tokio::time::sleep(Duration::from_millis(5)).await;
                active.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert!(!lock(queues()).by_key.contains_key(&key("overlap")));
    }

    #[tokio::test(start_paused = true)]
    async fn tickets_run_in_reservation_order_whatever_the_scheduling() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let tickets: Vec<MutationTicket> = (0..6).map(|_| MutationTicket::reserve([key("order")])).collect();
        let mut tasks = Vec::new();
        // Started in reverse, each after a different delay.
        for (index, ticket) in tickets.into_iter().enumerate().rev() {
            let order = order.clone();
            tasks.push(tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10 - index as u64)).await;
                let _guard = ticket.acquire().await;
                lock(&order).push(index);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(*lock(&order), [0, 1, 2, 3, 4, 5]);
    }

    #[tokio::test(start_paused = true)]
    async fn overlapping_sets_never_deadlock() {
        // a+b, then b+c, then c+a, then a: each shares files with the others.
        let sets = [vec!["a", "b"], vec!["b", "c"], vec!["c", "a"], vec!["a"]];
        let order = Arc::new(Mutex::new(Vec::new()));
        let tickets: Vec<MutationTicket> = sets
            .iter()
            .map(|set| MutationTicket::reserve(set.iter().map(|n| key(&format!("set-{n}")))))
            .collect();
        let mut tasks = Vec::new();
        for (index, ticket) in tickets.into_iter().enumerate().rev() {
            let order = order.clone();
            tasks.push(tokio::spawn(async move {
                let _guard = ticket.acquire().await;
                tokio::time::sleep(Duration::from_millis(1)).await;
                lock(&order).push(index);
            }));
        }
        for task in tasks {
            tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .unwrap()
                .unwrap();
        }
        assert_eq!(*lock(&order), [0, 1, 2, 3]);
    }

    #[tokio::test]
    async fn dropping_a_ticket_or_a_waiting_acquire_gives_the_place_up() {
        let first = MutationTicket::reserve([key("drop")]);
        let second = MutationTicket::reserve([key("drop")]);
        let third = MutationTicket::reserve([key("drop")]);
        // The second waits, then its future is dropped (a cancelled call).
        let waiting = tokio::time::timeout(Duration::from_millis(10), second.acquire()).await;
        assert!(waiting.is_err());
        drop(first);
        assert!(third.is_first());
        drop(third);
        assert!(!lock(queues()).by_key.contains_key(&key("drop")));
    }

    #[tokio::test]
    async fn a_panic_releases_the_guard() {
        let guard = MutationTicket::reserve([key("panic")]).acquire().await;
        let next = MutationTicket::reserve([key("panic")]);
        let task = tokio::spawn(guard.hold(async { panic!("tool panicked") }));
        assert!(task.await.is_err());
        assert!(next.is_first());
    }

    #[tokio::test]
    async fn held_files_are_not_locked_twice_and_others_are() {
        let guard = MutationTicket::reserve([key("held")]).acquire().await;
        guard
            .hold(async {
                // The held file: no second place (it would wait for itself).
                assert!(lock_files(vec![key("held")]).await.is_none());
                // A spawned task carrying the hold also does not wait.
                let carried = tokio::spawn(carry_held_mutations(async {
                    lock_files(vec![key("held")]).await.is_none()
                }));
                assert!(carried.await.unwrap());
                // Another file is locked as usual, only that one.
                let other = lock_files(vec![key("held"), key("other")]).await.unwrap();
                assert_eq!(other.keys(), [key("other")]);
            })
            .await;
        assert!(MutationTicket::reserve([key("held")]).is_first());
    }

    #[test]
    fn new_files_key_under_the_real_parent() {
        let dir = std::env::temp_dir().join(format!("pi-mutation-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let real = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(mutation_key(&dir.join("a/b.txt")), real.join("a/b.txt"));
        assert_eq!(mutation_key(&dir.join("a/../c.txt")), real.join("c.txt"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
