//! CC16: Claude Code's whole first request (`--section request`): the system message's
//! identity line and system prompt, then every `<system-reminder>` block of the first user
//! message before the prompt, in send order, joined by a blank line. The blocks that depend
//! on the machine or the model (environment, model, git status, date) are marked, never
//! guessed; Claude Code's own texts come from [`RequestProse`].

use std::path::PathBuf;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::profile::{
    LayoutBuilder, LeftOut, Part, Placement, ProfileError, Request, Setting, Source, Status,
};

use super::listing::{Entry, Listings, Style, listings};
use super::request_prose::{BUNDLED, Bundled, RequestProse};

/// CC17: the length of Claude Code's default description of a skill with none (`Skill`).
const DEFAULT_DESCRIPTION_LEN: usize = 5;
use super::{ClaudeMdContext, Prose, entry};

/// `-c append-system-prompt=TEXT`: Claude Code's `--append-system-prompt` (CC20).
pub const APPEND_KEY: &str = "append-system-prompt";
/// `-c system-prompt=TEXT`: Claude Code's `--system-prompt` (CC20).
pub const SYSTEM_PROMPT_KEY: &str = "system-prompt";
/// `-c disable-slash-commands=true`: Claude Code's `--disable-slash-commands` (CC20).
pub const NO_SKILLS_KEY: &str = "disable-slash-commands";
/// The `-c` keys the profile models.
pub const KEYS: [&str; 3] = [APPEND_KEY, SYSTEM_PROMPT_KEY, NO_SKILLS_KEY];

/// CC20: the flags of Claude Code's command line that change the request.
struct Flags {
    append: Option<String>,
    system_prompt: Option<String>,
    no_skills: bool,
}

/// The request's `-c` settings as [`Flags`] (the last of a key wins).
pub(super) fn check_flags(request: &Request) -> Result<(), ProfileError> {
    flags(request).map(|_| ())
}

fn flags(request: &Request) -> Result<Flags, ProfileError> {
    let last = |key: &str| request.settings.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let no_skills = match last(NO_SKILLS_KEY).as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ProfileError::Setting(format!("-c {NO_SKILLS_KEY}={other}: a flag, true or false")));
        }
    };
    Ok(Flags { append: last(APPEND_KEY), system_prompt: last(SYSTEM_PROMPT_KEY), no_skills })
}

const OPEN: &str = "<system-reminder>\n";
const CLOSE: &str = "\n</system-reminder>";

/// One block of the request, before placing.
pub(super) struct Piece {
    source: Source,
    placement: Placement,
    position: &'static str,
    text: String,
    rule: &'static str,
    reason: String,
    unstable: Option<String>,
}

fn own(name: &str, placement: Placement, position: &'static str, text: &str, reason: String) -> Piece {
    // The rule is the last one the reason cites: the listing's own where it names one.
    let rule = ["CC22", "CC21", "CC20", "CC19", "CC18", "CC17"]
        .into_iter()
        .find(|id| reason.contains(id))
        .unwrap_or("CC16");
    Piece {
        source: Source::Agent(name.to_owned()),
        placement,
        position,
        text: text.to_owned(),
        rule,
        reason,
        unstable: None,
    }
}

fn listed(entry: &Entry, line: String, rule: &'static str) -> Piece {
    Piece {
        source: Source::File(entry.source.clone()),
        placement: Placement::FirstUserMessage,
        position: "first user message: a line of a listing <system-reminder>",
        text: line,
        rule,
        reason: entry.reason.clone(),
        unstable: None,
    }
}

/// A piece of the output style's file (CC19).
fn from_style(style: &Style, text: String, reason: String) -> Piece {
    Piece {
        source: Source::File(style.source.clone()),
        placement: Placement::FirstUserMessage,
        position: "first user message: a <system-reminder> text block",
        text,
        rule: "CC19",
        reason,
        unstable: None,
    }
}

