//! `cargo xtask models`: generates pi-ai's model catalog (`crates/ai/src/registry/builtin/catalog.rs`)
//! from the published `@mariozechner/pi-ai` 0.73.1 package.
//!
//! ```text
//! cargo xtask models [--pi-ai <dir of @mariozechner/pi-ai>] [--node <node>] [--check]
//! ```
//!
//! Node imports the package's `dist/models.generated.js` (every provider and model) and
//! `dist/env-api-keys.js` (the variables each provider's key is read from: `findEnvKeys` asked
//! with an environment in which every variable is set) and prints them as JSON; [`generate`] turns
//! that JSON into Rust data. `--check` compares instead of writing. Any other pi-ai version is
//! refused, and so is a model field this generator does not know (it would be lost silently).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};
use pi_test_support::pi073;
use serde_json::{Map, Value};

/// The generated file, under the workspace root.
pub const OUTPUT: &str = "crates/ai/src/registry/builtin/catalog.rs";

/// The pi-ai version the catalog must come from.
pub const PI_AI_VERSION: &str = "0.73.1";

/// The fields of a pi-ai model this generator writes.
const MODEL_FIELDS: &[&str] = &[
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
    "thinkingLevelMap",
    "compat",
    "headers",
];

/// Prints `[{"name", "envKeys", "models"}]` in the package's order.
const DUMP_SCRIPT: &str = r#"
const { pathToFileURL } = await import("node:url");
const { join } = await import("node:path");
const dist = (file) => pathToFileURL(join(process.argv[1], "dist", file)).href;
const { MODELS } = await import(dist("models.generated.js"));
const { findEnvKeys } = await import(dist("env-api-keys.js"));
const real = process.env;
process.env = new Proxy({}, { get: (_, key) => (typeof key === "string" ? "set" : undefined) });
const providers = Object.entries(MODELS).map(([name, models]) => ({
  name,
  envKeys: findEnvKeys(name) ?? [],
  models: Object.values(models),
}));
process.env = real;
process.stdout.write(JSON.stringify(providers));
"#;

/// The parsed arguments.
#[derive(Debug, Default, PartialEq)]
pub struct Options {
    /// pi-ai's package directory.
    pub pi_ai: Option<PathBuf>,
    /// The Node binary.
    pub node: Option<PathBuf>,
    /// Compare with the committed file instead of writing it.
    pub check: bool,
}

/// Parses `models`'s arguments.
///
/// # Errors
/// On an unknown argument or a flag without its value.
pub fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().cloned().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--pi-ai" => options.pi_ai = Some(value()?.into()),
            "--node" => options.node = Some(value()?.into()),
            "--check" => options.check = true,
            other => {
                bail!("unknown argument {other:?} (usage: cargo xtask models [--pi-ai DIR] [--node NODE] [--check])")
            }
        }
    }
    Ok(options)
}

/// pi-ai's directory: `--pi-ai`, else `$PI_AI_DIR`, else the `pi-ai` installed with pi's
/// coding-agent package as `record-pi` and the tests find it (`pi_test_support::pi073`): beside it
/// (npm's flat `node_modules`), else below it.
fn pi_ai_dir(options: &Options) -> PathBuf {
    if let Some(dir) = &options.pi_ai {
        return dir.clone();
    }
    if let Some(dir) = std::env::var_os("PI_AI_DIR") {
        return dir.into();
    }
    let pi = pi073::package_dir(&pi073::process_env);
    let beside = pi.with_file_name("pi-ai");
    if beside.join("package.json").is_file() {
        beside
    } else {
        pi.join("node_modules/@mariozechner/pi-ai")
    }
}

/// Runs Node on the package and returns its JSON dump.
fn dump(node: &Path, dir: &Path) -> Result<String> {
    let output = Command::new(node)
        .arg("--input-type=module")
        .arg("-e")
        .arg(DUMP_SCRIPT)
        .arg(dir)
        .output()
        .with_context(|| format!("cannot run {}", node.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}): {}",
            node.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8(output.stdout).context("Node printed something that is not UTF-8")
}

