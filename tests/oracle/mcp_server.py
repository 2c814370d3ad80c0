#!/usr/bin/env python3
"""A tiny MCP server over stdio for ctxgraph's fixtures (standard library only).

Newline-delimited JSON-RPC 2.0 on stdin/stdout, as the MCP stdio transport specifies. What it
answers is chosen on the command line, so one script covers every fixture case:

  mcp_server.py [--instructions TEXT | --instructions-file PATH] [--tools a,b,...] [--mode M]
                [--http PORTFILE [--require-header NAME=VALUE] [--max-seconds S]]

  --instructions TEXT   the `instructions` of the initialize result ("\\n" in TEXT is a newline)
  --tools a,b           advertise the tools capability and list these tools (none: no capability)
  --mode normal         answer initialize, tools/list and ping (default)
         crash          exit with status 3 before reading anything
         hang           read requests and never answer
         garbage        answer initialize with a line that is not JSON
         huge           answer initialize with 64 MiB of instructions
         error          answer initialize with a JSON-RPC error
  --http PORTFILE       serve streamable HTTP on 127.0.0.1 (an ephemeral port, written to
                        PORTFILE) instead of stdio: each POSTed request is answered with one
                        application/json response; stops after --max-seconds (default 60)
  --require-header N=V  answer 401 to requests without that header
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def answer(request, instructions, tools, mode):
    """The reply to one request (a dict, or a raw line for `garbage`), or None."""
    if mode == "hang" or "id" not in request:
        return None  # notifications get no answer; `hang` answers nothing at all
    method, rid = request.get("method"), request["id"]
    if method == "initialize":
        if mode == "garbage":
            return "this is not JSON-RPC"
        if mode == "error":
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "refused"}}
        result = {
            "protocolVersion": request.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}} if tools is not None else {},
            "serverInfo": {"name": "ctxgraph-fixture", "version": "1.0.0"},
        }
        if mode == "huge":
            result["instructions"] = "x" * (64 << 20)
        elif instructions is not None:
            result["instructions"] = instructions
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    if method == "tools/list":
        listed = [{"name": t, "description": f"fixture tool {t}",
                   "inputSchema": {"type": "object", "properties": {}}} for t in tools or []]
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": listed}}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return {"jsonrpc": "2.0", "id": rid,
            "error": {"code": -32601, "message": f"method not found: {method}"}}


def encode(reply):
    return reply if isinstance(reply, str) else json.dumps(reply)


def serve_http(port_file, require, max_seconds, instructions, tools, mode):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            if require and self.headers.get(require[0]) != require[1]:
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                request = json.loads(body)
            except ValueError:
                request = {}
            reply = answer(request, instructions, tools, mode) if isinstance(request, dict) else None
            if reply is None:
                if mode == "hang" and "id" in request:
                    threading.Event().wait(max_seconds)
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = encode(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Mcp-Session-Id", "fixture-session")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_DELETE = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(port_file + ".tmp", port_file)
    threading.Timer(max_seconds, server.shutdown).start()
    server.serve_forever()


def main(argv):
    instructions, tools, mode = None, None, "normal"
    http, require, max_seconds = None, None, 60.0
    i = 0
    while i < len(argv):
        flag, value = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if value is None:
            sys.exit(f"mcp_server.py: {flag} needs a value")
        if flag == "--instructions":
            instructions = value.replace("\\n", "\n")
        elif flag == "--instructions-file":
            with open(value, encoding="utf-8") as f:
                instructions = f.read()
        elif flag == "--tools":
            tools = [t for t in value.split(",") if t]
        elif flag == "--mode":
            mode = value
        elif flag == "--http":
            http = value
        elif flag == "--require-header":
            require = tuple(value.split("=", 1))
        elif flag == "--max-seconds":
            max_seconds = float(value)
        else:
            sys.exit(f"mcp_server.py: unknown flag {flag}")
        i += 2

    if mode == "crash":
        sys.stderr.write("mcp_server.py: crashing on purpose\n")
        sys.exit(3)
    if http is not None:
        serve_http(http, require, max_seconds, instructions, tools, mode)
        return

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request, instructions, tools, mode) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(encode(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
