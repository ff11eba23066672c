
// ---------------------------------------------------------------------------------------------
// Part shims.mjs — what pi 0.73's extensions import from `@mariozechner/pi-coding-agent` and
// `@mariozechner/pi-ai` beyond the custom-tool shims: the built-in tool factories (run by pi's Rust
// built-ins through `tools.execute`), truncation helpers, the components pi's examples use
// (`CustomEditor`, `DynamicBorder`, `BorderedLoader`), themes without colours, and the model calls
// (`complete`, `streamSimple`) through `ai.complete`. Facts (names, limits, texts) are pi's; the
// code is written here.
// ---------------------------------------------------------------------------------------------

/** pi's truncation limits. */
const DEFAULT_MAX_LINES = 2000;
const DEFAULT_MAX_BYTES = 50 * 1024;
const GREP_MAX_LINE_LENGTH = 500;

/** What the host learned at `initialize`: pi's version and agent directory. */
const hostInfo = { piVersion: "0.73.1", agentDir: undefined, models: [], available: undefined };

/** pi's `formatSize`: `512B`, `1.5KB`, `2.0MB`. */
function formatSize(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/** The byte length of `text` in UTF-8. */
function byteLength(text) {
  return Buffer.byteLength(text, "utf8");
}

/** A `TruncationResult` of pi. */
function truncation(content, fields) {
  return { content, truncated: false, truncatedBy: null, lastLinePartial: false, firstLineExceedsLimit: false, ...fields };
}

/** pi's `truncateHead`: the first lines of `content` within `maxLines` lines and `maxBytes` bytes
 *  (whole lines only; a first line over the byte limit gives nothing and `firstLineExceedsLimit`). */
function truncateHead(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const text = String(content ?? "");
  const lines = text.split("\n");
  const totalBytes = byteLength(text);
  const base = { totalLines: lines.length, totalBytes, maxLines, maxBytes };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return truncation(text, { ...base, outputLines: lines.length, outputBytes: totalBytes });
  }
  if (byteLength(lines[0]) > maxBytes) {
    return truncation("", { ...base, truncated: true, truncatedBy: "bytes", outputLines: 0, outputBytes: 0, firstLineExceedsLimit: true });
  }
  const kept = [];
  let bytes = 0;
  let by = "lines";
  for (const line of lines) {
    if (kept.length >= maxLines) break;
    const size = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      by = "bytes";
      break;
    }
    kept.push(line);
    bytes += size;
  }
  const out = kept.join("\n");
  return truncation(out, { ...base, truncated: true, truncatedBy: by, outputLines: kept.length, outputBytes: byteLength(out) });
}

/** The end of `text` within `maxBytes` bytes of UTF-8 (never half a character). */
function endWithinBytes(text, maxBytes) {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= maxBytes) return text;
  let start = buffer.length - maxBytes;
  while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
  return buffer.subarray(start).toString("utf8");
}

/** pi's `truncateTail`: the last lines of `content` within the limits; when even the last line is
 *  over the byte limit, its end (`lastLinePartial`). */
function truncateTail(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const text = String(content ?? "");
  const lines = text.split("\n");
  const totalBytes = byteLength(text);
  const base = { totalLines: lines.length, totalBytes, maxLines, maxBytes };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return truncation(text, { ...base, outputLines: lines.length, outputBytes: totalBytes });
  }
  const kept = [];
  let bytes = 0;
  let by = "lines";
  let partial = false;
  for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
    const size = byteLength(lines[i]) + (kept.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      by = "bytes";
      if (kept.length === 0) {
        const end = endWithinBytes(lines[i], maxBytes);
        kept.unshift(end);
        bytes = byteLength(end);
        partial = true;
      }
      break;
    }
    kept.unshift(lines[i]);
    bytes += size;
  }
  const out = kept.join("\n");
  return truncation(out, { ...base, truncated: true, truncatedBy: by, outputLines: kept.length, outputBytes: byteLength(out), lastLinePartial: partial });
}

