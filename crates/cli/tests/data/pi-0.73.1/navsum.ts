export default function (pi: any) {
  pi.registerCommand("navsum", {
    description: "navigate to the first user message with a summary",
    handler: async (args: string, ctx: any) => {
      const first = ctx.sessionManager.getEntries().find((e: any) => e.type === "message" && e.message.role === "user");
      const result = await ctx.navigateTree(first.id, { summarize: true, customInstructions: args || undefined, label: "explored" });
      ctx.ui.notify(JSON.stringify(result), "info");
    },
  });
}
