"""pi_tool: the tool side of pi's process-tool protocol (version 1), in one small file.

pi starts a process tool as a child process (the command of its `tool.json`) and talks to it
over stdin / stdout: JSON-RPC 2.0, one JSON object per line. This module does the talking, so a
tool is just its definitions:

    import pi_tool

    pi = pi_tool.Pi()

    @pi.tool(name="hello", description="Say hello",
             parameters={"type": "object", "properties": {"name": {"type": "string"}},
                         "required": ["name"]})
    def hello(call, params):
        return pi_tool.result(f"Hello, {params['name']}!", details={"greeted": params["name"]})

    pi.run()

It uses the standard library only and is meant to be read: top to bottom it is the protocol
(docs/custom-tools.md has the reference). Every `execute`, `session` and `pendingAction.*`
request runs in a thread of its own, so calls can run in parallel and a tool can wait for pi
(`call.exec`, `pi.ui.select`, ...) while the main thread keeps reading.

Anything a tool prints goes to stderr: stdout belongs to the protocol. pi keeps the last stderr
line for its error message when the process dies.
"""

import contextlib
import itertools
import json
import sys
import threading
import traceback

PROTOCOL_VERSION = 1

# JSON-RPC error codes.
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
TOOL_FAILED = -32000


# --- Results --------------------------------------------------------------------------------


def text(value):
    """A text content block."""
    return {"type": "text", "text": value}


def result(content, details=None):
    """A tool result: `content` is a string or a list of content blocks; `details` is what the
    UI shows and what the tool rebuilds its state from (never sent to the model)."""
    blocks = [text(content)] if isinstance(content, str) else list(content)
    out = {"content": blocks}
    if details is not None:
        out["details"] = details
    return out


class ToolError(Exception):
    """Raise from a tool (or a pending action's apply / reject) to fail it: the model reads
    `message`; `details` become the details of the error result."""

    def __init__(self, message, details=None):
        super().__init__(message)
        self.message = message
        self.details = details


