// Records what pi-ai 0.73.1 sends over `openai-codex-responses` (ChatGPT-plan Codex, its SSE
// transport) into codex-bodies-pi-0.73.1.json, which tests/codex.rs compares ours with: for each
// case the request line, the headers pi sets (all but `user-agent`, which names the machine) and
// the body.
//
//   node crates/ai/tests/data/record-codex-bodies.mjs /path/to/node_modules/@mariozechner/pi-ai \
//     > crates/ai/tests/data/codex-bodies-pi-0.73.1.json
//
// Each case: a catalog model moved to a local server (its base URL's path as given), a token as
// pi's login stores it (a JWT whose `https://api.openai.com/auth` claim holds the
// `chatgpt_account_id`), the conversation below (text and a tool call of the same model, its
// result, a user message), one tool, a thinking level (or none) and a system prompt (or none),
// through pi-ai's `streamSimple` with a session id.
import http from "node:http";

const piAi = process.argv[2];
const { streamSimple, getModel } = await import(`${piAi}/dist/index.js`);

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
const TOKEN = `${b64({ alg: "RS256", typ: "JWT" })}.${b64({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-test-0123" }, exp: 4102444800 })}.c2lnbmF0dXJl`;

// [model id, thinking level, base URL path, system prompt]
const CASES = [
  ["gpt-5.1", undefined, "/backend-api", "You are a test."],
  ["gpt-5.1-codex-mini", "low", "/backend-api/codex", "You are a test."],
  ["gpt-5.2-codex", "minimal", "/backend-api/codex/responses", ""],
  ["gpt-5.5", "xhigh", "/backend-api/", "You are a test."],
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
    const headers = {};
    for (const name of ["authorization", "chatgpt-account-id", "originator", "openai-beta", "accept", "content-type", "session_id", "x-client-request-id"]) {
      headers[name] = req.headers[name] ?? null;
    }
    last = { line: `${req.method} ${req.url}`, headers, userAgent: req.headers["user-agent"].replace(/\(.*\)/, "(…)"), body: JSON.parse(body) };
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(reply);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

const recorded = { token: TOKEN };
for (const [id, level, path, systemPrompt] of CASES) {
  const model = structuredClone(getModel("openai-codex", id));
  model.baseUrl = `http://127.0.0.1:${port}${path}`;
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const context = {
    systemPrompt,
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
  const options = { apiKey: TOKEN, reasoning: level, sessionId: "session-1", transport: "sse" };
  for await (const event of streamSimple(model, context, options)) {
    if (event.type === "error") throw new Error(event.error.errorMessage);
  }
  recorded[`${id}/${level ?? "-"}/${path}/${systemPrompt ? "prompt" : "-"}`] = last;
}
server.close();
console.log(JSON.stringify(recorded, null, 4));
