#!/usr/bin/env python3
"""A stand-in model provider for recording opencode: an OpenAI-compatible chat-completions
endpoint on 127.0.0.1 that stores every request body and answers with a short reply.

    fake_model.py OUTDIR [--tool-call JSON | --steps FILE | --script FILE [--var KEY=VALUE]...]
                  [--files DIR] [--max-requests N] [--timeout SECONDS]

Writes OUTDIR/port once listening, then OUTDIR/req-<n>.json per POST (n from 1). Streaming
requests get an SSE answer, others a JSON one. With --tool-call '{"name": ..., "arguments":
{...}}', the first streaming request that offers tools is answered with that one tool call,
so the following request carries opencode's tool result. --steps FILE scripts a longer
session: FILE holds a JSON list, one entry per streaming request that offers tools (an agent
step), in order: {"tool_call": {"name": ..., "arguments": {...}}} or {"text": ...}; steps
past the end of the list get a text answer. Requests without tools (the title agent) never
consume a step. Exits after N POSTs or SECONDS, whichever comes first: a recording never
leaves a server behind.

Scripted mode (--script, for whole sessions: record-session.sh) sorts each request into a
kind and answers it with the next unused reply of that kind from the file's "replies" list:

  title       no tools offered, and the system message asks for a title ("title generator")
  main        tools offered: an ordinary agent step
  compaction  anything else: the compaction agent's summary call

A reply is {"kind", "text"?, "tool_calls"? (or one "tool_call"): [{"name", "arguments"}],
"usage"?: {"prompt_tokens", "completion_tokens"[, "total_tokens"]}, "finish_reason"?}. Usage
is what opencode counts a step's tokens from, so it decides overflow. Tool call ids are
call_001, call_002, ... over the whole run, in the order the replies are sent: they do not
depend on when the concurrent title request arrives. A kind with no replies left gets its
entry of the file's "defaults" (built-in: a short text, usage 1/1). Every "{KEY}" in the file
is replaced by VALUE (JSON-escaped) of --var KEY=VALUE before it is parsed. One line per
request goes to OUTDIR/log.jsonl: {"n", "kind"}.

With --files DIR, GET /files/NAME answers the current bytes of DIR/NAME (404 when there is
no such file): remote `instructions` that a session's own edits change between steps.
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


def wire_calls(calls):
    """[(id, {"name", "arguments"})] as OpenAI tool_calls (arguments are a JSON string)."""
    return [{"index": i, "id": call_id, "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}}
            for i, (call_id, call) in enumerate(calls)]


def streamed(text=None, calls=(), usage=USAGE, finish=None):
    events = []
    if text is not None:
        events.append(([{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}], None))
    if calls:
        delta = {"role": "assistant", "tool_calls": wire_calls(calls)}
        events.append(([{"index": 0, "delta": delta, "finish_reason": None}], None))
    finish = finish or ("tool_calls" if calls else "stop")
    events.append(([{"index": 0, "delta": {}, "finish_reason": finish}], None))
    events.append(([], usage))  # OpenAI sends usage in a last chunk without choices
    return sse(*events)


def plain(text=None, calls=(), usage=USAGE, finish=None):
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in wire_calls(calls)]
    return json.dumps({"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                       "model": "fake", "usage": usage,
                       "choices": [{"index": 0, "finish_reason": finish or ("tool_calls" if calls else "stop"),
                                    "message": message}]}).encode()


def request_kind(request):
    """title, main or compaction: see the module doc."""
    if "tools" in request:
        return "main"
    for message in request.get("messages", []):
        if message.get("role") == "system":
            content = message.get("content")
            if "title generator" in (content if isinstance(content, str) else json.dumps(content)):
                return "title"
    return "compaction"


class Script:
    """The scripted replies, consumed in order per kind."""

    BUILTIN = {"title": {"text": "Fake title"}, "main": {"text": "ok"},
               "compaction": {"text": "## Objective\n- fake summary"}}

    def __init__(self, path, variables):
        text = open(path, encoding="utf-8").read()
        for key, value in variables.items():
            text = text.replace("{" + key + "}", json.dumps(value)[1:-1])
        script = json.loads(text)
        self.queues = {}
        for reply in script.get("replies", []):
            self.queues.setdefault(reply.get("kind", "main"), []).append(reply)
        self.defaults = {**self.BUILTIN, **script.get("defaults", {})}
        self.calls = 0

    def answer(self, kind, stream):
        queue = self.queues.get(kind)
        reply = queue.pop(0) if queue else self.defaults.get(kind, {"text": "ok"})
        calls = reply.get("tool_calls") or ([reply["tool_call"]] if "tool_call" in reply else [])
        numbered = []
        for call in calls:
            self.calls += 1
            numbered.append(("call_%03d" % self.calls, call))
        text = reply.get("text")
        if text is None and not calls:
            text = "ok"
        usage = dict(reply.get("usage") or {"prompt_tokens": 1, "completion_tokens": 1})
        usage.setdefault("prompt_tokens", 0)
        usage.setdefault("completion_tokens", 0)
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        build = streamed if stream else plain
        return build(text, numbered, usage, reply.get("finish_reason"))


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

    def do_GET(self):
        files = self.server.state["files"]
        if files is not None and self.path.startswith("/files/"):
            name = os.path.basename(self.path[len("/files/"):])
            try:
                with open(os.path.join(files, name), "rb") as f:
                    body = f.read()
            except OSError:
                self.send_error(404)
                return
            self.reply("text/markdown; charset=utf-8", body)
            return
        # Model listings.
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
        stream = bool(request.get("stream"))
        content_type = "text/event-stream" if stream else "application/json"
        if state["script"] is not None:
            kind = request_kind(request)
            with open(os.path.join(state["outdir"], "log.jsonl"), "a") as f:
                f.write(json.dumps({"n": state["posts"], "kind": kind}) + "\n")
            self.reply(content_type, state["script"].answer(kind, stream))
        elif not stream:
            self.reply(content_type, plain("hi"))
        elif "tools" in request and state["steps"]:
            step = state["steps"].pop(0)
            state["calls"] += 1
            if "tool_call" in step:
                call_id = "call_fake_%d" % state["calls"]
                self.reply(content_type, streamed(calls=[(call_id, step["tool_call"])]))
            else:
                self.reply(content_type, streamed(step["text"]))
        else:
            self.reply(content_type, streamed("hi"))


def main():
    args = argparse.ArgumentParser()
    args.add_argument("outdir")
    script = args.add_mutually_exclusive_group()
    script.add_argument("--tool-call")
    script.add_argument("--steps")
    script.add_argument("--script")
    args.add_argument("--var", action="append", default=[], metavar="KEY=VALUE")
    args.add_argument("--files", metavar="DIR")
    args.add_argument("--max-requests", type=int, default=6)
    args.add_argument("--timeout", type=float, default=90.0)
    a = args.parse_args()
    variables = dict(kv.split("=", 1) for kv in a.var)
    os.makedirs(a.outdir, exist_ok=True)
    if a.steps:
        with open(a.steps) as f:
            steps = json.load(f)
    else:
        steps = [{"tool_call": json.loads(a.tool_call)}] if a.tool_call else []
    server = HTTPServer(("127.0.0.1", 0), Handler)
    server.timeout = 0.5  # handle_request() returns this often when idle
    server.state = {"outdir": a.outdir, "posts": 0,
                    "calls": 0, "steps": steps, "files": a.files,
                    "script": Script(a.script, variables) if a.script else None}
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
