// Peer client for benches/sidecar.rs: the MCP TypeScript SDK (Client + StdioClientTransport) as a
// client of the sidecar's built-in demo server over stdio. The SDK is found through
// MCP_PEERS_NODE_MODULES (scripts/install-peers.sh, then `. .cache/peers/env.sh`). Prints one JSON
// object on stdout; the demo servers' stderr is discarded.
//
//   node benches/peers/ts_client.mjs latency --bin PATH [--era legacy] [--calls N] [--warmup W]
//       `add` {a: 1, b: 2} called N times in a row after W warm-up calls; each latency in µs.
//   node benches/peers/ts_client.mjs throughput --bin PATH [--servers 10] [--calls 1000] [--rounds R]
//       N connections; each round fires all calls at once, spread round-robin over the servers
//       (distinct addends, every answer checked); wall time per round.
//   node benches/peers/ts_client.mjs host --bin PATH [--servers 5]
//       N servers connected (tools listed), prints {"ready": ...}, idles until stdin closes (the
//       bench reads this process's own RSS meanwhile).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const nodeModules = process.env.MCP_PEERS_NODE_MODULES;
if (!nodeModules) {
  console.error("MCP_PEERS_NODE_MODULES is not set: run scripts/install-peers.sh and source .cache/peers/env.sh");
  process.exit(2);
}
const require = createRequire(join(nodeModules, "bench.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const sdkVersion = JSON.parse(
  readFileSync(join(nodeModules, "@modelcontextprotocol/sdk/package.json"), "utf8"),
).version;

const { positionals, values: opts } = parseArgs({
  allowPositionals: true,
  options: {
    bin: { type: "string" },
    era: { type: "string", default: "legacy" },
    calls: { type: "string", default: "1000" },
    warmup: { type: "string", default: "100" },
    servers: { type: "string", default: "5" },
    rounds: { type: "string", default: "1" },
  },
});
const what = positionals[0];
if (!opts.bin || !["latency", "throughput", "host"].includes(what)) {
  console.error("usage: ts_client.mjs latency|throughput|host --bin PATH [options]");
  process.exit(2);
}
const calls = Number(opts.calls);

async function connect() {
  const transport = new StdioClientTransport({
    command: opts.bin,
    args: ["demo-server", "--era", opts.era],
    stderr: "ignore",
  });
  // The Client hands the negotiated revision to transports that accept it; note it for the report.
  transport.setProtocolVersion = (version) => {
    negotiated = version;
  };
  const client = new Client({ name: "mcp-sidecar-bench", version: "0" });
  await client.connect(transport);
  await client.listTools();
  return client;
}

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const nowUs = () => Number(process.hrtime.bigint()) / 1000;
let negotiated = null;

async function latency() {
  const client = await connect();
  const add = { name: "add", arguments: { a: 1, b: 2 } };
  for (let i = 0; i < Number(opts.warmup); i++) await client.callTool(add);
  const samples = [];
  for (let i = 0; i < calls; i++) {
    const t = nowUs();
    const r = await client.callTool(add);
    samples.push(nowUs() - t);
    if (r.structuredContent?.sum !== 3) throw new Error(`wrong answer: ${JSON.stringify(r)}`);
  }
  emit({
    client: `typescript @modelcontextprotocol/sdk ${sdkVersion}`,
    protocolVersion: negotiated,
    latencies_us: samples,
  });
  await client.close();
}

async function throughput() {
  const n = Number(opts.servers);
  const clients = await Promise.all(Array.from({ length: n }, connect));
  for (const c of clients) for (let i = 0; i < 5; i++) await c.callTool({ name: "add", arguments: { a: 0, b: 0 } });
  const rounds = [];
  for (let round = 0; round < Number(opts.rounds); round++) {
    const t = nowUs();
    const results = await Promise.all(
      Array.from({ length: calls }, (_, i) => {
        const a = (i % n) * 1_000_000 + i;
        return clients[i % n]
          .callTool({ name: "add", arguments: { a, b: i } })
          .then((r) => r.structuredContent?.sum === a + i);
      }),
    );
    const wall = nowUs() - t;
    const wrong = results.filter((ok) => !ok).length;
    if (wrong) throw new Error(`${wrong} of ${calls} answers did not match their request`);
    rounds.push(wall);
  }
  emit({ client: `typescript @modelcontextprotocol/sdk ${sdkVersion}`, servers: n, calls, wall_us: rounds });
  await Promise.all(clients.map((c) => c.close()));
}

async function host() {
  const n = Number(opts.servers);
  const clients = [];
  for (let i = 0; i < n; i++) clients.push(await connect());
  emit({ ready: true, pid: process.pid, servers: n });
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on("end", resolve));
  await Promise.all(clients.map((c) => c.close()));
}

await { latency, throughput, host }[what]();
