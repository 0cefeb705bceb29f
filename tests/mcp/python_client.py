"""The official Python SDK as a client of `tasklisp mcp`: lists the tools, calls one that
works and one that fails, and prints what it saw as one JSON line.

Run: python python_client.py stdio TASKLISP FILE   (tasklisp mcp FILE over stdio)
     python python_client.py http URL              (the handshake over streamable HTTP)
     python python_client.py auto URL              (mcp.Client: `server/discover` first)
"""

import asyncio
import json
import sys

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def exercise(session, version):
    tools = await session.list_tools()
    works = await session.call_tool("add", {"a": 2, "b": 3})
    fails = await session.call_tool("boom", {"why": "bad input"})
    return {
        "version": version,
        "tools": {t.name: {"description": t.description, "inputSchema": t.input_schema} for t in tools.tools},
        "works": {"isError": works.is_error, "text": works.content[0].text, "structured": works.structured_content},
        "fails": {"isError": fails.is_error, "text": fails.content[0].text, "structured": fails.structured_content},
    }


async def handshake(read, write):
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        return await exercise(session, init.protocol_version)


async def main(mode, *where):
    if mode == "stdio":
        params = StdioServerParameters(command=where[0], args=["mcp", where[1]])
        async with stdio_client(params) as (read, write):
            return await handshake(read, write)
    if mode == "http":
        async with streamable_http_client(where[0]) as (read, write):
            return await handshake(read, write)
    async with Client(where[0]) as client:
        return await exercise(client, client.protocol_version if hasattr(client, "protocol_version") else None)


print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
