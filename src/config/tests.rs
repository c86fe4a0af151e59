use serde_json::json;

use super::*;

fn editor(value: Value) -> Layer {
    Layer::new(Source::EditorSettings, value)
}

fn file(value: Value) -> Layer {
    Layer::new(Source::File("/u/mcp.json".into()), value)
}

fn resolve(layers: &[Layer]) -> (Resolved, Vec<ConfigError>) {
    super::resolve(layers, &Context::default())
}

#[test]
fn higher_source_wins_by_server_name_and_key() {
    let (resolved, errors) = resolve(&[
        editor(json!({"servers": {"a": {"command": "a-editor"}}, "maxMessageBytes": 4096})),
        file(
            json!({"mcpServers": {"a": {"command": "a-file"}, "b": {"command": "b"}},
                    "maxMessageBytes": 9999, "roots": {"exclude": ["/tmp"]}}),
        ),
    ]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(resolved.settings.max_message_bytes, 4096);
    assert_eq!(resolved.settings.roots.exclude, vec!["/tmp".to_string()]);
    let specs: Vec<_> = resolved.servers.into_iter().map(Result::unwrap).collect();
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0].source, Source::EditorSettings);
    assert!(
        matches!(&specs[0].transport, TransportSpec::Stdio { command, .. } if command == "a-editor")
    );
    assert_eq!(specs[1].source, Source::File("/u/mcp.json".into()));
}

#[test]
fn each_server_is_validated_on_its_own() {
    let (resolved, _) = resolve(&[editor(json!({"servers": {
        "ok": {"command": "x", "args": ["--port", 3], "env": {"A": "1", "B": null}},
        "none": {"args": []},
        "badurl": {"url": "not a url"},
        "ftp": {"type": "http", "url": "ftp://host/x"},
        "badtype": {"type": "pipe", "command": "x"},
        "pin": {"command": "x", "protocolVersion": "1999-01-01"},
        "roots": {"command": "x", "roots": 3},
    }}))]);
    let by_name = |n: &str| {
        resolved
            .servers
            .iter()
            .find(|r| match r {
                Ok(s) => s.name == n,
                Err(e) => e.server.as_deref() == Some(n),
            })
            .unwrap()
            .clone()
    };
    let ok = by_name("ok").unwrap();
    match ok.transport {
        TransportSpec::Stdio { args, env, .. } => {
            assert_eq!(args, vec!["--port", "3"]);
            assert_eq!(env.len(), 1);
        }
        _ => panic!(),
    }
    let msg = |n: &str| by_name(n).unwrap_err().to_string();
    assert!(
        msg("none").contains("needs either \"command\""),
        "{}",
        msg("none")
    );
    assert!(
        msg("badurl").contains("not a valid URL"),
        "{}",
        msg("badurl")
    );
    assert!(msg("ftp").contains("http or https"), "{}", msg("ftp"));
    assert!(
        msg("badtype").contains("unknown \"type\""),
        "{}",
        msg("badtype")
    );
    assert!(msg("pin").contains("protocolVersion"));
    assert!(msg("roots").contains("\"roots\""));
    assert!(msg("none").starts_with("editor settings: server \"none\""));
}

#[test]
fn server_options_parse() {
    let (resolved, _) = resolve(&[editor(json!({"servers": {
        "s": {"command": "x", "protocolVersion": "2025-06-18", "roots": ["/a", "/b"],
              "timeout": 2.5, "disabled": true, "autoApprove": ["t"]},
    }}))]);
    let s = resolved.servers[0].clone().unwrap();
    assert_eq!(s.protocol, ProtocolPin::Version("2025-06-18".into()));
    assert_eq!(s.protocol.is_modern(), Some(false));
    assert_eq!(s.roots, RootsFilter::Only(vec!["/a".into(), "/b".into()]));
    assert_eq!(s.timeout, std::time::Duration::from_millis(2500));
    assert!(s.disabled);
}

#[test]
fn absurd_timeouts_are_capped() {
    // Found while writing the fuzz targets: a finite but huge timeout used to panic.
    let (resolved, _) = resolve(&[editor(json!({"servers": {
        "a": {"command": "x", "timeout": 1e300},
        "b": {"command": "x", "timeout": 1.8e19},
    }}))]);
    for server in resolved.servers {
        assert_eq!(server.unwrap().timeout, crate::elicitation::MAX_DURATION);
    }
}

