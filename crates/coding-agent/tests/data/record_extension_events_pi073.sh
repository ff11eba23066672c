#!/bin/sh
# Records tests/data/extension_events_pi073.txt: pi 0.73.1 (PI073, default /work/scratch/pi073) runs
# `pi -p "read a"` against a local openai-completions mock (a `read` call, then text) with an extension
# that logs every event it gets (type, message role, payload keys). Needs Node 20. Not run by the tests.
set -eu
PI073=${PI073:-/work/scratch/pi073}
dir=$(mktemp -d)
mkdir -p "$dir/agent" "$dir/proj" "$dir/home"
cat > "$dir/server.mjs" <<'JS'
import http from "node:http";
let n = 0;
const chunk = (delta, finish) => `data: ${JSON.stringify({id: "r", object: "chat.completion.chunk", model: "mock", choices: [{index: 0, delta, finish_reason: finish ?? null}]})}\n\n`;
const server = http.createServer((req, res) => {
  let body = ""; req.on("data", c => body += c); req.on("end", () => {
    res.writeHead(200, {"content-type": "text/event-stream", "x-mock": "1"});
    if (n++ === 0) {
      res.write(chunk({role: "assistant", tool_calls: [{index: 0, id: "call_1", type: "function", function: {name: "read", arguments: ""}}]}));
      res.write(chunk({tool_calls: [{index: 0, function: {arguments: "{\"path\":\"a.txt\"}"}}]}));
      res.write(chunk({}, "tool_calls"));
    } else {
      res.write(chunk({role: "assistant", content: "done"}));
      res.write(chunk({}, "stop"));
    }
    res.write("data: [DONE]\n\n"); res.end();
  });
});
server.listen(0, "127.0.0.1", () => { console.log(server.address().port); });
JS
cat > "$dir/proj/log.ts" <<'TS'
import { appendFileSync } from "node:fs";
const kinds = ["session_start","resources_discover","session_before_switch","session_before_fork","session_before_compact","session_compact","session_before_tree","session_tree","session_shutdown","input","before_agent_start","agent_start","agent_end","turn_start","turn_end","message_start","message_update","message_end","tool_execution_start","tool_execution_update","tool_execution_end","context","before_provider_request","after_provider_response","model_select","thinking_level_select","tool_call","tool_result","user_bash"];
export default function (pi: any) {
  for (const k of kinds) pi.on(k, async (e: any) => {
    const keys = Object.keys(e).filter(x => x !== "type").sort().join(",");
    appendFileSync(process.env.EXTEV_LOG!, `${e.type} ${e.type === "message_start" || e.type === "message_end" ? e.message.role : ""} [${keys}]\n`);
  });
}
TS
echo A > "$dir/proj/a.txt"
node "$dir/server.mjs" > "$dir/port" &
server=$!
sleep 1
printf '{"providers":{"mock":{"baseUrl":"http://127.0.0.1:%s/v1","api":"openai-completions","apiKey":"k","models":[{"id":"mock","name":"Mock"}]}}}' "$(cat "$dir/port")" > "$dir/agent/models.json"
(cd "$dir/proj" && EXTEV_LOG="$dir/log.txt" HOME="$dir/home" PI_CODING_AGENT_DIR="$dir/agent" \
  node "$PI073/node_modules/@mariozechner/pi-coding-agent/dist/cli.js" --provider mock --model mock --no-session -e ./log.ts -p "read a" >/dev/null)
kill "$server"
uniq "$dir/log.txt" | sed 's/  \[/ [/'
