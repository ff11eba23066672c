// Records how pi-ai 0.73.1 (through the AWS SDK's event-stream decoder) turns Converse-stream
// transcripts and error answers into assistant-message events, into
// bedrock-streams-pi-0.73.1.json, which tests/bedrock.rs compares ours with: for each case the
// answer, the event types, and the final message's content, stop reason, error text and token
// counts.
//
//   node crates/ai/tests/data/record-bedrock-streams.mjs /path/to/node_modules/@mariozechner/pi-ai \
//     > crates/ai/tests/data/bedrock-streams-pi-0.73.1.json
//
// A case is a list of frames ([message type, event or exception type, payload]) answered with 200
// as application/vnd.amazon.eventstream, or an HTTP error ([status, error type, body]).
import http from "node:http";

const piAi = process.argv[2];
const { streamSimple, getModel } = await import(`${piAi}/dist/index.js`);

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes) => {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
};
function frame(messageType, type, payload) {
  const headers = [[messageType === "exception" ? ":exception-type" : ":event-type", type], [":content-type", "application/json"], [":message-type", messageType]];
  const parts = [];
  for (const [name, value] of headers) {
    const n = Buffer.from(name), v = Buffer.from(value);
    const len = Buffer.alloc(2);
    len.writeUInt16BE(v.length);
    parts.push(Buffer.from([n.length]), n, Buffer.from([7]), len, v);
  }
  const headerBytes = Buffer.concat(parts);
  const body = Buffer.from(JSON.stringify(payload));
  const total = 12 + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude));
  const message = Buffer.concat([prelude, preludeCrc, headerBytes, body]);
  const messageCrc = Buffer.alloc(4);
  messageCrc.writeUInt32BE(crc32(message));
  return Buffer.concat([message, messageCrc]);
}
const ev = (type, payload) => ["event", type, payload];
const start = ev("messageStart", { role: "assistant" });
const usage = (i, o, r, w) => ev("metadata", { usage: { inputTokens: i, outputTokens: o, cacheReadInputTokens: r, cacheWriteInputTokens: w, totalTokens: i + o + r + w }, metrics: { latencyMs: 1 } });

const CASES = {
  thinking_text_tool_call: [
    start,
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "Two " } } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: "cities." } } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "sig-part-1" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature: "+part-2" } } }),
    ev("contentBlockStop", { contentBlockIndex: 0 }),
    ev("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "Checking." } }),
    ev("contentBlockStop", { contentBlockIndex: 1 }),
    ev("contentBlockStart", { contentBlockIndex: 2, start: { toolUse: { toolUseId: "tooluse_abc123", name: "get_weather" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "{\"city\": \"Pa" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: "ris\"}" } } }),
    ev("contentBlockStop", { contentBlockIndex: 2 }),
    ev("messageStop", { stopReason: "tool_use" }),
    usage(1000, 40, 200, 10),
  ],
  max_tokens: [start, ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "cut" } }), ev("messageStop", { stopReason: "max_tokens" }), usage(5, 1, 0, 0)],
  guardrail: [start, ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "no" } }), ev("contentBlockStop", { contentBlockIndex: 0 }), ev("messageStop", { stopReason: "guardrail_intervened" }), usage(5, 1, 0, 0)],
  throttled_in_stream: [start, ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hi" } }), ["exception", "throttlingException", { message: "Too many tokens, please wait." }]],
  model_stream_error: [start, ["exception", "modelStreamErrorException", { message: "The model failed." }]],
  http_400_validation: [400, "ValidationException", { message: "Input is too long for requested model." }],
  http_403_access_denied: [403, "AccessDeniedException", { Message: "User is not authorized." }],
};

let current = null;
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    if (typeof current[0] === "number") {
      const [status, type, body] = current;
      res.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
    res.end(Buffer.concat(current.map(([m, t, p]) => frame(m, t, p))));
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

process.env.AWS_ACCESS_KEY_ID = "AKIDRECORD";
process.env.AWS_SECRET_ACCESS_KEY = "record-secret-key";
process.env.AWS_REGION = "us-west-2";
process.env.AWS_BEDROCK_FORCE_HTTP1 = "1";
process.env.AWS_MAX_ATTEMPTS = "1";

const recorded = {};
for (const [name, answer] of Object.entries(CASES)) {
  current = answer;
  const model = structuredClone(getModel("amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"));
  model.baseUrl = `http://127.0.0.1:${port}`;
  const context = { systemPrompt: "You are a test.", messages: [{ role: "user", content: "hi", timestamp: 1 }], tools: [] };
  const types = [];
  let final = null;
  for await (const event of streamSimple(model, context, {})) {
    types.push(event.type);
    if (event.type === "done") final = event.message;
    if (event.type === "error") final = event.error;
  }
  const { input, output, cacheRead, cacheWrite, totalTokens } = final.usage;
  recorded[name] = {
    answer,
    types,
    content: final.content,
    stopReason: final.stopReason,
    errorMessage: final.errorMessage ?? null,
    usage: { input, output, cacheRead, cacheWrite, totalTokens },
  };
}
server.close();
console.log(JSON.stringify(recorded, null, 4));
