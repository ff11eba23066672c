//! What the editor remembers about edits: the kill ring (Ctrl+Y, Alt+Y), the undo stack's
//! coalescing, and large pastes hidden behind pi's `[paste #1 +60 lines]` markers.

/// What the last key did, for kills that accumulate, yank-pop and undo coalescing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LastAction {
    /// Typed a character (a word and the space before it are undone at once).
    TypeWord,
    /// Deleted into the kill ring (the next kill joins the same entry).
    Kill,
    /// Inserted the kill ring's newest entry at `start..end` (Alt+Y may replace it).
    Yank { start: usize, end: usize },
}

/// Deleted texts, newest last (pi's kill ring).
#[derive(Debug, Clone, Default)]
pub(super) struct KillRing {
    ring: Vec<String>,
}

impl KillRing {
    /// Adds `text`, or joins it to the newest entry when `accumulate` (before it for a backward
    /// deletion, after it for a forward one).
    pub(super) fn push(&mut self, text: &str, backward: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        match self.ring.last_mut() {
            Some(last) if accumulate => {
                if backward {
                    last.insert_str(0, text);
                } else {
                    last.push_str(text);
                }
            }
            _ => self.ring.push(text.to_owned()),
        }
    }

    /// The newest entry.
    pub(super) fn peek(&self) -> Option<&str> {
        self.ring.last().map(String::as_str)
    }

    /// Moves the newest entry to the oldest place (yank-pop).
    pub(super) fn rotate(&mut self) {
        if let Some(last) = self.ring.pop() {
            self.ring.insert(0, last);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ring.len()
    }
}

/// Large pastes, by number, shown in the text as markers.
#[derive(Debug, Clone, Default)]
pub(super) struct Pastes {
    counter: usize,
    stored: Vec<(usize, String)>,
}

impl Pastes {
    /// A paste of more lines than this is hidden behind a marker (pi's limit)…
    const MAX_LINES: usize = 10;
    /// …and so is one of more characters than this.
    const MAX_CHARS: usize = 1000;

    /// The marker standing for `text` if it is large enough to hide (it is then remembered):
    /// `[paste #1 +60 lines]`, or `[paste #2 1234 chars]` for few long lines.
    pub(super) fn marker_for(&mut self, text: &str) -> Option<String> {
        let lines = text.split('\n').count();
        let chars = text.chars().count();
        if lines <= Self::MAX_LINES && chars <= Self::MAX_CHARS {
            return None;
        }
        self.counter += 1;
        let id = self.counter;
        self.stored.push((id, text.to_owned()));
        Some(if lines > Self::MAX_LINES {
            format!("[paste #{id} +{lines} lines]")
        } else {
            format!("[paste #{id} {chars} chars]")
        })
    }

    /// Forgets every paste (after a submit).
    pub(super) fn clear(&mut self) {
        self.counter = 0;
        self.stored.clear();
    }

    /// `text` with every marker of a remembered paste replaced by what was pasted.
    pub(super) fn expand(&self, text: &str) -> String {
        if self.stored.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("[paste #") {
            out.push_str(&rest[..at]);
            match self.marker_at(&rest[at..]) {
                Some((len, content)) => {
                    out.push_str(content);
                    rest = &rest[at + len..];
                }
                None => {
                    out.push('[');
                    rest = &rest[at + 1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// The byte ranges of the markers of remembered pastes in `text`.
    pub(super) fn markers(&self, text: &str) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        if self.stored.is_empty() {
            return found;
        }
        let mut from = 0;
        while let Some(at) = text[from..].find("[paste #") {
            let start = from + at;
            match self.marker_at(&text[start..]) {
                Some((len, _)) => {
                    found.push((start, start + len));
                    from = start + len;
                }
                None => from = start + 1,
            }
        }
        found
    }

    /// A marker at the start of `s`: its length and the paste it stands for.
    fn marker_at<'a>(&'a self, s: &str) -> Option<(usize, &'a str)> {
        let rest = s.strip_prefix("[paste #")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let id: usize = rest[..digits].parse().ok()?;
        let content = self.stored.iter().find(|(i, _)| *i == id).map(|(_, c)| c.as_str())?;
        let after = &rest[digits..];
        let tail = if after.starts_with(']') {
            1
        } else {
            let count_then = |s: &str, suffix: &str| -> Option<usize> {
                let n = s.bytes().take_while(u8::is_ascii_digit).count();
                (n > 0 && s[n..].starts_with(suffix)).then_some(n + suffix.len())
            };
            if let Some(lines) = after.strip_prefix(" +") {
                2 + count_then(lines, " lines]")?
            } else {
                1 + count_then(after.strip_prefix(' ')?, " chars]")?
            }
        };
        Some(("[paste #".len() + digits + tail, content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_pastes_stay_and_large_ones_get_pis_markers() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.marker_for(&"x\n".repeat(9)), None); // 10 lines
        let sixty = vec!["line"; 60].join("\n");
        assert_eq!(pastes.marker_for(&sixty).as_deref(), Some("[paste #1 +60 lines]"));
        let long = "y".repeat(1001);
        assert_eq!(pastes.marker_for(&long).as_deref(), Some("[paste #2 1001 chars]"));
        assert_eq!(pastes.marker_for(&"z".repeat(1000)), None);
        let text = "see [paste #1 +60 lines] and [paste #2 1001 chars], [paste #2], [paste #3 +1 lines]";
        assert_eq!(
            pastes.expand(text),
            format!("see {sixty} and {long}, {long}, [paste #3 +1 lines]")
        );
        assert_eq!(pastes.markers("a[paste #1 +60 lines]"), vec![(1, 21)]);
        pastes.clear();
        assert_eq!(pastes.expand("[paste #1 +60 lines]"), "[paste #1 +60 lines]");
    }

    #[test]
    fn kills_accumulate_and_rotate() {
        let mut ring = KillRing::default();
        ring.push("world", true, false);
        ring.push("hello ", true, true);
        assert_eq!(ring.peek(), Some("hello world"));
        ring.push("next", false, false);
        ring.push("!", false, true);
        assert_eq!(ring.peek(), Some("next!"));
        ring.rotate();
        assert_eq!(ring.peek(), Some("hello world"));
        assert_eq!(ring.len(), 2);
    }
}
