#!/usr/bin/env python3
"""A tiny scripted editor (stdlib only): starts mcp-sidecar over stdio as an editor would, with one
workspace folder and the built-in demo server, and walks through what a person meets: the servers
and tools, a form (the demo's book_trip: each question printed as the editor shows it, with the
answer the script gives), a sampling round (analyze_flights: the request draft, then the answer
draft the script fills in), and a plain call. Exits non-zero when a step does not end as shown.

    python3 scripts/lsp_session.py PATH/TO/mcp-sidecar WORKSPACE_DIR [--log]

The sidecar's log goes to a file (an editor keeps it in its state directory); --log prints it at
the end, and it is printed whenever a step fails.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

# The script's answers, by field title. Fields not named here keep what the form proposes
# (the prefilled value, the preselected choice), as pressing Enter does in the editor.
TYPED = {"Full name": "Ada Lovelace", "Email": "ada@example.com", "Departure date": "2027-05-01"}
PICKED = {"Cabin": ["Premium economy"], "Extras": ["lounge", "wifi"], "Review your answers": ["Submit"]}
MODEL_ANSWER = "EX517 to Boston: nonstop in 7h10 for €389, the cheapest flight without a stop."


def say(text=""):
    print(text, flush=True)


def heading(text):
    say()
    say(f"== {text}")


def explain(text):
    for line in textwrap.wrap(text, 96):
        say(line)


def field_name(text):
    """'Full name — As printed on the passport' / 'Travelers (optional)' -> the field's title."""
    return (text or "").split(" — ")[0].removesuffix(" (optional)")


class Lsp:
    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
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
            if "method" in msg and "id" in msg:  # a prompt: shown and answered by the script
                result = answer(msg["method"], msg.get("params") or {})
                with self.cond:
                    self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                continue
            with self.cond:
                if "method" not in msg:
                    self.responses[msg["id"]] = msg
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
            if not self.cond.wait_for(lambda: rid in self.responses, timeout):
                fail(f"no answer to {method} within {timeout}s")
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

    def command(self, command, argument, timeout=30):
        return self.request("workspace/executeCommand",
                            {"command": command, "arguments": [argument]}, timeout)


def answer(method, p):
    """Shows one prompt as the editor would, and answers it from TYPED / PICKED."""
    step = f"  (step {p['step']} of {p['totalSteps']})" if p.get("step") else ""
    if method == "mcp-sidecar/inputBox":
        name = field_name(p.get("prompt"))
        say(f"  ┌ input box: {p.get('title', '')}{step}")
        say(f"  │ {p.get('prompt', '')}")
        if p.get("placeholder"):
            say(f"  │ hint: {p['placeholder']}")
        if p.get("validationMessage"):
            say(f"  │ ! {p['validationMessage']}")
        if name in TYPED:
            value, how = TYPED[name], "types"
        elif p.get("value") is not None:
            value, how = p["value"], "keeps the prefilled"
        elif p.get("canSkip"):
            say("  └ the script skips it")
            return {"skip": True}
        else:
            fail(f"the script has no answer for the field {name!r}")
        say(f"  └ the script {how}: {value}")
        return {"value": value}
    if method == "mcp-sidecar/quickPick":
        name = field_name(p.get("placeholder"))
        many = p.get("canPickMany")
        items = p.get("items", [])
        say(f"  ┌ {'pick any' if many else 'pick one'}: {p.get('title', '')}{step}")
        say(f"  │ {p.get('placeholder', '')}")
        for item in items:
            mark = ("[x] " if item.get("picked") else "[ ] ") if many else ("• " if item.get("picked") else "  ")
            extra = f"  ({item['description']})" if item.get("description") else ""
            say(f"  │   {mark}{item['label']}{extra}")
        labels = [item["label"] for item in items]
        want = PICKED.get(name) or [item["label"] for item in items if item.get("picked")]
        if not want and not many:
            fail(f"the script has no choice for {name!r}")
        missing = [label for label in want if label not in labels]
        if missing:
            fail(f"{name!r} offers no {missing} (offered: {labels})")
        say(f"  └ the script picks: {', '.join(want) or '(none)'}")
        return {"selected": [labels.index(label) for label in want]}
    if method == "mcp-sidecar/editDraft":
        say(f"  ┌ draft buffer ({p.get('kind')}, {p.get('language')}): {p.get('title', '')}")
        for line in p.get("text", "").rstrip("\n").split("\n"):
            say(f"  │ {line}")
        if p.get("kind") == "samplingResponse":
            text = p["text"].rstrip("\n") + "\n\n" + MODEL_ANSWER + "\n"
            say("  └ the script types the answer under `### assistant` and picks Accept:")
            say(f"      {MODEL_ANSWER}")
            return {"action": "accept", "text": text}
        say("  └ the script picks Accept (the request goes on unchanged)")
        return {"action": "accept", "text": p["text"]}
    say(f"  ({method}: this scripted editor does not show it; dismissed)")
    return None


