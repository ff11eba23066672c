// The Node host of pi-in-Rust: runs one pi TypeScript / JavaScript custom tool module unchanged and
// speaks the custom-tool process protocol (docs/custom-tools.md: JSON-RPC 2.0, one message per line)
// on stdin / stdout.
//
//     node [flags] host.mjs <entry>                      (a custom tool: protocol version 1)
//     node [flags] host.mjs --extensions <entry>...      (pi 0.73 extensions: protocol version 2)
//
// The host is shipped as ONE module made of parts, concatenated in this order by the crate
// (custom_tools/node/mod.rs, `HOST_SOURCE`): host.mjs (this part: imports, the typebox shim, the
// module hooks, the protocol channel and the custom-tool mode), tui.mjs (the pi-tui shim), shims.mjs
// (the pi-coding-agent / pi-ai shims of extensions), extensions.mjs (the extension mode) and main.mjs
// (picks the mode from argv). The parts share one scope; none runs anything when evaluated but
// main.mjs.
//
// The Rust side (custom_tools/node/mod.rs) ships this file inside the crate, writes it to a cache
// file and starts it in the entry's directory. On `initialize` the host imports the entry, calls its
// factory with pi's `pi` object and answers with the tool definitions; `execute`, `cancel`,
// `pendingAction.apply` / `reject`, `session` and `shutdown` are then served from the tools.
//
// The packages pi resolves for its tools (`@sinclair/typebox`, `@mariozechner/pi-coding-agent`,
// `@mariozechner/pi-ai`, `@mariozechner/pi-tui`, `@mariozechner/pi-agent-core`) resolve here to
// small shims defined in this file, through a Node module-resolution hook. The same file is therefore loaded twice in the
// `module.register` case (Node.js before 22.15): as the host (no query), and as the hook module
// (`?pi-hooks`) in Node's loader thread, where only the exported `initialize`, `resolve` and `load`
// hooks are used and nothing else runs. With `module.registerHooks` (22.15 and newer) the hooks run
// in the host's own thread.
//
// TypeScript never reaches Node as such: pi transpiles it (custom_tools/node/transpile.rs) and the
// load hook serves the transpiled ES module under the `.ts` file's URL (see `TS_MODULES_ENV`).
//
// Nothing but protocol messages is ever written to stdout: `console.log` and `process.stdout.write`
// of the tool go to stderr.

import { spawn } from "node:child_process";
import { AsyncLocalStorage } from "node:async_hooks";
import { readFileSync, statSync } from "node:fs";
import * as nodeModule from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join as joinPath, resolve as resolvePath } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The query marking the copy of this file that Node's loader thread runs as the hook module. */
const HOOKS_QUERY = "?pi-hooks";

/** The URL of this file without its query: the host module itself. */
const HOST_URL = import.meta.url.split("?")[0];

/** The protocol version this host speaks. */
const PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// Shims: @sinclair/typebox
// ---------------------------------------------------------------------------------------------

/** TypeBox's marker of a schema's kind (kept as a symbol: JSON never sees it). */
const Kind = Symbol.for("TypeBox.Kind");
/** TypeBox's marker of an optional property. */
const OptionalKind = Symbol.for("TypeBox.Optional");
/** TypeBox's marker of a readonly property. */
const ReadonlyKind = Symbol.for("TypeBox.Readonly");
/** TypeBox's hint of what a composed schema was built from (`Enum`, …). */
const Hint = Symbol.for("TypeBox.Hint");

/** A schema of `kind`: the caller's options, then the fields that define the kind. */
function make(kind, fields, options) {
  return { ...(options ?? {}), ...fields, [Kind]: kind };
}

/** The JSON type name of a literal value. */
function literalType(value) {
  return value === null ? "null" : typeof value;
}

/** The keys named by `keys`: an array of strings, a literal schema, or a union of literals. */
function keyNames(keys) {
  if (Array.isArray(keys)) return keys.map(String);
  if (keys && "const" in keys) return [String(keys.const)];
  if (keys && Array.isArray(keys.anyOf)) return keys.anyOf.flatMap(keyNames);
  return [];
}

/** Whether a schema was marked optional. */
function isOptional(schema) {
  return schema?.[OptionalKind] === "Optional";
}

/** A copy of `schema` marked optional (or unmarked when `optional` is false). */
function withOptional(schema, optional) {
  const copy = { ...schema };
  if (optional) copy[OptionalKind] = "Optional";
  else delete copy[OptionalKind];
  return copy;
}

/** An object schema from `properties`, listing the non-optional ones as required. */
function objectSchema(properties, options) {
  const props = { ...(properties ?? {}) };
  const required = Object.keys(props).filter((key) => !isOptional(props[key]));
  const fields = { type: "object", properties: props };
  if (required.length > 0) fields.required = required;
  return make("Object", fields, options);
}