#[test]
fn bad_top_level_settings_are_reported_and_defaults_kept() {
    let (resolved, errors) = resolve(&[editor(json!({"maxMessageBytes": "big"}))]);
    assert_eq!(errors.len(), 1);
    assert_eq!(resolved.settings, Settings::default());
    let (_, errors) = resolve(&[editor(json!({"servers": []}))]);
    assert!(errors[0].message.contains("\"servers\" must be an object"));
}

#[test]
fn user_file_errors_name_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    assert!(UserFile::load(&path).unwrap().is_none());
    std::fs::write(&path, "{\n  \"servers\": {,\n}").unwrap();
    let err = UserFile::load(&path).err().unwrap();
    assert!(err.to_string().contains("line 2, column"), "{err}");
    std::fs::write(&path, r#"{"servers": {"a": {"command": "x"}}}"#).unwrap();
    assert!(UserFile::load(&path).unwrap().is_some());
}

#[test]
fn env_files_are_read_only_when_small_and_regular() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.env");
    std::fs::write(
        &good,
        "# comment\nexport A=1\nB=\"two words\"\n C = 'three' \n\nnot a pair\n",
    )
    .unwrap();
    let big = dir.path().join("big.env");
    std::fs::write(&big, "A=1\n".repeat(300_000)).unwrap();
    let fifo = dir.path().join("env.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let parse = |file: &std::path::Path| {
        let (resolved, _) = resolve(&[editor(json!({"servers": {
            "s": {"command": "x", "env": {"A": "kept"}, "envFile": file},
        }}))]);
        resolved.servers[0].clone()
    };
    let spec = parse(&good).unwrap();
    let TransportSpec::Stdio { env, .. } = spec.transport else {
        panic!()
    };
    let got: Vec<_> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, [("A", "kept"), ("B", "two words"), ("C", "three")]);
    // A FIFO nobody writes used to block reading the configuration forever.
    for (file, reason) in [
        (fifo.as_path(), "not a regular file"),
        (std::path::Path::new("/dev/zero"), "not a regular file"),
        (big.as_path(), "larger than 1024 KiB"),
        (dir.path(), "not a regular file"),
    ] {
        let e = parse(file).unwrap_err();
        assert!(
            e.message.contains("\"envFile\"") && e.message.contains(reason),
            "{e}"
        );
    }
    assert!(parse(&dir.path().join("missing")).is_err());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z:/. ~$]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("command".to_string()),
                        Just("url".to_string()),
                        Just("args".to_string()),
                        Just("env".to_string()),
                        Just("type".to_string()),
                        Just("roots".to_string()),
                        Just("timeout".to_string()),
                        Just("protocolVersion".to_string()),
                        "[a-z]{1,6}",
                    ],
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any JSON at all: a definition either validates or yields an error naming the server;
        /// never a panic.
        #[test]
        fn arbitrary_definitions_never_panic(value in json_value()) {
            let raw = RawServer { name: "s".into(), source: Source::EditorSettings, value, scope: Scope::User, folder: None };
            if let Err(e) = ServerSpec::parse(&raw, &Context::default()) {
                prop_assert_eq!(e.server.as_deref(), Some("s"));
                prop_assert!(e.message.starts_with("server \"s\": "));
            }
        }

        /// Well-formed stdio definitions keep exactly what was written.
        #[test]
        fn stdio_definitions_round_trip(
            command in "[a-z][a-z0-9_-]{0,10}",
            args in prop::collection::vec("[ -#%-~]{0,8}", 0..4),
            env in prop::collection::btree_map("[A-Z_]{1,6}", "[ -#%-~]{0,8}", 0..3),
            timeout in 1u32..600,
        ) {
            let value = json!({"command": command, "args": args, "env": env, "timeout": timeout});
            let raw = RawServer { name: "s".into(), source: Source::EditorSettings, value, scope: Scope::User, folder: None };
            let spec = ServerSpec::parse(&raw, &Context::default()).unwrap();
            prop_assert_eq!(spec.timeout, std::time::Duration::from_secs(timeout.into()));
            prop_assert_eq!(spec.transport, TransportSpec::Stdio { command, args, env, cwd: None });
        }

        /// The whole settings resolution never panics, whatever the layers hold.
        #[test]
        fn resolve_never_panics(a in json_value(), b in json_value()) {
            let _ = resolve(&[editor(a), file(b)]);
        }
    }
}
