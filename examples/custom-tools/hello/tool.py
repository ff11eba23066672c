"""hello: the smallest process tool. Greets someone; the result's details say whom."""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pi_tool  # noqa: E402

pi = pi_tool.Pi()


@pi.tool(
    name="hello",
    label="Hello",
    description="A simple greeting tool",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Name to greet"}},
        "required": ["name"],
    },
)
def hello(call, params):
    name = params["name"]
    return pi_tool.result(f"Hello, {name}!", details={"greeted": name})


pi.run()
