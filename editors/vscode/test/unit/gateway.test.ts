import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewaySnippets, shellQuote, terminalEnvDescription } from '../../src/gateway/snippets';

const info = {
  url: 'http://127.0.0.1:49321/mcp',
  headers: { Authorization: 'Bearer s3cr3t' },
  env: { MCP_SIDECAR_GATEWAY: 'http://127.0.0.1:49321/mcp', MCP_SIDECAR_GATEWAY_TOKEN: 's3cr3t' },
};

test('gateway snippets for each agent, launching the sidecar binary as `gateway`', () => {
  const bin = '/home/me/.vscode/extensions/mcp-sidecar/server/mcp-sidecar';
  const s = gatewaySnippets(info, bin);
  const by = (prefix: string) => {
    const found = s.find((x) => x.label.startsWith(prefix));
    assert.ok(found, prefix);
    return found;
  };
  assert.deepEqual(JSON.parse(by('Claude Code: .mcp.json').text), { mcpServers: { workspace: { command: bin, args: ['gateway'] } } });
  assert.equal(by('Claude Code: claude mcp add').text, `claude mcp add workspace -- ${bin} gateway`);
  assert.equal(by('Codex CLI').text, `[mcp_servers.workspace]\ncommand = "${bin}"\nargs = ["gateway"]`);
  assert.deepEqual(JSON.parse(by('gemini-cli').text), { mcpServers: { workspace: { command: bin, args: ['gateway'] } } });
  assert.match(by('goose').text, /^extensions:\n {2}workspace:\n {4}type: stdio\n {4}cmd: \/home\/me\/.*\/mcp-sidecar\n {4}args: \[gateway\]\n {4}enabled: true$/);
  const http = by('Streamable HTTP');
  assert.deepEqual(JSON.parse(http.text), { url: info.url, headers: info.headers });
  assert.equal(http.secret, true);
  // Only the HTTP snippet carries the secret.
  assert.deepEqual(s.filter((x) => x.text.includes('s3cr3t')).map((x) => x.label), [http.label]);
});

test('paths that need quoting are quoted for the shell, TOML and YAML', () => {
  const bin = "/Users/Jo O'Neil/bin/mcp-sidecar";
  const s = gatewaySnippets(info, bin);
  assert.equal(shellQuote(bin), `'/Users/Jo O'\\''Neil/bin/mcp-sidecar'`);
  assert.match(s.find((x) => x.label.includes('claude mcp add'))?.text ?? '', /-- '\/Users\/Jo O'\\''Neil\/bin\/mcp-sidecar' gateway$/);
  assert.match(s.find((x) => x.label.startsWith('Codex'))?.text ?? '', /command = "\/Users\/Jo O'Neil\/bin\/mcp-sidecar"/);
  assert.match(s.find((x) => x.label.startsWith('goose'))?.text ?? '', /cmd: "\/Users\/Jo O'Neil\/bin\/mcp-sidecar"/);
  assert.equal(shellQuote('C:\\bin\\mcp-sidecar.exe'), `'C:\\bin\\mcp-sidecar.exe'`);
  assert.match(gatewaySnippets(info, 'C:\\bin\\x.exe').find((x) => x.label.startsWith('Codex'))?.text ?? '', /command = "C:\\\\bin\\\\x\.exe"/);
});

test("the terminal environment's description names the variables and the URL, never the secret", () => {
  const d = terminalEnvDescription(info);
  assert.match(d, /MCP_SIDECAR_GATEWAY, MCP_SIDECAR_GATEWAY_TOKEN/);
  assert.match(d, /127\.0\.0\.1:49321/);
  assert.doesNotMatch(d, /s3cr3t/);
});