/** pi's `truncateLine`: a line cut to `maxChars` characters with `... [truncated]`. */
function truncateLine(line, maxChars = GREP_MAX_LINE_LENGTH) {
  const text = String(line ?? "");
  if (text.length <= maxChars) return { text, wasTruncated: false };
  return { text: `${text.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

/** pi's agent directory: `PI_CODING_AGENT_DIR`, else what pi said at `initialize`, else
 *  `~/.pi/agent`. */
function getAgentDir() {
  const fromEnv = process.env.PI_CODING_AGENT_DIR;
  if (fromEnv) return fromEnv.startsWith("~/") ? joinPath(homedir(), fromEnv.slice(2)) : fromEnv;
  return hostInfo.agentDir ?? joinPath(homedir(), ".pi", "agent");
}

/** One scalar of YAML front matter: quoted strings, booleans, null, numbers, inline lists. */
function yamlScalar(raw) {
  const text = raw.trim();
  if (text === "") return "";
  if ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"))) {
    if (text.startsWith('"')) {
      try {
        return JSON.parse(text);
      } catch {
        return text.slice(1, -1);
      }
    }
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (text.startsWith("[") && text.endsWith("]")) {
    const inner = text.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map(yamlScalar);
  }
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === "true";
  if (/^(null|~)$/i.test(text)) return null;
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

/** pi's `parseFrontmatter`: the YAML front matter of `content` (between a leading `---` and the
 *  next line starting with `---`; keys with scalars, inline lists, `- item` lists and `|` / `>`
 *  blocks) and the body after it, trimmed. */
function parseFrontmatter(content) {
  const text = String(content ?? "").replace(/\r\n?/g, "\n");
  const end = text.startsWith("---") ? text.indexOf("\n---", 3) : -1;
  if (end < 0) return { frontmatter: {}, body: text };
  const frontmatter = {};
  const lines = text.slice(4, end).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const entry = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(lines[i]);
    if (!entry) continue;
    const [, key, rest] = entry;
    if (/^[|>][-+]?$/.test(rest)) {
      const block = [];
      while (i + 1 < lines.length && (/^\s+/.test(lines[i + 1]) || lines[i + 1] === "")) block.push(lines[++i].replace(/^\s{2}/, ""));
      while (block.length > 0 && block.at(-1) === "") block.pop();
      const joined = rest.startsWith("|") ? block.join("\n") : block.join(" ").trim();
      frontmatter[key] = rest.endsWith("-") ? joined : joined + "\n";
    } else if (rest === "") {
      const items = [];
      while (i + 1 < lines.length && /^\s*-\s+/.test(lines[i + 1])) items.push(yamlScalar(lines[++i].replace(/^\s*-\s+/, "")));
      frontmatter[key] = items.length > 0 ? items : null;
    } else {
      frontmatter[key] = yamlScalar(rest);
    }
  }
  return { frontmatter, body: text.slice(end + 4).trim() };
}

/** pi's `stripFrontmatter`: the body without its front matter. */
function stripFrontmatter(content) {
  return parseFrontmatter(content).body;
}

/** pi's texts around summaries in the model's context. */
const COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
const BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUMMARY_SUFFIX = "</summary>";

/** How a `!` command reads in the model's context. */
function bashExecutionToText(message) {
  let text = `Ran \`${message.command}\`\n`;
  text += message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)";
  if (message.cancelled) text += "\n\n(command cancelled)";
  else if (message.exitCode !== null && message.exitCode !== undefined && message.exitCode !== 0) {
    text += `\n\nCommand exited with code ${message.exitCode}`;
  }
  if (message.truncated && message.fullOutputPath) text += `\n\n[Output truncated. Full output: ${message.fullOutputPath}]`;
  return text;
}

/** pi's `convertToLlm`: session messages as the model reads them (custom messages, summaries and
 *  `!` commands become user messages; `!!` commands are left out). */
function convertToLlm(messages) {
  const out = [];
  for (const m of messages ?? []) {
    const user = (content) => out.push({ role: "user", content, timestamp: m.timestamp });
    switch (m?.role) {
      case "bashExecution":
        if (!m.excludeFromContext) user([{ type: "text", text: bashExecutionToText(m) }]);
        break;
      case "custom":
        user(typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);
        break;
      case "branchSummary":
        user([{ type: "text", text: BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX }]);
        break;
      case "compactionSummary":
        user([{ type: "text", text: COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX }]);
        break;
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      default:
        break;
    }
  }
  return out;
}