/** `Type`: builders of plain JSON Schema objects, as TypeBox's. */
const Type = Object.freeze({
  String: (options) => make("String", { type: "string" }, options),
  Number: (options) => make("Number", { type: "number" }, options),
  Integer: (options) => make("Integer", { type: "integer" }, options),
  Boolean: (options) => make("Boolean", { type: "boolean" }, options),
  Null: (options) => make("Null", { type: "null" }, options),
  Any: (options) => make("Any", {}, options),
  Unknown: (options) => make("Unknown", {}, options),
  Never: (options) => make("Never", { not: {} }, options),
  Not: (schema, options) => make("Not", { not: schema }, options),
  Literal: (value, options) => make("Literal", { const: value, type: literalType(value) }, options),
  Array: (items, options) => make("Array", { type: "array", items }, options),
  Tuple: (items, options) => {
    const list = [...(items ?? [])];
    const fields = { type: "array", minItems: list.length, maxItems: list.length };
    if (list.length > 0) Object.assign(fields, { items: list, additionalItems: false });
    return make("Tuple", fields, options);
  },
  Object: objectSchema,
  Optional: (schema, optional = true) => withOptional(schema, optional !== false),
  Readonly: (schema, readonly = true) => {
    const copy = { ...schema };
    if (readonly !== false) copy[ReadonlyKind] = "Readonly";
    else delete copy[ReadonlyKind];
    return copy;
  },
  ReadonlyOptional: (schema) => ({ ...withOptional(schema, true), [ReadonlyKind]: "Readonly" }),
  Union: (schemas, options) => {
    const list = [...(schemas ?? [])];
    if (list.length === 0) return Type.Never(options);
    if (list.length === 1) return { ...list[0], ...(options ?? {}) };
    return make("Union", { anyOf: list }, options);
  },
  Intersect: (schemas, options) => make("Intersect", { allOf: [...(schemas ?? [])] }, options),
  Enum: (values, options) => {
    const source = values ?? {};
    // A numeric TypeScript enum maps each value back to its name under a numeric key: skip those.
    const keys = Array.isArray(source) ? source.map((_, i) => i) : Object.keys(source).filter((k) => Number.isNaN(Number(k)));
    const literals = [...new Set(keys.map((k) => source[k]))].map((v) => Type.Literal(v));
    return { ...make("Union", { anyOf: literals }, options), [Hint]: "Enum" };
  },
  Record: (key, value, options) => {
    if (Array.isArray(key?.anyOf) || (key && "const" in key)) {
      const properties = Object.fromEntries(keyNames(key).map((name) => [name, value]));
      return objectSchema(properties, options);
    }
    let pattern = "^(.*)$";
    if (key?.type === "number" || key?.type === "integer") pattern = "^(0|[1-9][0-9]*)$";
    else if (typeof key?.pattern === "string") pattern = key.pattern;
    return make("Record", { type: "object", patternProperties: { [pattern]: value } }, options);
  },
  Partial: (schema, options) => {
    const properties = Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([k, v]) => [k, withOptional(v, true)]));
    return objectSchema(properties, { ...stripObjectFields(schema), ...(options ?? {}) });
  },
  Required: (schema, options) => {
    const properties = Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([k, v]) => [k, withOptional(v, false)]));
    return objectSchema(properties, { ...stripObjectFields(schema), ...(options ?? {}) });
  },
  Pick: (schema, keys, options) => {
    const wanted = new Set(keyNames(keys));
    const properties = Object.fromEntries(Object.entries(schema?.properties ?? {}).filter(([k]) => wanted.has(k)));
    return objectSchema(properties, { ...stripObjectFields(schema), ...(options ?? {}) });
  },
  Omit: (schema, keys, options) => {
    const unwanted = new Set(keyNames(keys));
    const properties = Object.fromEntries(Object.entries(schema?.properties ?? {}).filter(([k]) => !unwanted.has(k)));
    return objectSchema(properties, { ...stripObjectFields(schema), ...(options ?? {}) });
  },
  KeyOf: (schema, options) => Type.Union(Object.keys(schema?.properties ?? {}).map((k) => Type.Literal(k)), options),
  Composite: (schemas, options) => {
    const properties = {};
    for (const schema of schemas ?? []) Object.assign(properties, schema?.properties ?? {});
    return objectSchema(properties, options);
  },
  Unsafe: (options) => ({ ...(options ?? {}), [Kind]: (options ?? {})[Kind] ?? "Unsafe" }),
  Strict: (schema) => JSON.parse(JSON.stringify(schema)),
});

/** The options of an object schema without the fields `objectSchema` computes. */
function stripObjectFields(schema) {
  const { type: _type, properties: _properties, required: _required, ...rest } = schema ?? {};
  return rest;
}

/** Names TypeScript code imports from `@sinclair/typebox` as types only; exported as `undefined`
 *  so that an `import { Static }` without `type` (which type stripping keeps) still links. */
const TYPEBOX_TYPE_NAMES = [
  "Static", "TSchema", "TObject", "TString", "TNumber", "TInteger", "TBoolean", "TNull", "TArray", "TTuple",
  "TUnion", "TIntersect", "TLiteral", "TOptional", "TReadonly", "TProperties", "TEnum", "TAny", "TUnknown",
  "TNever", "TRecord", "TPartial", "TPick", "TOmit", "TKeyOf", "TUnsafe", "SchemaOptions", "ObjectOptions",
  "StringOptions", "NumberOptions", "ArrayOptions", "TLiteralValue", "StaticDecode", "StaticEncode",
];

// ---------------------------------------------------------------------------------------------
// Shims: @mariozechner/pi-ai, @mariozechner/pi-tui, @mariozechner/pi-coding-agent
// ---------------------------------------------------------------------------------------------

/** pi-ai's `StringEnum`: a string schema with an `enum` list (accepted by every provider). */
function StringEnum(values, options) {
  return Type.Unsafe({ type: "string", enum: [...values], ...(options ?? {}) });
}

/** What the running host lends the shims: its way to take and give up a place in pi's per-file
 *  mutation queue, and the id of the call the current code runs for. */
const hostLink = { lockFile: undefined, unlockFile: undefined, request: undefined };
const callScope = new AsyncLocalStorage();

/**
 * pi-coding-agent's `withFileMutationQueue(filePath, fn)`: runs `fn` while holding the file's
 * place in pi's per-file mutation queue — the one `write`, `edit` and `ast_edit` use — so that a
 * tool's read-modify-write of a file never interleaves with theirs. `filePath` resolves against
 * the working directory, as in pi. A file the call's tool declared in `mutatedPaths` is held by
 * the call already (taken in source order before it ran): `fn` runs at once.
 */
async function withFileMutationQueue(filePath, fn) {
  if (hostLink.lockFile === undefined) return fn();
  const lockId = await hostLink.lockFile(resolvePath(String(filePath)), callScope.getStore());
  try {
    return await fn();
  } finally {
    hostLink.unlockFile(lockId);
  }
}

/** Type-only names of pi-coding-agent that tools import (exported as `undefined`). */
const CODING_AGENT_TYPE_NAMES = [
  "CustomToolFactory", "CustomTool", "CustomAgentTool", "CustomToolAPI", "ToolAPI", "ToolUIContext",
  "CustomToolContext", "CustomToolUIContext", "CustomToolResult", "CustomToolPendingAction", "ExecOptions",
  "ExecResult", "ToolSessionEvent", "SessionEvent", "CustomToolSessionEvent", "SessionEntry", "AgentToolResult",
  "AgentToolUpdateCallback", "RenderResultOptions", "Theme", "ToolDefinition", "ToolExecutionMode",
  "ReadonlySessionManager", "SessionTreeNode", "MarkdownTheme",
];

/** Type-only names of pi-agent-core that tools import (exported as `undefined`). */
const PI_AGENT_CORE_TYPE_NAMES = ["AgentTool", "AgentToolResult", "AgentToolUpdateCallback", "AgentMessage"];

/** Type-only names of pi-ai that tools import (exported as `undefined`). */
const PI_AI_TYPE_NAMES = ["TextContent", "ImageContent", "Model", "Api", "Message", "ToolResultMessage"];

/** Type-only names of pi-tui that tools import (exported as `undefined`). */
const PI_TUI_TYPE_NAMES = ["TUI", "Focusable"];

/** An object mapping each name of `names` to `undefined`. */
function placeholders(names) {
  return Object.fromEntries(names.map((name) => [name, undefined]));
}

/** The shim modules, by id: what each exports. */
const SHIMS = {
  typebox: { ...placeholders(TYPEBOX_TYPE_NAMES), Type, Kind, OptionalKind, ReadonlyKind, Hint },
  piAi: { ...placeholders(PI_AI_TYPE_NAMES), StringEnum },
  // Filled by the pi-tui part (tui.mjs).
  piTui: { ...placeholders(PI_TUI_TYPE_NAMES) },
  // Completed by the extension shims (shims.mjs).
  codingAgent: { ...placeholders(CODING_AGENT_TYPE_NAMES), withFileMutationQueue },
  piAgentCore: { ...placeholders(PI_AGENT_CORE_TYPE_NAMES) },
};

