// ctxgraph for opencode: compares, on every model step, the system text opencode built with
// the one ctxgraph builds for the same directory, and records any drift.
//
// Install: copy (or symlink) this file to `.opencode/plugin/ctxgraph.ts` in a project, or
// list it in the config's `plugin` array (the tuple form takes options, see `Options`).
//
// Every step appends one JSON line to `$XDG_STATE_HOME/ctxgraph/opencode-drift.jsonl`
// (default state dir `~/.local/state`): `{"cwd", "equal", "blocks"}`, `blocks` being the
// ids of the blocks that differ (`environment`, `file:<path>`, `url:<url>`). Drift is also
// named on stderr. With `mode: "serve"` the plugin puts ctxgraph's text in the prompt in
// place of opencode's (pinned and cached remote rules, a stable prefix).
//
// Where ctxgraph's part (the environment block and the rule blocks) lies in opencode's text
// is found by structure first: ctxgraph's blocks, matched one by one, so a rule whose text
// holds a line like the start of another block is stepped over whole. Where opencode's
// blocks stop being ctxgraph's (a remote rule ctxgraph serves cached or pinned: the last
// block), nothing in ctxgraph's text says where opencode's copy ends; the first line of the
// block opencode puts after the rules does. Those lines, like the references block's first
// line between the environment and the rules, are opencode's own texts: the plugin names
// them and the server loads them from the opencode that runs the plugin
// (`process.execPath`), verified (docs/opencode/installation.md). Asking the server for the
// whole message instead (`section: "message"`) would not do: it depends on opencode's agent,
// which this hook does not name, and would connect to every MCP server a second time.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { appendFileSync, mkdirSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"

/** Plugin options (the tuple form of `plugin` in opencode's config); each has an env
 * variable for auto-discovered plugins, which get no options. */
export type Options = {
  /** `compare` (default): record drift only. `serve`: send ctxgraph's text instead.
   * Env: `CTXGRAPH_OPENCODE_MODE`. */
  mode?: "compare" | "serve"
  /** The ctxgraph binary. Env: `CTXGRAPH_BIN`; default `ctxgraph` on `PATH`. */
  bin?: string
  /** Extra arguments for `ctxgraph serve --stdio`. Env: `CTXGRAPH_SERVE_ARGS`
   * (space-separated). Default `--no-watch`: every step rescans what the graph knows, so
   * a file written by a tool a moment before is always seen. */
  serveArgs?: string[]
}

/** One block of ctxgraph's text; `start`/`end` are UTF-8 byte offsets. */
type Span = { id: string; start: number; end: number; hash: string }

type BuildReply = {
  text?: string
  hash: string
  blocks?: Span[]
  unchanged: boolean
}

/** The shapes of `experimental.chat.system.transform`, as opencode 1.18.33 calls it:
 * `trigger(name, {sessionID, model}, {system})`, `system` holding the whole system text
 * as its first element. */
type TransformInput = { sessionID?: string; model?: { providerID: string; id: string; api?: { id: string } } }
type TransformOutput = { system: string[] }

/** A line-delimited JSON-RPC client for one `ctxgraph serve --stdio`. */
class Server {
  private next = 1
  private waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  private child: ChildProcessWithoutNullStreams

  constructor(bin: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(bin, ["serve", "--stdio", ...args], { stdio: ["pipe", "pipe", "pipe"], env })
    this.child.stderr.on("data", (chunk) => process.stderr.write(`ctxgraph: ${chunk}`))
    this.child.on("exit", (code) => this.failAll(new Error(`ctxgraph serve exited (${code})`)))
    this.child.on("error", (err) => this.failAll(err))
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      let reply: { id?: number; result?: unknown; error?: { message: string } }
      try {
        reply = JSON.parse(line)
      } catch {
        return
      }
      const waiter = reply.id === undefined ? undefined : this.waiting.get(reply.id)
      if (!waiter || reply.id === undefined) return
      this.waiting.delete(reply.id)
      if (reply.error) waiter.reject(new Error(reply.error.message))
      else waiter.resolve(reply.result)
    })
    // The server must not outlive opencode.
    process.once("exit", () => this.child.kill())
  }

  call<T>(method: string, params: object): Promise<T> {
    const id = this.next++
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    })
  }

  private failAll(err: Error) {
    for (const waiter of this.waiting.values()) waiter.reject(err)
    this.waiting.clear()
  }
}

/** I9: every rule block starts with this line prefix, then its path or URL. */
const HEADER = "Instructions from: "
const INSTRUCTIONS = new RegExp(`^${HEADER}(.+)$`, "gm")
/** B4: the MCP block's first line (ctxgraph builds the same block). */
const MCP_OPENING = "<mcp_instructions>"

/** The names of opencode's own texts that open the blocks around ctxgraph's part
 * (docs/opencode/installation.md): the references block (B3) between the environment block
 * and the rules; the skills block (B5, two lines) and the structured-output line (A1) after
 * them. The plugin never carries opencode's words: the server loads these texts from the
 * opencode that runs this plugin and verifies them (L1–L2). */
