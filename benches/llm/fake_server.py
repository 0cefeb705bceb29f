"""A fake OpenAI-compatible chat-completions server for the model-call benchmark.

Every POST /v1/chat/completions waits LATENCY seconds (a thread per connection, so
waits overlap) and answers with the prompt echoed back and fixed usage. Usage:
    python3 fake_server.py PORT LATENCY_SECONDS
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LATENCY = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
in_flight = 0
peak = 0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in two writes; with Nagle's algorithm the second waits for
    # the client's delayed ACK (up to 40 ms), which is not the latency being simulated.
    # Real servers set TCP_NODELAY too.
    disable_nagle_algorithm = True

    def do_POST(self):
        global in_flight, peak
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(LATENCY)
        with lock:
            in_flight -= 1
        prompt = body.get("messages", [{}])[-1].get("content", "")
        answer = json.dumps({
            "id": "bench", "object": "chat.completion", "created": 0,
            "model": body.get("model", "bench"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok: " + prompt}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        # GET /peak: the most requests that were in flight at once, then reset.
        global peak
        text = str(peak).encode()
        peak = 0
        self.send_response(200)
        self.send_header("content-length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 512
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
