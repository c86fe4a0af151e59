//! Keeps `docs/lsp-extensions.md` and `src/contract/mod.rs` in step: every method and command has a
//! section, every name the page mentions exists, every field of every params type is documented in
//! its section, and every example parses into the Rust type and serializes back unchanged. Keeps
//! the sidecar's command handlers (the table in `src/lsp/commands/mod.rs`) in step with the
//! contract: one handler per command. And keeps the editors in step with the contract: VS Code
//! (`editors/vscode`), Neovim (`editors/nvim`) and Emacs (`editors/emacs`) each handle every
//! method and offer every command, or list it as not offered, with the reason.

use std::collections::{BTreeMap, BTreeSet};

use mcp_sidecar::contract::*;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

const DOC: &str = include_str!("../../docs/lsp-extensions.md");

/// The text of the `### \`name\`` section.
fn section(name: &str) -> &'static str {
    let heading = format!("### `{name}`");
    let start = DOC
        .find(&heading)
        .unwrap_or_else(|| panic!("no section for {name}"));
    let rest = &DOC[start + heading.len()..];
    let end = rest
        .find("\n### ")
        .or_else(|| rest.find("\n## "))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The example tagged ```json <tag>.
fn example(tag: &str) -> Value {
    let fence = format!("```json {tag}\n");
    let start = DOC
        .find(&fence)
        .unwrap_or_else(|| panic!("no example {tag}"))
        + fence.len();
    let end = DOC[start..].find("```").unwrap() + start;
    serde_json::from_str(&DOC[start..end]).unwrap_or_else(|e| panic!("example {tag}: {e}"))
}