/// `cargo xtask models`.
///
/// # Errors
/// When pi-ai is not found or not 0.73.1, Node fails, the package has a field this generator does
/// not know, or (with `--check`) the committed file differs.
pub fn run_command(root: &Path, args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let dir = pi_ai_dir(&options);
    let version = pi073::package_version(&dir)
        .context("where is pi-ai 0.73.1? pass --pi-ai <node_modules/@mariozechner/pi-ai> (or set PI_AI_DIR)")?;
    if version != PI_AI_VERSION {
        bail!(
            "{} is pi-ai {version}; the catalog comes from pi-ai {PI_AI_VERSION}",
            dir.display()
        );
    }
    let node = options.node.clone().unwrap_or_else(|| PathBuf::from("node"));
    let json = dump(&node, &dir)?;
    let text = generate(&json, &version)?;
    let path = root.join(OUTPUT);
    if options.check {
        let committed = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
        ensure!(
            committed == text,
            "{} differs from what pi-ai {version} gives: run `cargo xtask models`",
            path.display()
        );
        println!("{OUTPUT} is up to date with pi-ai {version}");
    } else {
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {OUTPUT} from pi-ai {version}");
    }
    Ok(())
}

/// The first lines of the generated file (`models::tests` checks the committed catalog has them).
pub fn header(version: &str) -> String {
    format!(
        "// Longer than 800 lines on purpose: generated data, one line per model.\n\
         // @generated by `cargo xtask models` from @mariozechner/pi-ai {version} (dist/models.generated.js,\n\
         // dist/env-api-keys.js). Do not edit by hand: run `cargo xtask models` again.\n"
    )
}

/// Rust data for the JSON that the dump script (`DUMP_SCRIPT`) prints.
///
/// # Errors
/// When the JSON does not have the expected shape or a model has an unknown field.
pub fn generate(json: &str, version: &str) -> Result<String> {
    let providers: Vec<Value> = serde_json::from_str(json).context("pi-ai's catalog is not JSON")?;
    let mut out = header(version);
    out.push_str(
        "\nuse super::types::{CatalogModel as M, CatalogProvider as P, TEXT, TEXT_IMAGE};\n\n\
         /// The pi-ai version this catalog was generated from.\n",
    );
    out.push_str(&format!("pub(super) const SOURCE_VERSION: &str = {version:?};\n\n"));
    out.push_str("/// pi-ai's providers and their models, in pi-ai's order.\npub(super) const PROVIDERS: &[P] = &[\n");
    for provider in &providers {
        let name = string(&provider["name"], "provider name")?;
        let models = provider["models"]
            .as_array()
            .with_context(|| format!("{name}: models is not an array"))?;
        let first = models.first().with_context(|| format!("{name} has no models"))?;
        let env_keys: Vec<String> = provider["envKeys"]
            .as_array()
            .with_context(|| format!("{name}: envKeys is not an array"))?
            .iter()
            .map(|key| string(key, "envKeys").map(|key| format!("{key:?}")))
            .collect::<Result<_>>()?;
        out.push_str(&format!(
            "P {{ name: {name:?}, env_keys: &[{}], api: {:?}, base_url: {:?}, models: &[\n",
            env_keys.join(", "),
            string(&first["api"], "api")?,
            string(&first["baseUrl"], "baseUrl")?,
        ));
        for model in models {
            out.push_str(&model_line(name, model)?);
        }
        out.push_str("]},\n");
    }
    out.push_str("];\n");
    Ok(out)
}

fn string<'a>(value: &'a Value, what: &str) -> Result<&'a str> {
    value
        .as_str()
        .with_context(|| format!("{what} is not a string: {value}"))
}

fn number(value: &Value, what: &str) -> Result<f64> {
    value
        .as_f64()
        .with_context(|| format!("{what} is not a number: {value}"))
}