/// A piece an MCP server of `.mcp.json` gave (CC22).
fn from_mcp(config: &std::path::Path, text: String, reason: String) -> Piece {
    Piece {
        source: Source::File(config.to_path_buf()),
        placement: Placement::FirstUserMessage,
        position: "first user message: a <system-reminder> text block",
        text,
        rule: "CC22",
        reason,
        unstable: None,
    }
}

/// A block that depends on the machine or the model: marked, with why.
fn machine(name: &str, why: &str) -> Piece {
    Piece {
        source: Source::Agent(name.to_owned()),
        placement: Placement::FirstUserMessage,
        position: "first user message: a <system-reminder> text block",
        text: format!("<machine:{name}>"),
        rule: "CC16",
        reason: format!("{why}: not reproduced, marked (CC16)"),
        unstable: Some(why.to_owned()),
    }
}

/// The request's text, its pieces by where each starts, the files left out and the
/// settings in force.
pub(super) struct Built {
    pub text: String,
    pub pieces: Vec<(usize, Piece)>,
    pub left_out: Vec<LeftOut>,
    pub settings: Vec<Setting>,
}

/// Text that belongs to no block (a wrapper, a separator).
fn plain(text: &str) -> (String, Option<Piece>) {
    (text.to_owned(), None)
}

fn piece(piece: Piece) -> (String, Option<Piece>) {
    (piece.text.clone(), Some(piece))
}

