#!/usr/bin/env python3
"""The interop matrix: runs the interop tests, writes the table and checks it against docs/interop-matrix.md.

    scripts/interop-matrix.py                 run the tests, write target/interop-matrix.md, fail when a
                                              test fails or the committed docs/interop-matrix.md differs
    scripts/interop-matrix.py --write         the same, but (re)write the committed docs/interop-matrix.md
    scripts/interop-matrix.py --check-names   only check that every cited test still exists (no run)
    scripts/interop-matrix.py --from-log F    build the table from saved `cargo test` output (no run)

The suites are modules of the one integration-test binary (`tests/it/main.rs`): a test is cited
as `suite::name`, its path in that binary (`interop::server_everything_over_stdio` is
`tests/it/interop.rs`). What it runs (in this order; the peers from scripts/install-peers.sh are
needed, and .cache/peers/env.sh is read when MCP_PYTHON is not set):

  1. cargo test --locked --test it -- --list --include-ignored
     Every test name the table cites must exist: a renamed or deleted test fails the run before
     anything else (exit 2), so the table cannot cite tests that no longer run.
  2. cargo test --locked --no-fail-fast --test it -- --include-ignored interop:: http:: oauth:: gateway:: gateway_clients:: gateway_apps:: resources:: skills:: tasks:: gateway_tasks::
     Every test of those suites (cited or not): this is the interop tier's test run.
  3. cargo test --locked --no-fail-fast --test it -- --exact <cited elicitation::, sampling::, lsp_core:: tests>
     Only the demo-server tests the table cites from suites the unit tier runs anyway.

Each test's outcome comes from libtest's plain `test NAME ... ok|FAILED|ignored` lines (stable
Rust has no JSON test output). A cell is ✅ only when every test it cites printed `ok` in this run.

The run never rewrites the committed table: it writes target/interop-matrix.md (or --output) and
compares it with docs/interop-matrix.md, leaving out the lines that change on every run (the
date, commit and elapsed time, the runtimes' versions). When they differ in substance it prints the
diff and the command that regenerates the committed file (`scripts/interop-matrix.py --write`).

Exit status: 0 when every test ran and passed and the committed table is current; 1 when any test
failed or a cited one did not run (the table is still written, with ❌); 2 when a cited test no
longer exists or the tests could not be built; 3 when the tests passed but docs/interop-matrix.md
is out of date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "docs" / "interop-matrix.md"
DEFAULT_OUTPUT = ROOT / "target" / "interop-matrix.md"
# The one integration-test binary (tests/it/main.rs); each suite is one of its modules.
TEST_BINARY = "it"
# Lines of the table that change on every run (or on every machine): not compared.
VOLATILE = ("- Generated: ", "- Runtimes: ")

# Suites run whole (with --include-ignored): the interop tier.
FULL_SUITES = ["interop", "http", "oauth", "gateway", "gateway_clients", "gateway_apps", "resources", "skills", "tasks", "gateway_tasks"]
# Suites the unit tier runs; only the tests the table cites are run again here.
CITED_SUITES = ["elicitation", "sampling", "lsp_core"]

# ---------------------------------------------------------------------------------------- columns

COLUMNS: list[tuple[str, str, str]] = [
    # key, header, what a ✅ means
    ("tools", "tools", "`listTools` shows the server's tools and `callTool` returns its results."),
    ("roots", "roots", "The server asks for roots and gets the editor's workspace folders."),
    ("roots_update", "roots update",
     "After a workspace-folder change the server sees the new set: on 2025-11-25 through "
     "`notifications/roots/list_changed` (and its own `roots/list`), on 2026-07-28 on its next ask "
     "(and, where the test can see it, no `list_changed` is sent)."),
    ("form", "elicitation: form",
     "A form-mode question becomes the editor's input boxes and quick-picks; the server gets the "
     "typed content (and decline/cancel, where the test covers them)."),
    ("url", "elicitation: URL",
     "A URL-mode question asks consent, opens the URL with `window/showDocument`, and the server "
     "gets the action."),
    ("sampling", "sampling",
     "A sampling request opens the request draft and the answer draft; the server gets what the "
     "person wrote (and a refusal, where the test covers Reject)."),
    ("progress", "progress",
     "The server's `notifications/progress` for a `callTool` with a `workDoneToken` become LSP "
     "`$/progress` begin/report/end."),
    ("logging", "logging",
     "The server's `notifications/message` become `window/logMessage` (`[server] logger: text`, "
     "MCP level mapped to the LSP message type)."),
    ("oauth", "OAuth sign-in",
     "The server answers 401: the person is asked, consents to the URL, the browser step reaches the "
     "sidecar's loopback listener and the server runs with the grant (refresh, sign-out with revocation, "
     "a grant revoked elsewhere, a forged redirect and two accounts where the row cites those tests)."),
]

# ------------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    key: str
    server: str
    transport: str
    era: str
    cells: dict[str, list[str] | tuple[str, str]]
    """Column key → the tests (`suite::name`) that back the cell, or ("n/a" | "gap", note key)."""


NA = "n/a"
GAP = "gap"

# Why a cell has no test. "n/a": the server cannot do it. "gap": the server can, the sidecar
# does not (a reported bug, not a test).
NOTES: dict[str, tuple[str, str]] = {
    "fs-asks-nothing": (NA, "server-filesystem never sends requests to the client other than `roots/list`: "
                            "no elicitation, no sampling."),
    "fs-no-progress": (NA, "server-filesystem has no long-running tool and sends no `notifications/progress`."),
    "fs-no-logging": (NA, "server-filesystem sends no `notifications/message`."),
    "stdio-no-oauth": (NA, "a stdio server takes its credentials from its environment; OAuth sign-in is for "
                           "HTTP servers (as the MCP authorization spec has it)."),
    "everything-no-oauth": (NA, "server-everything's Streamable HTTP mode asks for no sign-in."),
}

EVERYTHING_STDIO = "interop::server_everything_over_stdio"
EVERYTHING_STDIO_UPDATE = "interop::server_everything_roots_update_progress_and_logging"
EVERYTHING_HTTP = "http::server_everything_over_streamable_http"
EVERYTHING_HTTP_UPDATE = "http::server_everything_roots_update_progress_and_logging_over_http"
FILESYSTEM = "interop::server_filesystem_allows_exactly_the_workspace_folders"
DEMO_TOOLS = "interop::demo_server_tools_in_both_eras"
DEMO_PROGRESS = "interop::demo_server_progress_and_logging_in_both_eras"
DEMO_ROOTS = "lsp_core::roots_follow_workspace_folders_in_both_eras"
DEMO_FORM = ["elicitation::the_demo_booking_form_in_both_eras",
             "elicitation::decline_and_cancel_reach_the_server_as_such"]
DEMO_URL = "elicitation::url_mode_asks_consent_then_opens_externally"
DEMO_SAMPLING = ["sampling::both_drafts_are_edited_and_the_server_gets_the_persons_answer",
                 "sampling::reject_and_close_end_the_call_promptly"]


def demo_row(era: str) -> Row:
    return Row(f"demo-{era}", "demo server", "stdio", era, {
        "tools": [DEMO_TOOLS],
        "roots": [DEMO_ROOTS],
        "roots_update": [DEMO_ROOTS],
        "form": DEMO_FORM,
        "url": [DEMO_URL],
        "sampling": DEMO_SAMPLING,
        "progress": [DEMO_PROGRESS],
        "logging": [DEMO_PROGRESS],
        "oauth": (NA, "stdio-no-oauth"),
    })


ROWS: list[Row] = [
    Row("everything-stdio", "server-everything", "stdio", "2025-11-25", {
        "tools": [EVERYTHING_STDIO],
        "roots": [EVERYTHING_STDIO],
        "roots_update": [EVERYTHING_STDIO_UPDATE],
        "form": ["interop::server_everything_big_mixed_form"],
        "url": ["interop::server_everything_url_elicitation_request_and_error_paths"],
        "sampling": ["interop::server_everything_sampling_with_both_drafts_edited"],
        "progress": [EVERYTHING_STDIO_UPDATE],
        "logging": [EVERYTHING_STDIO_UPDATE],
        "oauth": (NA, "stdio-no-oauth"),
    }),
    Row("everything-http", "server-everything", "Streamable HTTP", "2025-11-25", {
        "tools": [EVERYTHING_HTTP],
        "roots": [EVERYTHING_HTTP],
        "roots_update": [EVERYTHING_HTTP_UPDATE],
        "form": [EVERYTHING_HTTP],
        "url": ["http::server_everything_url_elicitation_over_http"],
        "sampling": [EVERYTHING_HTTP],
        "progress": [EVERYTHING_HTTP_UPDATE],
        "logging": [EVERYTHING_HTTP_UPDATE],
        "oauth": (NA, "everything-no-oauth"),
    }),
    Row("filesystem-stdio", "server-filesystem", "stdio", "2025-11-25", {
        "tools": [FILESYSTEM],
        "roots": [FILESYSTEM],
        "roots_update": [FILESYSTEM],
        "form": (NA, "fs-asks-nothing"),
        "url": (NA, "fs-asks-nothing"),
        "sampling": (NA, "fs-asks-nothing"),
        "progress": (NA, "fs-no-progress"),
        "logging": (NA, "fs-no-logging"),
        "oauth": (NA, "stdio-no-oauth"),
    }),
    Row("python-stdio-legacy", "Python SDK", "stdio", "2025-11-25", {
        "tools": ["interop::python_sdk_server_legacy_era", "interop::python_sdk_dual_era_server_pinned_to_legacy"],
        "roots": ["interop::python_sdk_server_legacy_era", "interop::python_sdk_dual_era_server_pinned_to_legacy"],
        "roots_update": ["interop::python_sdk_server_legacy_era",
                         "interop::python_sdk_dual_era_server_pinned_to_legacy"],
        "form": ["interop::python_sdk_elicitation_legacy_era"],
        "url": ["interop::python_sdk_elicitation_legacy_era"],
        "sampling": ["interop::python_sdk_sampling_legacy_era"],
        "progress": ["interop::python_sdk_progress_and_logging_legacy_era"],
        "logging": ["interop::python_sdk_progress_and_logging_legacy_era"],
        "oauth": (NA, "stdio-no-oauth"),
    }),
    Row("python-stdio-modern", "Python SDK", "stdio", "2026-07-28", {
        "tools": ["interop::python_sdk_server_modern_era"],
        "roots": ["interop::python_sdk_server_modern_era"],
        "roots_update": ["interop::python_sdk_server_modern_era"],
        "form": ["interop::python_sdk_elicitation_modern_era"],
        "url": ["interop::python_sdk_elicitation_modern_era"],
        "sampling": ["interop::python_sdk_sampling_modern_era"],
        "progress": ["interop::python_sdk_progress_and_logging_modern_era"],
        "logging": ["interop::python_sdk_progress_and_logging_modern_era"],
        "oauth": (NA, "stdio-no-oauth"),
    }),
    Row("python-http-legacy", "Python SDK", "Streamable HTTP", "2025-11-25", {
        "tools": ["http::python_sdk_over_http_pinned_to_legacy"],
        "roots": ["http::python_sdk_over_http_pinned_to_legacy"],
        "roots_update": ["http::python_sdk_over_http_pinned_to_legacy"],
        "form": ["http::python_sdk_elicitation_over_http_legacy_era"],
        "url": ["http::python_sdk_elicitation_over_http_legacy_era"],
        "sampling": ["http::python_sdk_sampling_over_http_legacy_era"],
        "progress": ["http::python_sdk_progress_and_logging_over_http_legacy_era"],
        "logging": ["http::python_sdk_progress_and_logging_over_http_legacy_era"],
        "oauth": ["oauth::the_prompt_signs_in_legacy_era"],
    }),
    Row("python-http-modern", "Python SDK", "Streamable HTTP", "2026-07-28", {
        "tools": ["http::python_sdk_over_http_modern_era"],
        "roots": ["http::python_sdk_over_http_modern_era"],
        "roots_update": ["http::python_sdk_over_http_modern_era"],
        "form": ["http::python_sdk_elicitation_over_http_modern_era"],
        "url": ["http::python_sdk_elicitation_over_http_modern_era"],
        "sampling": ["http::python_sdk_sampling_over_http_modern_era"],
        "progress": ["http::python_sdk_progress_and_logging_over_http_modern_era"],
        "logging": ["http::python_sdk_progress_and_logging_over_http_modern_era"],
        "oauth": ["oauth::the_prompt_signs_in_modern_era", "oauth::not_now_then_the_sign_in_command",
                  "oauth::expired_tokens_are_refreshed_and_the_rotated_grant_is_kept",
                  "oauth::sign_out_revokes_and_forgets_the_grant",
                  "oauth::a_grant_revoked_elsewhere_fails_the_call_then_needs_sign_in",
                  "oauth::a_redirect_with_the_wrong_state_or_issuer_is_refused",
                  "oauth::two_accounts_on_one_url_stay_apart"],
    }),
    demo_row("2025-11-25"),
    demo_row("2026-07-28"),
]

# Facts about the rows that are not cells (shown under the table).
ROW_NOTES = [
    "server-everything and server-filesystem speak 2025-11-25 only: the sidecar's `server/discover` "
    "fails and it falls back to `initialize` (the tests assert the negotiated version).",
    "Python SDK rows run the fixtures in `fixtures/python/` (`roots_server.py`, "
    "`client_features_server.py`; for OAuth sign-in `oauth_server.py`, the SDK's own authorization "
    "server) on the pinned SDK. Over stdio the era is the fixture's `--era` "
    "(a single-era loop) or a `protocolVersion` pin on its dual-era loop; over HTTP the same "
    "fixture is served by `MCPServer.run(\"streamable-http\")` (both eras) and the 2025-11-25 row "
    "pins `protocolVersion`.",
    "The demo server rows pin `protocolVersion` on `mcp-sidecar demo-server`, or run it with "
    "`--era legacy|modern` so the sidecar's fallback picks the era.",
]

# Things a reader of the table should know that no cell shows.
KNOWN_ISSUES: list[str] = []

# ---------------------------------------------------------------------------------------- running

RUNNING = re.compile(r"^\s*Running (?P<file>[^\s]+?\.rs) \(")
IT_MAIN = f"tests/{TEST_BINARY}/main.rs"
RESULT = re.compile(r"^test (?P<name>\S+) \.\.\. (?P<status>ok|FAILED|ignored)\b")
LISTED = re.compile(r"^(?P<name>\S+): test$")


def cited() -> list[str]:
    out: list[str] = []
    for row in ROWS:
        for value in row.cells.values():
            if isinstance(value, list):
                out.extend(t for t in value if t not in out)
    return out


def check_table() -> None:
    """The table itself is well-formed: every row has every column, every note exists."""
    keys = [c[0] for c in COLUMNS]
    for row in ROWS:
        if sorted(row.cells) != sorted(keys):
            raise SystemExit(f"interop-matrix: row {row.key} has columns {sorted(row.cells)}, want {sorted(keys)}")
        for col, value in row.cells.items():
            if isinstance(value, list):
                if not value or not all(re.fullmatch(r"\w+::\w+", t) for t in value):
                    raise SystemExit(f"interop-matrix: {row.key}/{col}: bad test list {value}")
                suites = {t.split("::")[0] for t in value}
                if not suites <= set(FULL_SUITES + CITED_SUITES):
                    raise SystemExit(f"interop-matrix: {row.key}/{col} cites a suite this script does not run")
            elif value[1] not in NOTES or NOTES[value[1]][0] != value[0]:
                raise SystemExit(f"interop-matrix: {row.key}/{col}: unknown note {value}")


def load_peer_env() -> None:
    """Reads .cache/peers/env.sh when the peers' variables are not set (as after `. env.sh`)."""
    env_sh = ROOT / ".cache" / "peers" / "env.sh"
    if os.environ.get("MCP_PYTHON") or not env_sh.is_file():
        return
    for line in env_sh.read_text().splitlines():
        m = re.match(r"^export (\w+)='(.*)'$", line)
        if m:
            os.environ.setdefault(m.group(1), m.group(2))