/// Drops `false` and `null` members: the code leaves defaults out, the docs may spell them.
fn normalize(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !matches!(v, Value::Bool(false) | Value::Null))
                .map(|(k, v)| (k, normalize(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        other => other,
    }
}

fn round_trips<T: Serialize + DeserializeOwned>(tag: &str) {
    let doc = example(tag);
    let parsed: T = serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let back = serde_json::to_value(parsed).unwrap();
    assert_eq!(
        normalize(back),
        normalize(doc),
        "example {tag} does not match the Rust type"
    );
}

/// Every property of `T` is named in backticks in the section of `name`.
fn fields_documented<T: JsonSchema>(name: &str) {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let text = section(name);
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(!props.is_empty(), "{name}: no properties found");
    for field in props.keys() {
        assert!(
            text.contains(&format!("`{field}`")) || text.contains(&format!("`{field}?`")),
            "{name}: field `{field}` is not documented"
        );
    }
}

#[test]
fn every_method_and_command_has_exactly_one_section() {
    let headings: BTreeSet<&str> = DOC
        .lines()
        .filter_map(|l| l.strip_prefix("### `").and_then(|l| l.strip_suffix('`')))
        .collect();
    let code: BTreeSet<&str> = METHODS
        .iter()
        .chain(COMMANDS)
        .chain(PLAIN_COMMANDS)
        .copied()
        .collect();
    assert_eq!(headings, code);
}

#[test]
fn every_command_has_exactly_one_handler() {
    let handlers: Vec<&str> = mcp_sidecar::lsp::command_names().collect();
    let unique: BTreeSet<&str> = handlers.iter().copied().collect();
    assert_eq!(
        unique.len(),
        handlers.len(),
        "a command has two handlers: {handlers:?}"
    );
    assert_eq!(
        unique,
        COMMANDS.iter().copied().collect::<BTreeSet<_>>(),
        "the handler table (src/lsp/commands/mod.rs) and contract::COMMANDS differ"
    );
    let plain: BTreeSet<&str> = mcp_sidecar::lsp::plain_command_names().collect();
    assert_eq!(
        plain,
        PLAIN_COMMANDS.iter().copied().collect::<BTreeSet<_>>(),
        "the plain handler table (src/lsp/commands/mod.rs) and contract::PLAIN_COMMANDS differ"
    );
}

#[test]
fn every_name_the_page_mentions_exists() {
    let code: BTreeSet<&str> = METHODS
        .iter()
        .chain(COMMANDS)
        .chain(PLAIN_COMMANDS)
        .copied()
        .collect();
    for (i, _) in DOC.match_indices("`mcp-sidecar") {
        let rest = &DOC[i + 1..];
        if !rest["mcp-sidecar".len()..].starts_with(['/', '.']) {
            continue;
        }
        let name = &rest[..rest.find('`').unwrap()];
        assert!(
            code.contains(name),
            "the page mentions {name}, which the code does not have"
        );
    }
}

#[test]
fn params_fields_are_documented() {
    fields_documented::<InputBoxParams>(INPUT_BOX);
    fields_documented::<QuickPickParams>(QUICK_PICK);
    fields_documented::<QuickPickItem>(QUICK_PICK);
    fields_documented::<EditDraftParams>(EDIT_DRAFT);
    fields_documented::<DraftProblem>(EDIT_DRAFT);
    fields_documented::<ServerStatusParams>(SERVER_STATUS);
    fields_documented::<ServerSummary>(CMD_LIST_SERVERS);
    fields_documented::<ToolSummary>(CMD_LIST_TOOLS);
    fields_documented::<CallToolArgs>(CMD_CALL_TOOL);
    fields_documented::<RestartServerArgs>(CMD_RESTART_SERVER);
    fields_documented::<ListToolsArgs>(CMD_LIST_TOOLS);
    fields_documented::<GatewayInfo>(CMD_GATEWAY_INFO);
    fields_documented::<ExpandUriTemplateArgs>(CMD_EXPAND_URI_TEMPLATE);
    fields_documented::<ExpandUriTemplateResult>(CMD_EXPAND_URI_TEMPLATE);
    fields_documented::<OpenAppParams>(OPEN_APP);
    fields_documented::<CloseAppParams>(CLOSE_APP);
    fields_documented::<AppSummary>(CMD_LIST_APPS);
    fields_documented::<AppRequestArgs>(CMD_APP_REQUEST);
}

#[test]
fn examples_match_the_rust_types() {
    round_trips::<EditorCapabilities>("capabilities");
    round_trips::<InputBoxParams>("inputBox.params");
    round_trips::<Option<InputBoxResult>>("inputBox.result");
    round_trips::<QuickPickParams>("quickPick.params");
    round_trips::<Option<QuickPickResult>>("quickPick.result");
    round_trips::<EditDraftParams>("editDraft.params");
    round_trips::<Option<EditDraftResult>>("editDraft.result");
    round_trips::<CancelPromptParams>("cancelPrompt.params");
    round_trips::<ClipboardParams>("clipboard.params");
    round_trips::<ServerStatusParams>("serverStatus.params");
    round_trips::<ServerStatusParams>("serverStatus.needsAuth");
    round_trips::<ServerArgs>("signIn.argument");
    round_trips::<SignOutResult>("signOut.result");
    round_trips::<ResourceArgs>("resourceUpdated.params");
    round_trips::<Vec<ResourceSummary>>("listResources.result");
    round_trips::<Vec<ResourceTemplateSummary>>("listResourceTemplates.result");
    round_trips::<ResourceArgs>("readResource.argument");
    round_trips::<Vec<PromptSummary>>("listPrompts.result");
    round_trips::<GetPromptArgs>("getPrompt.argument");
    round_trips::<CompleteArgs>("complete.argument");
    round_trips::<Vec<ServerSummary>>("listServers.result");
    round_trips::<Vec<ToolSummary>>("listTools.result");
    round_trips::<CallToolArgs>("callTool.argument");
    round_trips::<RestartServerArgs>("restartServer.argument");
    round_trips::<GatewayInfo>("gatewayInfo.result");
    round_trips::<ExpandUriTemplateArgs>("expandUriTemplate.argument");
    round_trips::<ExpandUriTemplateResult>("expandUriTemplate.result");
    round_trips::<OpenAppParams>("openApp.params");
    round_trips::<CloseAppParams>("closeApp.params");
    round_trips::<Vec<AppSummary>>("listApps.result");
    round_trips::<AppArgs>("openApp.argument");
    round_trips::<AppArgs>("closeApp.argument");
    round_trips::<AppRequestArgs>("appRequest.argument");
    round_trips::<TaskInfo>("taskStatus.params");
    round_trips::<Vec<TaskInfo>>("listTasks.result");
    round_trips::<TaskArgs>("cancelTask.argument");
    round_trips::<Vec<SkillSummary>>("listSkills.result");
    round_trips::<ReadSkillArgs>("readSkill.argument");
}

/// The documented `expandUriTemplate` example is what the sidecar answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_expansion_is_the_sidecars() {
    let editor = crate::support::in_process();
    editor
        .initialize(&[], serde_json::json!({}), serde_json::json!({}))
        .await;
    let result = editor
        .command(
            CMD_EXPAND_URI_TEMPLATE,
            example("expandUriTemplate.argument"),
        )
        .await;
    assert_eq!(result, example("expandUriTemplate.result"));
    editor.shutdown_and_exit().await;
}

