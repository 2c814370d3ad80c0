//! The page: every table written here, in Rust, so the text reads without script; the CSS
//! and the script are the files in `assets/` (ours, inline: the page requests nothing), and
//! the data is embedded once as JSON for the script's hover and focus details.

use std::fmt::Write as _;

use base64::Engine as _;
use ctxgraph_check::Status as CheckStatus;
use ctxgraph_engine::answers::explain::{Compacts, MessageFate as MessageFateKind, SessionExplanation};
use ctxgraph_engine::answers::session::Role;
use sha2::Digest as _;

use super::model::{AgentBudget, Changes, Kind, Page, Place, RuleDir, SessionCostsPage};

const CSS: &str = include_str!("assets/report.css");
const SCRIPT: &str = include_str!("assets/report.js");

/// The id of the element that holds the page's data.
pub const DATA_ID: &str = "ctxgraph-data";

/// The whole page.
pub fn render(page: &Page) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = if page.agents.is_empty() {
        "ctxgraph: prompt changes".to_owned()
    } else {
        format!("ctxgraph: what every agent sends from {}", page.cwd)
    };
    // The script is allowed by its hash alone: nothing injected into the data could run.
    let script_hash =
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()));
    let _ = writeln!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         script-src 'sha256-{script_hash}'; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>",
        esc(&title)
    );
    header(&mut out, page);
    out.push_str("<main>\n");
    if !page.agents.is_empty() {
        budget(&mut out, page);
        map(&mut out, page);
    }
    if let Some(costs) = &page.session_costs {
        session_costs_section(&mut out, costs);
    }
    if let Some(session) = &page.session {
        session_section(&mut out, session);
    }
    if let Some(changes) = &page.changes {
        changes_section(&mut out, changes);
    }
    out.push_str("</main>\n");
    let _ = writeln!(
        out,
        "<footer><p>Written by ctxgraph {} from the engine's answers: the same blocks, rules and \
         reasons as <code>build</code>, <code>explain</code> and <code>check</code> print. Token counts \
         are {} estimates.</p></footer>",
        env!("CARGO_PKG_VERSION"),
        esc(page.tokenizer)
    );
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"{DATA_ID}\">{}</script>",
        json_for_script(page)
    );
    let _ = writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out
}

fn header(out: &mut String, page: &Page) {
    out.push_str("<header class=\"top\">\n");
    if page.agents.is_empty() {
        out.push_str("<h1>Prompt changes against the snapshots</h1>\n");
    } else {
        let _ = writeln!(
            out,
            "<h1>What every agent sends</h1>\n<p class=\"sub\">started in <code>{}</code> · {} agent{} · tokens in {}</p>",
            esc(&page.cwd),
            page.agents.len(),
            if page.agents.len() == 1 { "" } else { "s" },
            esc(page.tokenizer)
        );
    }
    out.push_str("<nav aria-label=\"sections\"><ul>");
    if !page.agents.is_empty() {
        out.push_str("<li><a href=\"#budget\">Budget</a></li><li><a href=\"#map\">Map</a></li>");
    }
    if page.session_costs.is_some() {
        out.push_str("<li><a href=\"#costs\">Rules over the session</a></li>");
    }
    if page.session.is_some() {
        out.push_str("<li><a href=\"#session\">Session</a></li>");
    }
    if page.changes.is_some() {
        out.push_str("<li><a href=\"#changes\">Changes</a></li>");
    }
    out.push_str("</ul></nav>\n</header>\n");
}

fn budget(out: &mut String, page: &Page) {
    let widest = page.agents.iter().map(|a| a.tokens).max().unwrap_or(0).max(1);
    out.push_str("<section id=\"budget\" aria-labelledby=\"budget-h\">\n<h2 id=\"budget-h\">Budget: where the tokens go</h2>\n");
    out.push_str(
        "<p class=\"lede\">Each agent's context from this directory, block by block, on one scale. \
         Hover, focus (Tab, then ← →) or select a block for where it comes from and its first lines.</p>\n",
    );
    glance(out, page);
    out.push_str("<ul class=\"legend\" aria-label=\"block kinds\">");
    for kind in Kind::ALL {
        if page.agents.iter().any(|a| a.blocks.iter().any(|b| b.kind == kind)) {
            let _ = write!(out, "<li><span class=\"sw k-{}\"></span>{}</li>", kind.word(), kind.label());
        }
    }
    if page.agents.iter().any(|a| a.framing_tokens > 0) {
        out.push_str("<li><span class=\"sw frame\"></span>the agent's wrappers around the blocks</li>");
    }
    out.push_str("</ul>\n<div class=\"bars\">\n");
    for agent in &page.agents {
        bar(out, agent, widest);
    }
    out.push_str(
        "</div>\n<aside id=\"detail\" class=\"detail\" aria-live=\"polite\"><p class=\"hint\">Select a block to see \
         its source, the rule that put it there, and its first lines.</p></aside>\n",
    );
    for agent in &page.agents {
        blocks_table(out, agent);
    }
    out.push_str("</section>\n");
}

