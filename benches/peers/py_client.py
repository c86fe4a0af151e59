"""Peer client for benches/sidecar.rs: the MCP Python SDK (mcp==2.3.0) as a client of the
sidecar's built-in demo server over stdio. Prints one JSON object on stdout; nothing else goes
to stdout (the demo server's stderr is discarded).

    $MCP_PYTHON benches/peers/py_client.py latency --bin PATH --era legacy --mode legacy --calls N --warmup W
        `add` {a: 1, b: 2} called N times in a row after W warm-up calls; each call's latency in µs.
    $MCP_PYTHON benches/peers/py_client.py host --bin PATH --servers N
        N demo servers connected (tools listed), then prints {"ready": ...} and idles until stdin
        closes (the bench reads this process's own RSS meanwhile).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import time
from contextlib import AsyncExitStack

import anyio
from mcp import Client, StdioServerParameters, stdio_client


def connect(bin_path: str, era: str, mode: str) -> Client:
    errlog = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    params = StdioServerParameters(command=bin_path, args=["demo-server", "--era", era])
    return Client(stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=30)


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def latency(args: argparse.Namespace) -> None:
    async with connect(args.bin, args.era, args.mode) as c:
        await c.list_tools()
        for _ in range(args.warmup):
            await c.call_tool("add", {"a": 1, "b": 2})
        samples = []
        for _ in range(args.calls):
            t = time.perf_counter_ns()
            r = await c.call_tool("add", {"a": 1, "b": 2})
            samples.append((time.perf_counter_ns() - t) / 1000)
            if r.structured_content != {"sum": 3}:
                raise SystemExit(f"wrong answer: {r}")
        emit(
            {
                "client": f"python mcp {importlib.metadata.version('mcp')}",
                "protocolVersion": c.protocol_version,
                "latencies_us": samples,
            }
        )


async def host(args: argparse.Namespace) -> None:
    async with AsyncExitStack() as stack:
        for _ in range(args.servers):
            c = await stack.enter_async_context(connect(args.bin, args.era, args.mode))
            await c.list_tools()
        emit({"ready": True, "pid": os.getpid(), "servers": args.servers})
        await anyio.to_thread.run_sync(sys.stdin.read)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["latency", "host"])
    p.add_argument("--bin", required=True, help="the mcp-sidecar binary (runs `demo-server`)")
    p.add_argument("--era", default="legacy")
    p.add_argument("--mode", default="legacy", help="Client mode: legacy, auto or 2026-07-28")
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--servers", type=int, default=5)
    args = p.parse_args()
    anyio.run(latency if args.what == "latency" else host, args)


if __name__ == "__main__":
    main()
