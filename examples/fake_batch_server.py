#!/usr/bin/env python3
"""A stand-in for the batch APIs of OpenAI and Anthropic, on 127.0.0.1, for trying
`pmap :batch true` offline and for tasklisp's own tests.

OpenAI:    POST /v1/files (multipart, purpose=batch), POST /v1/batches,
           GET /v1/batches/ID, GET /v1/files/ID/content
Anthropic: POST /v1/messages/batches, GET /v1/messages/batches/ID,
           GET /v1/messages/batches/ID/results

Each request is answered with "answer to: " and its last user message. A request whose
prompt holds --fail-word fails; with --expire, a job expires after answering its first
half. A job stays in progress for --polls polls; with --hold, every job stays in
progress until POST /_release. GET /_stats tells how many jobs were submitted and
polled and holds every uploaded JSONL file and Anthropic request list, for tests.

    python3 examples/fake_batch_server.py --port 8766
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"jobs": {}, "files": {}, "uploads": [], "anthropic_requests": [], "submitted": 0,
         "polls": 0, "released": False}
LOCK = threading.Lock()
OPTIONS = None


def answer_text(messages):
    users = [m for m in messages if m.get("role") == "user"]
    content = users[-1]["content"] if users else ""
    if isinstance(content, list):
        content = "".join(block.get("text", "") for block in content)
    return content


def plan(entries, prompt_of):
    """Splits entries into (answered, failed, expired) as the options say."""
    cut = len(entries) // 2 if OPTIONS.expire else len(entries)
    answered, failed, expired = [], [], []
    for position, entry in enumerate(entries):
        prompt = prompt_of(entry)
        if position >= cut:
            expired.append((entry, prompt))
        elif OPTIONS.fail_word and OPTIONS.fail_word in prompt:
            failed.append((entry, prompt))
        else:
            answered.append((entry, prompt))
    return answered, failed, expired


def openai_job(file_id):
    lines = [json.loads(l) for l in STATE["files"][file_id].splitlines() if l.strip()]
    answered, failed, expired = plan(lines, lambda e: answer_text(e["body"]["messages"]))
    output, errors = [], []
    for n, (entry, prompt) in enumerate(answered):
        output.append({
            "id": f"batch_req_{n}", "custom_id": entry["custom_id"],
            "response": {"status_code": 200, "request_id": f"req_{n}", "body": {
                "id": f"chatcmpl-{n}", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": "answer to: " + prompt}}],
                "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 3}}},
            "error": None})
    for entry, prompt in failed:
        errors.append({"id": "batch_req_f", "custom_id": entry["custom_id"],
                       "response": {"status_code": 400, "request_id": "req_f", "body": {
                           "error": {"message": "the prompt asked to fail",
                                     "type": "invalid_request_error"}}},
                       "error": None})
    for entry, prompt in expired:
        errors.append({"id": "batch_req_e", "custom_id": entry["custom_id"], "response": None,
                       "error": {"code": "batch_expired",
                                 "message": "This request could not be executed before the completion window expired."}})
    return output, errors, len(lines)


def anthropic_results(requests):
    answered, failed, expired = plan(requests, lambda r: answer_text(r["params"]["messages"]))
    results = []
    for entry, prompt in answered:
        results.append({"custom_id": entry["custom_id"], "result": {"type": "succeeded", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": entry["params"].get("model"),
            "content": [{"type": "text", "text": "answer to: " + prompt}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": len(prompt.split()), "output_tokens": 3}}}})
    for entry, prompt in failed:
        results.append({"custom_id": entry["custom_id"], "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "invalid_request_error",
                                       "message": "the prompt asked to fail"}}}})
    for entry, prompt in expired:
        results.append({"custom_id": entry["custom_id"], "result": {"type": "expired"}})
    return results


def held(job):
    """True while a job stays in progress: for its first --polls polls, and with --hold
    until POST /_release."""
    return job["polls"] <= OPTIONS.polls or (OPTIONS.hold and not STATE["released"])


def multipart_file(body, content_type):
    boundary = content_type.split("boundary=", 1)[1].encode()
    for part in body.split(b"--" + boundary):
        head, _, data = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return data[: -2] if data.endswith(b"\r\n") else data
    raise ValueError("no file part")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, payload, raw=False):
        body = payload if raw else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/jsonl" if raw else "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("content-length", "0")))

    def do_POST(self):
        body = self.read_body()
        with LOCK:
            if self.path == "/_release":
                STATE["released"] = True
                return self.reply(200, {"released": True})
            if self.path == "/v1/files":
                data = multipart_file(body, self.headers["content-type"]).decode()
                file_id = f"file-{len(STATE['files'])}"
                STATE["files"][file_id] = data
                STATE["uploads"].append(data)
                return self.reply(200, {"id": file_id, "object": "file", "purpose": "batch"})
            if self.path == "/v1/batches":
                request = json.loads(body)
                job_id = f"batch_{len(STATE['jobs'])}"
                STATE["jobs"][job_id] = {"kind": "openai", "file": request["input_file_id"], "polls": 0}
                STATE["submitted"] += 1
                return self.reply(200, {"id": job_id, "object": "batch", "status": "validating"})
            if self.path == "/v1/messages/batches":
                requests = json.loads(body)["requests"]
                job_id = f"msgbatch_{len(STATE['jobs'])}"
                STATE["jobs"][job_id] = {"kind": "anthropic", "requests": requests, "polls": 0}
                STATE["anthropic_requests"].append(requests)
                STATE["submitted"] += 1
                return self.reply(200, {"id": job_id, "type": "message_batch",
                                        "processing_status": "in_progress"})
        self.reply(404, {"error": {"message": "no such endpoint"}})

    def do_GET(self):
        with LOCK:
            if self.path == "/_stats":
                return self.reply(200, {"submitted": STATE["submitted"], "polls": STATE["polls"],
                                        "uploads": STATE["uploads"],
                                        "anthropic_requests": STATE["anthropic_requests"]})
            parts = self.path.strip("/").split("/")
            if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                return self.openai_status(parts[2])
            if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                data = STATE["files"].get(parts[2])
                return self.reply(200, data.encode(), raw=True) if data is not None else \
                    self.reply(404, {"error": {"message": "no such file"}})
            if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                return self.anthropic_status(parts[3])
            if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5:
                job = STATE["jobs"].get(parts[3])
                lines = "".join(json.dumps(r) + "\n" for r in anthropic_results(job["requests"]))
                return self.reply(200, lines.encode(), raw=True)
        self.reply(404, {"error": {"message": "no such endpoint"}})

    def openai_status(self, job_id):
        job = STATE["jobs"].get(job_id)
        if job is None:
            return self.reply(404, {"error": {"message": "no such batch"}})
        job["polls"] += 1
        STATE["polls"] += 1
        output, errors, total = openai_job(job["file"])
        if held(job):
            return self.reply(200, {"id": job_id, "status": "in_progress", "request_counts": {
                "total": total, "completed": 0, "failed": 0}})
        if "output" not in job:
            job["output"] = f"file-out-{job_id}"
            job["errors"] = f"file-err-{job_id}"
            STATE["files"][job["output"]] = "".join(json.dumps(l) + "\n" for l in output)
            STATE["files"][job["errors"]] = "".join(json.dumps(l) + "\n" for l in errors)
        return self.reply(200, {
            "id": job_id, "status": "expired" if OPTIONS.expire else "completed",
            "output_file_id": job["output"] if output else None,
            "error_file_id": job["errors"] if errors else None,
            "request_counts": {"total": total, "completed": len(output), "failed": len(errors)}})

    def anthropic_status(self, job_id):
        job = STATE["jobs"].get(job_id)
        if job is None:
            return self.reply(404, {"error": {"message": "no such batch"}})
        job["polls"] += 1
        STATE["polls"] += 1
        results = anthropic_results(job["requests"])
        count = lambda kind: sum(1 for r in results if r["result"]["type"] == kind)
        ended = not held(job)
        host = self.headers.get("host")
        return self.reply(200, {
            "id": job_id, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0 if ended else len(results),
                               "succeeded": count("succeeded") if ended else 0,
                               "errored": count("errored") if ended else 0,
                               "canceled": 0, "expired": count("expired") if ended else 0},
            "results_url": f"http://{host}/v1/messages/batches/{job_id}/results" if ended else None})


def main():
    global OPTIONS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8766, help="0 picks a free port")
    parser.add_argument("--polls", type=int, default=1, help="polls a job stays in progress")
    parser.add_argument("--fail-word", default="FAIL", help="prompts holding it fail")
    parser.add_argument("--expire", action="store_true", help="jobs expire after half")
    parser.add_argument("--hold", action="store_true", help="jobs run until POST /_release")
    OPTIONS = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", OPTIONS.port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
