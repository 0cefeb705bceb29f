-- Neovim as a real client of `tasklisp lsp`: with the file to check as the current
-- buffer, starts the server (TASKLISP_BIN), attaches it, waits for its diagnostics and
-- writes them to OUT, one `LINE:COLUMN SEVERITY MESSAGE` a line. Exits 1 when none
-- arrive. Works with Neovim 0.7 and later (vim.lsp.start_client).
--
--   TASKLISP_BIN=target/debug/tasklisp OUT=/tmp/d.txt \
--     nvim --headless --clean -u NONE -c 'luafile tests/editors/nvim_diagnostics.lua' FILE.sexp
local bin = os.getenv("TASKLISP_BIN") or "tasklisp"
local out = os.getenv("OUT") or "/dev/stdout"
local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({
  name = "tasklisp",
  cmd = { bin, "lsp" },
  root_dir = vim.fn.getcwd(),
})
if not client then
  vim.cmd("cquit 1")
end
vim.lsp.buf_attach_client(buf, client)
local arrived = vim.wait(120000, function()
  return #vim.diagnostic.get(buf) > 0
end, 50)
local file = io.open(out, "w")
for _, d in ipairs(vim.diagnostic.get(buf)) do
  file:write(string.format("%d:%d %d %s\n", d.lnum + 1, d.col + 1, d.severity, d.message))
end
file:close()
vim.lsp.stop_client(client)
if arrived then
  vim.cmd("qall!")
else
  vim.cmd("cquit 1")
end
