#!/usr/bin/env bash
# The logic of ctxgraph's GitHub Action (action.yml at the repository root), kept here so
# that it runs the same outside GitHub: cli/tests/it/action.rs runs it with the GITHUB_*
# files in a temporary folder. Reads INPUT_AGENTS (an `--agent` value: a name or `all`),
# INPUT_SCENARIOS (the scenarios file; `ctxgraph check` runs only when it exists),
# INPUT_FAIL_ON (errors|warnings|notes) and INPUT_WORKING_DIRECTORY; writes the SARIF file's
# path as the `sarif` output and the job summary to $GITHUB_STEP_SUMMARY. Exit 0 when the
# snapshots match and no finding is at the fail-on level, 1 otherwise, 2 on bad input.
set -uo pipefail

agents=${INPUT_AGENTS:-all}
scenarios=${INPUT_SCENARIOS:-ctxgraph.toml}
fail_on=${INPUT_FAIL_ON:-errors}
directory=${INPUT_WORKING_DIRECTORY:-.}
summary=${GITHUB_STEP_SUMMARY:-/dev/stdout}
output=${GITHUB_OUTPUT:-/dev/null}

case $fail_on in
  errors | warnings | notes) ;;
  *) echo "::error title=ctxgraph::fail-on is '$fail_on'; use errors, warnings or notes"; exit 2 ;;
esac
cd "$directory" || { echo "::error title=ctxgraph::working-directory $directory does not exist"; exit 2; }
out_dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ctxgraph
mkdir -p "$out_dir" || exit 2
status=0

# The snapshots: `check --format github` annotates and appends its own summary table (each
# scenario's agent and tokens, what changed and why).
if [ -f "$scenarios" ]; then
  ctxgraph check --scenarios "$scenarios" --format github
  code=$?
  [ "$code" -eq 0 ] || status=$((code > status ? code : status))
else
  printf '## ctxgraph check\n\nNo scenarios file (`%s`): no snapshots checked.\n\n' "$scenarios" >>"$summary"
fi

# The findings: SARIF for code scanning, the same findings as text in the summary.
sarif=$out_dir/ctxgraph.sarif
ctxgraph lint --agent "$agents" --format sarif --deny "$fail_on" >"$sarif"
code=$?
case $code in
  0 | 1) echo "sarif=$sarif" >>"$output" ;;
  *) status=2 ;;
esac
[ "$code" -eq 0 ] || status=$((code > status ? code : status))
text=$(ctxgraph lint --agent "$agents" --color never --deny "$fail_on")
{
  printf '## ctxgraph lint --agent %s\n\n' "$agents"
  # A fence longer than any run of backticks a finding could quote.
  printf '~~~~text\n%s\n~~~~\n' "$text"
} >>"$summary"
exit "$status"