/** Which shim a bare package name resolves to. */
const SHIM_PACKAGES = new Map([
  ["@sinclair/typebox", "typebox"],
  ["typebox", "typebox"],
  ["@mariozechner/pi-ai", "piAi"],
  ["@mariozechner/pi-tui", "piTui"],
  ["@mariozechner/pi-coding-agent", "codingAgent"],
  ["@mariozechner/pi-agent-core", "piAgentCore"],
  ["@oh-my-pi/pi-ai", "piAi"],
  ["@oh-my-pi/pi-tui", "piTui"],
  ["@oh-my-pi/pi-coding-agent", "codingAgent"],
  ["@oh-my-pi/pi-agent-core", "piAgentCore"],
]);

/** The `data:` URL of the module re-exporting shim `id` from the host module (one instance). */
function shimUrl(id) {
  const names = Object.keys(SHIMS[id]);
  const source =
    `import { SHIM_EXPORTS as all } from ${JSON.stringify(HOST_URL)};\n` +
    `const shim = all[${JSON.stringify(id)}];\n` +
    `export const { ${names.join(", ")} } = shim;\n` +
    `export default shim;\n`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

/** The shims, for the `data:` modules of `shimUrl`. */
export const SHIM_EXPORTS = SHIMS;

// ---------------------------------------------------------------------------------------------
// Module resolution hook
// ---------------------------------------------------------------------------------------------

/** Extensions tried, in order, for a relative import that does not exist as written (pi loads
 *  tools with a bundler-style resolver: `./helpers` and `./helpers.js` may name `helpers.ts`). */
const TRY_SUFFIXES = [".ts", ".mts", ".js", ".mjs", ".cjs", "/index.ts", "/index.js", "/index.mjs"];

/** A file the relative `specifier` of `parentURL` may mean when it does not exist as written. */
function alternative(specifier, parentURL) {
  let base;
  try {
    base = fileURLToPath(new URL(specifier, parentURL));
  } catch {
    return undefined;
  }
  const candidates = [];
  const swapped = base.replace(/\.(m|c)?js$/, (_all, m) => `.${m ?? ""}ts`);
  if (swapped !== base) candidates.push(swapped);
  for (const suffix of TRY_SUFFIXES) candidates.push(base + suffix);
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isFile()) return pathToFileURL(candidate).href;
    } catch {
      // not there: try the next one
    }
  }
  return undefined;
}

/** Whether `specifier` is relative or a `file:` URL. */
function isLocal(specifier) {
  return specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("file:") || specifier.startsWith("/");
}

/**
 * The resolve hook (both `module.registerHooks`, where `nextResolve` answers at once, and
 * `module.register`, where it answers with a promise): pi's packages resolve to the shims, and a
 * relative import that is missing is retried with TypeScript and index extensions.
 */
export function resolve(specifier, context, nextResolve) {
  const shim = SHIM_PACKAGES.get(specifier);
  if (shim !== undefined && requireShims && context.conditions?.includes("require")) {
    return { url: `${HOST_URL}${REQUIRE_SHIM_SUFFIX}${shim}.cjs`, format: "commonjs", shortCircuit: true };
  }
  if (shim !== undefined) return { url: shimUrl(shim), format: "module", shortCircuit: true };
  if (!isLocal(specifier) || !context.parentURL?.startsWith("file:")) return nextResolve(specifier, context);
  const retry = (error) => {
    const code = error?.code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "ERR_UNSUPPORTED_DIR_IMPORT") throw error;
    const found = alternative(specifier, context.parentURL);
    if (found === undefined) throw error;
    return nextResolve(found, context);
  };
  let result;
  try {
    result = nextResolve(specifier, context);
  } catch (error) {
    return retry(error);
  }
  return typeof result?.then === "function" ? result.then(undefined, retry) : result;
}

/** What the URL a CommonJS `require` of a pi package resolves to adds to the host's URL, before
 *  `<shim id>.cjs`: a file that does not exist, which `load` serves (one path per shim, as
 *  CommonJS caches modules by path). */
const REQUIRE_SHIM_SUFFIX = ".pi-require-shim-";

/** Where `load` finds the shims for `require` (same thread: `module.registerHooks` only). */
const SHIMS_GLOBAL = Symbol.for("pi-tool-host.shims");

/** Whether `require` of pi's packages is served (with `module.registerHooks`, which sees it). */
let requireShims = false;

/** The environment variable through which pi hands over its transpiled TypeScript: a JSON object
 *  mapping each TypeScript file of the tool (its real path) to the ES module pi transpiled it to
 *  (`<cache>/<hash>.mjs`, with an inline source map). */
const TS_MODULES_ENV = "PI_TS_MODULES";

/** The transpiled TypeScript, by file path (see `TS_MODULES_ENV`); set in each thread that runs
 *  the hooks (the host's, and the loader thread's through `initialize`). */
let tsModules = {};

/** Whether `path` names a TypeScript file. */
function isTypeScript(path) {
  return /\.(m|c)?ts$/.test(path) && !/\.d\.(m|c)?ts$/.test(path);
}

/**
 * The source of TypeScript file `url`: pi's transpiled ES module, served under the file's own URL
 * (relative imports, packages and `import.meta.url` work as in the file; the format is `module`
 * whatever the project's package.json says); `undefined` for any other URL.
 */
function loadTypeScript(url) {
  if (!url.startsWith("file:")) return undefined;
  const path = fileURLToPath(url);
  if (!isTypeScript(path)) return undefined;
  const output = tsModules[path];
  if (output === undefined) {
    throw new Error(
      `${path} was not transpiled by pi: pi transpiles a tool's entry and the TypeScript files it imports ` +
        `with a literal relative specifier (import … from "./file")`,
    );
  }
  return { format: "module", source: readFileSync(output, "utf8"), shortCircuit: true };
}

/** The loader thread's start (`module.register` only): receives the transpiled TypeScript. */
export function initialize(data) {
  tsModules = data?.tsModules ?? {};
}

/** The load hook (both `module.registerHooks` and `module.register`): serves pi's transpiled
 *  TypeScript, and the shims to CommonJS `require` (`module.registerHooks` only). */
export function load(url, context, nextLoad) {
  const typescript = loadTypeScript(url);
  if (typescript !== undefined) return typescript;
  const prefix = HOST_URL + REQUIRE_SHIM_SUFFIX;
  if (!url.startsWith(prefix) || !url.endsWith(".cjs")) return nextLoad(url, context);
  const id = JSON.stringify(url.slice(prefix.length, -".cjs".length));
  const source = `module.exports = globalThis[Symbol.for(${JSON.stringify(SHIMS_GLOBAL.description)})][${id}];`;
  return { format: "commonjs", source, shortCircuit: true };
}

/** Installs the hooks: in-thread with `module.registerHooks` (Node 22.15+; `import` and
 *  `require`), else in Node's loader thread with `module.register` (Node 20.6+; `import` only). */
