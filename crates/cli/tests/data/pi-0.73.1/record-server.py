import json, sys, http.server, threading
script = json.load(open(sys.argv[1]))
port = int(sys.argv[2])
out = open(sys.argv[3], 'w')
idx = [0]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers['content-length'])
        body = json.loads(self.rfile.read(n))
        out.write(json.dumps(body) + "\n"); out.flush()
        reply = script[min(idx[0], len(script)-1)]; idx[0] += 1
        def chunk(delta, finish):
            return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "mock",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        parts = [chunk(d, None) for d in reply["deltas"]]
        last = chunk({}, reply["finish"])
        p, c = reply["usage"]
        last["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        parts.append(last)
        data = "".join("data: " + json.dumps(x) + "\n\n" for x in parts) + "data: [DONE]\n\n"
        b = data.encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
