"""python-guard: a pi extension in Python (docs/extensions.md, "Any language").

- the tool `word_count` counts the words of a text;
- the command `/greet <name>` greets in the UI and records the greeting in the session;
- a `tool_call` handler blocks `bash` commands that run `rm -rf`;
- an `input` handler turns `!shout <text>` into upper case before the model sees it;
- the flag `--guard-quiet` silences the notices.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

import pi_extension  # noqa: E402

ext = pi_extension.Extension(path=os.path.dirname(os.path.abspath(__file__)))
ext.flag("guard-quiet", description="Do not show python-guard's notices")


@ext.tool(
    name="word_count",
    description="Count the words of a text",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    prompt_snippet="Count the words of a text",
    prompt_guidelines=["Use word_count to count words instead of counting them yourself."],
)
def word_count(call, params):
    words = len(params["text"].split())
    return pi_extension.result(f"{words} words", details={"words": words})


@ext.command("greet", description="Greet someone")
def greet(args, ctx):
    name = args.strip() or "world"
    if not ext.get_flag("guard-quiet"):
        ctx.ui.notify(f"Hello, {name}!", "info")
    ext.append_entry("python-guard.greeting", {"name": name})


@ext.on("tool_call")
def block_rm_rf(event, ctx):
    if event.get("toolName") == "bash" and "rm -rf" in (event.get("input") or {}).get("command", ""):
        if ctx.has_ui and not ext.get_flag("guard-quiet"):
            ctx.ui.notify("python-guard blocked rm -rf", "warning")
        return {"block": True, "reason": "Blocked by python-guard: rm -rf is not allowed"}
    return None


@ext.on("input")
def shout(event, ctx):
    text = event.get("text", "")
    if text.startswith("!shout "):
        return {"action": "transform", "text": text[len("!shout "):].upper()}
    return {"action": "continue"}


ext.run()
