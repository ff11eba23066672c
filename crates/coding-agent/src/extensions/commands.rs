//! Extension commands: their invocation names as pi 0.73.1 gives them (a name two extensions
//! register becomes `name:1`, `name:2`, … in load order) and how a prompt names one
//! (`/name args`).

use super::hub::Hub;

/// A command as the user invokes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// What follows the `/` (`hello`, or `hello:2` when two extensions register `hello`).
    pub invocation_name: String,
    /// The name the extension registered (what its process is sent).
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// The extension's path.
    pub path: String,
    /// Whether it completes its arguments.
    pub has_completions: bool,
    /// The process hosting it.
    pub(crate) process: usize,
}

/// Every extension command, in load order, with pi's invocation names.
pub(crate) fn resolve(hub: &Hub) -> Vec<Command> {
    let registered: Vec<Command> = hub
        .extensions()
        .into_iter()
        .flat_map(|hosted| {
            let path = hosted.registration.path.clone();
            let process = hosted.process;
            hosted.registration.commands.into_iter().map(move |command| Command {
                invocation_name: String::new(),
                name: command.name,
                description: command.description,
                path: path.clone(),
                has_completions: command.has_completions,
                process,
            })
        })
        .collect();
    invocation_names(registered)
}

/// pi's rule: a name registered once keeps it; one registered `n` times becomes `name:1` …
/// `name:n`, skipping a suffix that is taken already.
fn invocation_names(mut commands: Vec<Command>) -> Vec<Command> {
    let count = |name: &str, commands: &[Command]| commands.iter().filter(|c| c.name == name).count();
    let counts: Vec<usize> = commands.iter().map(|c| count(&c.name, &commands)).collect();
    let mut taken: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (command, total) in commands.iter_mut().zip(counts) {
        let occurrence = seen.entry(command.name.clone()).or_insert(0);
        *occurrence += 1;
        let mut name = if total > 1 {
            format!("{}:{}", command.name, occurrence)
        } else {
            command.name.clone()
        };
        let mut suffix = *occurrence;
        while taken.contains(&name) {
            suffix += 1;
            name = format!("{}:{}", command.name, suffix);
        }
        taken.push(name.clone());
        command.invocation_name = name;
    }
    commands
}

/// `/name args` → (`name`, `args`): the name up to the first space, the rest with its leading
/// space removed. `None` for text that does not start with `/`.
pub fn split_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = match rest.find(' ') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, ""),
    };
    (!name.is_empty()).then_some((name, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(name: &str) -> Command {
        Command {
            invocation_name: String::new(),
            name: name.into(),
            description: None,
            path: String::new(),
            has_completions: false,
            process: 0,
        }
    }

    #[test]
    fn a_name_registered_twice_gets_pis_numbered_names() {
        let names: Vec<String> = invocation_names(vec![
            command("hello"),
            command("boom"),
            command("hello"),
            command("hello:2"),
        ])
        .into_iter()
        .map(|c| c.invocation_name)
        .collect();
        // pi's loop: the literal `hello:2` finds its name taken and counts on from its occurrence.
        assert_eq!(names, ["hello:1", "boom", "hello:2", "hello:2:2"]);
    }

    #[test]
    fn commands_split_at_the_first_space() {
        assert_eq!(split_command("/hello big world"), Some(("hello", "big world")));
        assert_eq!(split_command("/hello"), Some(("hello", "")));
        assert_eq!(split_command("hello"), None);
        assert_eq!(split_command("/"), None);
    }
}