/// Builds the whole first request's text and blocks.
pub(super) fn build(
    db: &dyn Db,
    ws: Workspace,
    request: &Request,
    prose: &Prose,
    ctx: &ClaudeMdContext,
) -> Built {
    let words: &RequestProse = &prose.request;
    let found: &Listings = listings(db, ws);
    // Checked by the profile before: a bad flag never gets here.
    let Flags { append, system_prompt, no_skills } =
        flags(request).unwrap_or(Flags { append: None, system_prompt: None, no_skills: false });
    let mut settings = Vec::new();
    let system = Placement::SystemMessage;
    let user = Placement::FirstUserMessage;
    let block = "first user message: a <system-reminder> text block";
    let mut blocks: Vec<Vec<(String, Option<Piece>)>> = Vec::new();

    // The system message (CC16, CC19, CC20).
    let identity = &words.identity[usize::from(append.is_some())];
    blocks.push(vec![piece(own(
        "identity",
        system,
        "system message: its second text block",
        identity,
        if append.is_some() {
            "Claude Code's identity line; --append-system-prompt switches it to its other one (CC20)"
                .to_owned()
        } else {
            "Claude Code's identity line (CC16)".to_owned()
        },
    ))]);
    let style = found.style.as_ref();
    let prompt_piece = if let Some(text) = &system_prompt {
        settings.push(Setting { name: SYSTEM_PROMPT_KEY, value: text.clone(), from: None });
        own(
            "--system-prompt",
            system,
            "system message: its third text block",
            text,
            "--system-prompt's text in place of Claude Code's system prompt (CC20)".to_owned(),
        )
    } else {
        let (text, why) = match (style, no_skills) {
            (None, false) => (words.system_prompt[0].clone(), String::new()),
            (Some(s), false) if s.keep_coding => (
                words.system_prompt[2].clone(),
                ", opening for an output style that keeps the coding instructions (CC19)".to_owned(),
            ),
            (Some(_), false) => (
                words.system_prompt[1].clone(),
                ", opening for an output style and without its tasks section (CC19)".to_owned(),
            ),
            (None, true) => {
                (words.system_prompt_no_skills.clone(), ", without its part on skills (CC20)".to_owned())
            }
            (Some(_), true) => (
                "<Claude Code's system prompt for an output style without skills: not recorded, not reproduced>"
                    .to_owned(),
                ", for an output style and without skills: not recorded (CC20)".to_owned(),
            ),
        };
        own(
            "system prompt",
            system,
            "system message: its third text block",
            &text,
            format!(
                "Claude Code's system prompt{why}; it names the auto-memory folder ~/.claude/projects/<project>/memory/ (CC16, CC15)"
            ),
        )
    };
    let mut prompt = vec![piece(prompt_piece)];
    if let Some(text) = &append {
        settings.push(Setting { name: APPEND_KEY, value: text.clone(), from: None });
        prompt.push(plain("\n\n"));
        prompt.push(piece(own(
            "--append-system-prompt",
            system,
            "system message: the end of its third text block",
            text,
            "--append-system-prompt's text, after a blank line at the system prompt's end (CC20)".to_owned(),
        )));
    }
    blocks.push(prompt);

    // The first user message, in send order (CC16).
    blocks.push(vec![piece(machine(
        "environment",
        "names the working directory, the platform, the shell and the OS version",
    ))]);
    blocks.push(vec![piece(machine("model", "names the model chosen at start (--model)"))]);
    if let Some(style) = style {
        settings.push(Setting {
            name: "outputStyle",
            value: style.name.clone(),
            from: Some(style.settings.clone()),
        });
        let heading = own(
            "output style heading",
            user,
            block,
            &words.style_heading,
            "Claude Code's heading before the output style's name (CC19)".to_owned(),
        );
        let name = from_style(
            style,
            style.name.clone(),
            format!("the output style chosen by outputStyle in {} (CC19)", style.settings.display()),
        );
        let body = if style.builtin {
            let text = words.builtin_styles.iter().find(|(n, _)| *n == style.name).map_or("", |(_, t)| t);
            own(
                &format!("built-in output style {}", style.name),
                user,
                block,
                text,
                format!("Claude Code's own output style {}: its text is Claude Code's (CC19)", style.name),
            )
        } else {
            from_style(
                style,
                style.body.clone(),
                format!("the output style {}'s text, frontmatter cut and trimmed (CC19)", style.name),
            )
        };
        blocks.push(vec![plain(OPEN), piece(heading), piece(name), plain("\n"), piece(body), plain(CLOSE)]);
    } else if let Some((name, settings_file)) = &found.style_setting {
        settings.push(Setting {
            name: "outputStyle",
            value: name.clone(),
            from: Some(settings_file.clone()),
        });
    }
    // CC22: the approved servers of `.mcp.json` that answered, by name.
    let servers = super::mcp::project_servers(db, ws);
    let answers: Vec<(&str, ctxgraph_db::mcp::McpAnswer)> = servers
        .servers
        .iter()
        .filter_map(|server| {
            let request = server.connect.as_ref().ok()?;
            match db.remotes().mcp().get(db, request).state(db) {
                ctxgraph_db::mcp::McpState::Connected(answer) => Some((server.name.as_str(), answer.clone())),
                _ => None,
            }
        })
        .collect();
    let mut tools: Vec<String> = answers
        .iter()
        .flat_map(|(server, answer)| answer.tools.iter().map(move |tool| format!("mcp__{server}__{tool}")))
        .collect();
    tools.sort();
    if tools.is_empty() {
        blocks.push(vec![piece(own(
            "deferred tools",
            user,
            block,
            &words.deferred_tools,
            "Claude Code's list of its deferred tools (CC16)".to_owned(),
        ))]);
    } else {
        let mut parts = vec![piece(own(
            "deferred tools",
            user,
            block,
            &words.deferred_tools_open,
            "Claude Code's list of its deferred tools, before the MCP servers' (CC16)".to_owned(),
        ))];
        let config = servers.file.clone().unwrap_or_default();
        for tool in &tools {
            parts.push(piece(from_mcp(
                &config,
                format!("{tool}\n"),
                "an MCP tool by its deferred name, sorted with the others: its schema is loaded only when the model asks for it (CC22)".to_owned(),
            )));
        }
        parts.push(plain("</system-reminder>"));
        blocks.push(parts);
    }
    blocks.push(agents(words, found, user, block));
    // CC22: the servers' instructions, by server name.
    let instructed: Vec<&(&str, ctxgraph_db::mcp::McpAnswer)> = answers
        .iter()
        .filter(|(_, answer)| answer.instructions.as_deref().is_some_and(|i| !i.is_empty()))
        .collect();
    if !instructed.is_empty() {
        let config = servers.file.clone().unwrap_or_default();
        let mut parts = vec![piece(own(
            "MCP instructions heading",
            user,
            block,
            &words.mcp_heading,
            "Claude Code's heading of the MCP servers' instructions (CC22)".to_owned(),
        ))];
        for (server, answer) in instructed {
            parts.push(plain(&format!("\n\n## {server}\n")));
            parts.push(piece(from_mcp(
                &config,
                answer.instructions.clone().unwrap_or_default(),
                format!("the instructions the MCP server {server} gave in its initialize result (CC22)"),
            )));
        }
        parts.push(plain(CLOSE));
        blocks.push(parts);
    }
    if no_skills {
        settings.push(Setting { name: NO_SKILLS_KEY, value: "true".to_owned(), from: None });
    } else {
        blocks.push(skills(words, found, budget_chars(db, ws), user, block));
    }
    blocks.push(vec![piece(own(
        "token budget",
        user,
        block,
        &words.total_tokens,
        "Claude Code's token budget (CC16)".to_owned(),
    ))]);
    if let Some(style) = style {
        let name = from_style(
            style,
            style.name.clone(),
            format!("the output style {}'s name, in the reminder that it is active (CC19)", style.name),
        );
        let rest = own(
            "output style reminder",
            user,
            block,
            &words.style_active,
            "Claude Code's reminder that the output style is active (CC19)".to_owned(),
        );
        blocks.push(vec![plain(OPEN), piece(name), piece(rest), plain(CLOSE)]);
    }
    if let Some(rules) = ctx.reminder(prose) {
        blocks.push(rule_block(ctx, prose, &rules));
    }
    // --system-prompt leaves the git status out (CC20).
    if system_prompt.is_none() {
        blocks.push(vec![piece(machine(
            "git-status",
            "the branch, the status and the recent commits of the repository at start",
        ))]);
    }
    blocks.push(vec![piece(machine("date", "the day Claude Code starts"))]);
    blocks.push(vec![piece(own(
        "attribution",
        user,
        block,
        &words.attribution,
        "Claude Code's attribution advice, which names the model (CC16)".to_owned(),
    ))]);

    let mut text = String::new();
    let mut placed = Vec::new();
    for (i, parts) in blocks.into_iter().enumerate() {
        if i > 0 {
            text.push_str("\n\n");
        }
        for (part_text, part) in parts {
            if let Some(part) = part {
                placed.push((text.len(), part));
            }
            text.push_str(&part_text);
        }
    }
    let mut left_out: Vec<LeftOut> = found
        .left_out
        .iter()
        .map(|(source, fate, reason)| LeftOut {
            source: source.clone(),
            fate,
            rule: rule_of(reason),
            reason: reason.clone(),
        })
        .collect();
    left_out.extend(found.mcp.iter().filter(|path| Some(*path) != servers.file.as_ref()).map(|path: &PathBuf| LeftOut {
        source: path.clone(),
        fate: "not_modelled",
        rule: "CC22",
        reason: "an .mcp.json above the working directory: whether Claude Code starts its servers is not recorded (CC22)".to_owned(),
    }));
    left_out.extend(servers.servers.iter().filter_map(|server| {
        let why = match &server.connect {
            Err(why) => why.clone(),
            Ok(request) => match db.remotes().mcp().get(db, request).state(db) {
                ctxgraph_db::mcp::McpState::Connected(_) => return None,
                ctxgraph_db::mcp::McpState::Pending => {
                    "not connected (--no-mcp, or not asked yet)".to_owned()
                }
                ctxgraph_db::mcp::McpState::Failed(failure) => failure.to_string(),
            },
        };
        Some(LeftOut {
            source: servers.file.clone().unwrap_or_default(),
            fate: "mcp_server_unused",
            rule: "CC22",
            reason: format!(
                "the MCP server {}: {why}; its tools and instructions are not in the request (CC22)",
                server.name
            ),
        })
    }));
    if let Some((name, settings_file)) = found.style_setting.as_ref().filter(|_| style.is_none()) {
        left_out.push(LeftOut {
            source: settings_file.clone(),
            fate: "missing",
            rule: "CC19",
            reason: format!("outputStyle {name}: no file in an output-styles folder has that name, so no style blocks are sent (CC19)"),
        });
    }
    Built { text, pieces: placed, left_out, settings }
}

