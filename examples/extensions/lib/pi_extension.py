"""pi_extension: the extension side of pi's extension protocol (process protocol version 2), for
extensions written in Python.

An extension is a directory with an `extension.json` (`{"command": "python3", "args":
["extension.py"]}`) in `.pi/extensions/`, `~/.pi/agent/extensions/`, or named with `pi -e <dir>`.
It registers what pi 0.73's TypeScript `ExtensionAPI` registers — tools, commands, flags, event
handlers — and asks pi for what a TypeScript extension asks (dialogs, messages, entries, …):

    import pi_extension

    ext = pi_extension.Extension()

    @ext.command("greet", description="Greet someone")
    def greet(args, ctx):
        ctx.ui.notify(f"Hello, {args or 'world'}!")

    @ext.on("tool_call")
    def guard(event, ctx):
        if event["toolName"] == "bash" and "rm -rf" in event["input"].get("command", ""):
            return {"block": True, "reason": "rm -rf is not allowed"}

    ext.run()

It builds on `pi_tool` (examples/custom-tools/lib/pi_tool.py, the process-tool side of version 1:
tools, `exec`, dialogs, pending actions, the mutation queue), which it finds next to itself or
beside this examples folder. docs/extensions.md has the protocol.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _candidate in (_HERE, os.path.join(_HERE, "..", "..", "custom-tools", "lib")):
    if os.path.exists(os.path.join(_candidate, "pi_tool.py")):
        sys.path.insert(0, os.path.normpath(_candidate))
        break

import pi_tool  # noqa: E402
from pi_tool import RpcError, ToolError, result, text  # noqa: E402,F401 - re-exported

PROTOCOL_VERSION = 2


class Ui(pi_tool.Ui):
    """pi's dialogs and the fire-and-forget UI calls. Without a user interface (print mode)
    dialogs answer at once with their default and the rest is dropped."""

    def select(self, title, options, timeout=None):
        params = {"title": title, "options": list(options)}
        if timeout is not None:
            params["timeout"] = int(timeout * 1000)
        return self._pi._request("ui.select", params)

    def editor(self, title, prefill=None):
        params = {"title": title}
        if prefill is not None:
            params["prefill"] = prefill
        return self._pi._request("ui.editor", params)

    def set_status(self, key, value=None):
        self._pi._notify("ui.setStatus", {"key": key, "text": value})

    def set_widget(self, key, lines=None, placement=None):
        params = {"key": key, "lines": None if lines is None else list(lines)}
        if placement is not None:
            params["placement"] = placement
        self._pi._notify("ui.setWidget", params)

    def set_title(self, title):
        self._pi._notify("ui.setTitle", {"title": title})

    def set_editor_text(self, value):
        self._pi._notify("ui.setEditorText", {"text": value})


class Context:
    """pi's `ExtensionContext`: the snapshot pi sent with the request (`ctx.cwd`, `ctx.model`,
    `ctx.session_name`, …, every key of the `Context` as an attribute in snake case), the UI,
    and what a command may ask of the session."""

    def __init__(self, ext, snapshot):
        self._ext = ext
        self.data = snapshot or {}
        self.ui = ext.ui

    def __getattr__(self, name):
        camel = name.split("_")[0] + "".join(part.title() for part in name.split("_")[1:])
        if camel in self.data:
            return self.data[camel]
        raise AttributeError(name)

    @property
    def has_ui(self):
        return bool(self.data.get("hasUI", self._ext.has_ui))

    def abort(self):
        self._ext._notify("ctx.abort", {})

    def shutdown(self):
        self._ext._notify("ctx.shutdown", {})

    def compact(self, custom_instructions=None):
        params = {} if custom_instructions is None else {"customInstructions": custom_instructions}
        return self._ext._request("ctx.compact", params)

    def wait_for_idle(self):
        return self._ext._request("ctx.waitForIdle", {})

    def new_session(self):
        return self._ext._request("ctx.newSession", {})


class Extension(pi_tool.Pi):
    """One extension: what it registers, and the connection to pi."""

    def __init__(self, path=None):
        super().__init__()
        self.path = path or os.getcwd()
        self.ui = Ui(self)
        self._prompt = {}
        self._commands = {}
        self._handlers = {}
        self._flags = {}
        self._event_listeners = {}
        self.flag_values = {}
        self.agent_dir = None

    # Registration.

    def tool(self, name, description, parameters=None, label=None, execution_mode=None, mutated_paths=None,
             prompt_snippet=None, prompt_guidelines=None):
        """pi_tool's `tool` decorator, with pi 0.73's `promptSnippet` (the tool's line in the
        system prompt) and `promptGuidelines` (lines added to its guidelines)."""
        register = super().tool(name, description, parameters, label, execution_mode, mutated_paths)
        extra = {}
        if prompt_snippet is not None:
            extra["promptSnippet"] = prompt_snippet
        if prompt_guidelines is not None:
            extra["promptGuidelines"] = list(prompt_guidelines)

        def decorate(fn):
            register(fn)
            self._tools[name][0].update(extra)
            return fn

        return decorate

    def command(self, name, description=None, complete=None):
        """Decorator: `fn(args, ctx)` runs for `/name args`. `complete(prefix)` may return the
        argument completions: a list of `{"value", "label", "description"?}`."""

        def register(fn):
            self._commands[name] = (description, fn, complete)
            return fn

        return register

    def on(self, event_type):
        """Decorator: `fn(event, ctx)` handles the event; what it returns is the event's result
        (`{"block": True, "reason": ...}` for `tool_call`, `{"action": "transform", "text": ...}`
        for `input`, …) or None."""

        def register(fn):
            self._handlers.setdefault(event_type, []).append(fn)
            return fn

        return register

    def flag(self, name, type="boolean", description=None, default=None):
        """`registerFlag`: `--name` (boolean) or `--name <value>` (type "string")."""
        self._flags[name] = {"name": name, "type": type, "description": description, "default": default}

    def get_flag(self, name):
        return self.flag_values.get(name, self._flags.get(name, {}).get("default"))

    def on_bus(self, channel):
        """Decorator: `fn(data)` gets what other extensions emit on `channel` (`pi.events`)."""

        def register(fn):
            self._event_listeners.setdefault(channel, []).append(fn)
            return fn

        return register

    # What an extension asks of pi.

    def emit(self, channel, data=None):
        self._notify("pi.events.emit", {"channel": channel, "data": data})

    def send_message(self, custom_type, content, display=True, details=None, trigger_turn=False, deliver_as=None):
        message = {"customType": custom_type, "content": content, "display": display}
        if details is not None:
            message["details"] = details
        options = {"triggerTurn": trigger_turn}
        if deliver_as is not None:
            options["deliverAs"] = deliver_as
        return self._request("pi.sendMessage", {"message": message, "options": options})

    def send_user_message(self, content, deliver_as=None):
        params = {"content": content}
        if deliver_as is not None:
            params["options"] = {"deliverAs": deliver_as}
        return self._request("pi.sendUserMessage", params)

    def append_entry(self, custom_type, data=None):
        return self._request("pi.appendEntry", {"customType": custom_type, "data": data})

    def set_session_name(self, name):
        return self._request("pi.setSessionName", {"name": name})

    def set_active_tools(self, names):
        return self._request("pi.setActiveTools", {"names": list(names)})

    def exec(self, command, args=(), timeout=None):
        params = {"command": command, "args": list(args)}
        if timeout is not None:
            params["timeout"] = int(timeout * 1000)
        return self._request("exec", params)

    def run_tool(self, tool, params, call_id=None):
        """pi's built-in tool `tool` (`bash`, `read`, …) run in pi's cwd (`createBashTool` & co)."""
        request = {"tool": tool, "params": params}
        if call_id is not None:
            request["callId"] = call_id
        return self._request("tools.execute", request)

    # The protocol.

    def _initialize(self, params):
        self.cwd = params.get("cwd")
        self.has_ui = bool(params.get("hasUI"))
        self.pi_version = params.get("piVersion")
        self.agent_dir = params.get("agentDir")
        registration = {
            "path": self.path,
            "tools": [definition for definition, _ in self._tools.values()],
            "commands": [
                {"name": name, "description": description, "hasCompletions": complete is not None}
                for name, (description, _, complete) in self._commands.items()
            ],
            "flags": [{key: value for key, value in flag.items() if value is not None} for flag in self._flags.values()],
            "shortcuts": [],
            "events": list(self._handlers),
            "messageRenderers": [],
            "providers": [],
        }
        return {"extensions": [registration]}

    def _dispatch(self, message):
        method = message["method"]
        params = message.get("params") or {}
        request_id = message.get("id")
        if method == "flags":
            self.flag_values = dict(params.get("values") or {})
        elif method == "events.emit":
            for listener in self._event_listeners.get(params.get("channel"), []):
                listener(params.get("data"))
        elif method == "event" and request_id is not None:
            self._in_thread(request_id, self._event, params)
        elif method == "command" and request_id is not None:
            self._in_thread(request_id, self._command, params)
        elif method == "command.complete" and request_id is not None:
            self._answer(request_id, self._complete, params)
        else:
            super()._dispatch(message)

    def _execute(self, params):
        name = params.get("tool")
        if name not in self._tools:
            raise ToolError(f"Unknown tool: {name}")
        call = pi_tool.Call(self, params["callId"], name)
        call.ctx = Context(self, params.get("context"))
        self._calls[call.call_id] = call
        try:
            return pi_tool._as_result(self._tools[name][1](call, params.get("params") or {}))
        finally:
            self._calls.pop(call.call_id, None)

    def _command(self, params):
        name = params.get("name")
        if name not in self._commands:
            raise ToolError(f"Unknown command: {name}")
        self._commands[name][1](params.get("args", ""), Context(self, params.get("context")))
        return None

    def _complete(self, params):
        command = self._commands.get(params.get("name"))
        if command is None or command[2] is None:
            return None
        return command[2](params.get("prefix", ""))

    def _event(self, params):
        """Runs the handlers of the event in registration order and chains their results as pi
        does: a `tool_call` block ends the chain, a changed `input` / `tool_call` input is what the
        next handler sees, other results are merged."""
        event = dict(params.get("event") or {})
        ctx = Context(self, params.get("context"))
        merged = None
        for handler in self._handlers.get(event.get("type"), []):
            outcome = handler(event, ctx)
            if outcome is None:
                continue
            if event.get("type") == "tool_call" and outcome.get("block"):
                return outcome
            if event.get("type") == "input":
                if outcome.get("action") == "handled":
                    return outcome
                if outcome.get("action") == "transform":
                    event["text"] = outcome.get("text", event.get("text"))
            merged = dict(merged or {}, **outcome)
        return merged
