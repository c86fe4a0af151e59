//! Holds the code to the layering of `docs/architecture.md`: a module names only modules of a
//! lower layer (or its own), rmcp types stay in `mcp`, `demo` and `gateway` (its server side),
//! tower-lsp-server's in `lsp`.
//! Read from the source text (`crate::name` paths outside comments), so it needs no build.

use std::path::{Path, PathBuf};

/// Bottom to top; every module of `src/` is in exactly one group. The groups follow the layers of
/// `docs/architecture.md` (1: contract and ground, 2: config and roots, 3: the features, 4: mcp,
/// 5: the faces, 6: the programs); within a layer they are ordered too, so there is no circle.
const LAYERS: &[&[&str]] = &[
    // 1
    &["contract", "paths", "logging", "guard", "net"],
    &["store"],
    // 2
    &["config"],
    &["roots"],
    // 3
    &["ui"],
    &["testing"],
    &["elicitation"],
    &["sampling"],
    &["auth"],
    // 4
    &["mcp"],
    // 5: the gateway (agents' face) is started by the editor's face, so it comes first
    &["gateway"],
    &["lsp"],
    // 6
    &["conformance", "demo", "doctor"],
    &["cli"],
    &["main", "lib"],
];

/// External crates only some modules may name.
const CONFINED: &[(&str, &[&str])] = &[
    ("rmcp", &["mcp", "demo", "gateway"]),
    ("tower_lsp_server", &["lsp", "main"]),
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file belongs to: its first component under `src/`.
fn module_of(src: &Path, file: &Path) -> String {
    let first = file.strip_prefix(src).unwrap().components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.strip_suffix(".rs").unwrap_or(&name).to_string()
}

/// The code of a file without its comments (line comments and doc comments; enough for this
/// code base, which has no block comments) and without the text of its string literals (a
/// log filter naming `rmcp::...` as a target imports nothing).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                String::new()
            } else {
                without_strings(line.split(" // ").next().unwrap_or_default())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line with the insides of its `"..."` literals left out (escapes honoured).
fn without_strings(line: &str) -> String {
    let mut out = String::new();
    let (mut inside, mut escaped) = (false, false);
    for c in line.chars() {
        match (inside, escaped, c) {
            (true, false, '\\') => escaped = true,
            (true, true, _) => escaped = false,
            (_, false, '"') => {
                inside = !inside;
                out.push(c);
            }
            (false, _, _) => out.push(c),
            _ => {}
        }
    }
    out
}

/// Every `name` in `crate::name` (and, from `main.rs`, `mcp_sidecar::name`).
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for prefix in ["crate::", "mcp_sidecar::"] {
        for (at, _) in code.match_indices(prefix) {
            let before = code[..at].chars().next_back();
            // `other_crate::`, or a string such as a tracing target.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let module = module_of(src, file);
        let shown = file.strip_prefix(src.parent().unwrap()).unwrap().display();
        let Some(own) = layer(&module) else {
            found.push(format!(
                "{shown}: module `{module}` is in no layer of LAYERS"
            ));
            continue;
        };
        let code = code(&std::fs::read_to_string(file).unwrap());
        for name in named_modules(&code) {
            if name == module {
                continue;
            }
            match layer(&name) {
                Some(theirs) if theirs < own => {}
                Some(_) => found.push(format!(
                    "{shown}: `{module}` names `{name}`, which is not below it"
                )),
                None => found.push(format!("{shown}: names `crate::{name}`, in no layer")),
            }
        }
        for (krate, allowed) in CONFINED {
            let names_it =
                code.contains(&format!("{krate}::")) || code.contains(&format!("use {krate}"));
            if names_it && !allowed.contains(&module.as_str()) {
                found.push(format!(
                    "{shown}: `{module}` names `{krate}` (only {allowed:?} may)"
                ));
            }
        }
    }
    found
}

#[test]
fn every_module_names_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "against the layering:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_an_import_that_runs_upward() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("config")).unwrap();
    std::fs::write(
        src.join("config/mod.rs"),
        "// crate::lsp in a comment is fine\nuse crate::paths::expand_home;\nuse crate::mcp::Manager;\n",
    )
    .unwrap();
    std::fs::write(src.join("ui.rs"), "fn f(_: rmcp::model::Tool) {}\n").unwrap();
    let found = violations(&src);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].contains("src/config/mod.rs") && found[0].contains("`mcp`"),
        "{found:#?}"
    );
    assert!(
        found[1].contains("src/ui.rs") && found[1].contains("`rmcp`"),
        "{found:#?}"
    );
}