/// The sentences that answer the page's questions before any table: who sends the most
/// rule text, the biggest rule file block, the project's rule file that reaches the most
/// agents, and the home folder's files. The first two count the rule files sent from here
/// only (not an agent's own text, such as its environment block, nor the home folder's
/// files), so an agent that sends nothing from here heads none of them.
fn glance(out: &mut String, page: &Page) {
    let mut facts = Vec::new();
    let sending = || page.agents.iter().filter(|a| a.rule_blocks_from_here().next().is_some());
    if let Some(top) = sending().max_by_key(|a| a.rule_tokens_from_here()) {
        let quiet: Vec<&str> = page
            .agents
            .iter()
            .filter(|a| a.error.is_none() && a.rule_blocks_from_here().next().is_none())
            .map(|a| a.title)
            .collect();
        let mut fact = format!(
            "<strong>{}</strong> sends the most rule text from here: {} in {}",
            esc(top.title),
            counted(top.rule_tokens_from_here(), "token"),
            counted(top.rule_blocks_from_here().count(), "rule file block")
        );
        if !quiet.is_empty() {
            let _ = write!(
                fact,
                "; {} send{} no rule file from here",
                esc(&quiet.join(", ")),
                if quiet.len() == 1 { "s" } else { "" }
            );
        }
        facts.push(fact);
    }
    let biggest =
        sending().flat_map(|a| a.rule_blocks_from_here().map(move |b| (a, b))).max_by_key(|(_, b)| b.tokens);
    if let Some((agent, block)) = biggest {
        facts.push(format!(
            "the largest rule file block is <code>{}</code>: {} in {}'s context",
            esc(&block.label),
            counted(block.tokens, "token"),
            esc(agent.title)
        ));
    }
    let reach = |file: &super::model::RuleFile| {
        file.fates.iter().filter(|f| matches!(f.status, "sent" | "cut" | "inlined")).count()
    };
    let files_in = |place: Place| {
        page.map
            .iter()
            .filter(move |d| d.place == place)
            .flat_map(|d| d.files.iter())
            .filter(|f| reach(f) > 0)
    };
    if let Some(file) = files_in(Place::Project).max_by_key(|f| reach(f)) {
        facts.push(format!(
            "of the project's rule files, <code>{}</code> reaches the most agents at start: {} of {}",
            esc(&file.path),
            reach(file),
            file.fates.len()
        ));
    }
    let home: Vec<String> = files_in(Place::Home)
        .map(|f| format!("<code>{}</code> to {}", esc(&f.path), counted(reach(f), "agent")))
        .collect();
    if !home.is_empty() {
        facts.push(format!("from the home folder, sent from every project: {}", home.join(", ")));
    }
    if facts.is_empty() {
        return;
    }
    out.push_str("<ul class=\"glance\">");
    for fact in facts {
        let _ = write!(out, "<li>{fact}.</li>");
    }
    out.push_str("</ul>\n");
}