/** The text blocks of `content` joined. */
function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((c) => c?.type === "text").map((c) => c.text).join("");
}

/** pi's `serializeConversation`: LLM messages as `[User]: …`, `[Assistant]: …`, `[Assistant
 *  thinking]: …`, `[Assistant tool calls]: name(k=v, …)`, `[Tool result]: …` (2000 characters at
 *  most) paragraphs. */
function serializeConversation(messages) {
  const parts = [];
  for (const m of messages ?? []) {
    if (m?.role === "user") {
      const text = textOf(m.content);
      if (text) parts.push(`[User]: ${text}`);
    } else if (m?.role === "assistant") {
      const texts = [];
      const thinking = [];
      const calls = [];
      for (const block of m.content ?? []) {
        if (block.type === "text") texts.push(block.text);
        else if (block.type === "thinking") thinking.push(block.thinking);
        else if (block.type === "toolCall") {
          const args = Object.entries(block.arguments ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
          calls.push(`${block.name}(${args.join(", ")})`);
        }
      }
      if (thinking.length > 0) parts.push(`[Assistant thinking]: ${thinking.join("\n")}`);
      if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`);
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else if (m?.role === "toolResult") {
      let text = textOf(m.content);
      if (text.length > 2000) text = `${text.slice(0, 2000)}\n\n[... ${text.length - 2000} more characters truncated]`;
      if (text) parts.push(`[Tool result]: ${text}`);
    }
  }
  return parts.join("\n\n");
}

/** The characters of text blocks (and 4800 for each image) of `content`. */
function contentChars(content) {
  if (typeof content === "string") return content.length;
  let chars = 0;
  for (const block of content ?? []) {
    if (block?.type === "text" && block.text) chars += block.text.length;
    if (block?.type === "image") chars += 4800;
  }
  return chars;
}

/** pi's `estimateTokens`: about four characters a token, counted per message role. */
function estimateTokens(message) {
  let chars = 0;
  switch (message?.role) {
    case "user":
    case "custom":
    case "toolResult":
      chars = contentChars(message.content);
      break;
    case "assistant":
      for (const block of message.content ?? []) {
        if (block.type === "text") chars += block.text.length;
        else if (block.type === "thinking") chars += block.thinking.length;
        else if (block.type === "toolCall") chars += block.name.length + JSON.stringify(block.arguments).length;
      }
      break;
    case "bashExecution":
      chars = String(message.command ?? "").length + String(message.output ?? "").length;
      break;
    case "branchSummary":
    case "compactionSummary":
      chars = String(message.summary ?? "").length;
      break;
    default:
      return 0;
  }
  return Math.ceil(chars / 4);
}

// --- Themes ---------------------------------------------------------------------------------

/** pi's `Theme`, without colours: every style returns its text (pi in Rust's TUI styles what the
 *  host renders as plain lines). */
class Theme {
  constructor(name = "plain") {
    this.name = name;
  }
  fg(_color, text) {
    return plain(text);
  }
  bg(_color, text) {
    return plain(text);
  }
  getFgAnsi(_color) {
    return "";
  }
  getBgAnsi(_color) {
    return "";
  }
  getThinkingBorderColor(_level) {
    return plain;
  }
  getBashModeBorderColor() {
    return plain;
  }
}

// The one-argument styles are `plain` itself (methods: not enumerable, as in a class body).
for (const name of ["bold", "italic", "underline", "strikethrough", "inverse", "dim"]) {
  Object.defineProperty(Theme.prototype, name, { value: plain, writable: true, configurable: true });
}

/** The theme handed to renderers and `ctx.ui.theme`. */
const PLAIN_THEME = new Theme();

/** pi's `getMarkdownTheme`: pi-tui `Markdown` styles, unstyled (`highlightCode` splits lines). */
function getMarkdownTheme() {
  const names = ["heading", "link", "linkUrl", "code", "codeBlock", "codeBlockBorder", "quote", "quoteBorder", "hr", "listBullet", "bold", "italic", "underline", "strikethrough"];
  return { ...Object.fromEntries(names.map((name) => [name, plain])), highlightCode: (code) => String(code ?? "").split("\n") };
}

/** pi's `getSelectListTheme`, unstyled. */
function getSelectListTheme() {
  return { selectedPrefix: plain, selectedText: plain, description: plain, scrollInfo: plain, noMatch: plain };
}

/** pi's `getSettingsListTheme`, unstyled. */
function getSettingsListTheme() {
  return { label: plain, value: plain, description: plain, cursor: "→ ", hint: plain };
}

/** The default keys of pi's app actions that `keyHint` / `keyText` name. */
const DEFAULT_ACTION_KEYS = {
  "app.tools.expand": "ctrl+o",
  "app.thinking.toggle": "ctrl+t",
  "app.interrupt": "escape",
  "app.exit": "ctrl+d",
  "app.clear": "ctrl+c",
  "app.model.cycleForward": "ctrl+p",
  "app.thinking.cycle": "shift+tab",
  "tui.select.confirm": "enter",
  "tui.select.cancel": "escape",
  "tui.select.up": "up",
  "tui.select.down": "down",
  "tui.input.submit": "enter",
};

/** pi's `keyText`: the key bound to `action`. */
function keyText(action) {
  return DEFAULT_ACTION_KEYS[action] ?? String(action);
}

/** pi's `keyHint`: `<key> <description>`. */
function keyHint(action, description) {
  return `${keyText(action)} ${description}`;
}

/** pi's `rawKeyHint`: `<key> <description>` for a key given as such. */
function rawKeyHint(key, description) {
  return `${key} ${description}`;
}

/** pi's `highlightCode`, without colours: the code's lines. */
function highlightCode(code, _lang) {
  return String(code ?? "").split("\n");
}

/** pi's `getLanguageFromPath`: the highlighting language of a file name. */
function getLanguageFromPath(path) {
  const ext = String(path ?? "").split(".").pop()?.toLowerCase();
  const languages = { ts: "typescript", tsx: "typescript", js: "javascript", jsx: "javascript", mjs: "javascript", py: "python", rs: "rust", go: "go", md: "markdown", json: "json", sh: "bash", yml: "yaml", yaml: "yaml", toml: "toml", html: "html", css: "css", java: "java", c: "c", h: "c", cpp: "cpp", rb: "ruby" };
  return languages[ext];
}

// --- Components of pi-coding-agent -------------------------------------------------------------

/** pi's `DynamicBorder`: one line of `─` across the width, through `color`. */
class DynamicBorder extends Component {
  constructor(color = plain) {
    super();
    this.color = color;
  }
  render(width) {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}

/** pi's `CustomEditor`: the editor extensions subclass for modal editing; escape calls `onEscape`,
 *  ctrl+d on an empty editor `onCtrlD`, keys bound to an action with a handler in
 *  `actionHandlers` call it; the rest edits. */
class CustomEditor extends Editor {
  constructor(tui = undefined, theme = undefined, keybindings = undefined, options = undefined) {
    super(tui, theme, options);
    this.keybindings = keybindings;
    this.actionHandlers = new Map();
    this.onEscape = undefined;
    this.onCtrlD = undefined;
    this.onPasteImage = undefined;
    this.onExtensionShortcut = undefined;
  }
  handleInput(data) {
    if (this.onExtensionShortcut?.(data) === true) return;
    if (matchesKey(data, "escape") && this.onEscape) {
      this.onEscape();
      return;
    }
    if (matchesKey(data, "ctrl+d") && this.getText() === "" && this.onCtrlD) {
      this.onCtrlD();
      return;
    }
    for (const [action, handler] of this.actionHandlers) {
      if (matchesKey(data, keyText(action))) {
        handler();
        return;
      }
    }
    super.handleInput(data);
  }
}

/** pi's `BorderedLoader`: a loader between two borders whose escape aborts `signal` (`onAbort`). */
class BorderedLoader extends Container {
  constructor(tui = undefined, theme = PLAIN_THEME, message = "Loading...", options = undefined) {
    super();
    this.cancellable = options?.cancellable !== false;
    this.loader = new CancellableLoader(tui, plain, plain, message);
    this.addChild(new DynamicBorder());
    this.addChild(this.loader);
    if (this.cancellable) this.addChild(new Text("escape cancel", 1, 0));
    this.addChild(new DynamicBorder());
    this.onAbort = undefined;
  }
  get signal() {
    return this.loader.signal;
  }
  handleInput(data) {
    if (!this.cancellable) return;
    this.loader.onAbort = () => this.onAbort?.();
    this.loader.handleInput(data);
  }
  dispose() {
    this.loader.dispose();
  }
}

// --- Built-in tools through pi ----------------------------------------------------------------

/** pi's built-in tools as `create<Name>Tool` makes them: label, description and parameters (pi
 *  0.73.1's), run by pi in Rust's own built-ins through `tools.execute`. */
const BUILTIN_TOOLS = {
  bash: {
    label: "bash",
    description: `Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.`,
    parameters: () =>
      Type.Object({
        command: Type.String({ description: "Bash command to execute" }),
        timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional, no default timeout)" })),
      }),
  },
  read: {
    label: "read",
    description: `Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.`,
    parameters: () =>
      Type.Object({
        path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
        offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
        limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
      }),
  },
  edit: {
    label: "edit",
    description:
      "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
    parameters: () =>
      Type.Object({
        path: Type.String({ description: "Path to the file to edit (relative or absolute)" }),
        edits: Type.Array(
          Type.Object({
            oldText: Type.String({
              description: "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
            }),
            newText: Type.String({ description: "Replacement text for this targeted edit." }),
          }, { additionalProperties: false }),
          {
            description:
              "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
          },
        ),
      }, { additionalProperties: false }),
  },
  write: {
    label: "write",
    description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
    parameters: () =>
      Type.Object({
        path: Type.String({ description: "Path to the file to write (relative or absolute)" }),
        content: Type.String({ description: "Content to write to the file" }),
      }),
  },
  grep: {
    label: "grep",
    description: `Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Long lines are truncated to ${GREP_MAX_LINE_LENGTH} chars.`,
    parameters: () =>
      Type.Object({
        pattern: Type.String({ description: "Search pattern (regex or literal string)" }),
        path: Type.Optional(Type.String({ description: "Directory or file to search (default: current directory)" })),
        glob: Type.Optional(Type.String({ description: "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'" })),
        ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search (default: false)" })),
        literal: Type.Optional(Type.Boolean({ description: "Treat pattern as literal string instead of regex (default: false)" })),
        context: Type.Optional(Type.Number({ description: "Number of lines to show before and after each match (default: 0)" })),
        limit: Type.Optional(Type.Number({ description: "Maximum number of matches to return (default: 100)" })),
      }),
  },
  find: {
    label: "find",
    description: `Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first).`,
    parameters: () =>
      Type.Object({
        pattern: Type.String({ description: "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'" }),
        path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
        limit: Type.Optional(Type.Number({ description: "Maximum number of results (default: 1000)" })),
      }),
  },
  ls: {
    label: "ls",
    description: `List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first).`,
    parameters: () =>
      Type.Object({
        path: Type.Optional(Type.String({ description: "Directory to list (default: current directory)" })),
        limit: Type.Optional(Type.Number({ description: "Maximum number of entries to return (default: 500)" })),
      }),
  },
};

/** Runs `command` through `operations.exec` (an extension's `BashOperations`: ssh, a sandbox…)
 *  as pi's bash tool does: output collected, the tail kept, a failing exit code thrown. */
async function execThroughOperations(operations, command, cwd, timeoutSeconds, signal, onUpdate) {
  let output = "";
  const onData = (chunk) => {
    output += Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk);
    onUpdate?.({ content: [{ type: "text", text: truncateTail(output).content }], details: undefined });
  };
  const { exitCode } = await operations.exec(command, cwd, { onData, signal, timeout: timeoutSeconds, env: process.env });
  const kept = truncateTail(output);
  let text = kept.content || "(no output)";
  if (kept.truncated) text += `\n\n[Showing last ${kept.outputLines} of ${kept.totalLines} lines]`;
  if (signal?.aborted) throw new Error(`${text}\n\nCommand aborted`);
  if (exitCode !== 0 && exitCode !== null && exitCode !== undefined) throw new Error(`${text}\n\nCommand exited with code ${exitCode}`);
  return { content: [{ type: "text", text }], details: kept.truncated ? { truncation: kept } : undefined };
}

/** The `execute` of built-in `tool` for `cwd` with pi's `options` (`operations` for bash,
 *  `spawnHook`), as `(toolCallId, params, signal, onUpdate)`. */
function builtinExecute(tool, cwd, options) {
  return async (toolCallId, params, signal, onUpdate) => {
    let args = { ...(params ?? {}) };
    if (tool === "bash" && typeof options?.spawnHook === "function") {
      const hooked = options.spawnHook({ command: String(args.command ?? ""), cwd, env: { ...process.env } });
      if (hooked?.command !== undefined) args = { ...args, command: hooked.command };
    }
    if (options?.operations !== undefined) {
      if (tool === "bash" && typeof options.operations.exec === "function") {
        return execThroughOperations(options.operations, String(args.command ?? ""), cwd, args.timeout, signal, onUpdate);
      }
      throw new Error(`create${tool[0].toUpperCase()}${tool.slice(1)}Tool: custom operations are not supported by pi in Rust (only bash operations are)`);
    }
    if (hostLink.request === undefined) throw new Error(`The ${tool} tool needs pi: it runs in pi's process`);
    if (signal?.aborted) throw new Error("Operation aborted");
    const request = { tool, params: args };
    if (typeof toolCallId === "string") request.callId = toolCallId;
    const result = await hostLink.request("tools.execute", request);
    return normalizeResult(result);
  };
}

