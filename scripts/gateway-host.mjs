#!/usr/bin/env node
// Hosts a sidecar's gateway for tools that cannot send the gateway's secret (the conformance
// suite's server mode has no header option): a scripted editor (stdlib only) starts
// `mcp-sidecar lsp` with one temporary workspace folder and the built-in demo server (both eras),
// waits until the gateway serves, asks `mcp-sidecar.gatewayInfo`, and puts a loopback proxy in
// front of it that adds `Authorization: Bearer <secret>` to every request that has none. Everything
// else (method, path, Host, Origin, the other headers, the bodies, SSE streams) passes through as
// it is, so the gateway's own Host/Origin checks are what a client of the proxy meets.
//
//   node scripts/gateway-host.mjs MCP_SIDECAR_BIN
//
// Prints one JSON line on stdout once ready: {"url": <the proxy's /mcp>, "gateway": <the real
// url>, "tools": [...]}; then serves until stdin closes or SIGTERM/SIGINT, and shuts the sidecar
// down. The sidecar's stderr goes to this process's stderr.
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const bin = process.argv[2];
if (!bin) {
  console.error("usage: gateway-host.mjs MCP_SIDECAR_BIN");
  process.exit(2);
}
const home = mkdtempSync(join(tmpdir(), "mcp-gateway-host-"));
const folder = join(home, "work");
mkdirSync(folder);
const sidecar = spawn(bin, ["lsp", "--log-level", "warn"], {
  stdio: ["pipe", "pipe", "inherit"],
  env: {
    ...process.env,
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_STATE_HOME: join(home, "state"),
    XDG_RUNTIME_DIR: join(home, "run"),
    MCP_SIDECAR_GATEWAY: "",
  },
});
const fail = (why) => {
  console.error(`gateway-host: ${why}`);
  sidecar.kill();
  rmSync(home, { recursive: true, force: true });
  process.exit(1);
};
sidecar.on("exit", (code) => fail(`the sidecar exited (${code})`));

// ---------------------------------------------------------------- the scripted editor (LSP)
let buffer = Buffer.alloc(0);
let nextId = 1;
const pending = new Map();
const waiters = [];
const send = (msg) => {
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...msg }));
  sidecar.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
  sidecar.stdin.write(body);
};
const request = (method, params) =>
  new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    send({ id, method, params });
  });
const notification = (pred) => new Promise((resolve) => waiters.push({ pred, resolve }));
sidecar.stdout.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const length = Number(/content-length:\s*(\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
    if (buffer.length < end + 4 + length) return;
    const msg = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString());
    buffer = buffer.subarray(end + 4 + length);
    if (!("method" in msg)) {
      pending.get(msg.id)?.(msg);
      pending.delete(msg.id);
    } else if ("id" in msg) {
      send({ id: msg.id, result: null }); // no UI here: every prompt is dismissed
    } else {
      for (const [i, w] of waiters.entries()) {
        if (w.pred(msg)) {
          waiters.splice(i, 1);
          w.resolve(msg);
          break;
        }
      }
    }
  }
});

const timeout = setTimeout(() => fail("the gateway did not serve within 60 s"), 60_000);
const serving = notification(
  (n) => n.method === "window/logMessage" && String(n.params?.message).startsWith("gateway: serving agents at "),
);
const running = notification(
  (n) => n.method === "mcp-sidecar/serverStatus" && n.params?.name === "demo" && n.params?.state === "running",
);
const init = await request("initialize", {
  processId: process.pid,
  rootUri: null,
  // An editor with the UI primitives (so the sidecar declares elicitation and sampling to the
  // servers; this one dismisses every prompt), whose server is the person's own ("user": trusted).
  capabilities: {
    experimental: {
      mcpSidecar: { inputBox: true, quickPick: true, editDraft: true, clipboard: true, serverScopes: true },
    },
  },
  workspaceFolders: [{ uri: pathToFileURL(folder).href, name: "work" }],
  initializationOptions: {
    servers: { demo: { command: bin, args: ["demo-server", "--era", "both"] } },
    serverScopes: { demo: "user" },
  },
});
if (init.error) fail(`initialize: ${JSON.stringify(init.error)}`);
send({ method: "initialized", params: {} });
await Promise.all([serving, running]);
const info = await request("workspace/executeCommand", { command: "mcp-sidecar.gatewayInfo", arguments: [{}] });
if (info.error) fail(`gatewayInfo: ${JSON.stringify(info.error)}`);
const listed = await request("workspace/executeCommand", { command: "mcp-sidecar.listTools", arguments: [{}] });
clearTimeout(timeout);
const target = new URL(info.result.url);
const auth = info.result.headers.Authorization;

// ---------------------------------------------------------------- the header-adding proxy
const proxy = http.createServer((req, res) => {
  const headers = { ...req.headers };
  headers.authorization ??= auth;
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    },
  );
  upstream.on("error", (e) => {
    if (!res.headersSent) res.writeHead(502);
    res.end(String(e));
  });
  req.pipe(upstream);
});
proxy.listen(0, "127.0.0.1", () => {
  const url = `http://127.0.0.1:${proxy.address().port}${target.pathname}`;
  const tools = Array.isArray(listed.result) ? listed.result.map((t) => t.name ?? t) : listed.result;
  process.stdout.write(JSON.stringify({ url, gateway: info.result.url, tools }) + "\n");
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  proxy.close();
  sidecar.removeAllListeners("exit");
  await request("shutdown", null);
  send({ method: "exit", params: null });
  sidecar.on("exit", () => {
    rmSync(home, { recursive: true, force: true });
    process.exit(0);
  });
}
process.stdin.on("end", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