fn rule_of(reason: &str) -> &'static str {
    ["CC17", "CC18", "CC19"].into_iter().find(|id| reason.contains(id)).unwrap_or("CC16")
}

/// CC18: the built-in agents and the user's and project's, sorted by name, case aside.
fn agents(
    words: &RequestProse,
    found: &Listings,
    user: Placement,
    block: &'static str,
) -> Vec<(String, Option<Piece>)> {
    let mut rows: Vec<(String, Piece)> = words
        .builtin_agents
        .iter()
        .map(|(name, line)| {
            (
                (*name).to_owned(),
                own(
                    &format!("built-in agent {name}"),
                    user,
                    block,
                    line,
                    format!("Claude Code's built-in agent {name} (CC18)"),
                ),
            )
        })
        .collect();
    rows.extend(found.agents.iter().map(|agent| {
        let line = format!("- {}: {}", agent.name, agent.description.as_deref().unwrap_or_default());
        (agent.name.clone(), listed(agent, line, "CC18"))
    }));
    rows.sort_by_key(|(name, _)| name.to_lowercase());
    let mut out = vec![
        plain(OPEN),
        piece(own(
            "agent list",
            user,
            block,
            &words.agents_header,
            "Claude Code's opening of the agent list (CC18)".to_owned(),
        )),
    ];
    for (_, row) in rows {
        out.push(plain("\n"));
        out.push(piece(row));
    }
    out.push(plain("\n\n"));
    out.push(piece(own(
        "agent list end",
        user,
        block,
        &words.agents_footer,
        "Claude Code's closing sentence of the agent list (CC18)".to_owned(),
    )));
    out.push(plain(CLOSE));
    out
}