def cargo_env() -> dict[str, str]:
    env = dict(os.environ)
    env["CARGO_TERM_COLOR"] = "never"
    env.setdefault("RUST_TEST_THREADS", "2")
    return env


def run_streaming(cmd: list[str]) -> tuple[int, list[str]]:
    """Runs `cmd` (stderr merged into stdout), echoing every line as it comes; returns the exit
    code and the lines."""
    print(f"+ {' '.join(cmd)}", flush=True)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=cargo_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", bufsize=1)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line.rstrip("\n"))
    return proc.wait(), lines


def parse(lines: list[str], pattern: re.Pattern[str]) -> dict[str, str]:
    """`suite::name` (the test's path in the integration-test binary) → the status libtest
    printed (or "listed" for --list lines). Lines of other binaries (unit tests) are skipped."""
    out: dict[str, str] = {}
    in_it = False
    for line in lines:
        m = RUNNING.match(line)
        if m:
            in_it = m.group("file") == IT_MAIN
            continue
        m = pattern.match(line)
        if m and in_it:
            out[m.group("name")] = m.groupdict().get("status") or "listed"
    return out


def list_tests() -> dict[str, str]:
    """`suite::name` of every test in the suites the table may cite (building them if needed)."""
    cmd = ["cargo", "test", "--locked", "--test", TEST_BINARY, "--", "--list", "--include-ignored"]
    print(f"+ {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=cargo_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        print("interop-matrix: the test suites could not be built or listed", file=sys.stderr)
        raise SystemExit(2)
    return parse(proc.stdout.splitlines(), LISTED)


def stale(listed: dict[str, str]) -> list[str]:
    return [t for t in cited() if t not in listed]


def run_tests() -> tuple[int, list[str]]:
    cmd = ["cargo", "test", "--locked", "--no-fail-fast", "--test", TEST_BINARY, "--"]
    code_full, lines = run_streaming(cmd + ["--include-ignored", *(f"{s}::" for s in FULL_SUITES)])
    names = sorted({t for t in cited() if t.split("::")[0] in CITED_SUITES})
    code_cited, more = run_streaming(cmd + ["--exact", *names])
    return (code_full or code_cited), lines + more


# ---------------------------------------------------------------------------------------- writing


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def version_of(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def pins() -> dict[str, str]:
    text = (ROOT / "scripts" / "install-peers.sh").read_text()
    return dict(re.findall(r"^([A-Z_]+_VERSION)=(\S+)", text, re.M))


def installed_npm(package: str) -> str | None:
    pj = ROOT / ".cache" / "peers" / "node" / "node_modules" / "@modelcontextprotocol" / package / "package.json"
    m = re.search(r'"version"\s*:\s*"([^"]+)"', pj.read_text()) if pj.is_file() else None
    return m.group(1) if m else None


def installed_python_sdk() -> str | None:
    python = os.environ.get("MCP_PYTHON")
    if not python:
        return None
    out = version_of([python, "-c", "import importlib.metadata as m; print(m.version('mcp'))"])
    return None if out == "unknown" else out


def peer_line(name: str, pinned: str | None, installed: str | None) -> str:
    if installed is None or installed == pinned:
        return f"{name} {pinned}"
    return f"{name} {installed} (**pinned {pinned}**)"


def cell_text(value: list[str] | tuple[str, str], results: dict[str, str], letters: dict[str, str]) -> str:
    if isinstance(value, tuple):
        kind, note = value
        return f"n/a ({letters[note]})" if kind == NA else f"⚠️ gap ({letters[note]})"
    return "✅" if all(results.get(t) == "ok" for t in value) else "❌"


def outcome(test: str, results: dict[str, str]) -> str:
    status = results.get(test)
    return {"ok": "passed", "FAILED": "**FAILED**", "ignored": "**ignored (did not run)**"}.get(
        status or "", "**did not run**")


def render(results: dict[str, str], elapsed: float | None, source: str) -> str:
    p = pins()
    letters = {note: chr(ord("a") + i) for i, note in enumerate(NOTES)}
    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    peers = [
        peer_line("`@modelcontextprotocol/server-everything`", p.get("EVERYTHING_VERSION"),
                  installed_npm("server-everything")),
        peer_line("`@modelcontextprotocol/server-filesystem`", p.get("FILESYSTEM_VERSION"),
                  installed_npm("server-filesystem")),
        peer_line("Python SDK `mcp`", p.get("MCP_PY_VERSION"), installed_python_sdk()),
    ]
    python = os.environ.get("MCP_PYTHON")
    out = [
        "# Interop matrix",
        "",
        "<!-- Generated by scripts/interop-matrix.py; do not edit by hand. Rows, columns and the",
        "     tests behind each cell are the tables at the top of that script. -->",
        "",
        "Which MCP client features the sidecar is tested with, against which servers, over which "
        "transport and in which protocol era. Every ✅ is one or more tests that ran and passed in "
        "the run below; the tests behind each cell are listed under the table. The interop tier of "
        "`scripts/test-all.sh` runs `scripts/interop-matrix.py`, which runs those tests and fails "
        "when one fails or no longer exists. That run writes its table to `target/interop-matrix.md` "
        "and fails when this committed file differs from it in substance (anything but the "
        "generated-at and runtimes lines); `scripts/interop-matrix.py --write` (after "
        "`. .cache/peers/env.sh`) regenerates this file.",
        "",
        f"- Generated: {date}, commit `{commit}`{' plus uncommitted changes' if dirty else ''}"
        + (f", {elapsed:.0f} s" if elapsed is not None else "") + f" ({source})",
        f"- Peers (pinned in `scripts/install-peers.sh`): {', '.join(peers)}",
        f"- Runtimes: {version_of(['rustc', '--version'])}; node {version_of(['node', '--version'])}; "
        f"{version_of([python, '--version']) if python else 'python unknown'} (SDK venv)",
        "",
    ]
    header = ["server", "transport", "era"] + [c[1] for c in COLUMNS]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "|".join("---" for _ in header) + "|")
    for row in ROWS:
        cells = [row.server, row.transport, row.era]
        cells += [cell_text(row.cells[c[0]], results, letters) for c in COLUMNS]
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "✅ every test behind the cell passed in this run; ❌ one failed or did not run; "
            "n/a the server cannot do it; ⚠️ gap: the server can, the sidecar does not (no test):", ""]
    for note, (kind, text) in NOTES.items():
        out.append(f"- ({letters[note]}) {'gap' if kind == GAP else 'n/a'}: {text}")
    out += ["", "Rows:", ""]
    out += [f"- {n}" for n in ROW_NOTES]
    out += ["", "## Columns", ""]
    out += [f"- **{header}**: {text}" for _, header, text in COLUMNS]
    if KNOWN_ISSUES:
        out += ["", "## Known issues", ""]
        out += [f"- {n}" for n in KNOWN_ISSUES]
    out += ["", "## Tests behind each cell", ""]
    by_test: dict[str, list[str]] = {}
    for row in ROWS:
        for key, header_text, _ in COLUMNS:
            value = row.cells[key]
            if isinstance(value, list):
                for t in value:
                    by_test.setdefault(t, []).append(f"{row.server} · {row.transport} · {row.era}: {header_text}")
    for row in ROWS:
        out.append(f"### {row.server} · {row.transport} · {row.era}")
        out.append("")
        for key, header_text, _ in COLUMNS:
            value = row.cells[key]
            if isinstance(value, tuple):
                out.append(f"- {header_text}: {cell_text(value, results, letters)}")
                continue
            tests = ", ".join(f"`{t}` ({outcome(t, results)})"
                              for t in value)
            out.append(f"- {header_text}: {cell_text(value, results, letters)} {tests}")
        out.append("")
    others = sorted(t for t, s in results.items() if t not in by_test and t.split("::")[0] in FULL_SUITES)
    if others:
        out.append("## Other tests of the interop, HTTP, OAuth, gateway, gateway_clients, gateway_apps, resources, skills, tasks and gateway_tasks suites in this run")
        out.append("")
        out.append("Not matrix cells (error paths, fake servers, era details); they must pass too.")
        out.append("")
        out += [f"- `{t}` ({outcome(t, results)})" for t in others]
        out.append("")
    out.append("Suites are modules of the one integration-test binary: `interop` is `tests/it/interop.rs`, "
               "`http` is `tests/it/http.rs`, and likewise `elicitation`, `sampling`, `lsp_core` "
               "(`cargo test --test it -- interop::` runs one).")
    out.append("")
    return "\n".join(out)