/** pi's `create<Name>Tool(cwd, options?)`: the built-in as an agent tool. */
function createBuiltinTool(tool, cwd, options) {
  const spec = BUILTIN_TOOLS[tool];
  return {
    name: tool,
    label: spec.label,
    description: spec.description,
    parameters: spec.parameters(),
    execute: builtinExecute(tool, cwd, options),
  };
}

/** pi's `create<Name>ToolDefinition(cwd, options?)`: the built-in as an extension tool definition
 *  (`execute(toolCallId, params, signal, onUpdate, ctx)`). */
function createBuiltinToolDefinition(tool, cwd, options) {
  return createBuiltinTool(tool, cwd, options);
}

/** pi's `createLocalBashOperations()`: runs a command with bash in `cwd`, streaming its output. */
function createLocalBashOperations() {
  return {
    exec(command, cwd, { onData, signal, timeout, env } = {}) {
      return new Promise((resolvePromise, reject) => {
        const child = spawn("bash", ["-c", String(command)], { cwd, env: env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: process.platform !== "win32" });
        let timer;
        const kill = () => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
          } catch {
            child.kill("SIGKILL");
          }
        };
        child.stdout.on("data", (chunk) => onData?.(chunk));
        child.stderr.on("data", (chunk) => onData?.(chunk));
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          signal?.removeEventListener?.("abort", kill);
          resolvePromise({ exitCode: code });
        });
        signal?.addEventListener?.("abort", kill, { once: true });
        if (typeof timeout === "number" && timeout > 0) timer = setTimeout(kill, timeout * 1000);
      });
    },
  };
}

