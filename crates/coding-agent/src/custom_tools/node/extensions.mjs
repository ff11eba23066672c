
// ---------------------------------------------------------------------------------------------
// Part extensions.mjs — the extension mode: `node host.mjs --extensions <entry>...` runs pi 0.73's
// TypeScript / JavaScript extensions unchanged and speaks protocol version 2 (the contract
// `docs/extensions.md`, "The extension protocol"): `initialize` loads every entry in order and
// answers one `Registration` each; `event`, `command`, `command.complete`, `shortcut`, `execute`,
// `render`, `session`, `cancel`, `flags`, `events.emit` and `shutdown` are then served from what
// the extensions registered. Written for pi in Rust; no code of pi is copied.
// ---------------------------------------------------------------------------------------------

/** The protocol version of the extension mode. */
const EXTENSION_PROTOCOL_VERSION = 2;

/** The events an extension may subscribe to (pi 0.73.1). */
const EXTENSION_EVENTS = new Set([
  "resources_discover", "session_start", "session_before_switch", "session_before_fork", "session_before_compact",
  "session_compact", "session_shutdown", "session_before_tree", "session_tree", "context", "before_provider_request",
  "after_provider_response", "before_agent_start", "agent_start", "agent_end", "turn_start", "turn_end",
  "message_start", "message_update", "message_end", "tool_execution_start", "tool_execution_update",
  "tool_execution_end", "model_select", "thinking_level_select", "tool_call", "tool_result", "user_bash", "input",
]);

/** JSON of `value` (functions and symbols dropped), or `undefined` when it has none. */
function plainJson(value) {
  if (value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value) ?? "null");
}

/** An error that names the extension it came from (answered with `data.extension`). */
class ExtensionFailure extends Error {
  constructor(path, cause) {
    super(messageOf(cause));
    this.extension = path;
    this.cause = cause;
  }
}

/** The tool definition of an extension tool as the `Registration` lists it. */
function extensionToolDefinition(tool) {
  const definition = definitionOf(tool);
  if (typeof tool.promptSnippet === "string") definition.promptSnippet = tool.promptSnippet;
  if (Array.isArray(tool.promptGuidelines)) definition.promptGuidelines = tool.promptGuidelines.map(String);
  if (typeof tool.renderCall === "function") definition.hasRenderCall = true;
  if (typeof tool.renderResult === "function") definition.hasRenderResult = true;
  if (tool.renderShell === "self") definition.renderShell = "self";
  return definition;
}