function installHooks() {
  try {
    tsModules = JSON.parse(process.env[TS_MODULES_ENV] ?? "{}") ?? {};
  } catch {
    tsModules = {};
  }
  // Not for the processes the tool starts.
  delete process.env[TS_MODULES_ENV];
  if (typeof nodeModule.registerHooks === "function") {
    globalThis[SHIMS_GLOBAL] = SHIMS;
    requireShims = true;
    nodeModule.registerHooks({ resolve, load });
  } else if (typeof nodeModule.register === "function") {
    nodeModule.register(HOST_URL + HOOKS_QUERY, { data: { tsModules } });
  } else {
    throw new Error(`Node.js ${process.versions.node} cannot run pi tools: it needs module.register (Node.js 20.6 or newer)`);
  }
}

// ---------------------------------------------------------------------------------------------
// The host
// ---------------------------------------------------------------------------------------------

/** The message of anything thrown. */
function messageOf(error) {
  if (error instanceof Error) return error.message;
  if (typeof error?.message === "string") return error.message;
  return String(error);
}

/** An error answered with a given JSON-RPC code. */
class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** A failure the tool shaped for the model (pi's `ToolError`): the model reads its message as it is,
 *  and `details` become the details of the error result. Anything else a tool throws is an
 *  exception: an apply that throws one reads `Apply failed: <message>`. Exported by the
 *  `@mariozechner/pi-coding-agent` shim; an error named `ToolError` counts as one as well. */
class ToolError extends Error {
  constructor(message, details = undefined) {
    super(message);
    this.name = "ToolError";
    if (details !== undefined) this.details = details;
  }
}

// Tools import it from pi: `import { ToolError } from "@mariozechner/pi-coding-agent"`.
SHIMS.codingAgent.ToolError = ToolError;

/** The JSON-RPC error object of something a tool threw: `data.kind` is `"tool"` for a
 *  `ToolError` (with `data.details` when it has them) and `"exception"` for anything else; the
 *  host's own protocol errors (`RpcError`) carry no `data`. */
function errorAnswer(error) {
  if (error instanceof RpcError) return { code: error.code, message: messageOf(error) };
  const answer = { code: -32000, message: messageOf(error) };
  if (error instanceof ToolError || error?.name === "ToolError") {
    answer.data = { kind: "tool" };
    if (error.details !== undefined) answer.data.details = error.details;
  } else {
    answer.data = { kind: "exception" };
  }
  return answer;
}

/** A tool result as the protocol wants it: `{content: [...], details?}`. */
function normalizeResult(result) {
  if (result === undefined || result === null) return { content: [] };
  if (typeof result === "string") return { content: [{ type: "text", text: result }] };
  let content = result.content;
  if (content === undefined || content === null) content = [];
  else if (typeof content === "string") content = [{ type: "text", text: content }];
  else if (!Array.isArray(content)) content = [content];
  const normalized = { content };
  if (result.details !== undefined) normalized.details = result.details;
  return normalized;
}

/** The factory a tool module exports: its default export, or a CommonJS `module.exports` function
 *  (also one compiled with `exports.default`). */
function factoryOf(module) {
  const candidates = [module?.default, module?.default?.default, module?.["module.exports"]];
  return candidates.find((candidate) => typeof candidate === "function");
}

/** The tool definition sent to pi: name, label, description, JSON Schema, execution mode,
 *  mutated paths. */
function definitionOf(tool) {
  const definition = {
    name: tool.name,
    description: String(tool.description ?? ""),
    parameters: JSON.parse(JSON.stringify(tool.parameters ?? { type: "object", properties: {} })),
  };
  if (typeof tool.label === "string") definition.label = tool.label;
  if (tool.executionMode === "sequential" || tool.executionMode === "parallel") {
    definition.executionMode = tool.executionMode;
  }
  // Beyond pi: the parameters naming files a call changes (docs/custom-tools.md, "File mutations").
  if (Array.isArray(tool.mutatedPaths)) definition.mutatedPaths = tool.mutatedPaths;
  return definition;
}

/** Checks what a factory returned: one tool or an array of tools, each named, with `execute`. */
function toolsFrom(created) {
  const list = Array.isArray(created) ? created : [created];
  if (created === undefined || created === null || list.length === 0) throw new Error("the factory returned no tool");
  const names = new Set();
  list.forEach((tool, index) => {
    if (tool === null || typeof tool !== "object") throw new Error(`tool ${index + 1} is not an object`);
    if (typeof tool.name !== "string" || tool.name === "") throw new Error(`tool ${index + 1} has no name`);
    if (typeof tool.execute !== "function") throw new Error(`tool "${tool.name}" has no execute function`);
    if (names.has(tool.name)) throw new Error(`two tools are named "${tool.name}"`);
    names.add(tool.name);
  });
  return list;
}

// ---------------------------------------------------------------------------------------------
// The two historical tool signatures
// ---------------------------------------------------------------------------------------------

/** pi's first custom-tool signature (pi up to 0.30): `execute(toolCallId, params, signal, onUpdate)`. */
const SEED_SIGNATURE = "seed";
/** pi's later one (0.31 to 0.34, before custom tools became extensions):
 *  `execute(toolCallId, params, onUpdate, ctx, signal)`. */
const CONTEXT_SIGNATURE = "context";

/** The names of the parameters of function `fn` as its source declares them (`undefined` for a
 *  destructured one; an empty list when the source is not JavaScript, e.g. a bound function). */
function parameterNames(fn) {
  let source;
  try {
    source = Function.prototype.toString.call(fn);
  } catch {
    return [];
  }
  const arrow = /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source);
  if (arrow) return [arrow[1]];
  const open = source.indexOf("(");
  if (open < 0) return [];
  const names = [];
  let depth = 0;
  let current = "";
  let quote;
  for (let i = open + 1; i < source.length; i++) {
    const c = source[i];
    if (quote !== undefined) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" && depth === 0) {
      names.push(current);
      break;
    } else if (c === ")" || c === "]" || c === "}") depth--;
    else if (c === "," && depth === 0) {
      names.push(current);
      current = "";
      continue;
    }
    current += c;
  }
  return names.map((text) => /^\s*(?:\.\.\.)?\s*([A-Za-z_$][\w$]*)/.exec(text)?.[1]);
}

/** What a parameter name says it receives (leading underscores and case ignored). */
function parameterRole(name) {
  const bare = (name ?? "").replace(/^_+/, "").toLowerCase();
  if (bare === "") return undefined;
  if (/signal|abort/.test(bare)) return "signal";
  if (/update|progress/.test(bare)) return "onUpdate";
  if (bare === "ctx" || /context/.test(bare)) return "ctx";
  return undefined;
}

/**
 * Which of pi's two `execute` signatures `tool` uses (docs/custom-tools.md, "Two signatures"):
 *
 * 1. `execute` declares five or more parameters: the later one (`ctx` and `signal` are 4th and 5th).
 * 2. The names of its 3rd and 4th parameters: `signal` / `abort…` 3rd or `onUpdate` / `…progress`
 *    4th is the seed's; `onUpdate` 3rd or `ctx` / `…context` 4th is the later one (a leading `_`
 *    does not count, so `_signal` is a signal).
 * 3. `onSession` declares two parameters (`event, ctx`): the later one.
 * 4. Otherwise the seed's, which is also what a tool with fewer than three parameters gets (it
 *    uses neither `signal` nor `onUpdate`, so both signatures call it alike).
 */