/** pi's `createEventBus()`: channels of listeners (`on` returns the unsubscribe function). */
function createEventBus() {
  const channels = new Map();
  return {
    on(channel, handler) {
      const list = channels.get(channel) ?? [];
      list.push(handler);
      channels.set(channel, list);
      return () => {
        const current = channels.get(channel) ?? [];
        channels.set(channel, current.filter((h) => h !== handler));
      };
    },
    emit(channel, data) {
      for (const handler of [...(channels.get(channel) ?? [])]) {
        try {
          const result = handler(data);
          if (typeof result?.catch === "function") result.catch((error) => console.error(`pi extension host: event handler of ${channel} failed:`, error));
        } catch (error) {
          console.error(`pi extension host: event handler of ${channel} failed:`, error);
        }
      }
    },
    clear() {
      channels.clear();
    },
  };
}

/** `is<Name>ToolResult(event)`: a `tool_result` event of built-in `name`. */
const toolResultOf = (name) => (event) => event?.toolName === name;

// `VERSION` is read when an extension imports it, after `initialize` told the host pi's version.
Object.defineProperty(SHIMS.codingAgent, "VERSION", { get: () => hostInfo.piVersion, enumerable: true });
Object.assign(SHIMS.codingAgent, {
  DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH, formatSize, truncateHead, truncateTail, truncateLine,
  getAgentDir, parseFrontmatter, stripFrontmatter, convertToLlm, serializeConversation, estimateTokens,
  Theme, initTheme: () => undefined, getMarkdownTheme, getSelectListTheme, getSettingsListTheme, keyHint, keyText,
  rawKeyHint, highlightCode, getLanguageFromPath, DynamicBorder, CustomEditor, BorderedLoader,
  createLocalBashOperations, createEventBus,
  defineTool: (tool) => tool,
  isToolCallEventType: (toolName, event) => event?.toolName === toolName,
  isBashToolResult: toolResultOf("bash"), isReadToolResult: toolResultOf("read"), isEditToolResult: toolResultOf("edit"),
  isWriteToolResult: toolResultOf("write"), isGrepToolResult: toolResultOf("grep"), isFindToolResult: toolResultOf("find"),
  isLsToolResult: toolResultOf("ls"),
  createCodingTools: (cwd, options) => ["read", "bash", "edit", "write"].map((t) => createBuiltinTool(t, cwd, options?.[t])),
  createReadOnlyTools: (cwd, options) => ["read", "grep", "find", "ls"].map((t) => createBuiltinTool(t, cwd, options?.[t])),
  ...Object.fromEntries(
    Object.keys(BUILTIN_TOOLS).flatMap((tool) => {
      const name = tool[0].toUpperCase() + tool.slice(1);
      return [
        [`create${name}Tool`, (cwd, options) => createBuiltinTool(tool, cwd, options)],
        [`create${name}ToolDefinition`, (cwd, options) => createBuiltinToolDefinition(tool, cwd, options)],
      ];
    }),
  ),
});

