//! Pins what the model sees of every built-in tool — name, description and parameter schema —
//! to pi's text, and checks the registry's default and full tool sets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_tools::{ALL_TOOLS, DEFAULT_TOOLS, ToolEnv, create_tool, create_tools};

fn model_view(name: &str) -> String {
    let tool = create_tool(name, &ToolEnv::new("/work")).unwrap();
    format!(
        "name: {}\nlabel: {}\ndescription: {}\nexecution mode: {:?}\nparameters:\n{}\n",
        tool.name(),
        tool.label(),
        tool.description(),
        tool.execution_mode(),
        serde_json::to_string_pretty(tool.parameters().schema()).unwrap()
    )
}

#[test]
fn read_schema() {
    insta::assert_snapshot!("schema_read", model_view("read"));
}

#[test]
fn bash_schema() {
    insta::assert_snapshot!("schema_bash", model_view("bash"));
}

#[test]
fn edit_schema() {
    insta::assert_snapshot!("schema_edit", model_view("edit"));
}

#[test]
fn write_schema() {
    insta::assert_snapshot!("schema_write", model_view("write"));
}

#[test]
fn grep_schema() {
    insta::assert_snapshot!("schema_grep", model_view("grep"));
}

#[test]
fn find_schema() {
    insta::assert_snapshot!("schema_find", model_view("find"));
}

#[test]
fn ls_schema() {
    insta::assert_snapshot!("schema_ls", model_view("ls"));
}

/// What the model is sent of each built-in tool — name, description and parameter schema — is
/// pi 0.73.1's, byte for byte, key order included (pi's request body for `--tools
/// read,bash,edit,write,grep,find,ls`, see `crates/test-support/data/pi-0.73.1/README.md`).
#[test]
fn every_tool_is_pis_byte_for_byte() {
    let recorded: serde_json::Value =
        serde_json::from_str(include_str!("../../test-support/data/pi-0.73.1/tools-all.json")).unwrap();
    let pis = recorded["tools"].as_array().unwrap();
    assert_eq!(pis.len(), ALL_TOOLS.len());
    for (name, pi) in ALL_TOOLS.iter().zip(pis) {
        let tool = create_tool(name, &ToolEnv::new("/work")).unwrap();
        let pi = &pi["function"];
        assert_eq!(tool.name(), pi["name"], "{name}");
        assert_eq!(tool.description(), pi["description"], "{name}");
        assert_eq!(
            serde_json::to_string(tool.parameters().schema()).unwrap(),
            serde_json::to_string(&pi["parameters"]).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn default_and_full_sets() {
    let env = ToolEnv::new("/work");
    let names = |set: &[&str]| -> Vec<String> {
        create_tools(set.iter().copied(), &env)
            .unwrap()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    assert_eq!(names(&DEFAULT_TOOLS), ["read", "bash", "edit", "write"]);
    assert_eq!(
        names(&ALL_TOOLS),
        ["read", "bash", "edit", "write", "grep", "find", "ls"]
    );
    assert_eq!(
        create_tool("nope", &env).err().unwrap().to_string(),
        "Unknown tool: nope"
    );
}

#[test]
fn no_tool_sets_an_execution_mode() {
    for name in ALL_TOOLS {
        let tool = create_tool(name, &ToolEnv::new("/work")).unwrap();
        assert_eq!(tool.execution_mode(), None, "{name}");
    }
}

#[test]
fn the_crate_never_spawns_rg_fd_or_find() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for program in ["\"rg\"", "\"fd\"", "\"fdfind\"", "\"find\""] {
                let spawn = format!("Command::new({program}");
                assert!(!text.contains(&spawn), "{} spawns {program}", path.display());
            }
        }
    }
}