// The editors ------------------------------------------------------------------------------------
//
// Every method and command of the contract is handled by every editor, or listed as deliberately
// not offered (with the reason) in one place per editor: `NOT_OFFERED` in
// editors/vscode/src/contract.ts, `M.not_offered` in editors/nvim/lua/mcp_sidecar/lsp_config.lua,
// `mcp-sidecar--not-offered` in editors/emacs/mcp-sidecar-client.el.

fn editor_file(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

fn contract_names() -> BTreeSet<&'static str> {
    METHODS.iter().chain(COMMANDS).copied().collect()
}

/// The first quoted string ('…' or "…") in `text`.
fn quoted(text: &str) -> Option<&str> {
    let start = text.find(['\'', '"'])?;
    let quote = text[start..].chars().next()?;
    let rest = &text[start + 1..];
    Some(&rest[..rest.find(quote)?])
}

/// The lines of the `{ … }` block that starts on the line beginning with `opening`, up to the
/// first line that is only `}` or `};` (none for `{}` on the opening line).
fn block<'a>(source: &'a str, opening: &str) -> Vec<&'a str> {
    let mut lines = source.lines().skip_while(|l| !l.starts_with(opening));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no block `{opening}`"));
    if first.trim_end().ends_with("{}") || first.trim_end().ends_with("{};") {
        return Vec::new();
    }
    lines
        .take_while(|l| !matches!(l.trim(), "}" | "};"))
        .collect()
}

