//! `ctxgraph mcp`: the workspace memory and the assembled context as Model Context Protocol
//! tools over stdio, so any MCP client (Claude Code, Codex, Cursor, opencode) can use them.
//!
//! The protocol is the official SDK's (`rmcp`); this module only maps tool calls to what
//! `ctxgraph memory`, `build` and `explain` do. The engine lives on one worker thread: the
//! database is not shared between threads, and its calls block (file reads, the store's
//! lock, remote fetches with their own runtime), which must not stall the protocol's.
//! Before each call the engine re-checks every path it knows, so a fact another session
//! wrote a moment ago is seen, exactly as a fresh `ctxgraph` process would see it.
//! Lines reach `rmcp` through [`lines`], which answers those it cannot read as `ctxgraph
//! serve` does.

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_db::Workspace;
use ctxgraph_engine::remote::FetchOptions;
use ctxgraph_engine::{ChangeEvent, Engine, HostEnv, OsSystem, RemoteRefresh};
use ctxgraph_memory::Store;
use ctxgraph_opencode::prompt::{ModelRef, Section};
use rmcp::handler::server::common::{FromContextPart, schema_for_input, schema_for_type};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::service::ServerInitializeError;
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot};

use crate::args::ScopeArg;
use crate::commands::memory::{self as memory_command, RecallOptions};
use crate::error::CliError;
use crate::render;

mod lines;

/// What a tool call answers: text for the model, or a message for a tool error.
type Answer = Result<String, String>;

/// A tool's arguments, or why they do not fit its schema. Malformed arguments are a tool
/// error the model can read and correct (MCP: input validation errors are tool execution
/// errors), not a protocol error; `rmcp`'s own `Parameters` makes them the latter.
struct Args<T>(Result<T, String>);

impl<'a, S, T: for<'de> Deserialize<'de>> FromContextPart<ToolCallContext<'a, S>> for Args<T> {
    fn from_context_part(context: &mut ToolCallContext<'a, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        Ok(Args(
            serde_json::from_value(serde_json::Value::Object(arguments))
                .map_err(|e| format!("invalid arguments: {e}")),
        ))
    }
}

/// A tool's input schema, as `rmcp` derives it for its own `Parameters` (the type's
/// title and doc comment dropped: the tool's description says it).
fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|_| schema_for_type::<T>())
}

/// `memory_recall`'s arguments (docs/memory.md §12).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    /// What to look for, in free text (1 to 2000 characters).
    query: String,
    /// At most this many items per block (1 to 20; default 8).
    #[serde(default)]
    limit: Option<usize>,
    /// Characters the whole answer may take (default: `memory.maxTotalChars`, else 9000).
    #[serde(default)]
    budget: Option<usize>,
}

/// `memory_remember`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RememberArgs {
    /// One atomic fact, at most 300 characters ("Use pnpm, not npm, in this repo").
    text: String,
    /// Whom it is about: `user` (preferences, style) or `project` (the code base; default).
    #[serde(default)]
    scope: Option<ScopeName>,
    /// `preference`, `convention`, `tooling`, `environment`, `architecture` or `other`
    /// (default).
    #[serde(default)]
    category: Option<String>,
}

#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ScopeName {
    User,
    Project,
}

/// `memory_forget`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ForgetArgs {
    /// A fact id (`fct_…`), or text naming the fact ("that we use npm").
    target: String,
}

/// `context_build`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BuildArgs {
    /// The model whose prompt to build, as `provider/model` (default: the config's).
    #[serde(default)]
    model: Option<String>,
}

/// `context_explain`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExplainArgs {
    /// A rule file, `instructions` entry or URL to explain (paths relative to the
    /// workspace); default: everything.
    #[serde(default)]
    target: Option<String>,
    /// `text` (default) or `json`.
    #[serde(default)]
    format: Option<FormatName>,
}

#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum FormatName {
    Text,
    Json,
}

/// The engine's side: one workspace, kept warm between calls.
struct Worker {
    engine: Engine,
    ws: Workspace,
    store: Store,
    session: Option<String>,
    remote: RemoteRefresh,
}

type Job = Box<dyn FnOnce(&mut Worker) + Send>;