/** Runs the extension host on stdin / stdout for the extension entries `entryPaths` (in order). */
function startExtensionHost(entryPaths) {
  const channel = openChannel("pi extension host");
  const { request, notify } = channel;
  linkHost(request, notify);
  const exec = makeExec(() => state.cwd);
  const pending = makePendingActions(request, "pi extension host");
  const state = { cwd: process.cwd(), hasUI: false, started: false, loaded: false, flags: {} };
  /** The extensions, in load order: `{path, registration, error?}`. */
  const extensions = entryPaths.map((path) => ({ path, error: undefined, registration: emptyRegistration(path) }));
  /** What the extensions registered, across them: tools and commands by name (in order), event
   *  handlers in registration order, shortcuts, message renderers, flags. */
  const tools = new Map();
  const commands = new Map();
  const handlers = [];
  const shortcuts = new Map();
  const renderers = new Map();
  const flagDefaults = new Map();
  /** The in-process event bus (`pi.events`). */
  const bus = createEventBus();
  /** The AbortController of every request in flight that gives a `ctx.signal`, by callId or
   *  request id. */
  const controllers = new Map();
  /** The session as pi last sent it (the v1 delta of `Context.session`). */
  let session = { entries: [], sessionFile: undefined };
  /** The last `Context` pi sent. */
  let snapshot = {};

  /** The load position of `extension`. */
  function order(extension) {
    return extensions.indexOf(extension);
  }

  function emptyRegistration(path) {
    return { path, tools: [], commands: [], flags: [], shortcuts: [], events: [], messageRenderers: [], providers: [] };
  }

  /** Adds `item` to the registration list `kind` of `extension`; after loading, tells pi at once
   *  (`register`). */
  function registered(extension, kind, item) {
    const list = extension.registration[kind];
    if ((kind === "events" || kind === "messageRenderers") && list.includes(item)) return;
    const key = kind === "tools" || kind === "commands" || kind === "flags" ? "name" : kind === "shortcuts" ? "shortcut" : undefined;
    const at = key === undefined ? -1 : list.findIndex((existing) => existing[key] === item[key]);
    if (at >= 0) list[at] = item;
    else list.push(item);
    if (state.loaded) notify("register", { path: extension.path, [kind]: [item] });
  }

  /** Takes in a `Context` snapshot: the session delta is applied, the rest kept as it is. */
  function takeSnapshot(context) {
    if (context === null || typeof context !== "object") return snapshot;
    const entries = applySessionDelta(session.entries, context.session);
    if (entries !== undefined) {
      session = { entries, sessionFile: context.sessionFile ?? undefined };
    } else if ("sessionFile" in context) {
      session = { ...session, sessionFile: context.sessionFile ?? undefined };
    }
    if (typeof context.cwd === "string") state.cwd = context.cwd;
    // The registry, when pi sends it (as to custom tools: `{models, available}`, `available`
    // indexing `models`); the current model is always known.
    const registry = context.modelRegistry;
    if (registry && typeof registry === "object" && Array.isArray(registry.models)) {
      hostInfo.models = registry.models;
      hostInfo.available = Array.isArray(registry.available) ? registry.available : registry.models.map((_, i) => i);
    }
    if (context.model) {
      const known = hostInfo.models.findIndex((m) => m?.provider === context.model.provider && m?.id === context.model.id);
      if (known < 0) hostInfo.models.push(context.model);
    }
    snapshot = context;
    return snapshot;
  }

  const baseSessionManager = readonlySessionManager(
    {
      get entries() {
        return session.entries;
      },
      get sessionFile() {
        return session.sessionFile;
      },
    },
    () => state.cwd,
  );
  /** `ctx.sessionManager`: read-only, over the session pi sent (ids and name from the snapshot). */
  const sessionManager = {
    ...baseSessionManager,
    getSessionId: () => snapshot.sessionId ?? baseSessionManager.getSessionId(),
    getLeafId: () => (snapshot.leafId !== undefined ? snapshot.leafId : baseSessionManager.getLeafId()),
    getSessionName: () => snapshot.sessionName ?? undefined,
  };

  /** `ctx.modelRegistry` over the models pi told the host about; keys are asked of pi. */
  const modelRegistry = makeModelRegistry(request, {
    get all() {
      return hostInfo.models;
    },
    get available() {
      return hostInfo.available;
    },
  });

  /** `ctx.ui`: dialogs and the fire-and-forget calls go to pi (`ui.*`); what needs a component
   *  bridge answers as pi's RPC mode does (no-ops, `custom` → `undefined`). */
  const ui = {
    ...makeDialogs(request, notify),
    async editor(title, prefill) {
      const params = { title: String(title) };
      if (prefill !== undefined) params.prefill = String(prefill);
      return (await request("ui.editor", params)) ?? undefined;
    },
    setStatus(key, text) {
      notify("ui.setStatus", { key: String(key), text: text === undefined || text === null ? null : String(text) });
    },
    setWidget(key, content, options) {
      if (typeof content === "function") return;
      const params = { key: String(key), lines: Array.isArray(content) ? content.map(String) : null };
      if (options?.placement !== undefined) params.placement = options.placement;
      notify("ui.setWidget", params);
    },
    setTitle(title) {
      notify("ui.setTitle", { title: String(title) });
    },
    setEditorText(text) {
      notify("ui.setEditorText", { text: String(text ?? "") });
    },
    getEditorText: () => snapshot.editorText ?? "",
    pasteToEditor(text) {
      notify("ui.setEditorText", { text: String(text ?? "") });
    },
    setWorkingMessage(message) {
      notify("ui.setWorkingMessage", { message: message === undefined || message === null ? null : String(message) });
    },
    setWorkingVisible() {},
    setWorkingIndicator() {},
    setHiddenThinkingLabel() {},
    setFooter() {},
    setHeader() {},
    setEditorComponent() {},
    getEditorComponent: () => undefined,
    addAutocompleteProvider() {},
    onTerminalInput: () => () => {},
    custom: async () => undefined,
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "Themes cannot be changed from an extension in pi in Rust" }),
    getToolsExpanded: () => false,
    setToolsExpanded() {},
    get theme() {
      return PLAIN_THEME;
    },
  };

  /** `ExtensionContext` over `context` (a snapshot); `signal` is the request's, given while the
   *  agent runs (or to a tool call); `systemPrompt()` answers `getSystemPrompt`. */
  function makeContext(context, signal, systemPrompt = () => context.systemPrompt ?? "") {
    return {
      ui,
      get hasUI() {
        return context.hasUI ?? state.hasUI;
      },
      get cwd() {
        return context.cwd ?? state.cwd;
      },
      sessionManager,
      modelRegistry,
      get model() {
        return context.model ?? undefined;
      },
      signal,
      isIdle: () => context.isIdle !== false,
      abort: () => notify("ctx.abort", {}),
      hasPendingMessages: () => context.hasPendingMessages === true,
      shutdown: () => notify("ctx.shutdown", {}),
      getContextUsage: () => context.contextUsage ?? undefined,
      compact(options = {}) {
        const params = {};
        if (options?.customInstructions !== undefined) params.customInstructions = String(options.customInstructions);
        request("ctx.compact", params).then(
          (result) => options?.onComplete?.(result ?? undefined),
          (error) => (options?.onError ? options.onError(error) : console.error(`pi extension host: compaction failed: ${messageOf(error)}`)),
        );
      },
      getSystemPrompt: systemPrompt,
    };
  }

  /** `ExtensionCommandContext`: the context plus the session controls (each asked of pi). A
   *  `withSession` callback runs with this host's context once pi switched (its snapshot is the
   *  command's). */
  function makeCommandContext(context, signal) {
    const ctx = makeContext(context, signal);
    const replaced = async (method, params, options) => {
      const result = await request(method, params);
      const cancelled = result?.cancelled === true;
      if (!cancelled && typeof options?.withSession === "function") await options.withSession(ctx);
      return { cancelled };
    };
    return Object.assign(ctx, {
      waitForIdle: async () => {
        await request("ctx.waitForIdle", {});
      },
      newSession: (options = {}) => replaced("ctx.newSession", options?.parentSession !== undefined ? { parentSession: options.parentSession } : {}, options),
      fork: (entryId, options = {}) => {
        const params = { entryId: String(entryId) };
        if (options?.position !== undefined) params.position = options.position;
        return replaced("ctx.fork", params, options);
      },
      navigateTree: async (targetId, options = {}) => {
        const params = { targetId: String(targetId) };
        for (const key of ["summarize", "customInstructions", "replaceInstructions", "label"]) {
          if (options?.[key] !== undefined) params[key] = options[key];
        }
        const result = await request("ctx.navigateTree", params);
        return { cancelled: result?.cancelled === true };
      },
      switchSession: (sessionPath, options = {}) => replaced("ctx.switchSession", { sessionPath: String(sessionPath) }, options),
      reload: async () => {
        await request("ctx.reload", {});
      },
    });
  }

  /** pi's `ExtensionAPI` for `extension`. */
  function makeApi(extension) {
    const api = {
      on(event, handler) {
        if (typeof handler !== "function") throw new TypeError(`pi.on("${event}") needs a handler function`);
        if (!EXTENSION_EVENTS.has(event)) console.error(`pi extension host: ${extension.path} subscribes to an unknown event "${event}"`);
        handlers.push({ extension, event, handler });
        registered(extension, "events", event);
      },
      registerTool(tool) {
        if (tool === null || typeof tool !== "object") throw new TypeError("registerTool needs a tool definition");
        if (typeof tool.name !== "string" || tool.name === "") throw new TypeError("registerTool: the tool has no name");
        if (typeof tool.execute !== "function") throw new TypeError(`registerTool: tool "${tool.name}" has no execute function`);
        // As pi: of two extensions registering one name, the first in load order runs it.
        const owner = tools.get(tool.name);
        if (owner === undefined || order(owner.extension) >= order(extension)) tools.set(tool.name, { extension, tool });
        registered(extension, "tools", extensionToolDefinition(tool));
      },
      registerCommand(name, options) {
        if (typeof options?.handler !== "function") throw new TypeError(`registerCommand("${name}") needs a handler`);
        // In load order: pi names them `name:1`, `name:2`… when several extensions register `name`.
        const list = commands.get(name) ?? [];
        const at = list.findIndex((entry) => entry.extension === extension);
        if (at >= 0) list[at] = { extension, options };
        else list.push({ extension, options });
        list.sort((a, b) => order(a.extension) - order(b.extension));
        commands.set(name, list);
        const item = { name: String(name) };
        if (options.description !== undefined) item.description = String(options.description);
        if (typeof options.getArgumentCompletions === "function") item.hasCompletions = true;
        registered(extension, "commands", item);
      },
      registerShortcut(shortcut, options) {
        if (typeof options?.handler !== "function") throw new TypeError(`registerShortcut("${shortcut}") needs a handler`);
        // As pi: keys compare in lower case, and of two extensions the last in load order wins.
        const key = String(shortcut).toLowerCase();
        const owner = shortcuts.get(key);
        if (owner === undefined || order(owner.extension) <= order(extension)) shortcuts.set(key, { extension, options });
        const item = { shortcut: String(shortcut) };
        if (options.description !== undefined) item.description = String(options.description);
        registered(extension, "shortcuts", item);
      },
      registerFlag(name, options = {}) {
        const item = { name: String(name), type: options.type === "string" ? "string" : "boolean" };
        if (options.description !== undefined) item.description = String(options.description);
        if (options.default !== undefined) {
          item.default = options.default;
          if (!flagDefaults.has(item.name)) flagDefaults.set(item.name, options.default);
        }
        registered(extension, "flags", item);
      },
      /** As pi: only the extension's own flags; pi's value (`flags`), else the first default. */
      getFlag(name) {
        const key = String(name);
        if (!extension.registration.flags.some((flag) => flag.name === key)) return undefined;
        return key in state.flags ? state.flags[key] : flagDefaults.get(key);
      },
      registerMessageRenderer(customType, renderer) {
        if (typeof renderer !== "function") throw new TypeError(`registerMessageRenderer("${customType}") needs a renderer function`);
        // As pi: the first extension in load order that registered the type draws it.
        const owner = renderers.get(String(customType));
        if (owner === undefined || order(owner.extension) >= order(extension)) renderers.set(String(customType), { extension, renderer });
        registered(extension, "messageRenderers", String(customType));
      },
      sendMessage(message, options) {
        const params = { message: plainJson(message) };
        if (options !== undefined) params.options = plainJson(options);
        return request("pi.sendMessage", params).then(() => undefined);
      },
      sendUserMessage(content, options) {
        const params = { content: plainJson(content) };
        if (options !== undefined) params.options = plainJson(options);
        return request("pi.sendUserMessage", params).then(() => undefined);
      },
      appendEntry(customType, data) {
        const params = { customType: String(customType) };
        if (data !== undefined) params.data = plainJson(data);
        return request("pi.appendEntry", params).then(() => undefined);
      },
      setSessionName(name) {
        snapshot = { ...snapshot, sessionName: String(name) };
        return request("pi.setSessionName", { name: String(name) }).then(() => undefined);
      },
      getSessionName: () => snapshot.sessionName ?? undefined,
      setLabel(entryId, label) {
        return request("pi.setLabel", { entryId: String(entryId), label: label === undefined || label === null ? null : String(label) }).then(() => undefined);
      },
      exec: (command, args, options) => exec(command, args, options),
      getActiveTools: () => [...(snapshot.activeTools ?? [])],
      getAllTools: () => (snapshot.allTools ?? []).map((tool) => ({ ...tool })),
      setActiveTools(names) {
        const list = [...(names ?? [])].map(String);
        snapshot = { ...snapshot, activeTools: list };
        return request("pi.setActiveTools", { names: list }).then(() => undefined);
      },
      getCommands: () => (snapshot.commands ?? []).map((command) => ({ ...command })),
      async setModel(model) {
        return (await request("pi.setModel", modelRef(model))) === true;
      },
      getThinkingLevel: () => snapshot.thinkingLevel ?? "off",
      setThinkingLevel(level) {
        snapshot = { ...snapshot, thinkingLevel: String(level) };
        return request("pi.setThinkingLevel", { level: String(level) }).then(() => undefined);
      },
      registerProvider(name, config) {
        const provider = { name: String(name), config: plainJson(config ?? {}) };
        if (!state.loaded) {
          extension.registration.providers.push(provider);
          return;
        }
        request("pi.registerProvider", provider).catch((error) => console.error(`pi extension host: registerProvider("${name}") failed: ${messageOf(error)}`));
      },
      unregisterProvider(name) {
        if (!state.loaded) {
          extension.registration.providers = extension.registration.providers.filter((p) => p.name !== String(name));
          return;
        }
        request("pi.unregisterProvider", { name: String(name) }).catch((error) => console.error(`pi extension host: unregisterProvider("${name}") failed: ${messageOf(error)}`));
      },
      // Ours (docs/resolve.md): stage a change for the user to apply or discard.
      pushPendingAction: (action) => pending.push(action),
      events: {
        on: (channel, handler) => bus.on(channel, handler),
        emit(channel, data) {
          bus.emit(channel, data);
          notify("pi.events.emit", { channel: String(channel), data: plainJson(data) ?? null });
        },
      },
    };
    return api;
  }

  /** Loads extension `extension`: imports it and awaits its factory with its `pi`. A failure is
   *  kept as its `error` (its registrations so far are dropped); the others load on. */
  async function loadExtension(extension) {
    try {
      const module = await import(pathToFileURL(resolvePath(extension.path)).href);
      const factory = factoryOf(module);
      if (factory === undefined) throw new Error("Extension must export a default function");
      await factory(makeApi(extension));
    } catch (error) {
      console.error(`pi extension host: ${extension.path} failed to load:`, error);
      extension.error = `Failed to load extension: ${messageOf(error)}`;
      for (const [name, owner] of tools) if (owner.extension === extension) tools.delete(name);
      for (const [name, list] of commands) commands.set(name, list.filter((entry) => entry.extension !== extension));
      for (const [key, owner] of shortcuts) if (owner.extension === extension) shortcuts.delete(key);
      for (const [key, owner] of renderers) if (owner.extension === extension) renderers.delete(key);
      for (let i = handlers.length - 1; i >= 0; i--) if (handlers[i].extension === extension) handlers.splice(i, 1);
    }
  }

  async function initialize(params) {
    beginInitialize(state, params, EXTENSION_PROTOCOL_VERSION, `${EXTENSION_PROTOCOL_VERSION} with --extensions`, "pi extension host");
    if (typeof params?.piVersion === "string") hostInfo.piVersion = params.piVersion;
    if (typeof params?.agentDir === "string") hostInfo.agentDir = params.agentDir;
    snapshot = { cwd: state.cwd, hasUI: state.hasUI };
    installHooks();
    for (const extension of extensions) await loadExtension(extension);
    state.loaded = true;
    return {
      extensions: extensions.map((extension) => (extension.error !== undefined ? { path: extension.path, error: extension.error } : extension.registration)),
    };
  }

  /** The controller of the request `id` / call `callId`, removed when it settles. */
  function controllerFor(key) {
    const controller = new AbortController();
    controllers.set(key, controller);
    return controller;
  }

  /** Calls `handler` of `extension`; a throw becomes an `ExtensionFailure` naming it. */
  async function call(extension, fn) {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ExtensionFailure) throw error;
      throw new ExtensionFailure(extension.path, error);
    }
  }

  /** `event`: the process's handlers of the event's type, chained in registration order by the
   *  contract's rules. */
  async function handleEvent({ event, context } = {}, controller) {
    const ctxSnapshot = takeSnapshot(context);
    const type = event?.type;
    const list = handlers.filter((h) => h.event === type);
    if (list.length === 0) return null;
    const signal = ctxSnapshot.isIdle === false || type === "tool_call" || type === "tool_result" ? controller.signal : undefined;
    // pi gives these two events the signal that cancels the compaction / summary.
    if (type === "session_before_compact" || type === "session_before_tree") event.signal = controller.signal;
    let systemPrompt = event.systemPrompt ?? ctxSnapshot.systemPrompt ?? "";
    const ctx = makeContext(ctxSnapshot, signal, () => systemPrompt);
    // As in pi: a `tool_call` handler that throws ends the event (the answer is the error, naming
    // the extension); any other handler's throw is reported (`extension.error`) and the chain goes
    // on without its result.
    const run = async (h) => {
      if (type === "tool_call") return call(h.extension, () => h.handler(event, ctx));
      try {
        return await h.handler(event, ctx);
      } catch (error) {
        console.error(`pi extension host: ${h.extension.path}: ${type} handler failed:`, error);
        notify("extension.error", { extension: h.extension.path, event: type, message: messageOf(error) });
        return undefined;
      }
    };
    switch (type) {
      case "tool_call": {
        const before = JSON.stringify(event.input ?? null);
        for (const h of list) {
          const result = await run(h);
          if (result?.block) {
            const answer = { block: true };
            if (result.reason !== undefined) answer.reason = String(result.reason);
            if (JSON.stringify(event.input ?? null) !== before) answer.input = event.input;
            return answer;
          }
        }
        return JSON.stringify(event.input ?? null) !== before ? { input: event.input } : null;
      }
      case "tool_result": {
        const patch = {};
        for (const h of list) {
          const result = await run(h);
          if (result === null || typeof result !== "object") continue;
          for (const key of ["content", "details", "isError"]) {
            if (result[key] !== undefined) {
              patch[key] = result[key];
              event[key] = result[key];
            }
          }
        }
        return Object.keys(patch).length > 0 ? patch : null;
      }
      case "input": {
        let transformed = false;
        for (const h of list) {
          const result = await run(h);
          if (result?.action === "handled") return { action: "handled" };
          if (result?.action === "transform") {
            transformed = true;
            event.text = String(result.text ?? "");
            if (result.images !== undefined) event.images = result.images;
          }
        }
        if (!transformed) return { action: "continue" };
        const answer = { action: "transform", text: event.text };
        if (event.images !== undefined) answer.images = event.images;
        return answer;
      }
      case "before_agent_start": {
        const messages = [];
        let changed = false;
        for (const h of list) {
          const result = await run(h);
          if (result?.message) messages.push(plainJson(result.message));
          if (typeof result?.systemPrompt === "string") {
            systemPrompt = result.systemPrompt;
            event.systemPrompt = systemPrompt;
            changed = true;
          }
        }
        const answer = {};
        if (changed) answer.systemPrompt = systemPrompt;
        if (messages.length === 1) answer.message = messages[0];
        else if (messages.length > 1) answer.messages = messages;
        return Object.keys(answer).length > 0 ? answer : null;
      }
      case "context": {
        let replaced = false;
        for (const h of list) {
          const result = await run(h);
          if (Array.isArray(result?.messages)) {
            event.messages = result.messages;
            replaced = true;
          }
        }
        return replaced ? { messages: event.messages } : null;
      }
      case "before_provider_request": {
        let replaced = false;
        for (const h of list) {
          const result = await run(h);
          if (result !== undefined) {
            event.payload = result;
            replaced = true;
          }
        }
        return replaced ? { payload: event.payload } : null;
      }
      case "message_end": {
        let replaced = false;
        for (const h of list) {
          const result = await run(h);
          if (result?.message && typeof result.message === "object") {
            event.message = result.message;
            replaced = true;
          }
        }
        return replaced ? { message: event.message } : null;
      }
      case "resources_discover": {
        const found = {};
        for (const h of list) {
          const result = await run(h);
          for (const key of ["skillPaths", "promptPaths", "themePaths"]) {
            if (Array.isArray(result?.[key])) found[key] = [...(found[key] ?? []), ...result[key].map(String)];
          }
        }
        return Object.keys(found).length > 0 ? found : null;
      }
      case "user_bash": {
        for (const h of list) {
          const result = await run(h);
          if (result?.result) return { result: plainJson(result.result) };
          if (result?.operations && typeof result.operations.exec === "function") {
            return { result: await call(h.extension, () => runUserBash(result.operations, event, controller.signal)) };
          }
        }
        return null;
      }
      case "session_before_switch":
      case "session_before_fork":
      case "session_before_compact":
      case "session_before_tree": {
        let last = null;
        for (const h of list) {
          const result = await run(h);
          if (result?.cancel) return plainJson(result);
          if (result !== undefined && result !== null) last = plainJson(result);
        }
        return last;
      }
      default:
        for (const h of list) await run(h);
        return null;
    }
  }

  /** A `!` command run through an extension's `BashOperations` (`user_bash` answering
   *  `{operations}`): its result as pi records it. */
  async function runUserBash(operations, event, signal) {
    let output = "";
    const { exitCode } = await operations.exec(String(event.command ?? ""), event.cwd ?? state.cwd, {
      onData: (chunk) => (output += Buffer.isBuffer(chunk) ? chunk.toString("utf8") : String(chunk)),
      signal,
      env: process.env,
    });
    const kept = truncateTail(output);
    return { output: kept.content, exitCode: exitCode ?? null, cancelled: signal.aborted, truncated: kept.truncated };
  }

  /** The command named `name` (`review:2` = the second extension's `review`). */
  function findCommand(name) {
    const exact = commands.get(name) ?? [];
    if (exact.length > 0) return exact[0];
    const suffixed = /^(.*):(\d+)$/.exec(String(name));
    if (suffixed) return (commands.get(suffixed[1]) ?? [])[Number(suffixed[2]) - 1];
    return undefined;
  }

  async function handleCommand({ name, args, context } = {}, controller) {
    const entry = findCommand(name);
    if (entry === undefined) throw new RpcError(-32602, `Unknown command: ${name}`);
    const ctxSnapshot = takeSnapshot(context);
    const ctx = makeCommandContext(ctxSnapshot, ctxSnapshot.isIdle === false ? controller.signal : undefined);
    await call(entry.extension, () => pending.withPushes(() => entry.options.handler(String(args ?? ""), ctx)));
    return null;
  }

  async function handleComplete({ name, prefix } = {}) {
    const entry = findCommand(name);
    if (entry === undefined || typeof entry.options.getArgumentCompletions !== "function") return null;
    const items = await call(entry.extension, () => entry.options.getArgumentCompletions(String(prefix ?? "")));
    if (!Array.isArray(items)) return null;
    return items.map((item) => {
      const out = { value: String(item.value), label: String(item.label ?? item.value) };
      if (item.description !== undefined) out.description = String(item.description);
      return out;
    });
  }

  async function handleShortcut({ shortcut, context } = {}, controller) {
    const entry = shortcuts.get(String(shortcut).toLowerCase());
    if (entry === undefined) throw new RpcError(-32602, `Unknown shortcut: ${shortcut}`);
    const ctxSnapshot = takeSnapshot(context);
    await call(entry.extension, () => entry.options.handler(makeContext(ctxSnapshot, ctxSnapshot.isIdle === false ? controller.signal : undefined)));
    return null;
  }

  async function handleExecute({ callId, tool: name, params, context } = {}, controller) {
    let finished = false;
    try {
      const entry = tools.get(name);
      if (entry === undefined) throw new RpcError(-32602, `Unknown tool: ${name}`);
      const ctxSnapshot = takeSnapshot(context);
      if (controller.signal.aborted) throw new Error("Operation aborted");
      const onUpdate = (partial) => {
        if (!finished && !controller.signal.aborted) notify("update", { callId, partial: normalizeResult(partial) });
      };
      const ctx = makeContext(ctxSnapshot, controller.signal);
      // `prepareArguments` (pi runs it before validating; a no-op for arguments already valid).
      const args = typeof entry.tool.prepareArguments === "function" ? entry.tool.prepareArguments(params ?? {}) : params ?? {};
      const result = await callScope.run(callId, () =>
        pending.withPushes(() => entry.tool.execute(callId, args, controller.signal, onUpdate, ctx)),
      );
      const normalized = normalizeResult(result);
      if (result?.terminate === true) normalized.terminate = true;
      return normalized;
    } finally {
      finished = true;
    }
  }

  /** `render`: a tool's `renderCall` / `renderResult` or a message renderer, as lines at
   *  `width`; `null` when there is none (pi draws its default). */
  async function handleRender(params = {}) {
    const width = Math.max(1, Number(params.width) || 80);
    const expanded = params.expanded === true;
    let component;
    if (params.kind === "message") {
      const entry = renderers.get(String(params.message?.customType ?? params.name));
      if (entry === undefined) return null;
      component = await call(entry.extension, () => entry.renderer(params.message, { expanded }, PLAIN_THEME));
    } else {
      const entry = tools.get(params.name);
      const fn = params.kind === "call" ? entry?.tool.renderCall : entry?.tool.renderResult;
      if (typeof fn !== "function") return null;
      const renderContext = {
        args: params.args ?? {},
        toolCallId: String(params.toolCallId ?? ""),
        invalidate() {},
        lastComponent: undefined,
        state: {},
        cwd: state.cwd,
        executionStarted: params.kind === "result",
        argsComplete: true,
        isPartial: params.isPartial === true,
        expanded,
        showImages: false,
        isError: params.isError === true,
      };
      component = await call(entry.extension, () =>
        params.kind === "call"
          ? fn(params.args ?? {}, PLAIN_THEME, renderContext)
          : fn(params.result ?? { content: [] }, { expanded, isPartial: params.isPartial === true }, PLAIN_THEME, renderContext),
      );
    }
    if (component === undefined || component === null || typeof component.render !== "function") return null;
    return { lines: component.render(width).map(String) };
  }

  function handleSession(params = {}) {
    takeSnapshot(params.context);
    if (Array.isArray(params.entries)) session = { entries: params.entries, sessionFile: params.sessionFile ?? session.sessionFile };
    return null;
  }

  let shuttingDown = false;
  function shutdown() {
    if (!shuttingDown) {
      shuttingDown = true;
      for (const controller of controllers.values()) controller.abort();
    }
    return null;
  }

  const methods = {
    initialize,
    event: handleEvent,
    command: handleCommand,
    "command.complete": handleComplete,
    shortcut: handleShortcut,
    execute: handleExecute,
    render: handleRender,
    session: handleSession,
    "pendingAction.apply": (params) => pending.apply(params),
    "pendingAction.reject": (params) => pending.reject(params),
    shutdown,
  };

  /** The JSON-RPC error of a failure: `errorAnswer`'s, with the extension's path in `data`. */
  function failureAnswer(error) {
    const cause = error instanceof ExtensionFailure ? error.cause : error;
    const answer = errorAnswer(cause);
    if (error instanceof ExtensionFailure) answer.data = { ...(answer.data ?? {}), extension: error.extension };
    return answer;
  }

  function onNotification({ method, params }) {
    if (method === "cancel") {
      const key = params?.callId !== undefined ? `call:${params.callId}` : `request:${params?.requestId ?? params?.id}`;
      controllers.get(key)?.abort();
    } else if (method === "flags") {
      state.flags = { ...(params?.values ?? {}) };
    } else if (method === "events.emit") {
      bus.emit(String(params?.channel ?? ""), params?.data);
    }
  }

  /** The key of a request's controller: its callId (`execute`) or its id. */
  const keyOf = (method, params, id) => (method === "execute" ? `call:${params?.callId}` : `request:${id}`);
  serveRequests(channel, {
    handlers: methods,
    controllerFor: (method, params, id) => controllerFor(keyOf(method, params, id)),
    release: (method, params, id) => controllers.delete(keyOf(method, params, id)),
    errorOf: failureAnswer,
    onNotification,
    shutdown,
  });
}
