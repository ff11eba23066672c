// tic-tac-toe (pi PR #3345's example of `executionMode`): the model plays O by moving a cursor over a
// 3×3 board and playing; X answers at once in the first free cell. The cursor starts at (0, 0) and
// returns there after every play.
// Every move takes 300 ms and `play` does not, so the calls of one batch must run one after the other:
// in parallel, `play` lands before the moves and marks the wrong cell. The tools are therefore
// `sequential`; run pi with TIC_TAC_TOE_MODE=parallel to declare them parallel and watch that happen.
import { Type } from "@sinclair/typebox";
import { StringEnum } from "@mariozechner/pi-ai";
import type { CustomToolFactory, ToolExecutionMode, ToolSessionEvent } from "@mariozechner/pi-coding-agent";

type Cell = "" | "X" | "O";

interface Game {
	board: Cell[][];
	cursor: [number, number];
	status: string;
}

type Action = "move_up" | "move_down" | "move_left" | "move_right" | "play";

const MOVE_DELAY_MS = 300;

const LINES: [number, number][][] = [
	[[0, 0], [0, 1], [0, 2]],
	[[1, 0], [1, 1], [1, 2]],
	[[2, 0], [2, 1], [2, 2]],
	[[0, 0], [1, 0], [2, 0]],
	[[0, 1], [1, 1], [2, 1]],
	[[0, 2], [1, 2], [2, 2]],
	[[0, 0], [1, 1], [2, 2]],
	[[0, 2], [1, 1], [2, 0]],
];

function newGame(): Game {
	return {
		board: [0, 1, 2].map(() => ["", "", ""] as Cell[]),
		cursor: [0, 0],
		status: "playing",
	};
}

function settle(game: Game): void {
	for (const line of LINES) {
		const [first, ...rest] = line.map(([r, c]) => game.board[r][c]);
		if (first && rest.every((cell) => cell === first)) {
			game.status = `${first} wins`;
			return;
		}
	}
	if (game.board.every((row) => row.every((cell) => cell !== ""))) game.status = "draw";
}

function render(game: Game): string {
	const rows = game.board.map((row, r) =>
		row
			.map((cell, c) => {
				const mark = cell || ".";
				return game.cursor[0] === r && game.cursor[1] === c ? `<${mark}>` : ` ${mark} `;
			})
			.join("|"),
	);
	return `${rows.join("\n")}\nCursor: (${game.cursor[0]}, ${game.cursor[1]}). Status: ${game.status}.`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const factory: CustomToolFactory = (_pi) => {
	const executionMode: ToolExecutionMode = process.env.TIC_TAC_TOE_MODE === "parallel" ? "parallel" : "sequential";
	let game = newGame();

	const restore = (event: ToolSessionEvent) => {
		game = newGame();
		for (const entry of event.entries) {
			if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
			if (entry.message.toolName !== "tic_tac_toe") continue;
			const details = entry.message.details as Game | undefined;
			if (details?.board) game = structuredClone(details);
		}
	};

	return [
		{
			name: "tic_tac_toe",
			label: "Tic-Tac-Toe",
			description:
				"Play tic-tac-toe as O: move your cursor (move_up, move_down, move_left, move_right) and play to place O at the cursor. X answers at once.",
			parameters: Type.Object({
				action: StringEnum(["move_up", "move_down", "move_left", "move_right", "play"] as const, {
					description:
						"The single action to perform this call. Emit multiple tic_tac_toe calls in one response to string actions together.",
				}),
			}),
			executionMode,
			onSession: restore,

			async execute(_toolCallId, args) {
				const { action } = args as { action: Action };
				if (action !== "play") await sleep(MOVE_DELAY_MS);
				if (game.status !== "playing") throw new Error(`Game is over (${game.status}).`);
				const [r, c] = game.cursor;
				let text: string;
				switch (action) {
					case "move_up":
					case "move_down":
					case "move_left":
					case "move_right": {
						const [dr, dc] = { move_up: [-1, 0], move_down: [1, 0], move_left: [0, -1], move_right: [0, 1] }[action];
						game.cursor = [Math.min(2, Math.max(0, r + dr)), Math.min(2, Math.max(0, c + dc))];
						text = `Moved ${action.slice("move_".length)}. Cursor: (${game.cursor[0]}, ${game.cursor[1]})`;
						break;
					}
					case "play": {
						if (game.board[r][c] !== "") {
							throw new Error(
								`Cell (${r}, ${c}) is already ${game.board[r][c]}. Your cursor is still at (${r}, ${c}). Move to an empty cell and retry play.`,
							);
						}
						game.board[r][c] = "O";
						game.cursor = [0, 0];
						settle(game);
						text = `Placed O at (${r}, ${c}). Cursor reset to (0, 0).`;
						if (game.status === "playing") {
							const free = [0, 1, 2, 3, 4, 5, 6, 7, 8].find((i) => game.board[Math.floor(i / 3)][i % 3] === "");
							if (free !== undefined) {
								const [xr, xc] = [Math.floor(free / 3), free % 3];
								game.board[xr][xc] = "X";
								settle(game);
								text += ` X played (${xr}, ${xc}).`;
							}
						}
						text += ` Status: ${game.status}.`;
						break;
					}
					default:
						throw new Error(`Unknown action: ${action}`);
				}
				return { content: [{ type: "text", text }], details: structuredClone(game) };
			},
		},
		{
			name: "tic_tac_toe_see_board",
			label: "See Board",
			description: "Show the tic-tac-toe board with your cursor marked <…>.",
			parameters: Type.Object({}),

			async execute() {
				return { content: [{ type: "text", text: render(game) }], details: structuredClone(game) };
			},
		},
	];
};

export default factory;
