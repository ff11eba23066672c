// Records the request bodies pi-ai 0.73.1 sends over `google-generative-ai` and `google-vertex`
// (through Google's SDK) into google-bodies-pi-0.73.1.json, which tests/google.rs compares ours with.
//
//   node crates/ai/tests/data/record-google-bodies.mjs /path/to/node_modules/@mariozechner/pi-ai \
//     > crates/ai/tests/data/google-bodies-pi-0.73.1.json
//
// Each case: a catalog model moved to a local server, the conversation below (thinking, text and a
// tool call with signatures; a tool result with an image; a user message with an image), one tool,
// a thinking level (or none), through pi-ai's `streamSimple` as pi's agent calls it.
import http from "node:http";

const piAi = process.argv[2];
const { streamSimple, getModel } = await import(`${piAi}/dist/index.js`);

const CASES = [
  ["google", "gemini-2.5-flash", "medium"],
  ["google", "gemini-3.1-pro-preview", undefined],
  ["google-vertex", "gemini-2.5-flash-lite", "minimal"],
  ["google", "gemma-4-26b-a4b-it", "low"],
  ["google", "gemini-3-flash-preview", "high"],
];

const reply = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: "ok" }], role: "model" }, finishReason: "STOP" }] })}\r\n\r\n`;
let last = null;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    last = body;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(reply);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

const bodies = {};
for (const [provider, id, level] of CASES) {
  const model = structuredClone(getModel(provider, id));
  model.baseUrl = `http://127.0.0.1:${port}` + (provider === "google" ? "/v1beta" : "");
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const context = {
    systemPrompt: "You are a test.",
    messages: [
      { role: "user", content: "hi", timestamp: 1 },
      {
        role: "assistant", api: model.api, provider: model.provider, model: model.id, usage, stopReason: "toolUse", timestamp: 2,
        content: [
          { type: "thinking", thinking: "prior", thinkingSignature: "c2lnMQ==" },
          { type: "text", text: "ok", textSignature: "c2lnMw==" },
          { type: "toolCall", id: "read_1", name: "read", arguments: { path: "x" }, thoughtSignature: "c2lnMg==" },
        ],
      },
      {
        role: "toolResult", toolCallId: "read_1", toolName: "read", isError: false, timestamp: 3,
        content: [{ type: "text", text: "file" }, { type: "image", data: "aGk=", mimeType: "image/png" }],
      },
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "aGk=", mimeType: "image/png" }], timestamp: 4 },
    ],
    tools: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
  };
  for await (const _ of streamSimple(model, context, { apiKey: "k-123456789", reasoning: level })) {
  }
  bodies[`${provider}/${id}/${level ?? "-"}`] = JSON.parse(last);
}
server.close();
console.log(JSON.stringify(bodies, null, 4));
