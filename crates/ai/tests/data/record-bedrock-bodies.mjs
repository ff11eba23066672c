// Records what pi-ai 0.73.1 sends over `bedrock-converse-stream` (through the AWS SDK's
// BedrockRuntimeClient and ConverseStreamCommand) into bedrock-bodies-pi-0.73.1.json, which
// tests/bedrock.rs compares ours with: for each case the request line, the signed header names
// and the body.
//
//   node crates/ai/tests/data/record-bedrock-bodies.mjs /path/to/node_modules/@mariozechner/pi-ai \
//     > crates/ai/tests/data/bedrock-bodies-pi-0.73.1.json
//
// Each case: a catalog model on a local server (its `baseUrl`), static keys and AWS_REGION from
// the environment, the conversation below (thinking, text and a tool call of the same model, its
// result, a user message with an image), one tool, a thinking level (or none), through pi-ai's
// `streamSimple`. The server answers 400, which ends the stream; only the request matters.
import http from "node:http";

const piAi = process.argv[2];
const { streamSimple, getModel } = await import(`${piAi}/dist/index.js`);

// [model id, thinking level]
const CASES = [
  ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "medium"],
  ["global.anthropic.claude-opus-4-6-v1", "high"],
  ["amazon.nova-lite-v1:0", undefined],
  ["openai.gpt-oss-120b-1:0", "low"],
];

let last = null;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const authorization = req.headers["authorization"] ?? "";
    const signed = /SignedHeaders=([^,]+)/.exec(authorization)?.[1] ?? null;
    last = { line: `${req.method} ${req.url}`, signedHeaders: signed, body: JSON.parse(body) };
    res.writeHead(400, { "content-type": "application/json", "x-amzn-errortype": "ValidationException" });
    res.end(JSON.stringify({ message: "recorded" }));
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

process.env.AWS_ACCESS_KEY_ID = "AKIDRECORD";
process.env.AWS_SECRET_ACCESS_KEY = "record-secret-key";
process.env.AWS_SESSION_TOKEN = "record-session-token";
process.env.AWS_REGION = "us-west-2";
process.env.AWS_BEDROCK_FORCE_HTTP1 = "1";
delete process.env.AWS_PROFILE;
delete process.env.AWS_BEARER_TOKEN_BEDROCK;
delete process.env.PI_CACHE_RETENTION;

const recorded = {};
for (const [id, level] of CASES) {
  const model = structuredClone(getModel("amazon-bedrock", id));
  model.baseUrl = `http://127.0.0.1:${port}`;
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const context = {
    systemPrompt: "You are a test.",
    messages: [
      { role: "user", content: "hi", timestamp: 1 },
      {
        role: "assistant", api: model.api, provider: model.provider, model: model.id, usage, stopReason: "toolUse", timestamp: 2,
        content: [
          { type: "thinking", thinking: "Let me read.", thinkingSignature: "sig-1" },
          { type: "text", text: "ok" },
          { type: "toolCall", id: "tooluse_1", name: "read", arguments: { path: "x" } },
        ],
      },
      { role: "toolResult", toolCallId: "tooluse_1", toolName: "read", isError: false, timestamp: 3, content: [{ type: "text", text: "file" }] },
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "aGVsbG8=", mimeType: "image/png" }], timestamp: 4 },
    ],
    tools: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
  };
  const options = { reasoning: level, sessionId: "session-1" };
  for await (const event of streamSimple(model, context, options)) {
    if (event.type === "error" && event.error.errorMessage !== "Validation error: recorded") {
      throw new Error(event.error.errorMessage);
    }
  }
  recorded[`${id}/${level ?? "-"}`] = last;
}
server.close();
console.log(JSON.stringify(recorded, null, 4));