class RpcError(Exception):
    """pi answered one of our requests with an error (e.g. no pending-action store)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _as_result(value):
    """What a tool function returned, as a ToolResult."""
    if value is None:
        return result([])
    if isinstance(value, str):
        return result(value)
    return value


def _as_error(error):
    """An exception, as a JSON-RPC error object. `data.kind` tells pi whether the tool shaped the
    error for the model (`"tool"`: a ToolError, reported as it is) or something else went wrong
    (`"exception"`: a pending action's apply then reads `Apply failed: <message>`)."""
    if isinstance(error, ToolError):
        data = {"kind": "tool"}
        if error.details is not None:
            data["details"] = error.details
        return {"code": TOOL_FAILED, "message": error.message, "data": data}
    if isinstance(error, RpcError):
        message = error.message
    else:
        traceback.print_exc(file=sys.stderr)
        message = str(error) or type(error).__name__
    return {"code": TOOL_FAILED, "message": message, "data": {"kind": "exception"}}


# --- One call -------------------------------------------------------------------------------


class Call:
    """A running `execute`: its id, whether pi cancelled it, and what it may ask of pi."""

    def __init__(self, pi, call_id, tool):
        self.pi = pi
        self.call_id = call_id
        self.tool = tool
        self.cancelled = threading.Event()

    def update(self, content, details=None):
        """Streams a partial result (pi shows it while the call runs)."""
        partial = result(content, details)
        self.pi._notify("update", {"callId": self.call_id, "partial": partial})

    def sleep(self, seconds):
        """Waits `seconds`, or less when the call is cancelled; True when it was not."""
        return not self.cancelled.wait(seconds)

    def exec(self, command, args=(), timeout=None):
        """Runs a command in pi's cwd: {stdout, stderr, code, killed}. pi kills it when this
        call is aborted (`killed` is then true) or after `timeout` seconds."""
        params = {"command": command, "args": list(args), "callId": self.call_id}
        if timeout is not None:
            params["timeout"] = int(timeout * 1000)
        return self.pi._request("exec", params)

    @contextlib.contextmanager
    def file_mutation(self, path):
        """`with call.file_mutation(path):` holds the file's place in pi's per-file mutation queue
        (pi's `withFileMutationQueue`) for the block: the block waits until earlier changes of the
        file by any tool are done. Put the whole read-modify-write in it. A file the tool declared
        in `mutated_paths` is held by the call already, and the block runs at once."""
        answer = self.pi._request("mutationQueue.lock", {"path": str(path), "callId": self.call_id})
        try:
            yield
        finally:
            self.pi._notify("mutationQueue.unlock", {"lockId": answer["lockId"]})

    def push_pending_action(self, label, apply, reject=None, details=None, source_tool_name=None):
        """Stages a change instead of making it: pi forces the model to call `resolve`, which
        calls `apply(reason, extra)` or `reject(reason, extra)` here. Both return a result (a
        string or `result(...)`); `reject` may return None for pi's default discard text.
        Raises RpcError when pi has no pending-action store."""
        action_id = f"{self.call_id}/{next(self.pi._action_ids)}"
        self.pi._actions[action_id] = (apply, reject)
        params = {
            "actionId": action_id,
            "label": label,
            "hasReject": reject is not None,
            "callId": self.call_id,
        }
        if source_tool_name is not None:
            params["sourceToolName"] = source_tool_name
        if details is not None:
            params["details"] = details
        try:
            self.pi._request("pendingAction.push", params)
        except RpcError:
            del self.pi._actions[action_id]
            raise
        return action_id


# --- The user interface ---------------------------------------------------------------------


class Ui:
    """pi's dialogs. Without a user interface (`pi.has_ui` false) every question gets its "no
    answer" at once: None / False."""

    def __init__(self, pi):
        self._pi = pi

    def select(self, title, options):
        return self._pi._request("ui.select", {"title": title, "options": list(options)})

    def confirm(self, title, message):
        return self._pi._request("ui.confirm", {"title": title, "message": message})

    def input(self, title, placeholder=None):
        params = {"title": title}
        if placeholder is not None:
            params["placeholder"] = placeholder
        return self._pi._request("ui.input", params)

    def notify(self, message, kind="info"):
        """kind: "info", "warning" or "error"."""
        self._pi._notify("ui.notify", {"message": message, "type": kind})


# --- The process ----------------------------------------------------------------------------


class Pi:
    """The connection to pi, and the tools this process defines."""

    def __init__(self):
        # stdout belongs to the protocol; `print` goes to stderr.
        self._out = sys.stdout.buffer
        sys.stdout = sys.stderr
        self._write_lock = threading.Lock()
        self._tools = {}
        self._session_handlers = []
        self._calls = {}
        self._actions = {}
        self._action_ids = itertools.count(1)
        self._ids = itertools.count(1)
        self._waiting = {}
        self._waiting_lock = threading.Lock()
        self.ui = Ui(self)
        # Filled by `initialize`.
        self.cwd = None
        self.has_ui = False
        self.pi_version = None

    # Definitions.

    def tool(self, name, description, parameters=None, label=None, execution_mode=None, mutated_paths=None):
        """Decorator: `fn(call, params)` becomes the tool `name`; it returns a string or
        `result(...)`, or raises ToolError. execution_mode: "parallel" or "sequential".
        mutated_paths: the names of the parameters holding paths of files a call changes
        (`mutatedPaths`): pi takes their places in its per-file mutation queue in source order
        before the call runs (docs/custom-tools.md, "File mutations")."""
        definition = {
            "name": name,
            "description": description,
            "parameters": parameters or {"type": "object", "properties": {}},
        }
        if label is not None:
            definition["label"] = label
        if execution_mode is not None:
            definition["executionMode"] = execution_mode
        if mutated_paths is not None:
            definition["mutatedPaths"] = list(mutated_paths)

        def register(fn):
            self._tools[name] = (definition, fn)
            return fn

        return register

    def on_session(self, fn):
        """Decorator: `fn(event)` gets every session event: {reason, entries, sessionFile,
        previousSessionFile, hasUI}; reason "shutdown" when pi exits."""
        self._session_handlers.append(fn)
        return fn

    # Sending.

    def _send(self, message):
        line = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._write_lock:
            self._out.write(line.encode("utf-8"))
            self._out.flush()

    def _notify(self, method, params):
        self._send({"method": method, "params": params})

    def _request(self, method, params):
        """Sends a request to pi and blocks this thread until the answer arrives."""
        request_id = next(self._ids)
        slot = {"done": threading.Event()}
        with self._waiting_lock:
            self._waiting[request_id] = slot
        self._send({"id": request_id, "method": method, "params": params})
        slot["done"].wait()
        if "error" in slot:
            error = slot["error"]
            raise RpcError(error.get("code", TOOL_FAILED), error.get("message", "error"))
        return slot.get("result")

    def _answer(self, request_id, fn, *args):
        """Runs `fn` and answers the request with its value or its exception."""
        try:
            self._send({"id": request_id, "result": fn(*args)})
        except Exception as error:  # noqa: BLE001 - every failure becomes an error answer
            self._send({"id": request_id, "error": _as_error(error)})

    def _in_thread(self, request_id, fn, *args):
        threading.Thread(target=self._answer, args=(request_id, fn, *args), daemon=True).start()

    # Reading.

    def run(self):
        """Serves pi until it closes stdin."""
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            message = json.loads(line)
            if "method" in message:
                self._dispatch(message)
            elif "id" in message:
                self._deliver(message)
        # pi is gone: wake everything still waiting for it.
        with self._waiting_lock:
            for slot in self._waiting.values():
                slot["error"] = {"code": TOOL_FAILED, "message": "pi closed the connection"}
                slot["done"].set()

    def _deliver(self, message):
        """An answer to one of our requests."""
        with self._waiting_lock:
            slot = self._waiting.pop(message["id"], None)
        if slot is None:
            return
        if "error" in message:
            slot["error"] = message["error"]
        else:
            slot["result"] = message.get("result")
        slot["done"].set()

    def _dispatch(self, message):
        method = message["method"]
        params = message.get("params") or {}
        request_id = message.get("id")
        if method == "cancel":
            call = self._calls.get(params.get("callId"))
            if call is not None:
                call.cancelled.set()
        elif request_id is None:
            return  # a notification we do not know: ignored
        elif method == "initialize":
            self._answer(request_id, self._initialize, params)
        elif method == "execute":
            self._in_thread(request_id, self._execute, params)
        elif method == "session":
            self._in_thread(request_id, self._session, params)
        elif method in ("pendingAction.apply", "pendingAction.reject"):
            self._in_thread(request_id, self._resolve, method, params)
        elif method == "shutdown":
            event = {"reason": "shutdown", "entries": [], "sessionFile": None, "previousSessionFile": None}
            self._answer(request_id, self._session, event)
        else:
            self._send({"id": request_id, "error": {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}})

    # What pi asks.

    def _initialize(self, params):
        self.cwd = params.get("cwd")
        self.has_ui = bool(params.get("hasUI"))
        self.pi_version = params.get("piVersion")
        return {"tools": [definition for definition, _ in self._tools.values()]}

    def _execute(self, params):
        name = params.get("tool")
        if name not in self._tools:
            raise ToolError(f"Unknown tool: {name}")
        call = Call(self, params["callId"], name)
        self._calls[call.call_id] = call
        try:
            return _as_result(self._tools[name][1](call, params.get("params") or {}))
        finally:
            self._calls.pop(call.call_id, None)

    def _session(self, event):
        if "hasUI" in event:
            self.has_ui = bool(event["hasUI"])
        for handler in self._session_handlers:
            handler(event)
        return None

    def _resolve(self, method, params):
        action_id = params.get("actionId")
        if action_id not in self._actions:
            raise ToolError(f"Unknown pending action: {action_id}")
        apply, reject = self._actions[action_id]
        reason, extra = params.get("reason", ""), params.get("extra")
        if method == "pendingAction.apply":
            value = _as_result(apply(reason, extra))
        else:
            value = reject(reason, extra) if reject is not None else None
            value = None if value is None else _as_result(value)
        # Resolved: pi will not ask about this action again (a failed apply raised above).
        del self._actions[action_id]
        return value