impl Worker {
    /// Sees every change since the last call (another session's writes, edited rules),
    /// and the remote documents when their refresh is due.
    fn catch_up(&mut self) -> Result<(), String> {
        self.engine.apply_changes(&[ChangeEvent::Rescan]);
        self.remote.refresh(&mut self.engine, self.ws).map_err(|e| e.to_string())
    }

    fn recall(&self, args: RecallArgs) -> Answer {
        let chars = args.query.chars().count();
        if !(1..=2000).contains(&chars) {
            return Err(format!("query: 1 to 2000 characters, got {chars}"));
        }
        if let Some(limit) = args.limit
            && !(1..=20).contains(&limit)
        {
            return Err(format!("limit: 1 to 20, got {limit}"));
        }
        let options = RecallOptions {
            budget: args.budget,
            limit: Some(args.limit.unwrap_or(8)),
            session: self.session.clone(),
        };
        let context = memory_command::recall(&self.engine, self.ws, &args.query, options).map_err(message)?;
        Ok(memory_command::recall_text(self.store.redactor(), &args.query, &context))
    }

    fn remember(&self, args: RememberArgs) -> Answer {
        let scope = match args.scope.unwrap_or(ScopeName::Project) {
            ScopeName::User => ScopeArg::User,
            ScopeName::Project => ScopeArg::Project,
        };
        let category = args.category.as_deref().unwrap_or("other");
        let done =
            memory_command::remember(&self.store, &args.text, scope, category, self.session.as_deref())
                .map_err(message)?;
        serde_json::to_string(&done).map_err(message)
    }

    fn forget(&self, args: ForgetArgs) -> Answer {
        let ids = self.store.forget(&args.target, self.session.as_deref()).map_err(message)?;
        Ok(serde_json::json!({ "forgotten": ids }).to_string())
    }

    fn build(&self, args: BuildArgs) -> Answer {
        let model =
            args.model.map(|m| m.parse::<ModelRef>()).transpose().map_err(|e| format!("model: {e}"))?;
        let prompt = self.engine.system_prompt(self.ws, model).map_err(message)?;
        Ok(prompt.layout(Section::System).text.clone())
    }

    fn explain(&self, args: ExplainArgs) -> Answer {
        let json = args.format == Some(FormatName::Json);
        let rendered = match args.target {
            None => {
                let explanation = self.engine.explain(self.ws).map_err(message)?;
                let memory = self.engine.prompt_memory(self.ws).map_err(message)?;
                if json {
                    render::json(
                        &render::explain::ExplanationView::new(&explanation).with_memory(memory.as_ref()),
                    )
                } else {
                    let mut text = render::explain::text(&explanation);
                    if let Some(memory) = &memory {
                        text.push_str(&render::explain::memory_text(memory));
                    }
                    Ok(text)
                }
            }
            Some(target) => {
                let base = self.engine.cwd(self.ws).to_path_buf();
                let answer = self.engine.explain_target(self.ws, &target, &base).map_err(message)?;
                if json {
                    render::json(&render::explain::TargetView::new(&answer))
                } else {
                    Ok(render::explain::target_text(&answer))
                }
            }
        };
        rendered.map_err(message)
    }
}

fn message(err: impl Display) -> String {
    err.to_string()
}

/// The MCP side: hands each call to the worker and turns its answer into a tool result.
#[derive(Clone)]
struct Server {
    jobs: mpsc::Sender<Job>,
    tool_router: ToolRouter<Self>,
}

impl Server {
    async fn run<T: Send + 'static>(
        &self,
        args: Args<T>,
        call: impl FnOnce(&mut Worker, T) -> Answer + Send + 'static,
    ) -> CallToolResult {
        let answer = match args.0 {
            Err(invalid) => Err(invalid),
            Ok(args) => {
                let (reply, answer) = oneshot::channel();
                let job: Job = Box::new(move |worker| {
                    let answer = worker.catch_up().and_then(|()| call(worker, args));
                    let _ = reply.send(answer);
                });
                match self.jobs.send(job).await {
                    Ok(()) => {
                        answer.await.unwrap_or_else(|_| Err("internal error: the engine stopped".to_owned()))
                    }
                    Err(_) => Err("internal error: the engine stopped".to_owned()),
                }
            }
        };
        match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error)]),
        }
    }
}