def fail(why):
    say(f"FAILED: {why}")
    show_log()
    if HOME:
        HOME.cleanup()
    os._exit(1)


LOG = None
HOME = None


def show_log():
    if LOG and LOG.exists():
        heading(f"The sidecar's log ({LOG})")
        text = LOG.read_text()
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def call(lsp, tool, args):
    result = lsp.command("mcp-sidecar.callTool", {"server": "demo", "tool": tool, "arguments": args},
                         timeout=60)
    if "error" in result:
        fail(f"{tool}: {result['error']['message']}")
    return result["result"]


def text_of(result):
    return "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


def main():
    global LOG, HOME
    binary, workspace = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    print_log = "--log" in sys.argv[3:]
    # Its own config, state and data directories: the person's servers (~/.config/mcp-sidecar)
    # do not start, and the sampling audit log of this session does not land in theirs.
    HOME = tempfile.TemporaryDirectory(prefix="mcp-sidecar-try-")
    base = pathlib.Path(HOME.name)
    env = dict(os.environ, XDG_CONFIG_HOME=str(base / "config"), XDG_STATE_HOME=str(base / "state"),
               XDG_DATA_HOME=str(base / "data"), XDG_CACHE_HOME=str(base / "cache"))
    LOG = base / "mcp-sidecar.log"
    lsp = Lsp([binary, "lsp", "--log-file", str(LOG)], env)
    started = time.perf_counter()
    init = lsp.request("initialize", {
        "processId": None,
        # The editor's screens this script stands in for: input boxes, pickers, draft buffers.
        # The demo server is this session's own: reported as user-scoped, it runs without trust.
        "capabilities": {"experimental": {"mcpSidecar": {
            "inputBox": True, "quickPick": True, "editDraft": True, "serverScopes": True}}},
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        "initializationOptions": {"servers": {"demo": {"command": binary, "args": ["demo-server"]}},
                                  "serverScopes": {"demo": "user"}},
    })
    info = init["result"]["serverInfo"]
    heading("Starting")
    say(f"The editor starts {info['name']} {info['version']} as a language server; it answered "
        f"initialize in {1000 * (time.perf_counter() - started):.1f} ms.")
    lsp.notify("initialized", {})
    if not lsp.wait_status("demo", "running"):
        fail("the demo server did not start: " + json.dumps(lsp.notifications, indent=1))
    for row in lsp.command("mcp-sidecar.listServers", {})["result"]:
        say(f"server {row['name']}: {row['state']}, protocol {row.get('protocolVersion')}, "
            f"from {row.get('source')}")
    say("Its tools, as `:Mcp call` (Neovim) or \"MCP Sidecar: Call Tool\" (VS Code) lists them:")
    for tool in lsp.command("mcp-sidecar.listTools", {})["result"]:
        say(f"  {tool['name']}: {tool.get('description', '')}")

    heading("A form: calling demo book_trip")
    explain("The demo server asks for the trip's details (an MCP elicitation). The editor shows "
            "each question in its own input box or picker, titled with the server's name, one "
            "step at a time, then a review; here the script answers each one (• marks what the "
            "editor preselects, Enter keeps it).")
    result = call(lsp, "book_trip", {})
    booked = result.get("structuredContent") or {}
    say(f"The server got the form back ({booked.get('action')}) and answered: {text_of(result)}")
    content = booked.get("content") or {}
    if booked.get("action") != "accept" or content.get("cabin") != "premium" or \
            content.get("extras") != ["lounge", "wifi"] or content.get("name") != TYPED["Full name"]:
        fail(f"book_trip did not get the script's answers: {json.dumps(booked)}")

    heading("A sampling round: calling demo analyze_flights")
    explain("The demo server asks the editor's model which flight is the best value (an MCP "
            "sampling request). Nothing goes to a model before the person sees it: the request "
            "opens as an editable draft (Accept sends it on, Reject refuses), then the model's "
            "answer opens as a second draft. No model is configured here, so the person writes "
            "the answer; only what they accept goes back to the server.")
    result = call(lsp, "analyze_flights", {})
    answered = text_of(result)
    say("The server got back:")
    for line in answered.split("\n"):
        say(f"  {line}")
    if MODEL_ANSWER not in answered:
        fail(f"analyze_flights did not get the script's answer: {json.dumps(result)}")

    heading("Plain calls")
    for tool, args in [("list_roots", {}), ("add", {"a": 2, "b": 40})]:
        say(f"demo {tool} {json.dumps(args)} -> {' '.join(text_of(call(lsp, tool, args)).split())}")

    lsp.request("shutdown", None)
    lsp.notify("exit", None)
    lsp.proc.wait(timeout=10)
    heading("Done")
    say("The same in an editor: editors/nvim/scripts/try.sh (Neovim), or the VS Code extension "
        "(README, \"Install in an editor\").")
    if print_log:
        show_log()


if __name__ == "__main__":
    main()