function signatureOf(tool) {
  const execute = tool.execute;
  if (execute.length >= 5) return CONTEXT_SIGNATURE;
  const [, , third, fourth] = parameterNames(execute);
  const thirdRole = parameterRole(third);
  const fourthRole = parameterRole(fourth);
  if (thirdRole === "signal" || fourthRole === "onUpdate") return SEED_SIGNATURE;
  if (thirdRole === "onUpdate" || fourthRole === "ctx") return CONTEXT_SIGNATURE;
  if (typeof tool.onSession === "function" && tool.onSession.length >= 2) return CONTEXT_SIGNATURE;
  return SEED_SIGNATURE;
}

/** The signature of each tool's `execute`, decided on its first call. */
const signatures = new WeakMap();

/** Calls `tool.execute` in the signature it uses: the seed's `(toolCallId, params, signal,
 *  onUpdate, ctx)` or the later `(toolCallId, params, onUpdate, ctx, signal)`. */
function callExecute(tool, callId, params, signal, onUpdate, ctx) {
  let signature = signatures.get(tool);
  if (signature === undefined) {
    signature = signatureOf(tool);
    signatures.set(tool, signature);
  }
  if (signature === CONTEXT_SIGNATURE) return tool.execute(callId, params, onUpdate, ctx, signal);
  return tool.execute(callId, params, signal, onUpdate, ctx);
}

/**
 * pi's `ReadonlySessionManager` (pi 0.31 to 0.34) over what the host knows of the session: the
 * entries of the current branch, root first, and the session file, as pi last sent them — with
 * every `execute` (the entries appended since, e.g. the results of earlier calls of the same run)
 * and every `session` event. `getEntries()` and `getTree()` cover the current branch only.
 */
function readonlySessionManager(session, cwd) {
  const entries = () => [...session.entries];
  const byId = () => new Map(session.entries.filter((e) => typeof e?.id === "string").map((e) => [e.id, e]));
  const labels = () => {
    const found = new Map();
    for (const entry of session.entries) {
      if (entry?.type !== "label" || typeof entry.targetId !== "string") continue;
      if (entry.label) found.set(entry.targetId, entry.label);
      else found.delete(entry.targetId);
    }
    return found;
  };
  const sessionFile = () => session.sessionFile ?? undefined;
  return {
    getCwd: () => cwd(),
    getSessionFile: sessionFile,
    getSessionDir: () => (sessionFile() === undefined ? "" : dirname(sessionFile())),
    getSessionId: () => (sessionFile() === undefined ? "" : basename(sessionFile()).replace(/\.jsonl$/, "")),
    getHeader: () => null,
    getLeafId: () => session.entries.at(-1)?.id ?? null,
    getLeafEntry: () => session.entries.at(-1),
    getEntry: (id) => byId().get(id),
    getChildren: (parentId) => session.entries.filter((e) => e?.parentId === parentId),
    getLabel: (id) => labels().get(id),
    getBranch(fromId) {
      if (fromId === undefined) return entries();
      const known = byId();
      const path = [];
      for (let entry = known.get(fromId); entry; entry = entry.parentId ? known.get(entry.parentId) : undefined) {
        path.unshift(entry);
      }
      return path;
    },
    getEntries: entries,
    getTree() {
      const named = labels();
      const nodes = new Map();
      const roots = [];
      for (const entry of session.entries) {
        const node = { entry, children: [] };
        if (named.has(entry?.id)) node.label = named.get(entry.id);
        nodes.set(entry?.id, node);
        const parent = entry?.parentId ? nodes.get(entry.parentId) : undefined;
        (parent ? parent.children : roots).push(node);
      }
      return roots;
    },
  };
}

/**
 * The connection to pi on stdin / stdout, shared by both modes of the host. From here on only
 * protocol messages go to stdout: `console.log` and `process.stdout.write` of the loaded code go to
 * stderr. `send` writes one message, `request` sends a request and resolves with pi's result (or
 * rejects with its error), `notify` sends a notification; `listen` reads pi's messages and hands
 * requests and notifications to `onRequest` / `onNotification` (responses settle `request`s);
 * `onClose` runs when pi closes stdin, after every waiting request was rejected. `flush(done)`
 * calls `done` once everything written reached stdout.
 */
function openChannel(label) {
  const writeProtocol = process.stdout.write.bind(process.stdout);
  const toStderr = process.stderr.write.bind(process.stderr);
  process.stdout.write = toStderr;
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  process.stdout.on("error", () => process.exit(0));
  process.on("unhandledRejection", (error) => console.error(`${label}: unhandled rejection:`, error));
  process.on("uncaughtException", (error) => console.error(`${label}: uncaught exception:`, error));

  /** Outgoing requests waiting for pi's answer, by id. */
  const waiting = new Map();
  let nextId = 0;

  /** Writes one message; `done` runs once it is flushed. */
  function send(message, done) {
    let line;
    try {
      line = JSON.stringify({ jsonrpc: "2.0", ...message });
    } catch (error) {
      if (message.id === undefined || message.method !== undefined) throw error;
      line = JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: `Result is not JSON: ${messageOf(error)}` } });
    }
    writeProtocol(line + "\n", done);
  }

  /** Sends a request to pi and waits for its result. */
  function request(method, params) {
    const id = ++nextId;
    return new Promise((resolvePromise, reject) => {
      waiting.set(id, { resolve: resolvePromise, reject });
      send({ id, method, params });
    });
  }

  /** Sends a notification to pi. */
  function notify(method, params) {
    send({ method, params });
  }

  function onResponse(message) {
    const waiter = waiting.get(message.id);
    if (waiter === undefined) return;
    waiting.delete(message.id);
    if (message.error !== undefined && message.error !== null) waiter.reject(new Error(messageOf(message.error)));
    else waiter.resolve(message.result);
  }

  function listen({ onRequest, onNotification, onClose }) {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        console.error(`${label}: ignoring a line that is not JSON: ${line.slice(0, 80)}`);
        return;
      }
      if (message === null || typeof message !== "object") return;
      if (typeof message.method === "string") {
        if (message.id !== undefined && message.id !== null) onRequest(message);
        else onNotification(message);
      } else if (message.id !== undefined) {
        onResponse(message);
      }
    });
    lines.on("close", () => {
      for (const waiter of waiting.values()) waiter.reject(new Error("pi closed the connection"));
      waiting.clear();
      onClose();
    });
  }

  return { send, request, notify, listen, flush: (done) => writeProtocol("", done) };
}
/**
 * pi's pending actions (ours, `docs/resolve.md`) for a host talking to pi through `request`:
 * `push` is the `pushPendingAction` given to tools and extensions, `withPushes(run)` runs code whose
 * pushes must be accepted before it counts as done, and `apply` / `reject` serve the
 * `pendingAction.apply` / `pendingAction.reject` requests. `label` prefixes messages on stderr.
 */
