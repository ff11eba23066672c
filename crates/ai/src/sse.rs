//! An incremental Server-Sent Events parser.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// An incremental Server-Sent Events parser.
///
/// Feed it the response body in whatever chunks the network delivers; it returns each complete
/// event. Lines may end in `\n`, `\r\n` or `\r`, a chunk may split a line or a UTF-8 character,
/// `:` lines are comments, several `data:` lines join with `\n`, and a blank line dispatches the
/// event (SSE as the WHATWG spec describes it).
///
/// ```
/// use pi_ai::SseParser;
///
/// let mut parser = SseParser::default();
/// assert!(parser.feed(b"event: ping\nda").is_empty());
/// let events = parser.feed(b"ta: {\"a\":1}\n\n");
/// assert_eq!(events[0].event.as_deref(), Some("ping"));
/// assert_eq!(events[0].data, "{\"a\":1}");
/// ```
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    skip_lf: bool,
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
    has_fields: bool,
}

impl SseParser {
    /// Feeds a chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in chunk {
            if self.skip_lf {
                self.skip_lf = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' | b'\r' => {
                    self.skip_lf = byte == b'\r';
                    let line = std::mem::take(&mut self.buffer);
                    if let Some(event) = self.line(&String::from_utf8_lossy(&line)) {
                        events.push(event);
                    }
                }
                _ => self.buffer.push(byte),
            }
        }
        events
    }

    /// Ends the stream, dispatching an event left without its blank line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buffer.is_empty() {
            let line = std::mem::take(&mut self.buffer);
            let text = String::from_utf8_lossy(&line).into_owned();
            if let Some(event) = self.line(&text) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    /// Heap bytes the parser holds between calls: the unfinished line and the fields of the
    /// event being built (for the fuzz target's memory bound).
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        self.buffer.capacity()
            + self.event.as_ref().map_or(0, String::capacity)
            + self.data.capacity() * std::mem::size_of::<String>()
            + self.data.iter().map(String::capacity).sum::<usize>()
            + self.id.as_ref().map_or(0, String::capacity)
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            "id" => self.id = Some(value.to_owned()),
            _ => return None,
        }
        self.has_fields = true;
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        if !self.has_fields {
            return None;
        }
        self.has_fields = false;
        let event = SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data).join("\n"),
            id: self.id.take(),
        };
        Some(event)
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut events: Vec<SseEvent> = chunks.iter().flat_map(|c| parser.feed(c)).collect();
        events.extend(parser.finish());
        events
    }

    #[test]
    fn handles_line_endings_comments_and_multiline_data() {
        let events = parse_all(&[b": hi\r\ndata: a\r\ndata: b\r\n\r\nevent: x\rdata:c\r\r"]);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data, "a\nb");
        assert_eq!(events[1].event.as_deref(), Some("x"));
        assert_eq!(events[1].data, "c");
    }

    #[test]
    fn finish_flushes_an_unterminated_event() {
        let events = parse_all(&[b"data: [DONE]"]);
        assert_eq!(events[0].data, "[DONE]");
    }

    #[test]
    fn utf8_split_across_chunks() {
        let text = "data: é\n\n".as_bytes();
        let events = parse_all(&[&text[..7], &text[7..]]);
        assert_eq!(events[0].data, "é");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn chunking_never_changes_the_events(
            datas in prop::collection::vec("[a-z{}\":, é]{0,20}", 1..6),
            split in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let body: String = datas.iter().map(|d| format!("event: e\ndata: {d}\n\n")).collect();
            let bytes = body.as_bytes();
            let mut points: Vec<usize> = split.iter().map(|i| i.index(bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for p in points { chunks.push(&bytes[start..p]); start = p; }
            chunks.push(&bytes[start..]);
            let events = parse_all(&chunks);
            prop_assert_eq!(events.len(), datas.len());
            for (event, data) in events.iter().zip(&datas) {
                prop_assert_eq!(&event.data, data);
            }
        }
    }
}