/// CC17: the skill list's budget, in JavaScript string length: `$SLASH_COMMAND_TOOL_CHAR_BUDGET`
/// when set to a positive number, else 1 % of a 200k-token window at 4 characters a token.
fn budget_chars(db: &dyn Db, ws: Workspace) -> usize {
    ctxgraph_db::db::env_var(db, ws.host(db), "SLASH_COMMAND_TOOL_CHAR_BUDGET".to_owned())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(8000)
}

/// JavaScript's `length`.
fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// One entry of the skill list, as its budget counts it.
struct Sized {
    /// `- NAME`'s length.
    name_only: usize,
    /// `- NAME: DESCRIPTION`'s length.
    full: usize,
    /// The budget always leaves its description (a bundled skill proper).
    fixed: bool,
}

/// CC17: which entries keep their description. All do when every entry fits the budget with
/// a newline between each; else the fixed ones count whole and the others as `- NAME`, and
/// the room left goes to the others' descriptions in list order, each taking it when it
/// fits (a later, shorter one can still fit after a longer one did not).
fn budget(entries: &[Sized], budget: usize) -> Vec<bool> {
    let separators = entries.len().saturating_sub(1);
    let whole: usize = entries.iter().map(|e| e.full).sum::<usize>() + separators;
    if whole <= budget {
        return vec![true; entries.len()];
    }
    let fixed: usize =
        entries.iter().map(|e| if e.fixed { e.full } else { e.name_only }).sum::<usize>() + separators;
    let mut room = budget.saturating_sub(fixed);
    entries
        .iter()
        .map(|e| {
            if e.fixed {
                return true;
            }
            let extra = e.full - e.name_only;
            let fits = extra <= room;
            if fits {
                room -= extra;
            }
            fits
        })
        .collect()
}

