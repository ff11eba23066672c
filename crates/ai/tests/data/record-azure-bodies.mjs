// Records what pi-ai 0.73.1 sends over `azure-openai-responses` (through the `openai` SDK's
// AzureOpenAI client) into azure-bodies-pi-0.73.1.json, which tests/azure.rs compares ours with:
// for each case the request line, the `api-key` header and the body.
//
//   node crates/ai/tests/data/record-azure-bodies.mjs /path/to/node_modules/@mariozechner/pi-ai \
//     > crates/ai/tests/data/azure-bodies-pi-0.73.1.json
//
// Each case: a catalog model, its base URL (the model's `baseUrl`, or AZURE_OPENAI_BASE_URL)
// on a local server, AZURE_OPENAI_API_VERSION and AZURE_OPENAI_DEPLOYMENT_NAME_MAP as given, the
// conversation below (text and a tool call of the same model, its result, a user message), one
// tool, a thinking level (or none), through pi-ai's `streamSimple` with a session id.
import http from "node:http";

const piAi = process.argv[2];
const { streamSimple, getModel } = await import(`${piAi}/dist/index.js`);

// [model id, thinking level, base URL path set on the model ("" = from AZURE_OPENAI_BASE_URL), api version, deployment map]
const CASES = [
  ["gpt-4.1", undefined, "/openai/v1", undefined, undefined],
  ["gpt-5-mini", "medium", "/openai/v1", "2025-04-01-preview", "gpt-5-mini=my-gpt5-mini, other=x"],
  ["o4-mini", undefined, "", undefined, undefined],
  ["gpt-5.1-codex", "xhigh", "/openai/v1", undefined, "gpt-4=y"],
];

const reply = [
  { type: "response.created", response: { id: "resp_1", status: "in_progress" } },
  { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] } },
  { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "" } },
  { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "ok" },
  { type: "response.output_item.done", output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok" }] } },
  { type: "response.completed", response: { id: "resp_1", status: "completed", usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } } },
].map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
let last = null;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    last = { line: `${req.method} ${req.url}`, apiKey: req.headers["api-key"], authorization: req.headers["authorization"] ?? null, body: JSON.parse(body) };
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(reply);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

const recorded = {};
for (const [id, level, path, version, map] of CASES) {
  const model = structuredClone(getModel("azure-openai-responses", id));
  delete process.env.AZURE_OPENAI_BASE_URL;
  if (path) model.baseUrl = `http://127.0.0.1:${port}${path}`;
  else process.env.AZURE_OPENAI_BASE_URL = `http://127.0.0.1:${port}/openai/v1`;
  if (version) process.env.AZURE_OPENAI_API_VERSION = version;
  else delete process.env.AZURE_OPENAI_API_VERSION;
  if (map) process.env.AZURE_OPENAI_DEPLOYMENT_NAME_MAP = map;
  else delete process.env.AZURE_OPENAI_DEPLOYMENT_NAME_MAP;
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const context = {
    systemPrompt: "You are a test.",
    messages: [
      { role: "user", content: "hi", timestamp: 1 },
      {
        role: "assistant", api: model.api, provider: model.provider, model: model.id, usage, stopReason: "toolUse", timestamp: 2,
        content: [
          { type: "text", text: "ok", textSignature: "msg_1" },
          { type: "toolCall", id: "call_1|fc_1", name: "read", arguments: { path: "x" } },
        ],
      },
      { role: "toolResult", toolCallId: "call_1|fc_1", toolName: "read", isError: false, timestamp: 3, content: [{ type: "text", text: "file" }] },
      { role: "user", content: [{ type: "text", text: "look" }], timestamp: 4 },
    ],
    tools: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
  };
  const options = { apiKey: "k-123456789", reasoning: level, sessionId: "session-1" };
  for await (const event of streamSimple(model, context, options)) {
    if (event.type === "error") throw new Error(event.error.errorMessage);
  }
  recorded[`${id}/${level ?? "-"}/${path || "env"}/${version ?? "-"}/${map ?? "-"}`] = last;
}
server.close();
console.log(JSON.stringify(recorded, null, 4));
