"""`tasklisp mcp` as the server: tools/list and tools/call round trips, timed from Python.

Run: python server.py TASKLISP LIBRARY N URL
Three clients: raw JSON lines over the pipes (what tasklisp itself costs), the official
Python SDK's ClientSession over stdio (what a client people use sees), and raw POSTs to
`tasklisp mcp --http` already serving LIBRARY at URL.
"""

import asyncio
import json
import subprocess
import sys
import time
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

tasklisp, library, n, url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}


def timed(ask):
    """Milliseconds per round trip of tools/list and of tools/call, asked with `ask`."""
    timings = {}
    for method, params in [("tools/list", {}), ("tools/call", CALL)]:
        start = time.perf_counter()
        for _ in range(n):
            ask(method, params)
        timings[method] = (time.perf_counter() - start) * 1000 / n
    return timings


def raw():
    server = subprocess.Popen([tasklisp, "mcp", library], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ids = iter(range(1, 10**9))

    def ask(method, params):
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n")
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    timings = timed(ask)
    server.stdin.close()
    server.wait()
    return timings


def http():
    def ask(method, params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        request = urllib.request.Request(url, body, {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with urllib.request.urlopen(request) as answer:
            return json.loads(answer.read())

    return timed(ask)


async def sdk():
    params = StdioServerParameters(command=tasklisp, args=["mcp", library])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            timings = {}
            for method, call in [("tools/list", session.list_tools), ("tools/call", lambda: session.call_tool(CALL["name"], CALL["arguments"]))]:
                start = time.perf_counter()
                for _ in range(n):
                    await call()
                timings[method] = (time.perf_counter() - start) * 1000 / n
            return timings


for name, timings in [("raw JSON lines", raw()), ("Python SDK", asyncio.run(sdk())), ("raw HTTP POSTs", http())]:
    print(f"{name} ({n} round trips each): " + ", ".join(f"{m} {t:.3f} ms" for m, t in timings.items()))