// --- pi-ai --------------------------------------------------------------------------------------

/** pi-ai's `AssistantMessageEventStream`: events pushed by a producer, read with `for await`;
 *  `result()` resolves with the final message (`end(message)`, or the `done` / `error` event's). */
class AssistantMessageEventStream {
  constructor() {
    this.queue = [];
    this.waiters = [];
    this.finished = false;
    this.final = new Promise((resolveFinal) => {
      this.resolveFinal = resolveFinal;
    });
  }
  push(event) {
    if (this.finished) return;
    if (event?.type === "done") this.resolveFinal(event.message);
    else if (event?.type === "error") this.resolveFinal(event.error);
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.queue.push(event);
    if (event?.type === "done" || event?.type === "error") this.end();
  }
  end(message) {
    if (message !== undefined) this.resolveFinal(message);
    this.finished = true;
    for (const waiter of this.waiters.splice(0)) waiter({ value: undefined, done: true });
  }
  result() {
    return this.final;
  }
  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift(), done: false });
        if (this.finished) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolveNext) => this.waiters.push(resolveNext));
      },
    };
  }
}

/** The `{provider, id}` of a model (or of a model id string). */
function modelRef(model) {
  return { provider: String(model?.provider ?? ""), id: String(model?.id ?? model ?? "") };
}

