-- vim.lsp.config entry for the sidecar: `vim.lsp.enable('mcp_sidecar')`.
-- Options live in require('mcp_sidecar').setup() or vim.g.mcp_sidecar (:help mcp-sidecar).
return require('mcp_sidecar.lsp_config').config()
