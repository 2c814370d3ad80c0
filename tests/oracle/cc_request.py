"""Claude Code's first request as ctxgraph's `--section request` text keeps it (CC16-CC21).

usage: cc_request.py CAPTURE_OUT CASE_DIR   (prints the text; record-agents.sh writes it to
       oracle.out). With CC_PIECES=1, each of Claude Code's own texts and its blake3 go to
       stderr: what the profile's fingerprint table holds.

The request's text blocks in send order, joined by a blank line: the system message's identity
line and system prompt (the billing header is left out), then every block of the first user
message before the prompt. Claude Code's own texts are kept as `<prose:blake3=HASH>`: whole
blocks of its own, each listing's opening and closing sentences, its built-in agents' lines,
each bundled skill's entry (its name alone when the list's budget cut it), the fallback description and the style headings. The
system prompt is hashed with the auto-memory folder written `<memory>`. The blocks that depend
on the machine or the model (environment, model, git status, date) are kept as `<machine:NAME>`.
Which block is which comes from their fixed order (claude-code-depth.md, section A), never
from their words.
"""
import glob, json, os, re, sys, tomllib

import blake3

# Names (not texts) of Claude Code 2.1.332's built-in agents and bundled skills.
BUILTIN_AGENTS = {"claude", "Explore", "general-purpose", "Plan", "statusline-setup"}
BUNDLED_SKILLS = {"dataviz", "update-config", "keybindings-help", "code-review", "simplify",
                  "fewer-permission-prompts", "loop", "claude-api", "workflow-authoring", "run",
                  "plugin-authoring", "init", "security-review"}
OPEN, CLOSE = "<system-reminder>\n", "\n</system-reminder>"
PIECES = os.environ.get("CC_PIECES") == "1"


def token(name, text):
    digest = blake3.blake3(text.encode()).hexdigest()
    if PIECES:
        print("%s\t%s\t%d" % (name, digest, len(text.encode())), file=sys.stderr)
    return "<prose:blake3=%s>" % digest


def inner(block):
    if not (block.startswith(OPEN) and block.rstrip("\n").endswith(CLOSE)):
        sys.exit("not a <system-reminder> block: %r" % block[:80])
    return block[len(OPEN):len(block.rstrip("\n")) - len(CLOSE)], block[len(block.rstrip("\n")):]


def wrap(body, after=""):
    return OPEN + body + CLOSE + after


def agents(block):
    body, after = inner(block)
    head, _, rest = body.partition("\n")
    lines, _, footer = rest.partition("\n\n")
    out = [token("agents.header", head)]
    for line in lines.split("\n") if lines else []:
        name = line[2:].split(":", 1)[0]
        out.append(token("agents.builtin." + name, line) if name in BUILTIN_AGENTS else line)
    return wrap("\n".join(out) + "\n\n" + token("agents.footer", footer), after)


def skills(block, fallback_names):
    body, after = inner(block)
    head, _, rest = body.partition("\n\n")
    # Each entry from its `- NAME` line to the next (a bundled skill's description spans
    # lines); a bundled one whole as a token, or its name alone when the budget cut it.
    bundled = [m.start() for m in re.finditer(r"^- ([^:\n]+)(: |$)", rest, re.M) if m.group(1) in BUNDLED_SKILLS]
    own_text, tail = (rest[:bundled[0]].removesuffix("\n"), rest[bundled[0]:]) if bundled else (rest, "")
    lines = []
    for line in own_text.split("\n") if own_text else []:
        name, _, description = line[2:].partition(": ")
        if name in fallback_names and description == "Skill":
            line = "- %s: %s" % (name, token("skills.fallback", description))
        lines.append(line)
    cuts = [m.start() for m in re.finditer(r"^- ([^:\n]+)(: |$)", tail, re.M) if m.group(1) in BUNDLED_SKILLS]
    for a, b in zip(cuts, cuts[1:] + [len(tail)]):
        entry = tail[a:b].removesuffix("\n")
        name = entry[2:].split(":", 1)[0]
        lines.append(entry if entry == "- " + name else token("skills.bundled." + name, entry))
    return wrap(token("skills.header", head) + "\n\n" + "\n".join(lines), after)


def rule_block(block):
    head, sep, rest = block.partition("\n\nContents of ")
    block = OPEN + token("rules.preamble", head.removeprefix(OPEN)) + sep + rest
    return re.sub(r"^(Contents of .*?)( \([^()]*\)):$", lambda m: m.group(1) + token("rules.label", m.group(2)) + ":",
                  block, flags=re.M)


def style_name(case, cwd):
    """The `outputStyle` the fixture's settings name (the last file that sets it): the user's,
    then the start folder's."""
    name = None
    for f in ("home/.claude/settings.json", "proj/%s/.claude/settings.json" % cwd,
              "proj/%s/.claude/settings.local.json" % cwd):
        try:
            name = json.load(open(os.path.join(case, f))).get("outputStyle", name)
        except (OSError, ValueError):
            pass
    return name


