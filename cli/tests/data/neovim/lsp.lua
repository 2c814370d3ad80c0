-- Drives Neovim's built-in LSP client against `ctxgraph lsp` (cli/tests/it/neovim.rs runs
-- it headless: nvim --headless --clean -u lsp.lua). It opens the example monorepo's
-- AGENTS.md, types a line with a likely secret without saving, and waits (bounded) for the
-- diagnostic and for the code lenses; then opens a source file and waits for its lenses.
-- What it saw goes to $CTXGRAPH_NVIM_RESULT as JSON; the Rust test checks it.

local root = os.getenv("CTXGRAPH_NVIM_ROOT")
local server = os.getenv("CTXGRAPH_NVIM_SERVER")
local result_path = os.getenv("CTXGRAPH_NVIM_RESULT")
local secret = os.getenv("CTXGRAPH_NVIM_SECRET")
local WAIT_MS = 60000
local seen = { steps = {} }

local function finish()
  local file = assert(io.open(result_path, "w"))
  file:write(vim.fn.json_encode(seen))
  file:close()
  vim.cmd("qall!")
end

local function step(name, ok)
  table.insert(seen.steps, { name = name, ok = ok and true or false })
  return ok
end

local function diagnostics(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(found, {
      code = d.code or lsp.code,
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, source = d.source,
    })
  end
  return found
end

local function lens_titles(buf)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf) or {}) do
    if lens.command then table.insert(titles, lens.command.title) end
  end
  return titles
end

local function run()
  local client = vim.lsp.start_client({
    name = "ctxgraph",
    cmd = { server, "lsp" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "monorepo" } },
    flags = { debounce_text_changes = 10 },
  })
  if not step("client started", client) then return end

  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/AGENTS.md"))
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, client)
  if not step("initialized", vim.wait(WAIT_MS, function()
    local c = vim.lsp.get_client_by_id(client)
    return c ~= nil and c.initialized
  end, 20)) then return end

  -- Typed, not saved.
  local lines = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, lines, lines, false, { "- deploy key: " .. secret })
  seen.edited_line = lines
  seen.modified = vim.bo[buf].modified
  step("secret underlined", vim.wait(WAIT_MS, function()
    for _, d in ipairs(diagnostics(buf)) do
      if d.code == "CG005" then return true end
    end
    return false
  end, 20))
  seen.diagnostics = diagnostics(buf)

  vim.lsp.codelens.refresh()
  step("rule file lenses", vim.wait(WAIT_MS, function() return #lens_titles(buf) > 0 end, 20))
  seen.rule_lenses = lens_titles(buf)

  -- Undone, still unsaved: the finding goes.
  vim.api.nvim_buf_set_lines(buf, lines, lines + 1, false, {})
  step("finding gone", vim.wait(WAIT_MS, function()
    for _, d in ipairs(diagnostics(buf)) do
      if d.code == "CG005" then return false end
    end
    return true
  end, 20))

  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/packages/api/src/handlers/users.ts"))
  local source = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(source, client)
  vim.lsp.codelens.refresh()
  step("source lenses", vim.wait(WAIT_MS, function() return #lens_titles(source) > 0 end, 20))
  seen.source_lenses = lens_titles(source)
end

local ok, err = pcall(run)
if not ok then seen.error = tostring(err) end
finish()
