//! Property tests through the library's public API, next to the unit-level ones in
//! `src/mcp/transport.rs`, `src/config/{tests,workspace,vars}.rs`: these check what comes out,
//! not only that nothing panics.
//!
//! - framing: a stream of junk and answers yields exactly the answers, in order, whatever their
//!   text; broken bytes inside an answer never hide its id; batches split into their members;
//! - configuration: comments and trailing commas never change what a JSON file means; every
//!   server entry yields exactly one result that names it, from the highest source;
//! - variables: a template expands to the concatenation of its parts' values, and
//!   `${input:...}` ids are found in order.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use mcp_sidecar::config::vars::{VarContext, expand, input_ids};
use mcp_sidecar::config::workspace::parse_jsonc;
use mcp_sidecar::config::{self, Context, Layer, Source};
use mcp_sidecar::mcp::{Line, parse_line, split_batch};
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------- framing

/// The messages one line yields, read as the stdio transport reads it (a batch is its members).
fn messages_of(line: &[u8]) -> Vec<Value> {
    let members = split_batch(line).unwrap_or_else(|| vec![line.to_vec()]);
    members
        .iter()
        .filter_map(|m| match parse_line(m) {
            Line::Message(message) => Some(serde_json::to_value(&message).unwrap()),
            _ => None,
        })
        .collect()
}

fn id_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|n| json!(n)),
        "[ -~]{0,12}".prop_map(|s| json!(s)),
    ]
}

fn answer(id: &Value, text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": text}]}}))
    .unwrap()
}

#[derive(Debug, Clone)]
enum Out {
    Answer(Value, String),
    /// Bytes a server might log on stdout; never the start of a JSON value.
    Junk(Vec<u8>),
}

fn out_strategy() -> impl Strategy<Value = Out> {
    prop_oneof![
        (id_strategy(), any::<String>()).prop_map(|(id, text)| Out::Answer(id, text)),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(|mut bytes| {
            bytes.retain(|b| *b != b'\n');
            let mut line = b"log: ".to_vec();
            line.extend(bytes);
            Out::Junk(line)
        }),
    ]
}

/// Where to break an answer's text, and how.
#[derive(Debug, Clone, Copy)]
enum Break {
    /// A raw byte that is not UTF-8.
    NotUtf8,
    /// A lone high surrogate escape.
    LoneSurrogate,
    /// A control character, raw, inside the string.
    RawControl,
}