/** pi-ai's `complete(model, context, options?)`: one model call, made by pi (its providers, the
 *  user's credentials) through `ai.complete`; resolves with the `AssistantMessage`. An aborted
 *  `options.signal` rejects at once. */
async function complete(model, context, options = {}) {
  if (hostLink.request === undefined) throw new Error("complete() needs pi: model calls run in pi's process");
  const params = { model: modelRef(model), context: { messages: context?.messages ?? [] } };
  if (context?.systemPrompt !== undefined) params.context.systemPrompt = context.systemPrompt;
  if (context?.tools !== undefined) params.context.tools = JSON.parse(JSON.stringify(context.tools));
  const extra = {};
  if (options?.reasoning !== undefined) extra.reasoning = options.reasoning;
  if (options?.maxTokens !== undefined) extra.maxTokens = options.maxTokens;
  if (Object.keys(extra).length > 0) params.options = extra;
  const signal = options?.signal;
  if (signal?.aborted) throw new Error("Request was aborted");
  const call = hostLink.request("ai.complete", params);
  if (signal === undefined) return call;
  return Promise.race([
    call,
    new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("Request was aborted")), { once: true })),
  ]);
}

/** pi-ai's `streamSimple(model, context, options?)`: the `complete` answer as a stream of pi-ai's
 *  events (`start`, a start / delta / end per block, `done`; `error` when the call failed). */
