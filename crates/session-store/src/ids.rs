//! Session ids (UUID v4) and entry ids (8 lowercase hex characters, unique in their file).

/// A new session id: a random UUID v4, hyphenated, lowercase.
pub(crate) fn new_session_id() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// A new entry id that `taken` does not reject: the first 8 hex digits of a random UUID (as pi
/// does), or a whole UUID after 100 collisions.
pub(crate) fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        let id = &uuid[..8];
        if !taken(id) {
            return id.to_owned();
        }
    }
    new_session_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_pi_shapes() {
        let id = new_entry_id(|_| false);
        assert!(id.len() == 8 && id.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')));
        let session = new_session_id();
        assert_eq!(session.len(), 36);
        assert_eq!(session.as_bytes()[14], b'4');
        // Everything taken: falls back to a whole UUID.
        assert_eq!(new_entry_id(|_| true).len(), 36);
    }
}
