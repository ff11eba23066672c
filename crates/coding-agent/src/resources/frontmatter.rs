//! The YAML front matter of skills and prompt templates, split off the Markdown as pi does: the
//! text must start with `---`; the YAML runs to the next line starting with `---`; the body after
//! it is trimmed. Line endings are normalized to `\n` first.

use yaml_rust2::{Yaml, YamlLoader};

/// The front matter's fields and the body after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Frontmatter {
    /// The top-level mapping (empty without front matter).
    pub(crate) fields: Vec<(String, Yaml)>,
    /// The Markdown after the front matter (trimmed), or the whole text when there is none.
    pub(crate) body: String,
}

impl Frontmatter {
    /// A string field; numbers and booleans as YAML writes them (a name `2024` is text to pi's
    /// template strings too).
    pub(crate) fn string(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Yaml::String(text) | Yaml::Real(text) => Some(text.clone()),
            Yaml::Integer(number) => Some(number.to_string()),
            Yaml::Boolean(flag) => Some(flag.to_string()),
            _ => None,
        }
    }

    /// Whether the field is the boolean `true` (pi compares with `=== true`).
    pub(crate) fn is_true(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Yaml::Boolean(true)))
    }

    fn get(&self, key: &str) -> Option<&Yaml> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The YAML did not parse (pi reports the parser's message as the skill's warning).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FrontmatterError(pub(crate) String);

/// Splits `content` into front matter and body.
pub(crate) fn parse(content: &str) -> Result<Frontmatter, FrontmatterError> {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return Ok(Frontmatter {
            fields: Vec::new(),
            body: normalized,
        });
    }
    let Some(end) = normalized[3..].find("\n---").map(|i| i + 3) else {
        return Ok(Frontmatter {
            fields: Vec::new(),
            body: normalized,
        });
    };
    let yaml = normalized.get(4..end).unwrap_or("");
    let body = normalized[end + 4..].trim().to_owned();
    if yaml.is_empty() {
        return Ok(Frontmatter {
            fields: Vec::new(),
            body,
        });
    }
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| FrontmatterError(e.to_string()))?;
    let fields = match docs.into_iter().next() {
        Some(Yaml::Hash(hash)) => hash
            .into_iter()
            .filter_map(|(k, v)| match k {
                Yaml::String(key) => Some((key, v)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Frontmatter { fields, body })
}

/// The body without its front matter (for `/skill:name`); the whole text when the YAML is bad.
pub(crate) fn strip(content: &str) -> String {
    match parse(content) {
        Ok(parsed) => parsed.body,
        Err(_) => content.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_trimmed_body() {
        let parsed =
            parse("---\r\nname: a-b\ndescription: \"Does: things\"\ndisable-model-invocation: true\n---\n\n# Body\n\n")
                .unwrap();
        assert_eq!(parsed.string("name").as_deref(), Some("a-b"));
        assert_eq!(parsed.string("description").as_deref(), Some("Does: things"));
        assert!(parsed.is_true("disable-model-invocation"));
        assert_eq!(parsed.body, "# Body");
    }

    #[test]
    fn without_front_matter_the_body_is_the_whole_text_untrimmed() {
        assert_eq!(parse("\nHello\n").unwrap().body, "\nHello\n");
        assert_eq!(parse("---\nno end").unwrap().body, "---\nno end");
        assert!(parse("---\nno end").unwrap().fields.is_empty());
    }

    #[test]
    fn folded_and_numeric_values() {
        let parsed = parse("---\ndescription: >\n  one\n  two\nversion: 2\nflag: \"true\"\n---\nx").unwrap();
        assert_eq!(parsed.string("description").as_deref(), Some("one two\n"));
        assert_eq!(parsed.string("version").as_deref(), Some("2"));
        assert!(!parsed.is_true("flag"));
    }

    #[test]
    fn bad_yaml_is_an_error() {
        assert!(parse("---\nname: [unclosed\n---\nbody").is_err());
        assert_eq!(
            strip("---\nname: [unclosed\n---\nbody"),
            "---\nname: [unclosed\n---\nbody"
        );
    }
}