fn bar(out: &mut String, agent: &AgentBudget, widest: usize) {
    let _ = writeln!(
        out,
        "<div class=\"agent-row\" id=\"a-{a}\">\n<div class=\"agent-name\"><a href=\"#t-{a}\"><strong>{}</strong></a> \
         <span class=\"rel\">{}</span><span class=\"total\">{} · {}</span></div>",
        esc(agent.title),
        esc(agent.release),
        counted(agent.tokens, "token"),
        size(agent.bytes),
        a = agent.agent,
    );
    if let Some(error) = &agent.error {
        let _ = writeln!(out, "<p class=\"error\">⚠ would not start here: {}</p>\n</div>", esc(error));
        return;
    }
    if agent.blocks.is_empty() {
        out.push_str("<p class=\"none\">sends no rule file from here</p>\n</div>\n");
        return;
    }
    // Per mille of the widest agent, so agents compare on one scale.
    let width = (agent.tokens * 1000).div_ceil(widest);
    let _ = write!(
        out,
        "<div class=\"track\"><div class=\"bar\" role=\"list\" aria-label=\"{} blocks\" style=\"width:{}.{}%\">",
        esc(agent.title),
        width / 10,
        width % 10
    );
    for (index, block) in agent.blocks.iter().enumerate() {
        let _ = write!(
            out,
            "<a role=\"listitem\" class=\"seg k-{}\" href=\"#b-{a}-{index}\" data-agent=\"{a}\" data-block=\"{index}\" \
             style=\"flex-grow:{}\" aria-label=\"{}: {}, {} ({})\"><span>{}</span></a>",
            block.kind.word(),
            block.tokens.max(1),
            esc(&block.label),
            block.kind.label(),
            counted(block.tokens, "token"),
            esc(block.rule),
            esc(&block.label),
            a = agent.agent,
        );
    }
    if agent.framing_tokens > 0 {
        let _ = write!(
            out,
            "<span class=\"frame\" style=\"flex-grow:{}\" title=\"{} of {}'s own wrappers and separators around the blocks\"></span>",
            agent.framing_tokens,
            counted(agent.framing_tokens, "token"),
            esc(agent.title)
        );
    }
    out.push_str("</div></div>\n");
    for note in &agent.notes {
        let _ = writeln!(out, "<p class=\"note\">Note: {}</p>", esc(note));
    }
    out.push_str("</div>\n");
}

