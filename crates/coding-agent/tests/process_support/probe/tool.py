"""probe: a process tool for pi's tests, one tool per behaviour the host must handle."""

import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ next to the helper
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "..", "examples", "custom-tools", "lib"))
import pi_tool  # noqa: E402

pi = pi_tool.Pi()
log = []
log_changed = threading.Condition()
sessions = []
meeting = threading.Barrier(2, timeout=30)
OBJECT = {"type": "object", "properties": {}}


def note(line):
    with log_changed:
        log.append(line)
        log_changed.notify_all()


@pi.on_session
def session(event):
    sessions.append({"reason": event["reason"], "entries": len(event.get("entries", [])), "hasUI": event.get("hasUI")})
    mark = os.environ.get("PROBE_MARK_DIR")
    if event["reason"] == "shutdown" and mark:
        with open(os.path.join(mark, "shutdown"), "w") as f:
            f.write(str(os.getpid()))


@pi.tool(name="echo", description="Echo text", parameters={
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
def echo(call, params):
    return pi_tool.result(params["text"], {"text": params["text"], "pid": os.getpid()})


@pi.tool(name="progress", description="Stream steps", parameters={
    "type": "object", "properties": {"steps": {"type": "integer"}}, "required": ["steps"]})
def progress(call, params):
    for step in range(1, params["steps"] + 1):
        call.update(f"step {step}", {"step": step})
    return "done"


@pi.tool(name="meet", description="Returns once two calls are running at the same time", parameters=OBJECT)
def meet(call, params):
    try:
        meeting.wait()
    except threading.BrokenBarrierError:
        raise pi_tool.ToolError("alone")
    return "met"


@pi.tool(name="crash", description="Dies", parameters={
    "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
def crash(call, params):
    print("some earlier noise", file=sys.stderr)
    print(params["message"], file=sys.stderr)
    sys.stderr.flush()
    os._exit(3)


@pi.tool(name="hang", description="Never answers", parameters=OBJECT)
def hang(call, params):
    time.sleep(3600)


@pi.tool(name="garbage", description="Writes a line that is not JSON", parameters=OBJECT)
def garbage(call, params):
    with pi._write_lock:
        pi._out.write(b"this is not json\n")
        pi._out.flush()
    time.sleep(3600)


@pi.tool(name="wait_cancel", description="Waits until cancelled", parameters=OBJECT)
def wait_cancel(call, params):
    call.update("waiting")
    call.cancelled.wait()
    note(f"cancelled {call.call_id}")
    return "too late"


@pi.tool(name="exec_sleep", description="Runs a long command", parameters={
    "type": "object", "properties": {"marker": {"type": "string"}}, "required": ["marker"]})
def exec_sleep(call, params):
    script = f"echo started > '{params['marker']}'; sleep 30"
    outcome = call.exec("sh", ["-c", script])
    note(f"exec killed={outcome['killed']}")
    return "finished"


@pi.tool(name="big", description="Returns `lines` numbered lines of `width` x's (or `megabytes` MB)", parameters={
    "type": "object", "properties": {"lines": {"type": "integer"}, "width": {"type": "integer"},
                                     "megabytes": {"type": "integer"}}})
def big(call, params):
    if "megabytes" in params:
        return "y" * (params["megabytes"] << 20)
    return "\n".join(f"{i:06d} " + "x" * params["width"] for i in range(1, params["lines"] + 1))


@pi.tool(name="exec", description="Runs a command", parameters=OBJECT)
def run(call, params):
    outcome = call.exec("sh", ["-c", "pwd; echo err >&2; exit 2"])
    return pi_tool.result("ran", outcome)


@pi.tool(name="write_file", description="Writes text to a path; says what happened", parameters={
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
def write_file(call, params):
    try:
        with open(params["path"], "w") as f:
            f.write("written by the probe\n")
        return "written"
    except OSError as error:
        return f"refused: {error.strerror}"


@pi.tool(name="exec_write", description="Has pi run a shell writing to a path", parameters={
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
def exec_write(call, params):
    outcome = call.exec("sh", ["-c", 'echo by-exec > "$1"', "sh", params["path"]])
    return pi_tool.result("ran", outcome)


@pi.tool(name="connect", description="Connects to a TCP port on 127.0.0.1; says what happened", parameters={
    "type": "object", "properties": {"port": {"type": "integer"}}, "required": ["port"]})
def connect(call, params):
    import socket
    try:
        with socket.create_connection(("127.0.0.1", params["port"]), timeout=10):
            return "connected"
    except OSError as error:
        return f"refused: {error.strerror}"


@pi.tool(name="ui", description="Asks the user", parameters=OBJECT)
def ui(call, params):
    answers = {
        "select": pi.ui.select("Pick one", ["red", "green"]),
        "confirm": pi.ui.confirm("Sure?", "Really do it"),
        "input": pi.ui.input("Name", "your name"),
    }
    pi.ui.notify("probe says hi", "warning")
    return pi_tool.result("asked", answers)


@pi.tool(name="log", description="The log, once it has `min` lines", parameters={
    "type": "object", "properties": {"min": {"type": "integer"}}, "required": ["min"]})
def show_log(call, params):
    with log_changed:
        log_changed.wait_for(lambda: len(log) >= params["min"], timeout=30)
        return pi_tool.result("\n".join(log), {"log": list(log)})


@pi.tool(name="info", description="What pi told the process", parameters=OBJECT)
def info(call, params):
    return pi_tool.result("info", {
        "cwd": pi.cwd, "hasUI": pi.has_ui, "piVersion": pi.pi_version, "env": os.environ.get("PROBE_ENV"),
        "pid": os.getpid(), "sessions": sessions,
    })


@pi.tool(name="unknown", description="Asks pi something it does not know", parameters=OBJECT)
def unknown(call, params):
    try:
        pi._request("nope", {})
    except pi_tool.RpcError as error:
        return f"{error.code} {error.message}"
    return "answered?"


@pi.tool(name="bad_result", description="Answers with something that is no result", parameters=OBJECT)
def bad_result(call, params):
    return {"content": "not a list"}


@pi.tool(name="fail", description="Fails with details", parameters=OBJECT)
def fail(call, params):
    raise pi_tool.ToolError("It did not work.", {"why": "testing"})


@pi.tool(name="stage", description="Stages an action whose apply may fail", parameters={
    "type": "object", "properties": {"fail": {"type": "boolean"}, "crash": {"type": "boolean"},
                                     "bigApply": {"type": "integer"}},
    "required": ["fail"]})
def stage(call, params):
    def apply(reason, extra):
        if params.get("crash"):
            raise RuntimeError("Out of memory.")
        if params["fail"]:
            raise pi_tool.ToolError("Disk is full.")
        if "bigApply" in params:
            # `bigApply` lines of 100 characters: an apply that reports far too much.
            return "\n".join(f"applied {i:06d} " + "a" * 85 for i in range(1, params["bigApply"] + 1))
        return pi_tool.result(f"applied: {reason}", {"extra": extra})

    def reject(reason, extra):
        raise RuntimeError("Cannot clean up.")

    # With `crash`, apply and reject raise exceptions that are no ToolError.
    call.push_pending_action("Stage: probe", apply, reject if params.get("crash") else None,
                             details={"fail": params["fail"]})
    return "staged"


@pi.tool(name="append", description="Appends text to a file after a delay", parameters={
    "type": "object",
    "properties": {"path": {"type": "string"}, "text": {"type": "string"}, "delayMs": {"type": "integer"}},
    "required": ["path", "text"]}, mutated_paths=["path"])
def append(call, params):
    time.sleep(params.get("delayMs", 0) / 1000)
    path = os.path.join(pi.cwd, params["path"])
    # Declared in mutated_paths: the call holds the file already, so this does not wait.
    with call.file_mutation(path):
        try:
            with open(path) as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        with open(path, "w") as f:
            f.write(current + params["text"])
    return "appended"


pi.run()
