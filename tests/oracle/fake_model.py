#!/usr/bin/env python3
"""A stand-in model provider for recording opencode: an OpenAI-compatible chat-completions
endpoint on 127.0.0.1 that stores every request body and answers with a short reply.

    fake_model.py OUTDIR [--tool-call JSON | --steps FILE] [--max-requests N] [--timeout SECONDS]

Writes OUTDIR/port once listening, then OUTDIR/req-<n>.json per POST (n from 1). Streaming
requests get an SSE answer, others a JSON one. With --tool-call '{"name": ..., "arguments":
{...}}', the first streaming request that offers tools is answered with that one tool call,
so the following request carries opencode's tool result. --steps FILE scripts a longer
session: FILE holds a JSON list, one entry per streaming request that offers tools (an agent
step), in order: {"tool_call": {"name": ..., "arguments": {...}}} or {"text": ...}; steps
past the end of the list get a text answer. Requests without tools (the title agent) never
consume a step. Exits after N POSTs or SECONDS, whichever comes first: a recording never
leaves a server behind.
"""
import argparse
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

USAGE = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}


def sse(*events):
    """An SSE body: one `data:` line per chunk, then the [DONE] sentinel."""
    out = ""
    for choices, usage in events:
        chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                 "model": "fake", "choices": choices}
        if usage is not None:
            chunk["usage"] = usage
        out += "data: " + json.dumps(chunk) + "\n\n"
    return (out + "data: [DONE]\n\n").encode()


def streamed_text(text):
    return sse(([{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}], None),
               ([{"index": 0, "delta": {}, "finish_reason": "stop"}], None),
               ([], USAGE))  # OpenAI sends usage in a last chunk without choices


def streamed_tool_call(call, number=1):
    delta = {"role": "assistant", "tool_calls": [{
        "index": 0, "id": "call_fake_%d" % number, "type": "function",
        "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
    return sse(([{"index": 0, "delta": delta, "finish_reason": None}], None),
               ([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], None),
               ([], USAGE))


def plain_text(text):
    return json.dumps({"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                       "model": "fake", "usage": USAGE,
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}]}).encode()


class Handler(BaseHTTPRequestHandler):
    # One reply per connection: the client sees the end of an SSE stream when the socket closes.
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def reply(self, content_type, body):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # model listings
        self.reply("application/json", json.dumps(
            {"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())

    def do_POST(self):
        state = self.server.state
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        state["posts"] += 1
        with open(os.path.join(state["outdir"], "req-%d.json" % state["posts"]), "wb") as f:
            f.write(body)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        if not request.get("stream"):
            self.reply("application/json", plain_text("hi"))
        elif "tools" in request and state["steps"]:
            step = state["steps"].pop(0)
            state["calls"] += 1
            if "tool_call" in step:
                self.reply("text/event-stream", streamed_tool_call(step["tool_call"], state["calls"]))
            else:
                self.reply("text/event-stream", streamed_text(step["text"]))
        else:
            self.reply("text/event-stream", streamed_text("hi"))


def main():
    args = argparse.ArgumentParser()
    args.add_argument("outdir")
    script = args.add_mutually_exclusive_group()
    script.add_argument("--tool-call")
    script.add_argument("--steps")
    args.add_argument("--max-requests", type=int, default=6)
    args.add_argument("--timeout", type=float, default=90.0)
    a = args.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    server = HTTPServer(("127.0.0.1", 0), Handler)
    server.timeout = 0.5  # handle_request() returns this often when idle
    if a.steps:
        with open(a.steps) as f:
            steps = json.load(f)
    else:
        steps = [{"tool_call": json.loads(a.tool_call)}] if a.tool_call else []
    server.state = {"outdir": a.outdir, "posts": 0, "calls": 0, "steps": steps}
    port_file = os.path.join(a.outdir, "port")
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)  # readers never see a partial number
    deadline = time.monotonic() + a.timeout
    while server.state["posts"] < a.max_requests and time.monotonic() < deadline:
        server.handle_request()
    server.server_close()


if __name__ == "__main__":
    main()
