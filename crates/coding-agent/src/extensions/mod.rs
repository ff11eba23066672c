//! pi 0.73's extensions.
//!
//! [`events`]: the lifecycle events extensions listen to, where the session and the app emit them
//! and how their results are applied; the seam ([`events::ExtensionRunner`]) the extension
//! processes plug into.

pub mod events;

pub use events::{EventListener, ExtensionError, ExtensionRunner};
