//! What a typed message becomes before the model sees it: `/skill:name args` and `/template args`
//! expanded with the session's [`Resources`] (pi expands in `prompt`, `steer` and `followUp`).

use std::sync::Arc;

use pi_agent_core::{AgentMessage, ContentBlock, UserContent};

use super::{AgentSession, lock};
use crate::resources::Resources;

impl AgentSession {
    /// Installs the skills and prompt templates messages are expanded with (the builder does it).
    pub fn set_resources(&self, resources: Arc<Resources>) {
        *lock(&self.inner.resources) = resources;
    }

    /// The skills and prompt templates of the session.
    pub fn resources(&self) -> Arc<Resources> {
        lock(&self.inner.resources).clone()
    }

    /// `message` with its text expanded when it is a user message starting with `/skill:name`
    /// or `/template` (the first text block; images stay). A skill file that cannot be read
    /// leaves the text as typed, as in pi. The skill's file is read off the runtime.
    pub async fn expand_message(&self, message: AgentMessage) -> AgentMessage {
        let AgentMessage::User(mut user) = message else {
            return message;
        };
        let text = match &user.content {
            UserContent::Text(text) => Some(text.clone()),
            UserContent::Blocks(blocks) => blocks.iter().find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            }),
        };
        let Some(text) = text.filter(|t| t.starts_with('/')) else {
            return AgentMessage::User(user);
        };
        let resources = self.resources();
        let typed = text.clone();
        let expanded = tokio::task::spawn_blocking(move || resources.expand(&text))
            .await
            .ok()
            .and_then(|result| {
                result
                    .inspect_err(|error| tracing::warn!("skill expansion failed: {error}"))
                    .ok()
            })
            .unwrap_or(typed);
        match &mut user.content {
            UserContent::Text(text) => *text = expanded,
            UserContent::Blocks(blocks) => {
                if let Some(ContentBlock::Text(t)) = blocks.iter_mut().find(|b| matches!(b, ContentBlock::Text(_))) {
                    t.text = expanded;
                }
            }
        }
        AgentMessage::User(user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{PromptTemplate, SourceInfo};
    use crate::session::SessionOptions;
    use pi_agent_core::faux::FauxModel;

    #[tokio::test]
    async fn user_messages_expand_and_others_stay() {
        let faux = FauxModel::new();
        let session =
            AgentSession::new(SessionOptions::new(std::env::temp_dir(), faux.model()).stream_fn(Arc::new(faux)))
                .unwrap();
        session.set_resources(Arc::new(Resources {
            prompts: vec![PromptTemplate {
                name: "hi".into(),
                description: String::new(),
                argument_hint: None,
                content: "Say hi to $1.".into(),
                file_path: "/t/hi.md".into(),
                source_info: SourceInfo::path(std::path::Path::new("/t/hi.md")),
            }],
            ..Resources::default()
        }));
        let text = |m: &AgentMessage| match m {
            AgentMessage::User(u) => u.content.text(),
            _ => String::new(),
        };
        assert_eq!(
            text(&session.expand_message(AgentMessage::user("/hi Ada")).await),
            "Say hi to Ada."
        );
        assert_eq!(
            text(&session.expand_message(AgentMessage::user("/other x")).await),
            "/other x"
        );
        assert_eq!(
            text(&session.expand_message(AgentMessage::user(" /hi Ada")).await),
            " /hi Ada"
        );
    }
}