function makePendingActions(request, label) {
  /** Pushed pending actions, by actionId. */
  const actions = new Map();
  /** The pushes made in the current call or pending action (to answer with their failure). */
  const pushScope = new AsyncLocalStorage();
  let nextAction = 0;

  /** pi's `pushPendingAction`: stages `action` with pi; `apply` / `reject` are kept here and
   *  called on `pendingAction.apply` / `reject`. Returns a thenable of pi's answer; a failure that
   *  the tool does not await fails the call it was made in, as pi's synchronous throw would. */
  function pushPendingAction(action) {
    if (action === null || typeof action !== "object") throw new TypeError("pushPendingAction needs an action object");
    if (typeof action.apply !== "function") throw new TypeError("pushPendingAction needs an apply function");
    const actionId = `action-${++nextAction}`;
    const hasReject = typeof action.reject === "function";
    actions.set(actionId, { apply: action.apply, reject: hasReject ? action.reject : undefined });
    const params = { actionId, label: String(action.label ?? ""), hasReject };
    if (action.sourceToolName !== undefined) params.sourceToolName = String(action.sourceToolName);
    if (action.details !== undefined) params.details = action.details;
    const outcome = request("pendingAction.push", params).then(
      () => undefined,
      (error) => {
        actions.delete(actionId);
        return error;
      },
    );
    const scope = pushScope.getStore();
    const entry = { outcome, observed: false };
    if (scope) scope.push(entry);
    else outcome.then((error) => error && console.error(`${label}: pushPendingAction failed: ${messageOf(error)}`));
    const settled = outcome.then((error) => {
      if (error) throw error;
    });
    settled.catch(() => {});
    return {
      then(onFulfilled, onRejected) {
        entry.observed = true;
        return settled.then(onFulfilled, onRejected);
      },
      catch(onRejected) {
        entry.observed = true;
        return settled.catch(onRejected);
      },
      finally(onFinally) {
        entry.observed = true;
        return settled.finally(onFinally);
      },
    };
  }

  /** Runs `run` recording its pushes; once it succeeds, waits for pi to accept them and throws the
   *  first failure the tool did not observe. */
  async function withPushes(run) {
    const pushes = [];
    const value = await pushScope.run(pushes, run);
    for (const entry of pushes) {
      const error = await entry.outcome;
      if (error && !entry.observed) throw error;
    }
    return value;
  }

  /** The pushed action `actionId`. It stays until its apply succeeds or its discard completes
   *  (`settleAction`): after a failure pi may apply or discard it again. */
  function findAction(actionId) {
    const action = actions.get(actionId);
    if (action === undefined) throw new RpcError(-32602, `Unknown pending action: ${actionId}`);
    return action;
  }

  /** Forgets action `actionId`: pi resolved it and never mentions it again. */
  function settleAction(actionId, action) {
    if (actions.get(actionId) === action) actions.delete(actionId);
  }

  async function applyAction({ actionId, reason, extra } = {}) {
    const action = findAction(actionId);
    const result = normalizeResult(await withPushes(() => action.apply(reason ?? "", extra)));
    settleAction(actionId, action);
    return result;
  }

  async function rejectAction({ actionId, reason, extra } = {}) {
    const action = findAction(actionId);
    let result = null;
    if (action.reject !== undefined) {
      const value = await withPushes(() => action.reject(reason ?? "", extra));
      if (value !== undefined && value !== null) result = normalizeResult(value);
    }
    settleAction(actionId, action);
    return result;
  }

  return { push: pushPendingAction, withPushes, apply: applyAction, reject: rejectAction };
}

/** Lends the shims the connection to pi (`request`, and pi's per-file mutation queue). */
function linkHost(request, notify) {
  hostLink.request = request;
  hostLink.lockFile = async (path, callId) => {
    const params = { path };
    if (callId !== undefined) params.callId = callId;
    return (await request("mutationQueue.lock", params))?.lockId;
  };
  hostLink.unlockFile = (lockId) => {
    if (lockId !== undefined) notify("mutationQueue.unlock", { lockId });
  };
}

/** pi's `exec`, for the working directory `cwd()`: runs a program there (or in `options.cwd`), killed by
 *  `signal` or `timeout`. */
function makeExec(cwd) {
  return function exec(command, args = [], options = {}) {
    const { signal, timeout } = options ?? {};
    return new Promise((resolvePromise) => {
      let stdout = "";
      let stderr = "";
      let killed = false;
      let settled = false;
      let timer;
      let hardKill;
      const finish = (code) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(hardKill);
        signal?.removeEventListener?.("abort", kill);
        resolvePromise({ stdout, stderr, code, killed });
      };
      if (signal?.aborted) {
        killed = true;
        finish(-1);
        return;
      }
      const child = spawn(String(command), [...(args ?? [])].map(String), {
        cwd: options?.cwd ?? cwd(),
        stdio: ["ignore", "pipe", "pipe"],
        detached: process.platform !== "win32",
        windowsHide: true,
      });
      const signalTree = (name) => {
        try {
          if (process.platform !== "win32" && child.pid !== undefined) process.kill(-child.pid, name);
          else child.kill(name);
        } catch {
          try {
            child.kill(name);
          } catch {
            // already gone
          }
        }
      };
      function kill() {
        if (settled || killed) return;
        killed = true;
        signalTree("SIGTERM");
        hardKill = setTimeout(() => signalTree("SIGKILL"), 2000);
      }
      child.stdout.setEncoding("utf8");
      child.stderr.setEncoding("utf8");
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("error", (error) => {
        stderr += (stderr && !stderr.endsWith("\n") ? "\n" : "") + messageOf(error);
        finish(error?.code === "ENOENT" ? 127 : 1);
      });
      child.on("close", (code) => finish(code ?? -1));
      signal?.addEventListener?.("abort", kill, { once: true });
      if (typeof timeout === "number" && timeout > 0) timer = setTimeout(kill, timeout);
    });
  }
}

/** Runs the host on stdin / stdout for the tool module at `entryPath`. */
/**
 * pi's `ModelRegistry` over the models pi sent, read through `source` at each call (`all`, and
 * `available`: indexes into `all`, or `undefined` for all of them): `getAll()`, `getAvailable()`,
 * `find(provider, id)`, `getApiKey(model)`, `getApiKeyAndHeaders(model)` and `getApiKeyForProvider(provider)` (asked of pi at
 * each call; pi redacts keys from what this process says), `isUsingOAuth()` (false: pi in Rust
 * keeps no OAuth credentials), `refresh()` (nothing to do: pi sends the current list) and
 * `getError()` (`undefined`).
 */