/// CC17: the skill list: the project's and user's entries, then the bundled skills.
fn skills(
    words: &RequestProse,
    found: &Listings,
    budget_chars: usize,
    user: Placement,
    block: &'static str,
) -> Vec<(String, Option<Piece>)> {
    let mut out = vec![
        plain(OPEN),
        piece(own(
            "skill list",
            user,
            block,
            &words.skills_header,
            "Claude Code's opening of the skill list (CC17)".to_owned(),
        )),
        plain("\n\n"),
    ];
    // A project's or user's entry named like a bundled skill replaces it.
    let bundled: Vec<(&Bundled, &String)> = BUNDLED
        .iter()
        .zip(&words.skills_bundled)
        .filter(|(b, _)| !found.skills.iter().any(|s| s.name == b.name))
        .collect();
    let sizes: Vec<Sized> = found
        .skills
        .iter()
        .map(|s| {
            let name_only = js_len(&s.name) + 2;
            // A skill without a description gets a default one word long.
            let description = s.description.as_deref().map_or(DEFAULT_DESCRIPTION_LEN, js_len);
            Sized { name_only, full: name_only + 2 + description, fixed: false }
        })
        .chain(bundled.iter().map(|(b, _)| Sized {
            name_only: b.name.len() + 2,
            full: b.len,
            fixed: b.fixed,
        }))
        .collect();
    let full = budget(&sizes, budget_chars);
    let mut lines = Vec::with_capacity(sizes.len());
    for (skill, &full) in found.skills.iter().zip(&full) {
        let line = if full {
            let description = skill.description.as_deref().unwrap_or(&words.skill_fallback);
            format!("- {}: {description}", skill.name)
        } else {
            format!("- {}", skill.name)
        };
        let mut listed = listed(skill, line, "CC17");
        if !full {
            listed.reason.push_str(
                "; over the skill list's budget, listed by name only: the entries before it took the room (CC17)",
            );
        }
        lines.push(listed);
    }
    for ((b, text), &full) in bundled.iter().zip(&full[found.skills.len()..]) {
        let (text, why) = if full {
            ((*text).clone(), format!("Claude Code's bundled skill {} (CC17)", b.name))
        } else {
            (
                format!("- {}", b.name),
                format!(
                    "Claude Code's built-in command {}, by name only: over the skill list's budget (CC17)",
                    b.name
                ),
            )
        };
        lines.push(own(&format!("bundled skill {}", b.name), user, block, &text, why));
    }
    for (i, line) in lines.into_iter().enumerate() {
        if i > 0 {
            out.push(plain("\n"));
        }
        out.push(piece(line));
    }
    out.push(plain(CLOSE));
    out
}

/// CC2 inside the whole request: the rule-file block, one block per file.
fn rule_block(ctx: &ClaudeMdContext, prose: &Prose, whole: &str) -> Vec<(String, Option<Piece>)> {
    let mut out = Vec::new();
    let mut at = 0;
    for file in ctx.sent() {
        let text = entry(file, prose);
        let Some(found) = whole[at..].find(&text) else { continue };
        out.push(plain(&whole[at..at + found]));
        out.push(piece(Piece {
            source: Source::File(file.source.clone()),
            placement: Placement::FirstUserMessage,
            position: "first user message: the rule-file <system-reminder> block",
            text: text.clone(),
            rule: file.rule(),
            reason: file.reason(&ctx.cwd, &ctx.approval),
            unstable: None,
        }));
        at += found + text.len();
    }
    out.push(plain(&whole[at..]));
    out
}

/// The pieces placed in the text as the builder's blocks, and each block's reason to be
/// unstable.
pub(super) fn place(text: String, pieces: Vec<(usize, Piece)>) -> (LayoutBuilder, Vec<Option<String>>) {
    let mut builder = LayoutBuilder::new(text);
    let mut unstable = Vec::with_capacity(pieces.len());
    for (start, piece) in pieces {
        unstable.push(piece.unstable);
        builder.block_at(
            start,
            Part {
                source: piece.source,
                placement: piece.placement,
                position: piece.position,
                text: &piece.text,
                status: Status::Sent,
                rule: piece.rule,
                reason: piece.reason,
                inlines: Vec::new(),
            },
        );
    }
    (builder, unstable)
}
