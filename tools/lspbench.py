"""Times `tasklisp lsp`'s diagnostics after an edit (docs/BENCHMARKS.md): opens FILE,
then sends three didChange notifications with the whole text plus an appended line and
times each until publishDiagnostics arrives. Without FILE, the file is 5,000 lines:
1,000 five-line procedures that call each other.
Usage: python3 tools/lspbench.py TASKLISP [FILE.sexp]"""
import json, os, subprocess, sys, tempfile, time


def procedures():
    lines = []
    for i in range(1000):
        lines += [f"(define (f{i} x)", f"  (let ((y (+ x {i})))", "    (if (> y 100000)",
                  "        y", f"        (f{(i + 1) % 1000} y))))"]
    return "\n".join(lines) + "\n"


binary = sys.argv[1]
if len(sys.argv) > 2:
    path = sys.argv[2]
    text = open(path).read()
else:
    text = procedures()
    path = os.path.join(tempfile.mkdtemp(), "procedures.sexp")
    open(path, "w").write(text)
uri = "file://" + os.path.abspath(path)
server = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def send(message):
    body = json.dumps(message).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()

def receive():
    length = 0
    while (line := server.stdout.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(server.stdout.read(length))

def until_diagnostics():
    while (message := receive()).get("method") != "textDocument/publishDiagnostics":
        pass
    return message["params"]["diagnostics"]

send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
while receive().get("id") != 1:
    pass
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": uri, "languageId": "tasklisp", "version": 1, "text": text}}})
print("open:", len(until_diagnostics()), "diagnostics")
for version in range(2, 5):
    text += "(define extra%d %d)\n" % (version, version)
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})
    diagnostics = until_diagnostics()
    print("edit %d: %.1f ms, %d diagnostics" % (version - 1, (time.perf_counter() - started) * 1000, len(diagnostics)))
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
send({"jsonrpc": "2.0", "method": "exit"})
server.wait(timeout=30)