function makeModelRegistry(request, source) {
  async function askKey(params) {
    const key = await request("modelRegistry.getApiKey", params);
    return typeof key === "string" ? key : undefined;
  }
  return {
    getAll: () => [...source.all],
    getAvailable: () =>
      source.available === undefined ? [...source.all] : source.available.map((i) => source.all[i]).filter((m) => m !== undefined),
    find: (provider, modelId) => source.all.find((m) => m?.provider === provider && m?.id === modelId),
    getApiKey: (model) => askKey(modelRef(model)),
    getApiKeyForProvider: (provider) => askKey({ provider: String(provider), id: "" }),
    // pi 0.73's `{ok, apiKey?, headers?}`; the headers of models.json are added by pi when the
    // extension calls the model through `complete()`.
    getApiKeyAndHeaders: async (model) => ({ ok: true, apiKey: await askKey(modelRef(model)), headers: undefined }),
    isUsingOAuth: () => false,
    refresh() {},
    getError: () => undefined,
  };
}

/**
 * The dialogs and `notify` of `ui` / `ctx.ui` in both modes, sent to pi (`ui.select`,
 * `ui.confirm`, `ui.input`, `ui.notify`). A dialog's `opts` (pi 0.73) may give a `timeout` (sent
 * along) and a `signal`: aborted, the dialog answers `undefined` at once, or when it aborts while
 * pi asks.
 */
function makeDialogs(request, notify) {
  function dialog(method, params, opts) {
    if (typeof opts?.timeout === "number") params.timeout = opts.timeout;
    const signal = opts?.signal;
    if (signal?.aborted) return Promise.resolve(null);
    const asked = request(method, params);
    if (signal === undefined) return asked;
    return Promise.race([asked, new Promise((resolveAbort) => signal.addEventListener("abort", () => resolveAbort(null), { once: true }))]);
  }
  return {
    async select(title, options, opts) {
      const chosen = await dialog("ui.select", { title: String(title), options: [...(options ?? [])].map(String) }, opts);
      return chosen ?? undefined;
    },
    async confirm(title, message, opts) {
      return (await dialog("ui.confirm", { title: String(title), message: String(message ?? "") }, opts)) === true;
    },
    async input(title, placeholder, opts) {
      const params = { title: String(title) };
      if (placeholder !== undefined) params.placeholder = String(placeholder);
      return (await dialog("ui.input", params, opts)) ?? undefined;
    },
    notify(message, type) {
      const params = { message: String(message) };
      if (type !== undefined) params.type = type;
      notify("ui.notify", params);
    },
  };
}

/**
 * The start of `initialize` in both modes: answered once, the protocol `version` checked (the
 * error says the host speaks `speaks`), pi's cwd taken into `state.cwd` (and changed to; `label`
 * prefixes the message on stderr when it cannot be) and `hasUI` into `state.hasUI`.
 */
function beginInitialize(state, params, version, speaks, label) {
  if (state.started) throw new RpcError(-32600, "Already initialized");
  state.started = true;
  if (params?.protocolVersion !== undefined && params.protocolVersion !== version) {
    throw new RpcError(-32602, `Unsupported protocol version ${params.protocolVersion} (this host speaks ${speaks})`);
  }
  if (typeof params?.cwd === "string") {
    state.cwd = params.cwd;
    try {
      process.chdir(params.cwd);
    } catch (error) {
      console.error(`${label}: cannot change to ${params.cwd}: ${messageOf(error)}`);
    }
  }
  state.hasUI = params?.hasUI === true;
}

/** The session entries after pi's `delta` (`{keep, entries}`: keep the first `keep` of `entries`,
 *  append the delta's), or `undefined` when pi sent no delta. */
function applySessionDelta(entries, delta) {
  if (!delta || typeof delta !== "object") return undefined;
  const keep = Number.isInteger(delta.keep) && delta.keep >= 0 ? delta.keep : 0;
  const added = Array.isArray(delta.entries) ? delta.entries : [];
  return entries.slice(0, keep).concat(added);
}

/**
 * Serves pi's requests on `channel` (from `openChannel`) in both modes: `handlers` by method, each
 * called with `(params, controller)`; `initialize` runs at once, every other request once it has
 * been answered; `shutdown`'s answer exits the process. `controllerFor(method, params, id)` gives a
 * request its AbortController (or `undefined`) and `release(method, params, id)` runs when such a
 * request settled; `errorOf` makes the JSON-RPC error of a failure. When stdin ends without
 * `shutdown` (pi went away, or a script piped its requests), what is in flight is answered (2 s at
 * most), then `shutdown()` runs and the process exits — within 5 s in all.
 */
function serveRequests(channel, { handlers, controllerFor = () => undefined, release = () => {}, errorOf = errorAnswer, onNotification, shutdown }) {
  const { send, listen, flush } = channel;
  /** Settles when `initialize` has been answered: requests that come meanwhile wait for it. */
  let initialized = Promise.resolve();
  /** Requests being handled. */
  const inFlight = new Set();

  function onRequest({ id, method, params }) {
    const handler = handlers[method];
    let run;
    let controlled = false;
    if (handler === undefined) run = Promise.reject(new RpcError(-32601, `Method not found: ${method}`));
    else if (method === "initialize") run = initialized = handler(params);
    else {
      const controller = controllerFor(method, params, id);
      controlled = controller !== undefined;
      run = initialized.then(
        () => handler(params, controller),
        () => handler(params, controller),
      );
    }
    inFlight.add(run);
    run
      .finally(() => {
        inFlight.delete(run);
        if (controlled) release(method, params, id);
      })
      .catch(() => {});
    run.then(
      (result) => send({ id, result: result ?? null }, method === "shutdown" ? () => process.exit(0) : undefined),
      (error) => send({ id, error: errorOf(error) }),
    );
  }

  listen({
    onRequest,
    onNotification,
    onClose() {
      setTimeout(() => process.exit(0), 5000).unref();
      const grace = new Promise((resolveGrace) => setTimeout(resolveGrace, 2000).unref());
      Promise.race([Promise.allSettled([...inFlight]), grace])
        .then(shutdown)
        .finally(() => flush(() => process.exit(0)));
    },
  });
}

