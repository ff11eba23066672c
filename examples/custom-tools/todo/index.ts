// todo: a todo list kept in the `details` of the tool's results. On every session event the list is
// rebuilt from the session's entries, so branching or switching sessions gives the list of that
// point of history, and a new session starts empty.
import { Type } from "@sinclair/typebox";
import { StringEnum } from "@mariozechner/pi-ai";
import type { CustomToolFactory, ToolSessionEvent } from "@mariozechner/pi-coding-agent";

interface Todo {
	id: number;
	text: string;
	done: boolean;
}

interface TodoDetails {
	action: "list" | "add" | "toggle" | "clear";
	todos: Todo[];
	nextId: number;
}

type TodoParams = {
	action: TodoDetails["action"];
	text?: string;
	id?: number;
};

function listing(todos: Todo[]): string {
	if (todos.length === 0) return "No todos";
	return todos.map((todo) => `[${todo.done ? "x" : " "}] #${todo.id}: ${todo.text}`).join("\n");
}

const factory: CustomToolFactory = (_pi) => {
	let todos: Todo[] = [];
	let nextId = 1;

	const reconstructState = (event: ToolSessionEvent) => {
		todos = [];
		nextId = 1;
		for (const entry of event.entries) {
			if (entry.type !== "message") continue;
			const message = entry.message;
			if (message.role !== "toolResult" || message.toolName !== "todo") continue;
			const details = message.details as TodoDetails | undefined;
			if (details?.todos) {
				todos = details.todos;
				nextId = details.nextId ?? todos.length + 1;
			}
		}
	};

	return {
		name: "todo",
		label: "Todo",
		description: "Manage a todo list. Actions: list, add (text), toggle (id), clear.",
		parameters: Type.Object({
			action: StringEnum(["list", "add", "toggle", "clear"] as const),
			text: Type.Optional(Type.String({ description: "Todo text (for add)" })),
			id: Type.Optional(Type.Integer({ description: "Todo id (for toggle)" })),
		}),

		onSession: reconstructState,

		async execute(_toolCallId, args) {
			const params = args as TodoParams;
			let text: string;
			switch (params.action) {
				case "add": {
					if (!params.text) throw new Error("text required for add");
					const todo = { id: nextId++, text: params.text, done: false };
					todos = [...todos, todo];
					text = `Added todo #${todo.id}: ${todo.text}`;
					break;
				}
				case "toggle": {
					if (params.id === undefined) throw new Error("id required for toggle");
					const todo = todos.find((t) => t.id === params.id);
					if (!todo) throw new Error(`Todo #${params.id} not found`);
					todos = todos.map((t) => (t.id === params.id ? { ...t, done: !t.done } : t));
					text = `Todo #${params.id} ${todo.done ? "uncompleted" : "completed"}`;
					break;
				}
				case "clear": {
					text = `Cleared ${todos.length} todos`;
					todos = [];
					nextId = 1;
					break;
				}
				default:
					text = listing(todos);
			}
			const details: TodoDetails = { action: params.action, todos: [...todos], nextId };
			return { content: [{ type: "text", text }], details };
		},
	};
};

export default factory;
