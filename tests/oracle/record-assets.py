#!/usr/bin/env python3
"""record-assets.py BINARY VERSION - print the [versions."VERSION"] table of
queries/src/opencode/assets.toml: the length and blake3 of each of opencode's own texts that
its system message can contain, read from the JavaScript bundled in the executable.

This is the recording side, and independent of ctxgraph's extraction (which matches string
literals by length and hash and needs no anchor): it finds each text through the CODE that
uses it (the model-prompt selection function, the built-in agents' table, the structured
output push, the built-in skill's constants, the functions building the references and skills
blocks), decodes that string literal, and prints only figures. Check a new table against captured messages (tests/message/) before committing it.
"""
import re
import sys

import blake3


def decode_literal(data, start):
    """The JS string literal whose opening quote is data[start]: its value."""
    quote = data[start:start + 1]
    out = []
    i = start + 1
    simple = {b'n': '\n', b't': '\t', b'r': '\r', b'b': '\b', b'f': '\f', b'v': '\v'}
    while True:
        c = data[i:i + 1]
        if c == quote:
            break
        if quote == b'`' and data[i:i + 2] == b'${':
            raise ValueError('template with a substitution')
        if c == b'\\':
            e = data[i + 1:i + 2]
            if e in simple:
                out.append(simple[e]); i += 2
            elif e == b'0' and not data[i + 2:i + 3].isdigit():
                out.append('\0'); i += 2
            elif e == b'x':
                out.append(chr(int(data[i + 2:i + 4], 16))); i += 4
            elif e == b'u' and data[i + 2:i + 3] == b'{':
                end = data.index(b'}', i)
                out.append(chr(int(data[i + 3:end], 16))); i = end + 1
            elif e == b'u':
                out.append(chr(int(data[i + 2:i + 6], 16))); i += 6
            elif e == b'\n':
                i += 2
            elif e == b'\r':
                i += 3 if data[i + 2:i + 3] == b'\n' else 2
            else:
                # Any other escaped character stands for itself (UTF-8 sequences included).
                n = 1
                while (data[i + 1 + n:i + 2 + n] or b'\0')[0] & 0xC0 == 0x80:
                    n += 1
                out.append(data[i + 1:i + 1 + n].decode()); i += 1 + n
            continue
        n = 1
        while (data[i + n:i + n + 1] or b'\0')[0] & 0xC0 == 0x80:
            n += 1
        out.append(data[i:i + n].decode()); i += n
    text = ''.join(out)
    # Surrogate pairs written as two \u escapes.
    return text.encode('utf-16', 'surrogatepass').decode('utf-16'), i


def chunk_of(data, at):
    start = data.rfind(b'// @bun', 0, at)
    end = data.find(b'// @bun', at)
    return start, (end if end > 0 else len(data))


def definition(data, at, name):
    """The literal assigned to variable `name` in the chunk around `at`."""
    start, end = chunk_of(data, at)
    pattern = rb'(?:var |let |const |,|;)' + re.escape(name) + rb'=([`"\'])'
    m = re.compile(pattern).search(data, start, end)
    if not m:
        raise SystemExit(f'no definition of {name.decode()} near {at}')
    text, end = decode_literal(data, m.start(1))
    return text, (m.start(1), end + 1)


def find_assets(data):
    """Every asset of the table: name -> (text, (start, end) of its literal)."""
    assets = {}
    # B1: the selection function, its branches in order.
    m = re.search(rb'function [\w$]+\((\w)\)\{if\(\1\.api\.id\.includes\("muse"\)\)', data)
    depth, end = 0, m.end() - 1
    for end in range(m.start(), m.start() + 4000):
        depth += {ord('{'): 1, ord('}'): -1}.get(data[end], 0)
        if depth == 0 and data[end] == ord('}'):
            break
    body = data[m.start():end + 1]
    names = re.findall(rb'return\[([\w$]+)[\].]', body)
    families = ['muse', 'beast', 'gpt-6', 'codex', 'gpt', 'gemini', 'anthropic', 'trinity', 'kimi', 'default']
    assert len(names) == len(families), names
    for family, name in zip(families, names):
        assets[f'model/{family}'] = definition(data, m.start(), name)
    # A2: the built-in agents' prompts.
    m = re.search(rb'explore:\{name:"explore",.{0,2000}?prompt:([\w$]+)', data)
    assets['agent/explore'] = definition(data, m.start(), m.group(1))
    for agent in ['compaction', 'title', 'summary']:
        m2 = re.compile(agent.encode() + rb':\{name:"' + agent.encode() + rb'",.{0,300}?prompt:([\w$]+)').search(data, m.start())
        assets[f'agent/{agent}'] = definition(data, m.start(), m2.group(1))
    # A1: the line pushed when the user asked for json_schema output.
    m = re.search(rb'\.type==="json_schema"\)[\w$]+\.push\(([\w$]+)\)', data)
    assets['structured-output'] = definition(data, m.start(), m.group(1))
    # B5: the built-in skill's description, the constant after its name.
    m = re.search(rb'="customize-opencode",([\w$]+)="', data)
    assets['skill/customize-opencode/description'] = definition(data, m.start(), m.group(1))
    # B3: the sentence opening the references block, the literal before its list tag.
    m = re.search(rb'\?void 0:\[("[^"]*","<available_references>")', data)
    text, end = decode_literal(data, m.start(1))
    assets['references/intro'] = text, (m.start(1), end + 1)
    # B5.8: the skills block's two opening lines, the literals the system prompt's skills
    # function joins before the verbose listing.
    m = re.search(rb'return\[("[^"]*"),("[^"]*"),[\w$]+\.fmt\([\w$]+,\{verbose:!0\}\)\]', data)
    for name, group in [('skills/intro', 1), ('skills/how-to-load', 2)]:
        text, end = decode_literal(data, m.start(group))
        assets[name] = text, (m.start(group), end + 1)
    # B5.8: what that listing says when no skill is listed, its early return.
    m = re.search(rb'if\([\w$]+\.length===0\)return("[^"]*");if\([\w$]+\.verbose\)return\["<available_skills>"', data)
    text, end = decode_literal(data, m.start(1))
    assets['skills/none-available'] = text, (m.start(1), end + 1)
    return assets


def main():
    path, version = sys.argv[1], sys.argv[2]
    data = open(path, 'rb').read()
    assets = find_assets(data)
    print(f'[versions."{version}"]')
    for name in sorted(assets):
        text = assets[name][0].encode()
        print(f'"{name}" = {{ bytes = {len(text)}, blake3 = "{blake3.blake3(text).hexdigest()}" }}')
    # Where each literal sits (quote to quote) in this very executable, keyed by its size:
    # a load of the same file reads just these ranges.
    print()
    print(f'[offsets."{version}".{len(data)}]')
    for name in sorted(assets):
        start, end = assets[name][1]
        print(f'"{name}" = [{start}, {end}]')


if __name__ == '__main__':
    main()