function startHost(entryPath) {
  const channel = openChannel("pi tool host");
  const { request, notify } = channel;

  const entryUrl = pathToFileURL(resolvePath(entryPath)).href;
  /** The AbortController of every call in flight, by callId. */
  const calls = new Map();
  const state = { cwd: process.cwd(), hasUI: false, started: false, tools: undefined, byName: new Map() };
  let lastSession = { entries: [], sessionFile: undefined, previousSessionFile: undefined };
  /** The model and the registry pi last sent (`context` of `execute` and `session`). */
  const models = { current: undefined, all: [], available: [] };
  let shuttingDown = false;
  let warnedCustom = false;

  linkHost(request, notify);

  const exec = makeExec(() => state.cwd);
  const pending = makePendingActions(request, "pi tool host");
  const { withPushes } = pending;

  const ui = {
    ...makeDialogs(request, notify),
    /** Not supported yet (it comes with the extension component bridge, issue 16): nothing is
     *  shown and a factory is not called. The answer serves both historical forms — the seed's
     *  `custom(component)` handle (`close` and `requestRender` do nothing) and pi 0.34's
     *  `await custom(factory)`, which gives `undefined`, as pi's print and RPC modes do. */
    custom(_componentOrFactory) {
      if (!warnedCustom) {
        warnedCustom = true;
        console.error("pi tool host: ui.custom is not supported for Node tools yet; the component is not shown");
      }
      return {
        close() {},
        requestRender() {},
        then(onFulfilled) {
          return Promise.resolve(undefined).then(onFulfilled);
        },
      };
    },
  };

  const sessionManager = readonlySessionManager(
    {
      get entries() {
        return lastSession.entries;
      },
      get sessionFile() {
        return lastSession.sessionFile;
      },
    },
    () => state.cwd,
  );

  /** pi's `ModelRegistry` as pi 0.31 to 0.34 gave it to tools (`makeModelRegistry`, without the
   *  later `getApiKeyForProvider`), over the models pi sent. */
  const { getApiKeyForProvider: _later, ...registry } = makeModelRegistry(request, {
    get all() {
      return models.all;
    },
    get available() {
      return models.available;
    },
  });
  const modelRegistry = Object.freeze(registry);

  /** Takes in the `context` pi sends with `execute` and `session`: the change of the current
   *  branch (`session: {keep, entries, sessionFile}`: keep the first `keep` entries, append the
   *  rest), the current `model`, and the registry (`modelRegistry: {models, available}`, sent
   *  once). Without a `context` (an older pi, or no session) nothing changes. */
  function takeContext(context) {
    if (context === null || typeof context !== "object") return;
    const entries = applySessionDelta(lastSession.entries, context.session);
    if (entries !== undefined) lastSession = { ...lastSession, entries, sessionFile: context.session.sessionFile ?? undefined };
    if ("model" in context) models.current = context.model ?? undefined;
    const registry = context.modelRegistry;
    if (registry && typeof registry === "object") {
      models.all = Array.isArray(registry.models) ? registry.models : [];
      models.available = Array.isArray(registry.available) ? registry.available : [];
    }
  }

  /** pi's `CustomToolContext` (pi 0.31 to 0.34), the `ctx` of `execute` and `onSession`: the
   *  session's current branch (as pi sent it with this call or event), the current `model` and
   *  the `modelRegistry` (above); `isIdle()` is true when no call of this host is running,
   *  `hasPendingMessages()` false, and `abort()` aborts the calls of this host. */
  const context = Object.freeze({
    sessionManager,
    modelRegistry,
    get model() {
      return models.current;
    },
    isIdle: () => calls.size === 0,
    hasPendingMessages: () => false,
    abort() {
      for (const controller of calls.values()) controller.abort();
    },
  });

  /** Calls every tool's `onSession` in turn with `event` and `context` (the seed's tools take the
   *  event only, the later ones both; a failing one does not keep the others from it). Each failure goes to stderr with its stack; the returned text names them all
   *  (`onSession of "<tool>" failed: <message>`, joined by `; `), or is `undefined`. */
  async function emitSession(event) {
    const failures = [];
    for (const tool of state.tools ?? []) {
      if (typeof tool.onSession !== "function") continue;
      try {
        await tool.onSession(event, context);
      } catch (error) {
        console.error(`pi tool host: onSession of "${tool.name}" failed:`, error);
        failures.push(`onSession of "${tool.name}" failed: ${messageOf(error)}`);
      }
    }
    return failures.length > 0 ? failures.join("; ") : undefined;
  }

  async function initialize(params) {
    beginInitialize(state, params, PROTOCOL_VERSION, String(PROTOCOL_VERSION), "pi tool host");
    installHooks();
    let module;
    try {
      module = await import(entryUrl);
    } catch (error) {
      console.error(error);
      throw new Error(`Failed to load tool: ${messageOf(error)}`);
    }
    const factory = factoryOf(module);
    if (factory === undefined) throw new Error("Tool must export a default function");
    const pi = {
      cwd: state.cwd,
      hasUI: state.hasUI,
      exec,
      ui,
      pushPendingAction: pending.push,
      typebox: SHIMS.typebox,
    };
    let tools;
    let definitions;
    try {
      tools = toolsFrom(await factory(pi));
      definitions = tools.map(definitionOf);
    } catch (error) {
      console.error(error);
      throw new Error(`Failed to load tool: ${messageOf(error)}`);
    }
    state.tools = tools;
    state.byName = new Map(tools.map((tool) => [tool.name, tool]));
    return { tools: definitions };
  }

  /** `execute`; `controller` was registered under the call's id as soon as the request came, so
   *  that a `cancel` right behind it is not lost while the call waits for `initialize`. */
  async function execute({ callId, tool: name, params, context: sent } = {}, controller = new AbortController()) {
    takeContext(sent);
    let finished = false;
    const onUpdate = (partial) => {
      if (!finished && !controller.signal.aborted) notify("update", { callId, partial: normalizeResult(partial) });
    };
    try {
      const tool = state.byName.get(name);
      if (tool === undefined) throw new RpcError(-32602, state.tools ? `Unknown tool: ${name}` : "Not initialized");
      // Cancelled before it started: the tool is not called at all.
      if (controller.signal.aborted) throw new Error("Operation aborted");
      const result = await callScope.run(callId, () =>
        withPushes(() => callExecute(tool, callId, params ?? {}, controller.signal, onUpdate, context)),
      );
      return normalizeResult(result);
    } finally {
      finished = true;
      if (calls.get(callId) === controller) calls.delete(callId);
    }
  }

  async function session(params = {}) {
    takeContext(params.context);
    lastSession = {
      entries: Array.isArray(params.entries) ? params.entries : [],
      sessionFile: params.sessionFile ?? undefined,
      previousSessionFile: params.previousSessionFile ?? undefined,
    };
    // A failure answers the request with an error: pi shows it to the user as a warning.
    const failed = await emitSession({ reason: params.reason, ...lastSession });
    if (failed !== undefined) throw new Error(failed);
    return null;
  }

  /** Aborts every call and sends `onSession({reason: "shutdown"})` once. */
  async function shutdown() {
    if (shuttingDown) return null;
    shuttingDown = true;
    for (const controller of calls.values()) controller.abort();
    await emitSession({ reason: "shutdown", ...lastSession });
    return null;
  }

  const handlers = {
    initialize,
    execute,
    "pendingAction.apply": pending.apply,
    "pendingAction.reject": pending.reject,
    session,
    shutdown,
  };

  serveRequests(channel, {
    handlers,
    // An `execute` is registered under its callId as soon as it comes, so that a `cancel` right
    // behind it is not lost while it waits for `initialize`; `execute` removes it when done.
    controllerFor(method, params) {
      if (method !== "execute") return undefined;
      const controller = new AbortController();
      calls.set(params?.callId, controller);
      return controller;
    },
    onNotification(message) {
      if (message.method === "cancel") calls.get(message.params?.callId)?.abort();
    },
    shutdown,
  });
}
