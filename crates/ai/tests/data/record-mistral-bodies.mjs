// Records the request bodies pi-ai 0.73.1 sends over `mistral-conversations` (through Mistral's
// SDK) into mistral-bodies-pi-0.73.1.json, which tests/mistral.rs compares ours with.
//
//   node crates/ai/tests/data/record-mistral-bodies.mjs /path/to/node_modules/@mariozechner/pi-ai \
//     > crates/ai/tests/data/mistral-bodies-pi-0.73.1.json
//
// Each case: a catalog model moved to a local server, the conversation below (thinking, text and a
// tool call of the same model; a tool call of another model, whose id pi shortens to Mistral's nine
// characters; tool results with an image and an error; a user message with an image), one tool, a
// thinking level (or none) and a tool choice (or none), through pi-ai's `streamSimple` as pi's agent
// calls it, with a session id. `streamSimple` passes no tool choice on, so the choice goes into the
// SDK's payload through `onPayload`, in the form pi-ai's own `mapToolChoice` gives it.
import http from "node:http";

const piAi = process.argv[2];
const { streamSimple, getModel } = await import(`${piAi}/dist/index.js`);

const CASES = [
  ["mistral", "devstral-medium-latest", undefined, undefined],
  ["mistral", "magistral-medium-latest", "medium", undefined],
  ["mistral", "mistral-small-latest", "high", "required"],
  ["mistral", "mistral-medium-3.5", "low", { type: "function", function: { name: "read" } }],
  ["mistral", "pixtral-large-latest", undefined, "none"],
];

const reply = `data: ${JSON.stringify({ id: "r1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;
let last = null;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    last = body;
    if (process.env.SHOW_HEADERS) console.error(JSON.stringify(req.headers));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(reply);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

const bodies = {};
for (const [provider, id, level, toolChoice] of CASES) {
  const model = structuredClone(getModel(provider, id));
  model.baseUrl = `http://127.0.0.1:${port}`;
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const context = {
    systemPrompt: "You are a test.",
    messages: [
      { role: "user", content: "hi", timestamp: 1 },
      {
        role: "assistant", api: model.api, provider: model.provider, model: model.id, usage, stopReason: "toolUse", timestamp: 2,
        content: [
          { type: "thinking", thinking: "prior" },
          { type: "text", text: "ok" },
          { type: "toolCall", id: "AbC123xyz", name: "read", arguments: { path: "x" } },
        ],
      },
      {
        role: "toolResult", toolCallId: "AbC123xyz", toolName: "read", isError: false, timestamp: 3,
        content: [{ type: "text", text: "file" }, { type: "image", data: "aGk=", mimeType: "image/png" }],
      },
      {
        role: "assistant", api: "openai-responses", provider: "openai", model: "gpt-5", usage, stopReason: "toolUse", timestamp: 4,
        content: [
          { type: "thinking", thinking: "other" },
          { type: "toolCall", id: "call_abc|fc_123456789", name: "read", arguments: { path: "y" } },
        ],
      },
      {
        role: "toolResult", toolCallId: "call_abc|fc_123456789", toolName: "read", isError: true, timestamp: 5,
        content: [{ type: "text", text: "missing" }],
      },
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "aGk=", mimeType: "image/png" }], timestamp: 6 },
    ],
    tools: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
  };
  const options = { apiKey: "k-123456789", reasoning: level, sessionId: "session-1" };
  if (toolChoice) options.onPayload = (payload) => ({ ...payload, toolChoice });
  for await (const _ of streamSimple(model, context, options)) {
  }
  const name = typeof toolChoice === "object" ? toolChoice.function.name : toolChoice ?? "-";
  bodies[`${provider}/${id}/${level ?? "-"}/${name}`] = JSON.parse(last);
}
server.close();
console.log(JSON.stringify(bodies, null, 4));