#[tool_router]
impl Server {
    #[tool(
        description = "Recall what this workspace's memory holds about a topic: remembered facts, the task handoff, observations from earlier tool runs, tool lessons and related past sessions, ranked by keyword relevance and clamped to a character budget.",
        input_schema = schema::<RecallArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_recall(&self, args: Args<RecallArgs>) -> CallToolResult {
        self.run(args, |worker, args| worker.recall(args)).await
    }

    #[tool(
        description = "Remember one fact about the user or the project for later sessions in this workspace. Secrets are redacted; an identical active fact is not stored twice; a near-identical one is replaced.",
        input_schema = schema::<RememberArgs>(),
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn memory_remember(&self, args: Args<RememberArgs>) -> CallToolResult {
        self.run(args, |worker, args| worker.remember(args)).await
    }

    #[tool(
        description = "Forget a remembered fact, by id or by a description of it. The fact is marked inactive (never recalled again), not deleted.",
        input_schema = schema::<ForgetArgs>(),
        annotations(read_only_hint = false, destructive_hint = true, open_world_hint = false)
    )]
    async fn memory_forget(&self, args: Args<ForgetArgs>) -> CallToolResult {
        self.run(args, |worker, args| worker.forget(args)).await
    }

    #[tool(
        description = "The exact system prompt opencode sends for this workspace: rule files, instructions, the environment block, and the workspace memory when memory.enabled is set.",
        input_schema = schema::<BuildArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_build(&self, args: Args<BuildArgs>) -> CallToolResult {
        self.run(args, |worker, args| worker.build(args)).await
    }

    #[tool(
        description = "Why each rule file or instruction is (or is not) in the system prompt, and which memory items were recalled or cut and why.",
        input_schema = schema::<ExplainArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_explain(&self, args: Args<ExplainArgs>) -> CallToolResult {
        self.run(args, |worker, args| worker.explain(args)).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ctxgraph", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "ctxgraph: this workspace's memory (recall, remember, forget) and the exact context opencode \
                 assembles for it (build, explain).",
            )
    }
}

/// What `ctxgraph mcp` needs to start.
pub struct Options {
    pub cwd: Option<PathBuf>,
    pub session: Option<String>,
    pub fetch: FetchOptions,
    pub refresh: std::time::Duration,
}

/// Serves MCP on stdin/stdout until the client closes them.
pub fn serve(env: HostEnv, options: Options) -> Result<(), CliError> {
    let vars = env.vars.clone();
    let mut engine =
        Engine::new(Arc::new(OsSystem), env).with_clock(Arc::new(ctxgraph_engine::SystemClock::default()));
    let cwd = match options.cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|err| ctxgraph_engine::EngineError::WorkingDirectory {
            path: PathBuf::from("."),
            reason: err.to_string(),
        })?,
    };
    // A directory that does not exist is the user's mistake: say so now, not per call.
    let ws = engine.open(&cwd)?;
    let store = Store::new(engine.cwd(ws), &vars);
    let fetcher =
        ctxgraph_engine::remote::Fetcher::new(options.fetch).map_err(ctxgraph_engine::EngineError::from)?;
    let worker = Worker {
        engine,
        ws,
        store,
        session: options.session,
        remote: RemoteRefresh::new(fetcher, options.refresh),
    };
    let (jobs, mut queue) = mpsc::channel::<Job>(16);
    let thread = std::thread::Builder::new()
        .name("ctxgraph-engine".to_owned())
        .spawn(move || {
            let mut worker = worker;
            while let Some(job) = queue.blocking_recv() {
                job(&mut worker);
            }
        })
        .map_err(CliError::Output)?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(CliError::Output)?;
    let (transport, lines) = lines::start(std::io::BufReader::new(std::io::stdin()), std::io::stdout())
        .map_err(CliError::Output)?;
    let served = runtime.block_on(async move {
        let server = Server { jobs, tool_router: Server::tool_router() };
        let running = match server.serve(transport).await {
            Ok(running) => running,
            // The client left before `initialize` was done: its choice, not a failure.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(err) => return Err(std::io::Error::other(err.to_string())),
        };
        running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok::<(), std::io::Error>(())
    });
    // The server (and with it the job sender and the transport) is gone: the worker's
    // queue ends, and the writer ends once it has written every reply.
    drop(runtime);
    let _ = thread.join();
    lines.finish();
    served.map_err(CliError::Output)
}
