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

  constructor(bin: string, args: string[]) {
    this.child = spawn(bin, ["serve", "--stdio", ...args], { stdio: ["pipe", "pipe", "pipe"] })
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

const INSTRUCTIONS = /^Instructions from: (.+)$/gm

/** The ids of the blocks on which the two texts disagree; empty when opencode's system
 * text holds ctxgraph's exactly, as one run of whole lines not followed by another rule. */
function drift(theirs: string, ours: string, blocks: Span[]): string[] {
  const at = theirs.indexOf(ours)
  if (at >= 0 && (at === 0 || theirs[at - 1] === "\n")) {
    const after = theirs.slice(at + ours.length)
    if (after === "" || (after.startsWith("\n") && !after.startsWith("\nInstructions from: "))) return []
  }
  const bytes = Buffer.from(ours)
  const differing = blocks
    .filter((span) => !theirs.includes(bytes.subarray(span.start, span.end).toString()))
    .map((span) => span.id)
  const known = new Set(blocks.map((span) => span.id))
  for (const match of theirs.matchAll(INSTRUCTIONS)) {
    const source = match[1]
    const id = /^https?:\/\//.test(source) ? `url:${source}` : `file:${source}`
    if (!known.has(id) && !differing.includes(id)) differing.push(id)
  }
  // Same blocks, other order or separators.
  return differing.length > 0 ? differing : ["order"]
}

/** opencode's text with ctxgraph's in place of the part ctxgraph models (from the
 * environment block to the last rule, before skills, references or MCP instructions). */
function substitute(theirs: string, ours: string): string {
  const first = ours.slice(0, ours.indexOf("\n") >>> 0)
  const start = theirs.indexOf(first)
  if (start < 0) return theirs
  const ends = ["\nProject references provide", "\nSkills provide specialized", "\n<mcp_instructions>"]
    .map((marker) => theirs.indexOf(marker, start))
    .filter((index) => index >= 0)
  const end = ends.length > 0 ? Math.min(...ends) : theirs.length
  return theirs.slice(0, start) + ours + theirs.slice(end)
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
  const server = new Server(bin, serveArgs)
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
      const blocks = drift(theirs, ours.text, ours.blocks)
      appendFileSync(log, JSON.stringify({ cwd: directory, equal: blocks.length === 0, blocks }) + "\n")
      if (blocks.length > 0) {
        process.stderr.write(`ctxgraph: opencode's system prompt differs in ${directory}: ${blocks.join(", ")}\n`)
      }
      if (mode === "serve" && output.system.length > 0) {
        output.system.splice(0, output.system.length, substitute(theirs, ours.text))
      }
    },
  }
}

export default CtxgraphPlugin
