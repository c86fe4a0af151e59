// Event-loop client for benches/sidecar.rs (issue 18): plain Node, no packages. It makes the same
// `add` {a: 1, b: 2} call several ways, the way VS Code's extension host (or Neovim's libuv loop)
// talks to a child process:
//   sidecar  LSP `workspace/executeCommand mcp-sidecar.callTool` to the sidecar, which calls its
//            demo server (one extra process hop, doing the relay's work);
//   socat    MCP `tools/call` to the same kind of demo server through `socat` (one extra process
//            hop doing no work: the floor of a relay on this machine);
//   direct   MCP `tools/call` to a demo server it spawns itself (no hop);
//   relay    (with `--relay`) the same LSP call through the bench binary as a minimal LSP relay
//            (benches/compare/lsp_relay.rs: the least a hop that speaks LSP to the editor does);
//   byte_relay  (with `--relay`) the MCP call through the bench binary copying bytes as socat
//            does, on tokio (benches/compare/byte_relay.rs: a hop on the sidecar's runtime
//            before any work).
// After the warm-up it interleaves blocks of calls over all the paths, so a slow moment of the
// machine costs each path alike. Every answer is checked. Prints one JSON object on stdout.
//
//   node benches/peers/lsp_client.mjs --bin PATH --home DIR [--calls N] [--warmup W] [--block B]
//     [--compare PATH] [--relay BENCH_BINARY]
// `--compare` adds a fourth path, `compare`: the same as `sidecar` through another sidecar binary
// (an A/B of a change on a noisy machine, interleaved like the rest; the bench does not use it).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({
  options: {
    bin: { type: "string" },
    home: { type: "string" },
    calls: { type: "string", default: "1000" },
    warmup: { type: "string", default: "100" },
    block: { type: "string", default: "50" },
    socat: { type: "string", default: "socat" },
    compare: { type: "string" },
    relay: { type: "string" },
  },
});
if (!opts.bin || !opts.home) {
  console.error("usage: lsp_client.mjs --bin PATH --home DIR [--calls N] [--warmup W] [--block B]");
  process.exit(2);
}
opts.bin = resolve(opts.bin);
const nowUs = () => Number(process.hrtime.bigint()) / 1000;
const serverArgs = ["demo-server", "--era", "legacy"];

/** A child speaking framed messages; `onMessage` gets each parsed message. */
function child(command, args, env, framing, onMessage) {
  const proc = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...env } });
  let buf = Buffer.alloc(0);
  proc.stdout.on("data", (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      if (framing === "lsp") {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const m = /Content-Length: *(\d+)/i.exec(buf.subarray(0, end).toString("latin1"));
        const len = Number(m[1]);
        if (buf.length < end + 4 + len) return;
        const body = buf.subarray(end + 4, end + 4 + len);
        buf = buf.subarray(end + 4 + len);
        onMessage(JSON.parse(body.toString("utf8")));
      } else {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const line = buf.subarray(0, nl);
        buf = buf.subarray(nl + 1);
        if (line.length) onMessage(JSON.parse(line.toString("utf8")));
      }
    }
  });
  const send = (message) => {
    const body = JSON.stringify(message);
    proc.stdin.write(framing === "lsp" ? `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` : `${body}\n`);
  };
  return { proc, send };
}

/** JSON-RPC over a child: `request` resolves with the whole response message. */
function peer(command, args, env, framing, onNotification = () => {}) {
  const pending = new Map();
  let next = 1;
  let c;
  c = child(command, args, env, framing, (m) => {
    if (m.method === undefined) {
      const done = pending.get(m.id);
      pending.delete(m.id);
      done?.(m);
    } else if (m.id !== undefined) {
      c.send({ jsonrpc: "2.0", id: m.id, result: null });
    } else {
      onNotification(m);
    }
  });
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      c.send({ jsonrpc: "2.0", id, method, params });
    });
  const notify = (method, params) => c.send({ jsonrpc: "2.0", method, params });
  return { ...c, request, notify };
}