const OPENING_TEXTS = ["references/intro", "skills/intro", "skills/how-to-load", "structured-output"]

type InstallationReply = { texts: Record<string, string>; unavailable: Record<string, string> }

/** The line prefixes that open opencode's blocks around ctxgraph's part. */
type Openings = { references: string; after: string[] }

function openingsFrom(reply: InstallationReply): Openings | string {
  const missing = OPENING_TEXTS.filter((name) => reply.texts[name] === undefined)
  if (missing.length > 0) return missing.map((name) => `${name}: ${reply.unavailable[name] ?? "not sent"}`).join("; ")
  const text = reply.texts
  return {
    references: `${text["references/intro"]}\n`,
    after: [`${MCP_OPENING}\n`, `${text["skills/intro"]}\n${text["skills/how-to-load"]}\n`, text["structured-output"]],
  }
}

/** The first index at or after `from` where a line starts with one of `prefixes`. */
function lineStarting(text: string, prefixes: string[], from: number): number {
  let first = -1
  for (const prefix of prefixes) {
    for (let at = text.indexOf(prefix, from); at >= 0; at = text.indexOf(prefix, at + 1)) {
      if (at === 0 || text[at - 1] === "\n") {
        if (first < 0 || at < first) first = at
        break
      }
    }
  }
  return first
}

/** Where ctxgraph's part lies in opencode's system text (UTF-16 indices): the environment
 * block [start, envEnd), then opencode's references block if any, then the rule blocks
 * [rulesStart, end). `exact`: both parts are ctxgraph's text, byte for byte. */
type Region = { start: number; envEnd: number; rulesStart: number; end: number; exact: boolean }

/** Finds ctxgraph's part in opencode's text by structure: the environment block by its
 * first and last lines, then ctxgraph's rule blocks one by one as long as they are exactly
 * opencode's (so a rule whose text holds a line that opens another block is stepped over
 * whole). Where opencode's blocks stop matching (a rule ctxgraph serves pinned or cached,
 * one only one side has), they run to the first line that opens what opencode puts after
 * the rules, else to the end. Without `openings` (opencode's texts unavailable) only a part
 * that matches exactly, with nothing in between, is found. */
function locate(theirs: string, ours: string, blocks: Span[], openings: Openings | undefined): Region | undefined {
  const [env, ...rules] = blocks
  if (env?.id !== "environment") return undefined
  const bytes = Buffer.from(ours)
  const envText = bytes.subarray(env.start, env.end).toString()
  const envLines = envText.split("\n")
  const start = lineStarting(theirs, [`${envLines[0]}\n`], 0)
  if (start < 0) return undefined
  const envExact = theirs.startsWith(envText, start) && [undefined, "\n"].includes(theirs[start + envText.length])
  let at = envExact ? start + envText.length : theirs.indexOf(`\n${envLines[envLines.length - 1]}`, start)
  if (at < 0) return undefined
  if (!envExact) at += 1 + envLines[envLines.length - 1].length
  const envEnd = at
  const after = openings ? openings.after : []
  if (openings && theirs.startsWith(`\n${openings.references}`, at)) {
    const next = lineStarting(theirs, [HEADER, ...after], at + 1)
    at = next < 0 ? theirs.length : next - 1
  }
  const rulesStart = at
  let matched = 0
  for (const span of rules) {
    const block = `\n${bytes.subarray(span.start, span.end).toString()}`
    const past = at + block.length
    if (!theirs.startsWith(block, at) || (past < theirs.length && theirs[past] !== "\n")) break
    at = past
    matched++
  }
  // Past ctxgraph's last rule, opencode must have no rule of its own (without its texts,
  // no rule anywhere after: nothing else tells where its rules would end).
  const more = openings ? theirs.startsWith(`\n${HEADER}`, at) : lineStarting(theirs, [HEADER], at + 1) >= 0
  if (matched === rules.length && !more) return { start, envEnd, rulesStart, end: at, exact: envExact }
  if (!openings) return undefined
  const next = lineStarting(theirs, after, at + 1)
  return { start, envEnd, rulesStart, end: next < 0 ? theirs.length : next - 1, exact: false }
}

/** The ids of the blocks on which the two texts disagree; empty when opencode's part is
 * ctxgraph's text exactly (opencode's references block aside, which ctxgraph's part does
 * not hold). */
function drift(theirs: string, ours: string, blocks: Span[], region: Region | undefined): string[] {
  if (region?.exact) return []
  const bytes = Buffer.from(ours)
  const differing = blocks
    .filter((span) => !theirs.includes(bytes.subarray(span.start, span.end).toString()))
    .map((span) => span.id)
  const known = new Set(blocks.map((span) => span.id))
  const rules = region ? theirs.slice(region.rulesStart, region.end) : theirs
  for (const match of rules.matchAll(INSTRUCTIONS)) {
    const source = match[1]
    const id = /^https?:\/\//.test(source) ? `url:${source}` : `file:${source}`
    if (!known.has(id) && !differing.includes(id)) differing.push(id)
  }
  // Same blocks, other order or separators.
  return differing.length > 0 ? differing : ["order"]
}