proptest! {
    #[test]
    fn a_stream_of_junk_and_answers_yields_exactly_the_answers(outs in prop::collection::vec(out_strategy(), 0..24)) {
        let mut got = Vec::new();
        for out in &outs {
            let line = match out {
                Out::Answer(id, text) => answer(id, text),
                Out::Junk(bytes) => bytes.clone(),
            };
            got.extend(messages_of(&line));
        }
        let want: Vec<(Value, String)> = outs
            .iter()
            .filter_map(|o| match o {
                Out::Answer(id, text) => Some((id.clone(), text.clone())),
                Out::Junk(_) => None,
            })
            .collect();
        let got: Vec<(Value, String)> = got
            .iter()
            .map(|m| (m["id"].clone(), m["result"]["content"][0]["text"].as_str().unwrap_or("<none>").to_string()))
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn broken_bytes_inside_an_answer_never_hide_its_id(
        id in id_strategy(),
        text in "[a-z ]{0,20}",
        at in any::<prop::sample::Index>(),
        how in prop_oneof![Just(Break::NotUtf8), Just(Break::LoneSurrogate), Just(Break::RawControl)],
    ) {
        let line = answer(&id, &text);
        // Somewhere inside the text's string (after its opening quote, before its closing one).
        let start = line.windows(8).position(|w| w == b"\"text\":\"").unwrap() + 8;
        let end = start + text.len();
        let pos = start + at.index(end - start + 1);
        let inserted: &[u8] = match how {
            Break::NotUtf8 => b"\xff",
            Break::LoneSurrogate => b"\\ud800",
            Break::RawControl => b"\x01",
        };
        let mut broken = line[..pos].to_vec();
        broken.extend_from_slice(inserted);
        broken.extend_from_slice(&line[pos..]);
        let got = messages_of(&broken);
        prop_assert_eq!(got.len(), 1, "{}", String::from_utf8_lossy(&broken));
        prop_assert_eq!(&got[0]["id"], &id);
        let message = got[0]["error"]["message"].as_str().unwrap_or_default();
        prop_assert!(message.contains("could not be read"), "{}", message);
    }

    #[test]
    fn a_batch_is_its_members_in_order(members in prop::collection::vec((id_strategy(), "\\PC{0,16}"), 1..10)) {
        let values: Vec<Value> = members
            .iter()
            .map(|(id, text)| serde_json::from_slice(&answer(id, text)).unwrap())
            .collect();
        let line = serde_json::to_vec(&values).unwrap();
        let got: Vec<Value> = messages_of(&line).iter().map(|m| m["id"].clone()).collect();
        let want: Vec<Value> = members.iter().map(|(id, _)| id.clone()).collect();
        prop_assert_eq!(got, want);
    }
}

// ---------------------------------------------------------------- configuration

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `value` as JSONC: a comment of each kind around every member, and trailing commas.
fn jsonc(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push_str("[ // items\n");
            for item in items {
                jsonc(item, out);
                out.push_str(", /* next */ ");
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("{ /* members */\n");
            for (key, item) in map {
                out.push_str(&serde_json::to_string(key).unwrap());
                out.push_str(" /* key */ : ");
                jsonc(item, out);
                out.push_str(", // after\n");
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

proptest! {
    #[test]
    fn comments_and_trailing_commas_do_not_change_a_files_meaning(value in json_value()) {
        let mut text = String::from("// mcp.json\n");
        jsonc(&value, &mut text);
        text.push_str("\n/* end */\n");
        prop_assert_eq!(parse_jsonc(&text).unwrap(), value);
    }

    /// Each server name in any layer gives exactly one result, which names it; the result comes
    /// from the highest layer that defines the name (both layers are the person's own here).
    #[test]
    fn every_server_entry_yields_one_result_from_the_highest_source(
        editor in prop::collection::btree_map("[a-e]", json_value(), 0..4),
        file in prop::collection::btree_map("[a-e]", json_value(), 0..4),
    ) {
        let layers = [
            Layer::new(Source::EditorSettings, json!({"servers": editor})),
            Layer::new(Source::File("/u/mcp.json".into()), json!({"mcpServers": file})),
        ];
        let cx = Context { editor_scopes: config::EditorScopes::Own, ..Context::default() };
        let (resolved, _) = config::resolve(&layers, &cx);
        let mut names: Vec<String> = editor.keys().chain(file.keys()).cloned().collect();
        names.sort();
        names.dedup();
        let mut got: Vec<(String, Source)> = resolved
            .servers
            .iter()
            .map(|r| match r {
                Ok(spec) => (spec.name.clone(), spec.source.clone()),
                Err(e) => (e.server.clone().expect("an error names its server"), e.origin.clone()),
            })
            .collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        let want: Vec<(String, Source)> = names
            .into_iter()
            .map(|n| {
                let source = if editor.contains_key(&n) { Source::EditorSettings } else { Source::File("/u/mcp.json".into()) };
                (n, source)
            })
            .collect();
        prop_assert_eq!(got, want);
    }
}

// ---------------------------------------------------------------- variables

/// A name no environment has.
const UNSET: &str = "MCP_SIDECAR_PROPTEST_SURELY_UNSET_1F3A";

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Folder,
    Basename,
    Input(String),
    Default(String),
}

fn part_strategy() -> impl Strategy<Value = Part> {
    prop_oneof![
        // Any text but `$`, so it never starts a variable.
        "[^$]{0,12}".prop_map(Part::Text),
        Just(Part::Folder),
        Just(Part::Basename),
        prop::sample::select(vec!["key", "token", "a.b"]).prop_map(|s| Part::Input(s.to_string())),
        "[^}]{0,8}".prop_map(Part::Default),
    ]
}

fn var_context() -> VarContext {
    VarContext {
        workspace_folder: Some(PathBuf::from("/work space/proj ✓")),
        inputs: HashMap::from([
            ("key".to_string(), "s3cret".to_string()),
            ("token".to_string(), "${workspaceFolder}".to_string()),
            ("a.b".to_string(), String::new()),
        ]),
        keep_missing_inputs: false,
    }
}

proptest! {
    #[test]
    fn a_template_expands_to_its_parts_values(parts in prop::collection::vec(part_strategy(), 0..8)) {
        let cx = var_context();
        let mut template = String::new();
        let mut want = String::new();
        let mut ids = Vec::new();
        for part in &parts {
            match part {
                Part::Text(t) => {
                    template.push_str(t);
                    want.push_str(t);
                }
                Part::Folder => {
                    template.push_str("${workspaceFolder}");
                    want.push_str("/work space/proj ✓");
                }
                Part::Basename => {
                    template.push_str("${workspaceFolderBasename}");
                    want.push_str("proj ✓");
                }
                Part::Input(id) => {
                    template.push_str(&format!("${{input:{id}}}"));
                    // Values are not expanded again: an answer that looks like a variable stays.
                    want.push_str(&cx.inputs[id]);
                    ids.push(id.clone());
                }
                Part::Default(d) => {
                    template.push_str(&format!("${{{UNSET}:-{d}}}"));
                    want.push_str(d);
                }
            }
        }
        prop_assert_eq!(expand(&template, &cx), Ok(want));
        prop_assert_eq!(input_ids(&template), ids);
    }

    /// Through a whole server definition: every string of `args` and `env` is expanded, and the
    /// rest of the definition is kept as written.
    #[test]
    fn server_definitions_expand_args_and_env(
        args in prop::collection::vec("[a-z]{0,4}", 0..4),
        env in prop::collection::btree_map("[A-Z]{1,4}", "[a-z]{0,4}", 0..3),
    ) {
        let with_var = |s: &String| format!("{s}${{workspaceFolderBasename}}");
        let raw = config::RawServer {
            name: "s".into(),
            source: Source::EditorSettings,
            value: json!({
                "command": "tool",
                "args": args.iter().map(with_var).collect::<Vec<_>>(),
                "env": env.iter().map(|(k, v)| (k.clone(), with_var(v))).collect::<BTreeMap<_, _>>(),
            }),
            scope: config::Scope::User,
            folder: Some(PathBuf::from("/w/proj")),
        };
        let spec = config::ServerSpec::parse(&raw, &Context::default()).unwrap();
        let config::TransportSpec::Stdio { command, args: got_args, env: got_env, .. } = spec.transport else {
            panic!("not stdio")
        };
        prop_assert_eq!(command, "tool");
        prop_assert_eq!(got_args, args.iter().map(|a| format!("{a}proj")).collect::<Vec<_>>());
        prop_assert_eq!(got_env, env.iter().map(|(k, v)| (k.clone(), format!("{v}proj"))).collect::<BTreeMap<_, _>>());
    }
}
