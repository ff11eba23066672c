//! The system clipboard of the interactive mode: `/copy` writes the last answer to it
//! ([`copy`](self::copy)), Ctrl+V reads an image from it ([`Clipboard`]).

mod copy;
mod image;

pub use copy::Environment;
pub(crate) use copy::copy;
pub use image::{Clipboard, ClipboardImage};
