"""A streamable-HTTP MCP server made with the official Python SDK, for the `:url` tests.

Run: python python_server.py PORT  (serves http://127.0.0.1:PORT/mcp)
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-weather")


@server.tool()
def forecast(city: str, days: int = 1) -> dict:
    """The weather to expect in a city."""
    return {"city": city, "days": days, "sky": "clear"}


@server.tool()
def fails(why: str) -> str:
    """Always raises."""
    raise ValueError(why)


@server.resource("notes://today")
def today() -> str:
    """Today's note."""
    return "buy bread"


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