def defines_style(case, name):
    """Whether a fixture file in an output-styles folder has this name (else the name is
    Claude Code's built-in style's)."""
    for path in glob.glob(case + "/proj/**/.claude/output-styles/*.md", recursive=True) + \
            glob.glob(case + "/home/.claude/output-styles/*.md"):
        text = open(path, encoding="utf-8").read()
        found = re.search(r"^name:\s*(.+?)\s*$", text, re.M)
        if (found.group(1).strip("'\"") if found else os.path.basename(path)[:-3]) == name:
            return True
    return False


def request(out, case):
    out = os.path.abspath(out)
    run = out + "/run"
    conf = tomllib.load(open(case + "/case.toml", "rb")).get("run", {})
    config = dict(kv.split("=", 1) for kv in conf.get("config", []))
    reqs = sorted(glob.glob(out + "/cap/req-*.json"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
    reqs = [r for r in (json.load(open(f, encoding="utf-8")) for f in reqs) if r.get("messages")]
    first = reqs[0]
    system = [b["text"] for b in first["system"]]
    slug = re.sub("[^A-Za-z0-9]", "-", run + "/proj")
    memory = run + "/home/.claude/projects/" + slug + "/memory/"
    prompt = system[2]
    tail = ""
    if "append-system-prompt" in config:
        tail = "\n\n" + config["append-system-prompt"]
        if not prompt.endswith(tail):
            sys.exit("the appended text is not at the system prompt's end")
        prompt = prompt[:-len(tail)]
    parts = [token("identity", system[1])]
    if "system-prompt" in config:
        # --system-prompt: the user's own text in the system prompt's place (CC20).
        if prompt != config["system-prompt"]:
            sys.exit("the system prompt is not --system-prompt's text")
        parts.append(prompt + tail)
    else:
        parts.append(token("system-prompt", prompt.replace(memory, "<memory>")) + tail)
    user = [b["text"] for b in first["messages"][0]["content"] if b.get("type") == "text"][:-1]
    has_rules = any(re.search(r"^Contents of .*:$", t, re.M) for t in user)
    # The blocks every request has, less those a flag removes (CC20).
    has_skills = config.get("disable-slash-commands") != "true"
    has_git = "system-prompt" not in config
    always = 7 + has_skills + has_git
    # An output style adds two blocks, MCP servers' instructions one (CC22).
    extra = len(user) - has_rules - always
    if extra not in (0, 1, 2, 3):
        sys.exit("%d blocks in the first user message: not a layout this recorder knows" % len(user))
    has_style, has_mcp = extra >= 2, extra % 2 == 1
    name = style_name(case, conf.get("cwd", "."))
    it = iter(user)
    parts += ["<machine:environment>", "<machine:model>"]
    next(it), next(it)
    if has_style:
        body, after = inner(next(it))
        head, _, text = body.partition("\n")
        if not head.endswith(" " + name):
            sys.exit("the style block does not name " + name)
        # A style no fixture file defines is one of Claude Code's own: its text is kept as a
        # token.
        if not defines_style(case, name):
            text = token("style.builtin." + name, text)
        parts.append(wrap(token("style.heading", head[:-len(name)]) + name + "\n" + text, after))
    deferred = next(it)
    if "\nmcp__" in deferred:
        # The MCP servers' tool names follow Claude Code's own list (CC22): ours, kept.
        at = deferred.index("\nmcp__") + 1
        parts.append(token("deferred-tools-open", deferred[:at]) + deferred[at:])
    else:
        parts.append(token("deferred-tools", deferred))
    parts.append(agents(next(it)))
    if has_mcp:
        # Claude Code's heading, then each server's `## name` and instructions (CC22).
        block = next(it)
        at = block.index("\n\n## ")
        parts.append(token("mcp-heading", block[:at]) + block[at:])
    if has_skills:
        fallback = {os.path.basename(os.path.dirname(p)) for p in glob.glob(case + "/proj/.claude/skills/*/SKILL.md")}
        parts.append(skills(next(it), fallback))
    parts.append(token("total-tokens", next(it)))
    if has_style:
        body, after = inner(next(it))
        if not body.startswith(name + " "):
            sys.exit("the style reminder does not name " + name)
        parts.append(wrap(name + token("style.active", body[len(name):]), after))
    if has_rules:
        parts.append(rule_block(next(it)))
    if has_git:
        parts.append("<machine:git-status>")
        next(it)
    parts.append("<machine:date>")
    next(it)
    parts.append(token("attribution", next(it)))
    return "\n\n".join(parts).replace(slug, "<slug>").replace(run, "<run>")


if __name__ == "__main__":
    sys.stdout.write(request(sys.argv[1], sys.argv[2]))
