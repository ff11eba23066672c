"""tic-tac-toe: two tools sharing one board, to show why `executionMode: "sequential"` exists
(the example of pi's PR #3345).

The model plays O: `tic_tac_toe` moves its cursor (it starts at (0, 0) and returns there after
every play) or plays O at it, and X answers at once in the first free cell;
`tic_tac_toe_see_board` shows the board. Every move takes 300 ms and `play` none, so a model that
sends "move_down, move_right, play" in one message needs those calls to run one after another: in
parallel, `play` finishes first and marks (0, 0).

`tic_tac_toe` is sequential unless TIC_TAC_TOE_MODE=parallel (to watch the race). The game travels
in every result's details and is rebuilt from them on every session event.
"""

import os
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ next to the helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pi_tool  # noqa: E402

MODE = "parallel" if os.environ.get("TIC_TAC_TOE_MODE") == "parallel" else "sequential"
MOVE_DELAY = 0.3
MOVES = {"move_up": (-1, 0, "up"), "move_down": (1, 0, "down"), "move_left": (0, -1, "left"), "move_right": (0, 1, "right")}
LINES = [[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)]
LINES += [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]

pi = pi_tool.Pi()
lock = threading.Lock()


def new_game():
    return {"board": [["", "", ""] for _ in range(3)], "cursor": [0, 0], "status": "playing"}


game = new_game()


def snapshot():
    return {"board": [row[:] for row in game["board"]], "cursor": game["cursor"][:], "status": game["status"]}


def at(r, c):
    return f"({r}, {c})"


def settle():
    for line in LINES:
        marks = {game["board"][r][c] for r, c in line}
        if len(marks) == 1 and "" not in marks:
            game["status"] = f"{marks.pop()} wins"
            return
    if all(mark for row in game["board"] for mark in row):
        game["status"] = "draw"


def drawing():
    rows = []
    for r, row in enumerate(game["board"]):
        cells = []
        for c, mark in enumerate(row):
            mark = mark or "."
            cells.append(f"<{mark}>" if [r, c] == game["cursor"] else f" {mark} ")
        rows.append("|".join(cells))
    cursor = at(*game["cursor"])
    return "\n".join(rows) + f"\nCursor: {cursor}. Status: {game['status']}."


@pi.on_session
def rebuild(event):
    global game
    restored = new_game()
    for entry in event.get("entries", []):
        message = entry.get("message") if entry.get("type") == "message" else None
        if not message or message.get("role") != "toolResult" or message.get("toolName") != "tic_tac_toe":
            continue
        details = message.get("details") or {}
        if "board" in details:
            restored = {key: details[key] for key in ("board", "cursor", "status")}
    with lock:
        game = restored


@pi.tool(
    name="tic_tac_toe",
    label="Tic-Tac-Toe",
    description=(
        "Play tic-tac-toe as O: move your cursor (move_up, move_down, move_left, move_right) and play to "
        "place O at the cursor. X answers at once."
    ),
    parameters={
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["move_up", "move_down", "move_left", "move_right", "play"],
                "description": (
                    "The single action to perform this call. Emit multiple tic_tac_toe calls in one "
                    "response to string actions together."
                ),
            }
        },
        "required": ["action"],
    },
    execution_mode=MODE,
)
def tic_tac_toe(call, params):
    action = params["action"]
    if action in MOVES and not call.sleep(MOVE_DELAY):
        raise pi_tool.ToolError("Cancelled")
    with lock:
        if game["status"] != "playing":
            raise pi_tool.ToolError(f"Game is over ({game['status']}).", snapshot())
        r, c = game["cursor"]
        if action in MOVES:
            dr, dc, word = MOVES[action]
            game["cursor"] = [min(2, max(0, r + dr)), min(2, max(0, c + dc))]
            return pi_tool.result(f"Moved {word}. Cursor: {at(*game['cursor'])}", snapshot())
        if game["board"][r][c]:
            raise pi_tool.ToolError(
                f"Cell {at(r, c)} is already {game['board'][r][c]}. Your cursor is still at {at(r, c)}. "
                "Move to an empty cell and retry play.",
                snapshot(),
            )
        game["board"][r][c] = "O"
        game["cursor"] = [0, 0]
        settle()
        text = f"Placed O at {at(r, c)}. Cursor reset to (0, 0)."
        if game["status"] == "playing":
            free = next((divmod(i, 3) for i in range(9) if not game["board"][i // 3][i % 3]), None)
            if free:
                game["board"][free[0]][free[1]] = "X"
                settle()
                text += f" X played {at(*free)}."
        text += f" Status: {game['status']}."
        return pi_tool.result(text, snapshot())


@pi.tool(
    name="tic_tac_toe_see_board",
    label="See Board",
    description="Show the tic-tac-toe board with your cursor marked <…>.",
    parameters={"type": "object", "properties": {}},
)
def see_board(call, params):
    with lock:
        return pi_tool.result(drawing(), snapshot())


pi.run()
