import json, subprocess, sys, os, time
pi = sys.argv[1]; out = open(sys.argv[2], 'w')
env = dict(os.environ)
p = subprocess.Popen(pi.split(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, cwd=os.environ["PROJ"])
def send(cmd):
    out.write(">>> " + json.dumps(cmd) + "\n"); out.flush()
    p.stdin.write(json.dumps(cmd) + "\n"); p.stdin.flush()
def until(pred):
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("eof")
        out.write(line); out.flush()
        v = json.loads(line)
        if pred(v): return v
send({"type": "prompt", "message": "Read a.txt"})
until(lambda v: v.get("type") == "agent_end")
send({"type": "prompt", "message": "Now write b.txt. " + "word " * 78})
until(lambda v: v.get("type") == "agent_end")
send({"id": "n", "type": "prompt", "message": "/navsum Keep the file names"})
until(lambda v: v.get("type") == "extension_ui_request" and v.get("method") == "notify")
send({"type": "prompt", "message": "Start over"})
until(lambda v: v.get("type") == "agent_end")
p.stdin.close(); p.wait(timeout=10)
