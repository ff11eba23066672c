"""todo: a todo list that follows the session, branches included.

The list lives in memory, but every result carries the whole list in its `details`. On every
session event (start, switch, branch, new, tree) the tool forgets its list and rebuilds it from
the last `todo` result among the event's entries, so after a branch the list is the one of that
point of history (pi's state-management pattern for custom tools).
"""

import os
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ next to the helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pi_tool  # noqa: E402

pi = pi_tool.Pi()
lock = threading.Lock()
state = {"todos": [], "nextId": 1}


def snapshot(action):
    return {"action": action, "todos": [dict(t) for t in state["todos"]], "nextId": state["nextId"]}


@pi.on_session
def rebuild(event):
    todos, next_id = [], 1
    for entry in event.get("entries", []):
        message = entry.get("message") if entry.get("type") == "message" else None
        if not message or message.get("role") != "toolResult" or message.get("toolName") != "todo":
            continue
        details = message.get("details") or {}
        if "todos" in details:
            todos, next_id = details["todos"], details.get("nextId", len(details["todos"]) + 1)
    with lock:
        state["todos"], state["nextId"] = [dict(t) for t in todos], next_id


def listing():
    if not state["todos"]:
        return "No todos"
    return "\n".join(f"[{'x' if t['done'] else ' '}] #{t['id']}: {t['text']}" for t in state["todos"])


@pi.tool(
    name="todo",
    label="Todo",
    description="Manage a todo list. Actions: list, add (text), toggle (id), clear.",
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "add", "toggle", "clear"]},
            "text": {"type": "string", "description": "Todo text (for add)"},
            "id": {"type": "integer", "description": "Todo id (for toggle)"},
        },
        "required": ["action"],
    },
)
def todo(call, params):
    action = params["action"]
    with lock:
        if action == "list":
            return pi_tool.result(listing(), snapshot(action))
        if action == "add":
            text = params.get("text")
            if not text:
                raise pi_tool.ToolError("text required for add", snapshot(action))
            item = {"id": state["nextId"], "text": text, "done": False}
            state["todos"].append(item)
            state["nextId"] += 1
            return pi_tool.result(f"Added todo #{item['id']}: {text}", snapshot(action))
        if action == "toggle":
            wanted = params.get("id")
            if wanted is None:
                raise pi_tool.ToolError("id required for toggle", snapshot(action))
            for item in state["todos"]:
                if item["id"] == wanted:
                    item["done"] = not item["done"]
                    done = "completed" if item["done"] else "uncompleted"
                    return pi_tool.result(f"Todo #{wanted} {done}", snapshot(action))
            raise pi_tool.ToolError(f"Todo #{wanted} not found", snapshot(action))
        if action == "clear":
            count = len(state["todos"])
            state["todos"], state["nextId"] = [], 1
            return pi_tool.result(f"Cleared {count} todos", snapshot(action))
    raise pi_tool.ToolError(f"Unknown action: {action}")


pi.run()