/** opencode's text with ctxgraph's environment block and rule blocks in place of its own;
 * everything else (the model prompt, references, MCP, skills …) stays as opencode built it. */
function substitute(theirs: string, ours: string, blocks: Span[], region: Region): string {
  const bytes = Buffer.from(ours)
  const env = bytes.subarray(blocks[0].start, blocks[0].end).toString()
  const rules = bytes.subarray(blocks[0].end).toString()
  return (
    theirs.slice(0, region.start) +
    env +
    theirs.slice(region.envEnd, region.rulesStart) +
    rules +
    theirs.slice(region.end)
  )
}

function stateFile(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state")
  return join(base, "ctxgraph", "opencode-drift.jsonl")
}

// The module's only value export: opencode calls every exported function as a plugin.
const CtxgraphPlugin = async (
  { directory }: { directory: string },
  options: Options = {},
) => {
  const mode = options.mode ?? (process.env.CTXGRAPH_OPENCODE_MODE === "serve" ? "serve" : "compare")
  const bin = options.bin ?? process.env.CTXGRAPH_BIN ?? "ctxgraph"
  const envArgs = process.env.CTXGRAPH_SERVE_ARGS
  const serveArgs = options.serveArgs ?? (envArgs === undefined ? ["--no-watch"] : envArgs.split(" ").filter(Boolean))
  // The plugin runs inside opencode, so this process's executable is the installation whose
  // texts are in the system text: the server loads the few it needs to find the blocks
  // around ctxgraph's part (L1 reads CTXGRAPH_OPENCODE; a value the user set wins).
  const env = { ...process.env, CTXGRAPH_OPENCODE: process.env.CTXGRAPH_OPENCODE || process.execPath }
  const server = new Server(bin, serveArgs, env)
  const opened = server.call<InstallationReply>("installation", { texts: OPENING_TEXTS }).then(
    (reply) => {
      const found = openingsFrom(reply)
      if (typeof found !== "string") return found
      process.stderr.write(
        `ctxgraph: opencode's texts are unavailable (${found}): only a part that matches exactly is found` +
          (mode === "serve" ? "; opencode's own text is sent where ctxgraph's differs\n" : "\n"),
      )
      return undefined
    },
    (err: Error) => {
      process.stderr.write(`ctxgraph: cannot load opencode's texts: ${err.message}\n`)
      return undefined
    },
  )
  const log = stateFile()
  mkdirSync(join(log, ".."), { recursive: true })
  // The last text per model, so an unchanged step costs a reply of a few bytes.
  const last = new Map<string, { hash: string; text: string; blocks: Span[] }>()

  async function build(model: string | undefined) {
    const key = model ?? ""
    const known = last.get(key)
    const params = { cwd: directory, ...(model ? { model } : {}), ...(known ? { known_hash: known.hash } : {}) }
    const reply = await server.call<BuildReply>("build", params)
    if (reply.unchanged && known) return known
    // Only the changed blocks came back: ask once more for the full layout.
    const full = known ? await server.call<BuildReply>("build", { cwd: directory, ...(model ? { model } : {}) }) : reply
    const entry = { hash: full.hash, text: full.text ?? "", blocks: full.blocks ?? [] }
    last.set(key, entry)
    return entry
  }

  return {
    "experimental.chat.system.transform": async (input: TransformInput, output: TransformOutput) => {
      const theirs = output.system.join("\n")
      // Steps without the environment block (title and summary agents) are not the
      // prompt ctxgraph builds.
      if (!theirs.includes("\n<env>\n")) return
      const model = input.model ? `${input.model.providerID}/${input.model.api?.id ?? input.model.id}` : undefined
      let ours
      try {
        ours = await build(model)
      } catch (err) {
        process.stderr.write(`ctxgraph: cannot build for ${directory}: ${(err as Error).message}\n`)
        return
      }
      const region = locate(theirs, ours.text, ours.blocks, await opened)
      const blocks = drift(theirs, ours.text, ours.blocks, region)
      appendFileSync(log, JSON.stringify({ cwd: directory, equal: blocks.length === 0, blocks }) + "\n")
      if (blocks.length > 0) {
        process.stderr.write(`ctxgraph: opencode's system prompt differs in ${directory}: ${blocks.join(", ")}\n`)
      }
      if (mode !== "serve" || region?.exact) return
      if (region) {
        output.system.splice(0, output.system.length, substitute(theirs, ours.text, ours.blocks, region))
      } else {
        process.stderr.write(`ctxgraph: ctxgraph's part was not found in opencode's text; sent unchanged\n`)
      }
    },
  }
}

export default CtxgraphPlugin
