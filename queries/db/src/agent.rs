//! Which coding agent a build reproduces. Each agent is a profile: a module of queries
//! (`opencode`, `codex`, …) over the shared file, worktree and glob queries.

use std::fmt;
use std::str::FromStr;

/// A coding agent whose context ctxgraph can build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Agent {
    /// opencode-ai 1.18.33: the `ctxgraph-opencode` profile.
    #[default]
    Opencode,
    /// Codex CLI 0.171.0: the `ctxgraph_agents::codex` profile.
    Codex,
    /// Claude Code 2.1.332: the `ctxgraph_agents::claude_code` profile.
    ClaudeCode,
    /// Gemini CLI 0.61.0: the `ctxgraph_agents::gemini` profile.
    Gemini,
    /// GitHub Copilot CLI 1.0.102: the `ctxgraph_agents::copilot` profile.
    Copilot,
    /// Qwen Code 0.24.4: the `ctxgraph_agents::qwen_code` profile.
    QwenCode,
    /// Kilo Code 7.7.7: the `ctxgraph_opencode::kilo` profile (an opencode descendant).
    Kilo,
    /// Cline 3.0.65 (the CLI): the `ctxgraph_agents::cline` profile.
    Cline,
    /// Continue CLI 1.5.47 (`cn`): the `ctxgraph_agents::continue_cli` profile.
    Continue,
    /// Aider 0.86.2: the `ctxgraph_agents::aider` profile.
    Aider,
    /// pi 0.73.1 (`@mariozechner/pi-coding-agent`): the `ctxgraph_agents::pi` profile.
    Pi,
    /// Auggie 0.36.0 (`@augmentcode/auggie`): the `ctxgraph_agents::auggie` profile.
    Auggie,
}

impl Agent {
    /// Every agent, in the order help texts list them.
    pub const ALL: [Agent; 12] = [
        Agent::Opencode,
        Agent::Codex,
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Copilot,
        Agent::QwenCode,
        Agent::Kilo,
        Agent::Cline,
        Agent::Continue,
        Agent::Aider,
        Agent::Pi,
        Agent::Auggie,
    ];

    /// The name `--agent` takes.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Opencode => "opencode",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::ClaudeCode => "claude-code",
            Agent::Copilot => "copilot",
            Agent::QwenCode => "qwen-code",
            Agent::Kilo => "kilo",
            Agent::Cline => "cline",
            Agent::Continue => "continue",
            Agent::Aider => "aider",
            Agent::Pi => "pi",
            Agent::Auggie => "auggie",
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Agent {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
            format!("unknown agent `{name}` (known: {})", known.join(", "))
        })
    }
}
