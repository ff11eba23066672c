// batch-rename-preview: stages a batch of renames as a pending action instead of making them. pi then
// asks the model to `resolve` it: apply renames the files, discard cleans the staged plan up. Nothing
// moves before `resolve` applies.
import { mkdtemp, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { CustomToolFactory } from "@mariozechner/pi-coding-agent";

interface Rename {
	from: string;
	to: string;
}

const exists = (path: string) => stat(path).then(
	() => true,
	() => false,
);

const factory: CustomToolFactory = (pi) => ({
	name: "batch_rename_preview",
	label: "Batch Rename Preview",
	description: "Previews renames and defers the commit to resolve",
	parameters: pi.typebox.Type.Object({
		renames: pi.typebox.Type.Array(
			pi.typebox.Type.Object({
				from: pi.typebox.Type.String({ description: "Current path, relative to the project" }),
				to: pi.typebox.Type.String({ description: "New path, relative to the project" }),
			}),
			{ description: "Files to rename" },
		),
	}),

	async execute(_toolCallId, params) {
		const { renames } = params as { renames: Rename[] };
		const pairs = renames.map(({ from, to }) => ({ from: resolve(pi.cwd, from), to: resolve(pi.cwd, to) }));
		for (const { from, to } of pairs) {
			if (!(await exists(from))) throw new Error(`Not found: ${from}`);
			if (await exists(to)) throw new Error(`Already exists: ${to}`);
		}
		const plan = pairs.map(({ from, to }) => `${from} -> ${to}`);

		// The staged plan lives in a temporary directory until resolve applies or discards it.
		const staging = await mkdtemp(join(tmpdir(), "pi-batch-rename-"));
		await writeFile(join(staging, "plan.json"), JSON.stringify(pairs, null, 2));

		pi.pushPendingAction({
			label: `Batch rename: ${pairs.length === 1 ? "1 file" : `${pairs.length} files`}`,
			sourceToolName: "batch_rename_preview",
			details: { plan, staging },
			apply: async (reason) => {
				for (const { from, to } of pairs) {
					if (await exists(to)) throw new Error(`Already exists: ${to}; no further files were renamed`);
					await mkdir(dirname(to), { recursive: true });
					await rename(from, to);
				}
				await rm(staging, { recursive: true, force: true });
				return {
					content: [{ type: "text", text: `Applied batch rename. Reason: ${reason}` }],
					details: { plan },
				};
			},
			reject: async (reason) => {
				await rm(staging, { recursive: true, force: true });
				return {
					content: [{ type: "text", text: `Discarded batch rename. Reason: ${reason}` }],
				};
			},
		});

		return {
			content: [
				{
					type: "text",
					text: `Prepared rename plan for ${pairs.length} files:\n${plan.join("\n")}\nCall resolve to apply or discard.`,
				},
			],
			details: { plan },
		};
	},
});

export default factory;
