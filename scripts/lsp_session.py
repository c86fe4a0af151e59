#!/usr/bin/env python3
"""A tiny scripted editor (stdlib only): starts mcp-sidecar over stdio as an editor would, with one
workspace folder and the built-in demo server, then lists servers and tools and calls a few tools.

    python3 scripts/lsp_session.py PATH/TO/mcp-sidecar WORKSPACE_DIR
"""
import json
import pathlib
import subprocess
import sys
import threading
import time


class Lsp:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 1
        self.responses = {}
        self.notifications = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(out.read(length))
            with self.cond:
                if "method" not in msg:
                    self.responses[msg["id"]] = msg
                elif "id" in msg:  # a prompt: this scripted editor has no UI, it dismisses it
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                else:
                    self.notifications.append(msg)
                self.cond.notify_all()

    def _send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method, params, timeout=30):
        with self.cond:
            rid = self.next_id
            self.next_id += 1
            self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            self.cond.wait_for(lambda: rid in self.responses, timeout)
            return self.responses.pop(rid)

    def notify(self, method, params):
        with self.cond:
            self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_status(self, name, state, timeout=30):
        def seen():
            return any(n["method"] == "mcp-sidecar/serverStatus" and n["params"]["name"] == name
                       and n["params"]["state"] == state for n in self.notifications)
        with self.cond:
            return self.cond.wait_for(seen, timeout)

    def command(self, command, argument):
        return self.request("workspace/executeCommand", {"command": command, "arguments": [argument]})


def main():
    binary, workspace = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    lsp = Lsp([binary, "lsp"])
    started = time.perf_counter()
    init = lsp.request("initialize", {
        "processId": None,
        # The demo server is this session's own: reported as user-scoped, it runs without trust.
        "capabilities": {"experimental": {"mcpSidecar": {"serverScopes": True}}},
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        "initializationOptions": {"servers": {"demo": {"command": binary, "args": ["demo-server"]}},
                                  "serverScopes": {"demo": "user"}},
    })
    print(f"initialize answered in {1000 * (time.perf_counter() - started):.1f} ms by "
          f"{init['result']['serverInfo']['name']} {init['result']['serverInfo']['version']}")
    lsp.notify("initialized", {})
    if not lsp.wait_status("demo", "running"):
        sys.exit("the demo server did not start: " + json.dumps(lsp.notifications, indent=1))
    for row in lsp.command("mcp-sidecar.listServers", {})["result"]:
        print(f"server {row['name']}: {row['state']}, protocol {row.get('protocolVersion')}, "
              f"from {row.get('source')}")
    for tool in lsp.command("mcp-sidecar.listTools", {})["result"]:
        print(f"  tool {tool['name']}: {tool.get('description', '')}")
    for tool, args in [("list_roots", {}), ("add", {"a": 2, "b": 40})]:
        result = lsp.command("mcp-sidecar.callTool", {"server": "demo", "tool": tool, "arguments": args})
        if "error" in result:
            print(f"call {tool}: error {result['error']['message']}")
        else:
            text = " ".join(b.get("text", "") for b in result["result"].get("content", []))
            print(f"call {tool}{json.dumps(args)} -> {text}")
    lsp.request("shutdown", None)
    lsp.notify("exit", None)
    lsp.proc.wait(timeout=10)


if __name__ == "__main__":
    main()