fn blocks_table(out: &mut String, agent: &AgentBudget) {
    let a = agent.agent;
    let _ = writeln!(
        out,
        "<details class=\"agent-blocks\" id=\"t-{a}\"><summary><strong>{}</strong> · {} · {} \
         <span class=\"scope\">{}</span></summary>",
        esc(agent.title),
        counted(agent.blocks.len(), "block"),
        counted(agent.tokens, "token"),
        esc(&agent.scope)
    );
    if !agent.blocks.is_empty() {
        out.push_str(
            "<div class=\"scroll\"><table class=\"blocks\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">block</th>\
             <th scope=\"col\">rule</th><th scope=\"col\">status</th><th scope=\"col\" class=\"num\">tokens</th>\
             <th scope=\"col\" class=\"num\">bytes</th></tr></thead><tbody>\n",
        );
        for (index, block) in agent.blocks.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr id=\"b-{a}-{index}\" data-agent=\"{a}\" data-block=\"{index}\" data-start=\"{}\" data-end=\"{}\" \
                 data-hash=\"{}\" tabindex=\"-1\"><td class=\"num\">{}</td><td><span class=\"sw k-{}\" title=\"{}\"></span>\
                 <span class=\"label\">{}</span><span class=\"kind\">{}</span><div class=\"why\">{}</div></td><td><code>{}</code></td>\
                 <td>{}</td><td class=\"num tokens\">{}</td><td class=\"num\">{}</td></tr>",
                block.start,
                block.end,
                esc(&block.hash),
                index + 1,
                block.kind.word(),
                block.kind.label(),
                esc(&block.label),
                block.kind.label(),
                esc(&block.reason),
                esc(block.rule),
                esc(block.status),
                thousands(block.tokens),
                thousands(block.bytes),
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if !agent.left_out.is_empty() {
        out.push_str("<h4>Looked at, not sent</h4><ul class=\"left-out\">");
        for left in &agent.left_out {
            let _ = write!(
                out,
                "<li><code>{}</code> <span class=\"badge s-not_sent\">○ {}</span> <code>{}</code> {}</li>",
                esc(&left.file),
                esc(left.fate),
                esc(left.rule),
                esc(&left.reason)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</details>\n");
}

/// The symbol, word and class of a fate: shape and word carry it, the colour only repeats it.
fn fate_badge(status: &str) -> (&'static str, &'static str) {
    match status {
        "sent" => ("●", "sent"),
        "cut" => ("◐", "cut"),
        "inlined" => ("◆", "inlined"),
        "on_read" => ("↳", "on read"),
        _ => ("○", "not sent"),
    }
}

fn map(out: &mut String, page: &Page) {
    out.push_str("<section id=\"map\" aria-labelledby=\"map-h\">\n<h2 id=\"map-h\">Map: which rule reaches which agent</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"lede\">Every rule file an agent looked at from <code>{}</code>, by directory below <code>{}</code>: \
         in its context at start (● sent, ◐ cut, ◆ inlined into another), attached when the model reads a file below \
         it (↳ on read), or ○ not sent, and why.</p>",
        esc(&page.cwd),
        esc(&page.root)
    );
    if page.map.is_empty() {
        out.push_str("<p class=\"none\">No agent found a rule file from here.</p>\n</section>\n");
        return;
    }
    out.push_str("<div class=\"scroll\"><table class=\"map\"><thead><tr><th scope=\"col\">rule file</th>");
    for agent in &page.agents {
        let _ = write!(out, "<th scope=\"col\">{}</th>", esc(agent.title));
    }
    out.push_str("</tr></thead>\n");
    for RuleDir { dir, place, files } in &page.map {
        let where_ = if *place == Place::Project {
            String::new()
        } else {
            format!(" <span class=\"place\">{}</span>", place.describe())
        };
        let _ = writeln!(
            out,
            "<tbody><tr class=\"dir\"><th colspan=\"{}\" scope=\"rowgroup\">{}/{where_}</th></tr>",
            page.agents.len() + 1,
            esc(dir)
        );
        for file in files {
            let _ = write!(
                out,
                "<tr><th scope=\"row\" class=\"file\" title=\"{}\">{}</th>",
                esc(&file.path),
                esc(&file.name)
            );
            for fate in &file.fates {
                let title =
                    page.agents.iter().find(|a| a.agent == fate.agent).map_or(fate.agent, |a| a.title);
                let (symbol, word) = fate_badge(fate.status);
                let _ = write!(
                    out,
                    "<td class=\"fate\" tabindex=\"0\" data-agent=\"{}\" data-label=\"{}\" data-file=\"{}\">\
                     <span class=\"badge s-{}\">{symbol} {word}</span>",
                    fate.agent,
                    esc(title),
                    esc(&file.path),
                    fate.status
                );
                if let Some(placement) = fate.placement {
                    let _ = write!(out, "<span class=\"place\">{}</span>", esc(placement));
                }
                if !fate.rule.is_empty() {
                    let _ = write!(out, "<code class=\"rule\">{}</code>", esc(fate.rule));
                }
                let _ = write!(out, "<span class=\"why\">{}</span>", esc(&fate.reason));
                if let Some(fix) = &fate.fix {
                    let _ = write!(out, "<span class=\"fix\">Fix: {}</span>", esc(fix));
                }
                out.push_str("</td>");
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></div>\n</section>\n");
}

/// What each rule-like file cost over one agent's recorded session: the totals, each file
/// over the session, then each step's joins and departures with their rule and reason.
fn session_costs_section(out: &mut String, page: &SessionCostsPage) {
    let costs = &page.costs;
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let tokens: u64 = costs.total.iter().map(|f| f.tokens).sum();
    let _ = writeln!(
        out,
        "<section id=\"costs\" aria-labelledby=\"costs-h\">\n<h2 id=\"costs-h\">Rule files over {}'s session <code>{}</code></h2>\n\
         <div class=\"cards\"><div class=\"card\"><span class=\"big\">{}</span> {}</div>\
         <div class=\"card\"><span class=\"big\">{}</span> of rule-like files over the session ({})</div>\
         <div class=\"card\"><span class=\"big\">{}</span> {}</div></div>",
        esc(page.title),
        esc(&page.record),
        thousands(costs.steps.len()),
        if costs.steps.len() == 1 { "request" } else { "requests" },
        counted(to_usize(tokens), "token"),
        esc(&costs.tokenizer),
        thousands(costs.total.len()),
        if costs.total.len() == 1 { "file" } else { "files" },
    );
    out.push_str(
        "<div class=\"scroll\"><table class=\"blocks\"><thead><tr><th scope=\"col\">file</th>\
         <th scope=\"col\">bytes</th><th scope=\"col\">tokens over the session</th></tr></thead><tbody>\n",
    );
    for file in &costs.total {
        let _ = writeln!(
            out,
            "<tr><td class=\"label\"><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            esc(&ctxgraph_db::path::display(&file.path)),
            thousands(to_usize(file.bytes)),
            thousands(to_usize(file.tokens))
        );
    }
    out.push_str("</tbody></table></div>\n<h3>Requests</h3>\n<ol class=\"timeline\">\n");
    for step in &costs.steps {
        let step_tokens: u64 = step.files.iter().map(|f| f.tokens).sum();
        let compacted =
            if step.after_compaction { " <span class=\"muted\">after compaction</span>" } else { "" };
        let _ = write!(
            out,
            "<li><span class=\"big\">{}</span> in {}{compacted}",
            counted(to_usize(step_tokens), "token"),
            counted(step.files.len(), "file")
        );
        for why in &step.why {
            let _ = write!(
                out,
                "<div class=\"why\"><code>{}</code> — {} <code>{}</code></div>",
                esc(&ctxgraph_db::path::display(&why.path)),
                esc(&why.reason),
                esc(why.rule)
            );
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n");
    if !costs.savings.is_empty() {
        out.push_str("<h3>What a change would save</h3>\n<ul>\n");
        for saving in &costs.savings {
            let _ = writeln!(
                out,
                "<li><code>{}</code>: {}: {} ({} bytes). {}</li>",
                esc(&ctxgraph_db::path::display(&saving.path)),
                esc(&saving.change),
                counted(to_usize(saving.tokens), "token"),
                thousands(to_usize(saving.bytes)),
                esc(&saving.how)
            );
        }
        out.push_str("</ul>\n");
    }
    for note in &costs.notes {
        let _ = writeln!(out, "<p class=\"muted\">{}</p>", esc(note));
    }
    out.push_str("</section>\n");
}

fn session_section(out: &mut String, session: &SessionExplanation) {
    let next = &session.next_step;
    let _ = writeln!(
        out,
        "<section id=\"session\" aria-labelledby=\"session-h\">\n<h2 id=\"session-h\">Session <code>{}</code></h2>",
        esc(&session.session)
    );
    let verdict = match &next.compacts {
        Compacts::No => "no compaction at the next step",
        Compacts::Overflow => "the next step compacts: the last step reached the usable window",
        Compacts::Pending { .. } => "the next step compacts: a compaction marker is pending",
    };
    let count = |pred: fn(&MessageFateKind) -> bool| session.history.iter().filter(|m| pred(&m.fate)).count();
    let summarised = count(|f| matches!(f, MessageFateKind::Summarised { .. }));
    let tail = count(|f| matches!(f, MessageFateKind::Tail { .. }));
    let pruned: usize = session.history.iter().map(|m| m.pruned.len()).sum();
    let _ = writeln!(
        out,
        "<div class=\"cards\"><div class=\"card\"><span class=\"big\">{}</span> messages</div>\
         <div class=\"card\"><span class=\"big\">{}</span> last step's tokens of <span class=\"big\">{}</span> usable</div>\
         <div class=\"card\"><span class=\"big\">Σ {summarised}</span> summarised</div>\
         <div class=\"card\"><span class=\"big\">▶ {tail}</span> kept in the tail (budget {})</div>\
         <div class=\"card\"><span class=\"big\">✂ {pruned}</span> tool outputs pruned</div></div>\n\
         <p class=\"verdict\"><strong>{verdict}</strong>. {} <code>{}</code></p>",
        session.messages,
        next.tokens.map_or_else(|| "–".to_owned(), |t| thousands(usize::try_from(t).unwrap_or(usize::MAX))),
        thousands(usize::try_from(next.usable).unwrap_or(usize::MAX)),
        thousands(usize::try_from(next.budget).unwrap_or(usize::MAX)),
        esc(&next.why),
        esc(next.rule),
    );
    out.push_str("<h3>Timeline</h3>\n<ol class=\"timeline\">\n");
    for message in &session.history {
        let (symbol, word, class) = match &message.fate {
            MessageFateKind::Dropped { .. } => ("✕", "dropped by an earlier compaction", "dropped"),
            MessageFateKind::EarlierCompaction => ("≡", "an earlier compaction", "earlier"),
            MessageFateKind::Summarised { .. } => ("Σ", "summarised", "summarised"),
            MessageFateKind::Tail { .. } => ("▶", "kept in the tail", "tail"),
            MessageFateKind::PendingMarker => ("⚑", "the pending compaction marker", "pending"),
            MessageFateKind::Replayed => ("↻", "replayed after the overflow", "replayed"),
        };
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let turn = next.turns.iter().find(|t| t.id == message.id);
        let _ = write!(
            out,
            "<li class=\"msg f-{class} r-{role}\"><span class=\"badge f-{class}\">{symbol} {word}</span> \
             <span class=\"role\">{role}</span> <code>{}</code>",
            esc(&message.id)
        );
        if let Some(turn) = turn {
            let _ = write!(
                out,
                " <span class=\"turn\">turn of ~{}{}</span>",
                counted(usize::try_from(turn.tokens).unwrap_or(usize::MAX), "token"),
                if turn.kept { ", kept whole" } else { "" }
            );
        }
        if !message.next_call {
            out.push_str(" <span class=\"muted\">not in the next call</span>");
        }
        if !message.pruned.is_empty() {
            let _ = write!(out, " <span class=\"badge f-pruned\">✂ {} pruned</span>", message.pruned.len());
        }
        let _ = writeln!(
            out,
            "<div class=\"why\">{} <code>{}</code></div></li>",
            esc(&message.why),
            esc(message.rule)
        );
    }
    out.push_str("</ol>\n");
    if !session.reads.is_empty() {
        out.push_str("<h3>Reads and the rules they attached</h3>\n<ul class=\"reads\">\n");
        for read in &session.reads {
            let _ = write!(
                out,
                "<li><code>{}</code> <span class=\"muted\">in {}</span><ul>",
                esc(&ctxgraph_db::path::display(&read.file)),
                esc(&read.message)
            );
            if read.rules.is_empty() {
                out.push_str("<li class=\"muted\">no rule file on the way</li>");
            }
            for rule in &read.rules {
                let (symbol, word) = if rule.shown { ("●", "attached") } else { ("○", "not attached") };
                let class = if rule.shown { "sent" } else { "not_sent" };
                let _ = write!(
                    out,
                    "<li><span class=\"badge s-{class}\">{symbol} {word}</span> <code>{}</code> — {} <code>{}</code></li>",
                    esc(&ctxgraph_db::path::display(&rule.found.path)),
                    esc(&rule.why),
                    esc(rule.rule)
                );
            }
            out.push_str("</ul></li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn changes_section(out: &mut String, changes: &Changes) {
    let _ = writeln!(
        out,
        "<section id=\"changes\" aria-labelledby=\"changes-h\">\n<h2 id=\"changes-h\">Changes against the snapshots</h2>\n\
         <p class=\"lede\">Each scenario of <code>{}</code>, rebuilt and compared with its snapshot.</p>",
        esc(&changes.file)
    );
    for scenario in &changes.scenarios {
        let (symbol, word, class) = match scenario.status {
            CheckStatus::Match => ("✓", "matches", "match"),
            CheckStatus::Changed => ("Δ", "changed", "changed"),
            CheckStatus::Missing => ("?", "no snapshot", "missing"),
            CheckStatus::Invalid => ("⚠", "invalid snapshot", "invalid"),
            CheckStatus::Error => ("⚠", "cannot be built", "invalid"),
        };
        let _ = write!(
            out,
            "<article class=\"scenario c-{class}\"><h3><span class=\"badge c-{class}\">{symbol} {word}</span> {}",
            esc(&scenario.name)
        );
        if let Some(change) = &scenario.change {
            let delta = change.token_delta();
            let _ = write!(
                out,
                " <span class=\"delta\">{} token{} ({} → {})</span>",
                if delta == 0 { "±0".to_owned() } else { format!("{delta:+}") },
                if delta.abs() == 1 { "" } else { "s" },
                thousands(change.tokens_before),
                thousands(change.tokens_after)
            );
        } else if let Some(tokens) = scenario.tokens {
            let _ = write!(out, " <span class=\"delta\">{}</span>", counted(tokens, "token"));
        }
        let _ = writeln!(out, "</h3>\n<p class=\"muted\"><code>{}</code></p>", esc(&scenario.snapshot));
        for text in scenario.note.iter().chain(&scenario.error) {
            let _ = writeln!(out, "<p class=\"note\">Note: {}</p>", esc(text));
        }
        if let Some(change) = &scenario.change {
            if !change.sources.is_empty() {
                out.push_str("<ul class=\"sources\">");
                for source in &change.sources {
                    let _ = write!(
                        out,
                        "<li><strong>{}</strong> <code>{}</code>",
                        source.kind.as_str(),
                        esc(&source.source)
                    );
                    if let Some(reason) = &source.reason {
                        let _ = write!(out, " — {}", esc(reason));
                    }
                    out.push_str("</li>");
                }
                out.push_str("</ul>\n");
            }
            out.push_str("<pre class=\"diff\">");
            for line in change.diff.lines() {
                let class = if line.starts_with("+++") || line.starts_with("---") {
                    "h"
                } else if line.starts_with('+') {
                    "add"
                } else if line.starts_with('-') {
                    "del"
                } else if line.starts_with("@@") {
                    "hunk"
                } else {
                    "ctx"
                };
                let _ = writeln!(out, "<span class=\"{class}\">{}</span>", esc(line));
            }
            out.push_str("</pre>\n");
        }
        out.push_str("</article>\n");
    }
    out.push_str("</section>\n");
}

/// The page's data as JSON that cannot end its `<script>` element early: `<`, `>` and `&`
/// escaped as JSON escapes (the parse gives the same strings), U+2028/9 too.
/// Every string redacted first, as [`esc`] redacts what the markup shows (the previews of
/// rule files included: the page is not the prompt).
fn json_for_script(page: &Page) -> String {
    let json = serde_json::to_value(page).map_or_else(
        |_| "null".to_owned(),
        |mut value| {
            ctxgraph_db::secrets::redactor().json(&mut value);
            value.to_string()
        },
    );
    let mut out = String::with_capacity(json.len() + 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for HTML content and attribute values.
/// `text` for HTML: secrets redacted (the one pass every output takes), then escaped.
fn esc(text: &str) -> String {
    let text = ctxgraph_db::secrets::redactor().text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `n` and `word`, in the plural unless `n` is 1: `1 token`, `12,345 tokens`.
fn counted(n: usize, word: &str) -> String {
    format!("{} {word}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// `12345` → `12,345`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes for people: `512 B`, `4.2 KB`.
fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        let tenths = (bytes * 10).div_ceil(1024);
        format!("{}.{} KB", tenths / 10, tenths % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(esc("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(size(100), "100 B");
        assert_eq!(size(2048), "2.0 KB");
        assert_eq!(counted(1, "token"), "1 token");
        assert_eq!(counted(0, "token"), "0 tokens");
        assert_eq!(counted(1234, "rule file block"), "1,234 rule file blocks");
    }

    #[test]
    fn data_cannot_close_its_script_element() {
        let page = Page {
            cwd: "</script><script>alert(1)</script>".to_owned(),
            root: "/".to_owned(),
            tokenizer: "o200k_base",
            agents: Vec::new(),
            map: Vec::new(),
            session: None,
            session_costs: None,
            changes: None,
        };
        let html = render(&page);
        let data =
            html.split(&format!("id=\"{DATA_ID}\">")).nth(1).and_then(|rest| rest.split("</script>").next());
        let value: serde_json::Value = serde_json::from_str(data.expect("the data element")).expect("JSON");
        assert_eq!(value["cwd"], "</script><script>alert(1)</script>");
    }

    /// A record's name, its files and the reasons it gives are the user's bytes: the session
    /// costs section shows them escaped, never as markup.
    #[test]
    fn a_sessions_names_are_text_not_markup() {
        use ctxgraph_engine::answers::profile::{FileCost, SessionCosts, StepCost, StepWhy};
        let hostile = "<img src=x onerror=alert(1)>";
        let file = FileCost { path: format!("/w/{hostile}/CLAUDE.md").into(), bytes: 10, tokens: 3 };
        let step = StepCost {
            request: "1".to_owned(),
            after_compaction: false,
            files: vec![file.clone()],
            why: vec![StepWhy { path: file.path.clone(), rule: "CC11", reason: hostile.to_owned() }],
        };
        let costs = SessionCosts {
            tokenizer: "o200k_base".to_owned(),
            steps: vec![step],
            total: vec![file],
            savings: Vec::new(),
            notes: vec![hostile.to_owned()],
        };
        let page = Page {
            cwd: "/w".to_owned(),
            root: "/w".to_owned(),
            tokenizer: "o200k_base",
            agents: Vec::new(),
            map: Vec::new(),
            session: None,
            session_costs: Some(SessionCostsPage {
                agent: "claude-code",
                title: "Claude Code",
                record: hostile.to_owned(),
                costs,
            }),
            changes: None,
        };
        let html = render(&page);
        let body = html.split("<main>").nth(1).and_then(|rest| rest.split("</main>").next()).expect("main");
        assert!(!body.contains("<img"), "{body}");
        assert_eq!(body.matches("&lt;img src=x onerror=alert(1)&gt;").count(), 5, "{body}");
    }
}