fn model_line(provider: &str, model: &Value) -> Result<String> {
    let object: &Map<String, Value> = model.as_object().context("a model is not an object")?;
    let id = string(&model["id"], "id")?;
    for key in object.keys() {
        ensure!(
            MODEL_FIELDS.contains(&key.as_str()),
            "{provider}/{id} has a field this generator does not know: {key}"
        );
    }
    ensure!(model["provider"] == provider, "{provider}/{id} names another provider");
    let input: Vec<&str> = model["input"]
        .as_array()
        .with_context(|| format!("{provider}/{id}: input"))?
        .iter()
        .map(|kind| string(kind, "input"))
        .collect::<Result<_>>()?;
    let input = match input.as_slice() {
        ["text"] => "TEXT",
        ["text", "image"] => "TEXT_IMAGE",
        other => bail!("{provider}/{id}: input {other:?} is new to this generator"),
    };
    let cost = &model["cost"];
    let prices = ["input", "output", "cacheRead", "cacheWrite"]
        .iter()
        .map(|field| number(&cost[field], field).map(|price| format!("{price:?}")))
        .collect::<Result<Vec<_>>>()?;
    let tokens = |field: &str| {
        model[field]
            .as_u64()
            .with_context(|| format!("{provider}/{id}: {field} is not a whole number"))
    };
    let thinking = match model.get("thinkingLevelMap") {
        None => String::new(),
        Some(map) => map
            .as_object()
            .with_context(|| format!("{provider}/{id}: thinkingLevelMap"))?
            .iter()
            .map(|(level, value)| match value {
                Value::Null => Ok(format!("({level:?}, None)")),
                Value::String(text) => Ok(format!("({level:?}, Some({text:?}))")),
                other => bail!("{provider}/{id}: thinking level {level} maps to {other}"),
            })
            .collect::<Result<Vec<_>>>()?
            .join(", "),
    };
    let headers = match model.get("headers") {
        None => String::new(),
        Some(map) => map
            .as_object()
            .with_context(|| format!("{provider}/{id}: headers"))?
            .iter()
            .map(|(name, value)| Ok(format!("({name:?}, {:?})", string(value, "header value")?)))
            .collect::<Result<Vec<_>>>()?
            .join(", "),
    };
    let compat = match model.get("compat") {
        None => "None".to_owned(),
        Some(compat) => {
            ensure!(compat.is_object(), "{provider}/{id}: compat is not an object");
            format!("Some({:?})", compat.to_string())
        }
    };
    let reasoning = model["reasoning"]
        .as_bool()
        .with_context(|| format!("{provider}/{id}: reasoning"))?;
    Ok(format!(
        "M {{ id: {id:?}, name: {:?}, api: {:?}, base_url: {:?}, reasoning: {reasoning}, input: {input}, \
         cost: [{}], context_window: {}, max_tokens: {}, thinking_level_map: &[{thinking}], headers: &[{headers}], \
         compat: {compat} }},\n",
        string(&model["name"], "name")?,
        string(&model["api"], "api")?,
        string(&model["baseUrl"], "baseUrl")?,
        prices.join(", "),
        tokens("contextWindow")?,
        tokens("maxTokens")?,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn arguments_parse() {
        let options = parse(&args(&["--pi-ai", "/p", "--node", "/n", "--check"])).unwrap();
        assert_eq!(
            options,
            Options {
                pi_ai: Some("/p".into()),
                node: Some("/n".into()),
                check: true,
            }
        );
        assert!(parse(&args(&["--node"])).is_err());
        assert!(parse(&args(&["--frob"])).is_err());
    }

    const ONE: &str = r#"[{"name": "p", "envKeys": ["P_TOKEN", "P_API_KEY"], "models": [
        {"id": "m-1", "name": "M \"1\"", "api": "openai-completions", "provider": "p", "baseUrl": "https://p.example/v1",
         "reasoning": true, "input": ["text", "image"], "cost": {"input": 0.3, "output": 1e-7, "cacheRead": 0, "cacheWrite": 2},
         "contextWindow": 128000, "maxTokens": 4096, "thinkingLevelMap": {"off": null, "xhigh": "max"},
         "headers": {"User-Agent": "x/1"}, "compat": {"supportsStore": false, "maxTokensField": "max_tokens"}}]}]"#;

    #[test]
    fn a_model_becomes_one_line_of_rust() {
        let text = generate(ONE, "0.73.1").unwrap();
        assert!(text.starts_with(&header("0.73.1")));
        assert!(text.contains("pub(super) const SOURCE_VERSION: &str = \"0.73.1\";"));
        assert!(text.contains(
            "P { name: \"p\", env_keys: &[\"P_TOKEN\", \"P_API_KEY\"], api: \"openai-completions\", \
             base_url: \"https://p.example/v1\", models: &[\n"
        ));
        assert!(text.contains(
            "M { id: \"m-1\", name: \"M \\\"1\\\"\", api: \"openai-completions\", base_url: \"https://p.example/v1\", \
             reasoning: true, input: TEXT_IMAGE, cost: [0.3, 1e-7, 0.0, 2.0], context_window: 128000, max_tokens: 4096, \
             thinking_level_map: &[(\"off\", None), (\"xhigh\", Some(\"max\"))], headers: &[(\"User-Agent\", \"x/1\")], \
             compat: Some(\"{\\\"supportsStore\\\":false,\\\"maxTokensField\\\":\\\"max_tokens\\\"}\") },\n"
        ), "{text}");
    }

    #[test]
    fn the_committed_catalog_has_the_generated_header() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(OUTPUT);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&header(PI_AI_VERSION)),
            "{} has another header",
            path.display()
        );
    }

    #[test]
    fn an_unknown_field_is_refused() {
        let json = ONE.replace("\"maxTokens\": 4096", "\"maxTokens\": 4096, \"newField\": 1");
        let error = generate(&json, "0.73.1").unwrap_err().to_string();
        assert_eq!(error, "p/m-1 has a field this generator does not know: newField");
    }
}