/// `export const NAME = 'value';` in a TypeScript file.
fn ts_constants(source: &str) -> BTreeMap<String, String> {
    source
        .lines()
        .filter_map(|l| l.strip_prefix("export const "))
        .filter_map(|l| {
            let (name, rest) = l.split_once(" = ")?;
            let value = rest.strip_prefix('\'')?.strip_suffix("';")?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

/// `[NAME]: rest,` entries of a TypeScript record, NAME resolved to its value.
fn ts_record(
    source: &str,
    name: &str,
    constants: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    block(source, &format!("export const {name}"))
        .into_iter()
        .filter_map(|l| {
            let (key, rest) = l.trim().strip_prefix('[')?.split_once("]: ")?;
            let value = constants
                .get(key)
                .unwrap_or_else(|| panic!("{name}: {key} is not a constant of contract.ts"));
            Some((value.clone(), rest.trim_end_matches(',').to_string()))
        })
        .collect()
}

/// Checks a "not offered" list: contract names only, each with a reason.
fn not_offered(editor: &str, entries: Vec<(String, String)>) -> BTreeSet<String> {
    let names = contract_names();
    for (name, reason) in &entries {
        assert!(
            names.contains(name.as_str()),
            "{editor}: {name} is listed as not offered, but the contract has no such name"
        );
        assert!(
            quoted(reason).is_some_and(|r| r.trim().len() > 10),
            "{editor}: {name} is listed as not offered without a reason"
        );
    }
    entries.into_iter().map(|(name, _)| name).collect()
}

fn vscode_sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs =
        vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "ts") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

#[test]
fn vscode_handles_every_method_and_offers_every_command() {
    let contract_ts = editor_file("editors/vscode/src/contract.ts");
    let constants = ts_constants(&contract_ts);
    let by_value: BTreeMap<&str, &str> = constants
        .iter()
        .map(|(k, v)| (v.as_str(), k.as_str()))
        .collect();
    let declared: BTreeSet<&str> = by_value
        .keys()
        .copied()
        .filter(|v| v.starts_with("mcp-sidecar/") || v.starts_with("mcp-sidecar."))
        .collect();
    assert_eq!(
        declared,
        contract_names(),
        "editors/vscode/src/contract.ts declares other names than src/contract/mod.rs"
    );
    let skipped = not_offered(
        "VS Code",
        ts_record(&contract_ts, "NOT_OFFERED", &constants),
    );

    let sidecar_ts = editor_file("editors/vscode/src/sidecar.ts");
    for method in METHODS {
        let constant = by_value[method];
        let handled = [
            format!("onRequest(contract.{constant},"),
            format!("onNotification(contract.{constant},"),
        ]
        .iter()
        .any(|h| sidecar_ts.contains(h));
        assert_eq!(
            handled,
            !skipped.contains(*method),
            "VS Code: {method} must have a handler in src/sidecar.ts (client.onRequest / onNotification) \
             or be listed in NOT_OFFERED, not both"
        );
    }

    let manifest: Value =
        serde_json::from_str(&editor_file("editors/vscode/package.json")).unwrap();
    let contributed: BTreeSet<&str> = manifest["contributes"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    let hidden: BTreeSet<&str> = manifest["contributes"]["menus"]["commandPalette"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["when"] == "false")
        .map(|m| m["command"].as_str().unwrap())
        .collect();
    let extension_ts = editor_file("editors/vscode/src/extension.ts");
    let sources = vscode_sources();
    let offered = ts_record(&contract_ts, "OFFERED_COMMANDS", &constants);
    for (command, _) in &offered {
        assert!(
            COMMANDS.contains(&command.as_str()),
            "VS Code: OFFERED_COMMANDS names {command}, which is not a command of the contract"
        );
    }
    for command in COMMANDS {
        let entry = offered.iter().find(|(c, _)| c == command);
        assert_eq!(
            entry.is_some(),
            !skipped.contains(*command),
            "VS Code: {command} must be in OFFERED_COMMANDS or in NOT_OFFERED, not both"
        );
        let Some((_, ids)) = entry else { continue };
        let ids: Vec<&str> = ids
            .trim_matches(['[', ']'])
            .split(',')
            .filter_map(quoted)
            .collect();
        assert!(
            !ids.is_empty(),
            "VS Code: {command} is offered by no command"
        );
        for id in ids {
            assert!(
                contributed.contains(id) && !hidden.contains(id),
                "VS Code: {id} (offering {command}) is not in the Command Palette (package.json)"
            );
            assert!(
                extension_ts.contains(&format!("command('{id}',")),
                "VS Code: {id} (offering {command}) is not registered in src/extension.ts"
            );
        }
        let constant = format!("contract.{}", by_value[command]);
        assert!(
            sources
                .iter()
                .any(|(path, text)| !path.ends_with("contract.ts") && text.contains(&constant)),
            "VS Code: no module sends {command} ({constant})"
        );
    }
}

/// A Lua function defined at the top level: its name as called (`M.x` or `x`) and its lines.
struct LuaFunction<'a> {
    name: String,
    body: Vec<&'a str>,
}

fn lua_functions(source: &str) -> Vec<LuaFunction<'_>> {
    let mut out: Vec<LuaFunction> = Vec::new();
    for line in source.lines() {
        let name = line
            .strip_prefix("function ")
            .or_else(|| line.strip_prefix("local function "))
            .and_then(|l| l.split_once('('))
            .map(|(name, _)| name.to_string());
        match (name, out.last_mut()) {
            (Some(name), _) => out.push(LuaFunction {
                name,
                body: Vec::new(),
            }),
            // Top-level code between functions belongs to none.
            (None, Some(f)) if f.body.last().is_none_or(|l| *l != "end") => f.body.push(line),
            _ => {}
        }
    }
    out
}

/// Whether `text` calls the Lua function `name` (not one whose name ends with it).
fn calls(text: &str, name: &str) -> bool {
    text.match_indices(&format!("{name}(")).any(|(i, _)| {
        !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

#[test]
fn neovim_handles_every_method_and_offers_every_command() {
    let lsp_config = editor_file("editors/nvim/lua/mcp_sidecar/lsp_config.lua");
    let skipped = not_offered(
        "Neovim",
        block(&lsp_config, "M.not_offered = {")
            .into_iter()
            .filter_map(|l| {
                let (key, reason) = l.trim().strip_prefix("['")?.split_once("'] = ")?;
                Some((key.to_string(), reason.to_string()))
            })
            .collect(),
    );

    let handlers = editor_file("editors/nvim/lua/mcp_sidecar/handlers.lua");
    for method in METHODS {
        assert_eq!(
            handlers.contains(&format!("\nM['{method}'] = function")),
            !skipped.contains(*method),
            "Neovim: {method} must have a handler in lua/mcp_sidecar/handlers.lua or be listed in \
             M.not_offered (lsp_config.lua), not both"
        );
    }

    let exec = editor_file("editors/nvim/lua/mcp_sidecar/exec.lua");
    let keys: Vec<(String, String)> = block(&exec, "M.CMD = {")
        .into_iter()
        .filter_map(|l| {
            let (key, value) = l.trim().split_once(" = ")?;
            Some((key.to_string(), quoted(value)?.to_string()))
        })
        .collect();
    // The :Mcp modules, lua/mcp_sidecar/commands/<module>.lua, each requiring the others under
    // their file name: a function is `(module, name)`, called as `name(` in its own module and
    // as `<module>.<name>(` (for `M.<name>`) in the others.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("editors/nvim/lua/mcp_sidecar/commands");
    let sources: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "lua"))
        .map(|path| {
            let module = path.file_stem().unwrap().to_string_lossy().into_owned();
            (module, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    let functions: Vec<(&str, LuaFunction)> = sources
        .iter()
        .flat_map(|(module, source)| {
            lua_functions(source)
                .into_iter()
                .map(move |f| (module.as_str(), f))
        })
        .collect();
    let calls_from = |text: &str, from: &str, (module, f): &(&str, LuaFunction)| {
        if from == *module {
            calls(text, &f.name)
        } else {
            f.name
                .strip_prefix("M.")
                .is_some_and(|name| calls(text, &format!("{module}.{name}")))
        }
    };
    // Functions reachable from a :Mcp subcommand: called from M.subcommands (commands/init.lua),
    // or from a reachable function.
    let init = &sources
        .iter()
        .find(|(module, _)| module == "init")
        .expect("commands/init.lua")
        .1;
    let subcommands = block(init, "M.subcommands = {").join("\n");
    let mut reachable: BTreeSet<usize> = (0..functions.len())
        .filter(|&i| calls_from(&subcommands, "init", &functions[i]))
        .collect();
    loop {
        let more: Vec<usize> = (0..functions.len())
            .filter(|i| !reachable.contains(i))
            .filter(|&i| {
                reachable.iter().any(|&j| {
                    let (from, g) = &functions[j];
                    calls_from(&g.body.join("\n"), from, &functions[i])
                })
            })
            .collect();
        if more.is_empty() {
            break;
        }
        reachable.extend(more);
    }
    for command in COMMANDS {
        let key = keys.iter().find(|(_, v)| v == command).map(|(k, _)| k);
        assert_eq!(
            key.is_some(),
            !skipped.contains(*command),
            "Neovim: {command} must be in M.CMD (exec.lua) or in M.not_offered, not both"
        );
        let Some(key) = key else { continue };
        let used = format!("CMD.{key}");
        assert!(
            reachable
                .iter()
                .any(|&i| functions[i].1.body.iter().any(|l| l.contains(&used))),
            "Neovim: no :Mcp subcommand sends {command} ({used})"
        );
    }
    for (_, value) in &keys {
        assert!(
            COMMANDS.contains(&value.as_str()),
            "Neovim: M.CMD names {value}, which is not a command of the contract"
        );
    }
}

// Emacs ------------------------------------------------------------------------------------------
//
// editors/emacs/mcp-sidecar-client.el holds three tables: `mcp-sidecar--not-offered` (contract
// names with the reason), `mcp-sidecar--handlers` (method → handler function) and
// `mcp-sidecar--commands` (key → command name, sent as `'key` through `mcp-sidecar--exec`).

/// The top-level forms of an Emacs Lisp file: each from a line that starts with `(` up to the
/// next such line.
fn lisp_forms(source: &str) -> Vec<String> {
    let mut forms: Vec<String> = Vec::new();
    for line in source.lines() {
        if line.starts_with('(') {
            forms.push(String::new());
        }
        if let Some(form) = forms.last_mut() {
            form.push_str(line);
            form.push('\n');
        }
    }
    forms
}

/// The `(KEY . VALUE)` entries of the top-level form that starts with `opening`, one a line: KEY
/// without its quotes, VALUE as written (a symbol, or a string with its quotes).
fn lisp_pairs(forms: &[String], opening: &str) -> Vec<(String, String)> {
    let form = forms
        .iter()
        .find(|f| f.starts_with(opening))
        .unwrap_or_else(|| panic!("no form `{opening}`"));
    form.lines()
        .filter_map(|line| {
            let (key, value) = line
                .trim()
                .trim_start_matches(['\'', '('])
                .split_once(" . ")?;
            let value = value.trim_end_matches(')');
            Some((key.trim_matches('"').to_string(), value.to_string()))
        })
        .collect()
}

fn is_lisp_symbol_char(c: char) -> bool {
    c.is_alphanumeric() || "-_+*/<>=!?:%&$~^@.".contains(c)
}

/// Whether `text` holds the symbol `name` (not a longer symbol containing it), after `prefix`
/// (such as `'`).
fn mentions(text: &str, prefix: &str, name: &str) -> bool {
    let needle = format!("{prefix}{name}");
    text.match_indices(&needle).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + needle.len()..].chars().next();
        !after.is_some_and(is_lisp_symbol_char)
            && (!prefix.is_empty() || !before.is_some_and(is_lisp_symbol_char))
    })
}

#[test]
fn emacs_handles_every_method_and_offers_every_command() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/emacs");
    let sources: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "el"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    let forms: Vec<String> = sources.iter().flat_map(|s| lisp_forms(s)).collect();
    let client = lisp_forms(&editor_file("editors/emacs/mcp-sidecar-client.el"));
    let skipped = not_offered(
        "Emacs",
        lisp_pairs(&client, "(defconst mcp-sidecar--not-offered"),
    );

    // Functions: (name, body, interactive).
    let defuns: Vec<(&str, &str, bool)> = forms
        .iter()
        .filter_map(|form| {
            let rest = form.strip_prefix("(defun ")?;
            let name = &rest[..rest.find([' ', '\n'])?];
            Some((name, form.as_str(), form.contains("(interactive")))
        })
        .collect();

    let handlers = lisp_pairs(&client, "(defconst mcp-sidecar--handlers");
    for method in METHODS {
        let handler = handlers.iter().find(|(m, _)| m == method);
        assert_eq!(
            handler.is_some(),
            !skipped.contains(*method),
            "Emacs: {method} must have a handler in mcp-sidecar--handlers \
             (mcp-sidecar-client.el) or be listed in mcp-sidecar--not-offered, not both"
        );
        if let Some((_, function)) = handler {
            assert!(
                defuns.iter().any(|(name, _, _)| name == function),
                "Emacs: the handler of {method}, {function}, is not defined"
            );
        }
    }

    let keys = lisp_pairs(&client, "(defconst mcp-sidecar--commands");
    for (_, value) in &keys {
        let command = value.trim_matches('"');
        assert!(
            COMMANDS.contains(&command),
            "Emacs: mcp-sidecar--commands names {command}, which is not a command of the contract"
        );
    }
    // Functions reachable from an interactive command: named in the body of one, or of a
    // reachable function.
    let mut reachable: BTreeSet<usize> = (0..defuns.len()).filter(|&i| defuns[i].2).collect();
    loop {
        let more: Vec<usize> = (0..defuns.len())
            .filter(|i| !reachable.contains(i))
            .filter(|&i| {
                reachable
                    .iter()
                    .any(|&j| mentions(defuns[j].1, "", defuns[i].0))
            })
            .collect();
        if more.is_empty() {
            break;
        }
        reachable.extend(more);
    }
    for command in COMMANDS {
        let key = keys
            .iter()
            .find(|(_, v)| v.trim_matches('"') == *command)
            .map(|(k, _)| k);
        assert_eq!(
            key.is_some(),
            !skipped.contains(*command),
            "Emacs: {command} must be in mcp-sidecar--commands or in mcp-sidecar--not-offered, \
             not both"
        );
        let Some(key) = key else { continue };
        assert!(
            reachable.iter().any(|&i| mentions(defuns[i].1, "'", key)),
            "Emacs: no interactive command sends {command} ('{key})"
        );
    }
}

#[test]
fn the_lisp_readers_read_what_they_are_given() {
    let source = "(defconst t\n  '((\"a/b\" . f)\n    (\"c\" . \"a reason.\")))\n;; x\n(defun g (x)\n  \"Doc.\"\n  (f 'k))\n";
    let forms = lisp_forms(source);
    assert_eq!(forms.len(), 2);
    assert_eq!(
        lisp_pairs(&forms, "(defconst t"),
        [
            ("a/b".to_owned(), "f".to_owned()),
            ("c".to_owned(), "\"a reason.\"".to_owned())
        ]
    );
    assert!(mentions(&forms[1], "'", "k"));
    assert!(!mentions(&forms[1], "'", "kk"));
    assert!(mentions(&forms[1], "", "f"));
    assert!(!mentions("(ff 'x)", "", "f"));
    assert!(!mentions("(f-g 'x)", "", "f"));
}
