"""A small MCP server over stdio for pi's tests: JSON-RPC 2.0, one message per line, standard library only.

Usage: python3 server.py <mode>
  normal        answers initialize, lists its tools in two pages, runs them
  init-error    answers initialize with a JSON-RPC error
  exit-at-start writes a line on stderr and exits before reading anything

Every process appends what it sees to ./events.log (in its working directory), one line each:
"<pid> start", "<pid> <method> [<tool>]", "<pid> cancelled <request id>", "<pid> eof".
"""

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
PID = os.getpid()

# A 1x1 PNG.
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

PAGE_1 = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Echo the text back",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "picture",
        "description": "Text, an image, a resource, a link and structured content",
        "inputSchema": {},
        "annotations": {"title": "Picture", "readOnlyHint": False},
    },
]

PAGE_2 = [
    {"name": "fail", "description": "Always fails"},
    {
        "name": "slow",
        "description": "Answers only when cancelled",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {"name": "crash", "description": "Exits in the middle of the call", "inputSchema": {"type": "object"}},
    {"name": "weird name/with.dots", "description": "A name pi must sanitise", "inputSchema": {"type": "object"}},
    {"name": "x" * 80, "description": "A name pi must cut", "inputSchema": {"type": "object"}},
    {"name": "dup.x", "description": "First of two names that sanitise alike", "inputSchema": {"type": "object"}},
    {"name": "dup_x", "description": "Second of two names that sanitise alike", "inputSchema": {"type": "object"}},
]


def log(event):
    with open("events.log", "a", encoding="utf-8") as f:
        f.write(f"{PID} {event}\n")


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id, result):
    send({"id": request_id, "result": result})


def fail(request_id, code, message):
    send({"id": request_id, "error": {"code": code, "message": message}})


def call_tool(request_id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if name == "echo":
        answer(request_id, {"content": [{"type": "text", "text": args.get("text", "")}]})
    elif name == "picture":
        answer(
            request_id,
            {
                "content": [
                    {"type": "text", "text": "A red dot"},
                    {"type": "image", "data": PIXEL, "mimeType": "image/png"},
                    {
                        "type": "resource",
                        "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "remember"},
                    },
                    {"type": "resource_link", "uri": "file:///big.bin", "name": "big.bin"},
                ],
                "structuredContent": {"color": "red", "size": 1},
            },
        )
    elif name == "fail":
        answer(request_id, {"content": [{"type": "text", "text": "it broke"}], "isError": True})
    elif name == "slow":
        if token is not None:
            progress = {"progressToken": token, "progress": 0, "total": 1, "message": "waiting for the cancel"}
            send({"method": "notifications/progress", "params": progress})
        # No answer: the client cancels.
    elif name == "crash":
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    else:
        fail(request_id, -32602, f"Unknown tool: {name}")


def main():
    log("start")
    if MODE == "exit-at-start":
        sys.stderr.write("missing API key\n")
        sys.stderr.flush()
        sys.exit(2)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if method is None:
            continue  # a response to a request of ours: we send none
        if method == "notifications/cancelled":
            log(f"cancelled {params.get('requestId')}")
            continue
        if method == "tools/call":
            log(f"{method} {params.get('name')}")
        else:
            log(method)
        if request_id is None:
            continue  # other notifications
        if method == "initialize":
            if MODE == "init-error":
                fail(request_id, -32603, "not today")
            else:
                answer(
                    request_id,
                    {
                        "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "pi-test-server", "version": "1.0.0"},
                    },
                )
        elif method == "tools/list":
            if params.get("cursor") == "page-2":
                answer(request_id, {"tools": PAGE_2})
            else:
                answer(request_id, {"tools": PAGE_1, "nextCursor": "page-2"})
        elif method == "tools/call":
            call_tool(request_id, params)
        elif method == "ping":
            answer(request_id, {})
        else:
            fail(request_id, -32601, f"Method not found: {method}")
    log("eof")


main()