async function mcp(command, args, env = {}) {
  const p = peer(command, args, env, "mcp");
  const init = await p.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "lsp_client.mjs", version: "0" },
  });
  if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
  p.notify("notifications/initialized", {});
  await p.request("tools/list", {});
  const call = async () => {
    const r = await p.request("tools/call", { name: "add", arguments: { a: 1, b: 2 } });
    if (r.result?.structuredContent?.sum !== 3) throw new Error(`wrong answer: ${JSON.stringify(r)}`);
  };
  return { call, pid: p.proc.pid, close: () => p.proc.stdin.end() };
}

async function sidecar(bin = opts.bin, env = {}) {
  let running;
  const up = new Promise((resolve) => (running = resolve));
  const p = peer(bin, [], { XDG_CONFIG_HOME: opts.home, MCP_SIDECAR_LOG: "warn", ...env }, "lsp", (n) => {
    if (n.method === "mcp-sidecar/serverStatus" && n.params?.state === "running") running();
  });
  const servers = { demo: { command: opts.bin, args: serverArgs, protocolVersion: "2025-11-25" } };
  // As the editors the project ships: the servers' scopes are reported (the person's own).
  const init = await p.request("initialize", {
    processId: null,
    rootUri: null,
    capabilities: { experimental: { mcpSidecar: { serverScopes: true } } },
    workspaceFolders: [],
    initializationOptions: { servers, serverScopes: { demo: "user" } },
  });
  if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
  p.notify("initialized", {});
  await up;
  const call = async () => {
    const r = await p.request("workspace/executeCommand", {
      command: "mcp-sidecar.callTool",
      arguments: [{ server: "demo", tool: "add", arguments: { a: 1, b: 2 } }],
    });
    if (r.result?.structuredContent?.sum !== 3) throw new Error(`wrong answer: ${JSON.stringify(r)}`);
  };
  const close = async () => {
    await p.request("shutdown", null);
    p.notify("exit", null);
    p.proc.stdin.end();
  };
  return { call, pid: p.proc.pid, close };
}

const relayCommand = JSON.stringify([opts.bin, ...serverArgs]);
const paths = {
  sidecar: await sidecar(),
  // `pipes`: the server gets pipes, as the sidecar gives its servers (socat's default is a socketpair).
  socat: await mcp(opts.socat, ["-b", "1048576", "STDIO", `EXEC:${[opts.bin, ...serverArgs].join(" ")},pipes`]),
  direct: await mcp(opts.bin, serverArgs),
  ...(opts.compare ? { compare: await sidecar(resolve(opts.compare)) } : {}),
  ...(opts.relay
    ? {
        relay: await sidecar(resolve(opts.relay), { BENCH_ROLE: "lsp-relay", BENCH_RELAY_COMMAND: relayCommand }),
        byte_relay: await mcp(resolve(opts.relay), [], { BENCH_ROLE: "byte-relay", BENCH_RELAY_COMMAND: relayCommand }),
      }
    : {}),
};
const samples = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
for (const path of Object.values(paths)) for (let i = 0; i < Number(opts.warmup); i++) await path.call();
/** CPU time (user + system, µs) a process used so far, from /proc (clock ticks of 10 ms). */
const cpuUs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
const cpuBefore = Object.fromEntries(Object.entries(paths).map(([k, p]) => [k, cpuUs(p.pid)]));
const calls = Number(opts.calls);
const block = Math.max(1, Number(opts.block));
for (let done = 0; done < calls; done += block) {
  for (const [name, path] of Object.entries(paths)) {
    for (let i = 0; i < Math.min(block, calls - done); i++) {
      const t = nowUs();
      await path.call();
      samples[name].push(nowUs() - t);
    }
  }
}
// The process the client talks to: the sidecar, socat, or the server itself.
const cpu_us_per_call = Object.fromEntries(
  Object.entries(paths).map(([k, p]) => [k, (cpuUs(p.pid) - cpuBefore[k]) / calls]),
);
process.stdout.write(
  JSON.stringify({ client: `node ${process.version}, plain JSON-RPC`, latencies_us: samples, cpu_us_per_call }) +
    "\n",
);
for (const path of Object.values(paths)) await path.close();