function streamSimple(model, context, options = {}) {
  const stream = new AssistantMessageEventStream();
  complete(model, context, options).then(
    (message) => {
      const partial = { ...message, content: [] };
      stream.push({ type: "start", partial });
      (message?.content ?? []).forEach((block, contentIndex) => {
        partial.content.push(block);
        if (block.type === "text") {
          stream.push({ type: "text_start", contentIndex, partial });
          stream.push({ type: "text_delta", contentIndex, delta: block.text, partial });
          stream.push({ type: "text_end", contentIndex, content: block.text, partial });
        } else if (block.type === "thinking") {
          stream.push({ type: "thinking_start", contentIndex, partial });
          stream.push({ type: "thinking_delta", contentIndex, delta: block.thinking, partial });
          stream.push({ type: "thinking_end", contentIndex, content: block.thinking, partial });
        } else if (block.type === "toolCall") {
          stream.push({ type: "toolcall_start", contentIndex, partial });
          stream.push({ type: "toolcall_end", contentIndex, toolCall: block, partial });
        }
      });
      stream.push({ type: "done", reason: message?.stopReason ?? "stop", message });
    },
    (error) => {
      const failed = { role: "assistant", content: [], api: model?.api, provider: model?.provider, model: model?.id, stopReason: options?.signal?.aborted ? "aborted" : "error", errorMessage: messageOf(error), usage: emptyUsage(), timestamp: Date.now() };
      stream.push({ type: "error", reason: failed.stopReason, error: failed });
    },
  );
  return stream;
}

/** A usage with nothing used. */
function emptyUsage() {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/** pi-ai's `calculateCost(model, usage)`: fills `usage.cost` from the model's prices (per million
 *  tokens) and returns it. */
function calculateCost(model, usage) {
  const price = model?.cost ?? {};
  const cost = {
    input: ((price.input ?? 0) / 1_000_000) * (usage?.input ?? 0),
    output: ((price.output ?? 0) / 1_000_000) * (usage?.output ?? 0),
    cacheRead: ((price.cacheRead ?? 0) / 1_000_000) * (usage?.cacheRead ?? 0),
    cacheWrite: ((price.cacheWrite ?? 0) / 1_000_000) * (usage?.cacheWrite ?? 0),
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  if (usage && typeof usage === "object") usage.cost = cost;
  return cost;
}

/** pi-ai's `getModel(provider, id)`: the model pi told the host about, else a reference pi
 *  resolves when it is used (`complete` sends provider and id only). */
function getModel(provider, id) {
  return hostInfo.models.find((m) => m?.provider === provider && m?.id === id) ?? { provider, id, name: id };
}

/** API providers registered in this process (`registerApiProvider`): kept, not used — model calls
 *  go through pi. */
const apiProviders = new Map();

Object.assign(SHIMS.piAi, {
  Type, AssistantMessageEventStream, complete, streamSimple, calculateCost, getModel,
  stream: streamSimple,
  completeSimple: complete,
  streamSimpleAnthropic: streamSimple,
  streamSimpleOpenAIResponses: streamSimple,
  streamSimpleOpenAICompletions: streamSimple,
  streamSimpleGoogle: streamSimple,
  createAssistantMessageEventStream: () => new AssistantMessageEventStream(),
  getModels: (provider) => hostInfo.models.filter((m) => m?.provider === provider),
  getProviders: () => [...new Set(hostInfo.models.map((m) => m?.provider))],
  registerApiProvider: (provider) => {
    if (provider?.api !== undefined) apiProviders.set(provider.api, provider);
  },
  getApiProvider: (api) => apiProviders.get(api),
});
