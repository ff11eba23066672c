"""batch-rename-preview: renames files only after a preview was accepted.

`batch_rename_preview` checks the renames and stages them as a pending action instead of
renaming anything: pi then forces the model to call `resolve`. `apply` checks again (the files
may have changed meanwhile) and renames; `discard` leaves every file alone. Paths are relative
to pi's working directory and may not leave it.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pi_tool  # noqa: E402

pi = pi_tool.Pi()


def inside(path):
    """The absolute path of `path` (relative to pi's cwd), or None when it leaves the cwd."""
    root = os.path.realpath(pi.cwd)
    full = os.path.realpath(os.path.join(root, path))
    return full if os.path.commonpath([root, full]) == root and full != root else None


def problems(renames):
    """Why these renames cannot be done now; empty when they can."""
    found = []
    if not renames:
        return ["No renames given."]
    sources = [r["from"] for r in renames]
    targets = [r["to"] for r in renames]
    for rename in renames:
        source, target = rename["from"], rename["to"]
        full_source, full_target = inside(source), inside(target)
        if full_source is None:
            found.append(f"{source}: outside the working directory")
        elif not os.path.isfile(full_source):
            found.append(f"{source}: no such file")
        if full_target is None:
            found.append(f"{target}: outside the working directory")
        elif os.path.exists(full_target):
            found.append(f"{target}: already exists")
        elif not os.path.isdir(os.path.dirname(full_target)):
            found.append(f"{target}: its directory does not exist")
        if sources.count(source) > 1:
            found.append(f"{source}: renamed twice")
        if targets.count(target) > 1 or target in sources:
            found.append(f"{target}: used twice")
    return list(dict.fromkeys(found))


def files(count):
    return f"{count} file" if count == 1 else f"{count} files"


@pi.tool(
    name="batch_rename_preview",
    label="Batch Rename",
    description=(
        "Rename several files at once. Shows a preview first; the renames happen only when the "
        "preview is applied with `resolve`."
    ),
    parameters={
        "type": "object",
        "properties": {
            "renames": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                    "required": ["from", "to"],
                },
            }
        },
        "required": ["renames"],
    },
)
def batch_rename_preview(call, params):
    renames = [{"from": r["from"], "to": r["to"]} for r in params["renames"]]
    found = problems(renames)
    if found:
        raise pi_tool.ToolError("Cannot rename:\n" + "\n".join(f"- {p}" for p in found))

    def apply(reason, extra):
        found = problems(renames)
        if found:
            raise pi_tool.ToolError("Nothing renamed:\n" + "\n".join(f"- {p}" for p in found))
        for rename in renames:
            os.rename(inside(rename["from"]), inside(rename["to"]))
        return pi_tool.result(f"Applied batch rename. Reason: {reason}", {"renamed": renames})

    def reject(reason, extra):
        return pi_tool.result(f"Discarded batch rename. Reason: {reason}", {"renamed": []})

    label = f"Batch rename: {files(len(renames))}"
    call.push_pending_action(label, apply, reject, details={"renames": renames}, source_tool_name="batch_rename_preview")
    preview = "\n".join(f"{r['from']} -> {r['to']}" for r in renames)
    return pi_tool.result(f"{label}\n{preview}\nCall resolve to apply or discard.", {"renames": renames})


pi.run()