def substance(text: str) -> list[str]:
    """The table without the lines that change on every run."""
    return [line for line in text.splitlines() if not line.startswith(VOLATILE)]


def committed_differs(written: str) -> bool:
    """Prints the diff (and how to regenerate) when docs/interop-matrix.md differs in substance."""
    old = COMMITTED.read_text() if COMMITTED.is_file() else ""
    diff = list(difflib.unified_diff(substance(old), substance(written), "docs/interop-matrix.md (committed)",
                                     "this run", lineterm=""))
    if not diff:
        print("interop-matrix: docs/interop-matrix.md is current")
        return False
    print("\n".join(diff), file=sys.stderr)
    print("interop-matrix: docs/interop-matrix.md is out of date (diff above); regenerate it with "
          "`scripts/interop-matrix.py --write` (after `. .cache/peers/env.sh`) and commit it", file=sys.stderr)
    return True


# ------------------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None,
                        help="where to write the table (default target/interop-matrix.md)")
    parser.add_argument("--write", action="store_true",
                        help="write the committed docs/interop-matrix.md instead (regenerate it)")
    parser.add_argument("--check-names", action="store_true", help="only check the cited tests exist")
    parser.add_argument("--from-log", type=Path, metavar="FILE",
                        help="build the table from saved `cargo test` output instead of running the tests")
    args = parser.parse_args()
    if args.write and args.output:
        parser.error("--write and --output name two places to write; give one")
    output = COMMITTED if args.write else (args.output or DEFAULT_OUTPUT)
    check_table()
    load_peer_env()
    start = time.monotonic()

    if args.from_log:
        lines = args.from_log.read_text(errors="replace").splitlines()
        results = parse(lines, RESULT)
        missing = stale(results)
        code = 1 if missing else 0
        source = f"from {args.from_log.name}"
    else:
        listed = list_tests()
        missing = stale(listed)
        if missing:
            print("interop-matrix: these cited tests no longer exist (rename them in "
                  "scripts/interop-matrix.py, or write them):", file=sys.stderr)
            for t in missing:
                print(f"  {t}", file=sys.stderr)
            return 2
        print(f"interop-matrix: all {len(cited())} cited tests exist", flush=True)
        if args.check_names:
            return 0
        code, lines = run_tests()
        results = parse(lines, RESULT)
        source = "tests run by this script"

    failed_cited = [t for t in cited() if results.get(t) != "ok"]
    failed_any = sorted(t for t, s in results.items() if s == "FAILED")
    elapsed = None if args.from_log else time.monotonic() - start
    output.parent.mkdir(parents=True, exist_ok=True)
    written = render(results, elapsed, source)
    output.write_text(written)
    print(f"interop-matrix: wrote {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}")
    if failed_cited:
        print("interop-matrix: cited tests that did not pass:", file=sys.stderr)
        for t in failed_cited:
            print(f"  {t}: {results.get(t, 'did not run')}", file=sys.stderr)
    if failed_any:
        print(f"interop-matrix: failed tests: {', '.join(failed_any)}", file=sys.stderr)
    if code or failed_cited or failed_any:
        return 1
    if not args.write and committed_differs(written):
        return 3
    gaps = sum(1 for r in ROWS for v in r.cells.values() if isinstance(v, tuple) and v[0] == GAP)
    print(f"interop-matrix: every cited test passed ({len(cited())} tests; {gaps} known gap cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
