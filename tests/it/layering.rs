//! Holds the code to its shape: the layering of `docs/architecture.md` (a module names only
//! modules of a lower layer, or its own; rmcp types stay in `mcp`, `demo` and `gateway`, its
//! server side; tower-lsp-server's in `lsp`), no import circle between the files of a folder,
//! and no source file over 800 lines outside tests.
//! Read from the source text (`source`), so it needs no build.

mod source;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use source::Module;

/// Bottom to top; every module of `src/` is in exactly one group. The groups follow the layers of
/// `docs/architecture.md` (1: contract and ground, 2: config and roots, 3: the features, 4: mcp,
/// 5: the faces, 6: the programs); within a layer they are ordered too, so there is no circle.
const LAYERS: &[&[&str]] = &[
    // 1
    &[
        "contract",
        "paths",
        "logging",
        "guard",
        "net",
        "uri_template",
    ],
    &["store"],
    // 2
    &["config"],
    &["roots"],
    // 3
    &["ui"],
    &["testing"],
    &["elicitation"],
    &["sampling"],
    &["skills"],
    &["auth"],
    &["apps"],
    // 4
    &["mcp"],
    // 5: the gateway (agents' face) is started by the editor's face, so it comes first
    &["views"],
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

/// The module a file belongs to: its first component under `src/`.
fn module_of(src: &Path, file: &Path) -> String {
    let first = file.strip_prefix(src).unwrap().components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.strip_suffix(".rs").unwrap_or(&name).to_string()
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
    let mut found = Vec::new();
    for file in &source::sources(src) {
        let module = module_of(src, file);
        let shown = file.strip_prefix(src.parent().unwrap()).unwrap().display();
        let Some(own) = layer(&module) else {
            found.push(format!(
                "{shown}: module `{module}` is in no layer of LAYERS"
            ));
            continue;
        };
        let code = source::code(&std::fs::read_to_string(file).unwrap());
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

/// Import circles between the files of one folder that are known and to be taken apart, each as
/// its files (sorted). The test fails on a circle not listed here, and on a listed one that no
/// longer exists: delete its entry then.
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// A circle of files in one folder, and what ties each file to the next.
#[derive(Debug)]
struct Circle {
    files: Vec<String>,
    ties: Vec<String>,
}

/// What the circle check reads of the code: names, `::`, and the punctuation of `use` trees.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Path,
    Open,
    Close,
    Comma,
    Star,
    Other(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let end = chars[i..]
                .iter()
                .position(|c| !(c.is_alphanumeric() || *c == '_'))
                .map_or(chars.len(), |p| i + p);
            out.push(Token::Ident(chars[i..end].iter().collect()));
            i = end;
            continue;
        }
        out.push(match c {
            ':' if chars.get(i + 1) == Some(&':') => {
                i += 1;
                Token::Path
            }
            '{' => Token::Open,
            '}' => Token::Close,
            ',' => Token::Comma,
            '*' => Token::Star,
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            c => Token::Other(c),
        });
        i += 1;
    }
    out
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token::Ident(name)) => Some(name),
        _ => None,
    }
}

/// A leaf of a `use` tree: its path, and the name it binds (none for a glob).
type Leaf = (Vec<String>, Option<String>);

/// Per module, the names its `use`s bring in and the paths (from the crate root) they name;
/// `None` for another crate's.
type Imports = HashMap<Module, HashMap<String, Option<Vec<String>>>>;

/// A `use` tree from `at`: each leaf's path (`prefix` and the tree's segments) and the name it
/// binds (none for a glob); and where the tree ends.
fn use_tree(t: &[Token], mut at: usize, prefix: &[String]) -> (Vec<Leaf>, usize) {
    let mut path = prefix.to_vec();
    loop {
        match t.get(at) {
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                at += 1;
                if t.get(at) == Some(&Token::Path) {
                    at += 1;
                    continue;
                }
                // `a::b::{self}` binds `b`.
                if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                let mut binding = path.last().cloned();
                if ident(t.get(at)) == Some("as") {
                    binding = ident(t.get(at + 1)).map(str::to_owned);
                    at += 2;
                }
                return (vec![(path, binding)], at);
            }
            Some(Token::Open) => {
                at += 1;
                let mut leaves = Vec::new();
                while at < t.len() && t[at] != Token::Close {
                    let (more, next) = use_tree(t, at, &path);
                    leaves.extend(more);
                    at = next;
                    if t.get(at) == Some(&Token::Comma) {
                        at += 1;
                    }
                }
                return (leaves, at + 1);
            }
            Some(Token::Star) => return (vec![(path, None)], at + 1),
            _ => return (Vec::new(), at + 1),
        }
    }
}

/// One path the code of a module names: in a `pub use` (which hands names on and is not a use
/// of its own) or not, the path, and the name a `use` binds.
struct Named {
    handed_on: bool,
    path: Vec<String>,
    binding: Option<String>,
}

/// The paths `code` names that start at `crate`, `super`, `self` or a child of its module
/// (`is_child`): every leaf of its `use` trees, and each path in the rest of the code.
fn named_paths(code: &str, is_child: &dyn Fn(&str) -> bool) -> Vec<Named> {
    let t = tokens(code);
    let mut found = Vec::new();
    let mut at = 0;
    while at < t.len() {
        if ident(t.get(at)) == Some("use") {
            // `pub use` or `pub(crate) use`.
            let handed_on = match at.checked_sub(1).map(|b| &t[b]) {
                Some(Token::Ident(p)) => p == "pub",
                Some(Token::Other(')')) => t[..at]
                    .iter()
                    .rposition(|t| *t == Token::Other('('))
                    .is_some_and(|open| {
                        ident(open.checked_sub(1).and_then(|b| t.get(b))) == Some("pub")
                    }),
                _ => false,
            };
            let (leaves, end) = use_tree(&t, at + 1, &[]);
            found.extend(leaves.into_iter().map(|(path, binding)| Named {
                handed_on,
                path,
                binding,
            }));
            at = end;
            continue;
        }
        let starts = ident(t.get(at))
            .is_some_and(|n| matches!(n, "crate" | "super" | "self") || is_child(n))
            && t.get(at + 1) == Some(&Token::Path)
            && !matches!(
                at.checked_sub(1).map(|b| &t[b]),
                Some(Token::Path | Token::Other('.'))
            );
        if starts {
            let mut path = Vec::new();
            while let Some(name) = ident(t.get(at)) {
                path.push(name.to_owned());
                if t.get(at + 1) != Some(&Token::Path) {
                    break;
                }
                at += 2;
            }
            found.push(Named {
                handed_on: false,
                path,
                binding: None,
            });
        }
        at += 1;
    }
    found
}

/// `path` as named in `module`, from the crate root; `None` for another crate's.
fn absolute(
    module: &Module,
    path: &[String],
    is_child: &dyn Fn(&str) -> bool,
) -> Option<Vec<String>> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some([module.as_slice(), &path[1..]].concat()),
        "super" => {
            let up = path.iter().take_while(|s| *s == "super").count();
            let base = module.get(..module.len().checked_sub(up)?)?;
            Some([base, &path[up..]].concat())
        }
        name if is_child(name) => Some([module.as_slice(), path].concat()),
        _ => None,
    }
}

/// The module whose file defines what `path` (from the crate root) names: the longest module
/// it starts with, followed through the `use` of that module that brought the next name in.
fn resolve(
    path: &[String],
    modules: &BTreeSet<Module>,
    imports: &Imports,
    depth: usize,
) -> Option<(Module, String)> {
    let mut module = Vec::new();
    while module.len() < path.len() && modules.contains(&path[..=module.len()].to_vec()) {
        module.push(path[module.len()].clone());
    }
    let Some(name) = path.get(module.len()) else {
        let name = module.last().cloned().unwrap_or_default();
        return Some((module, name));
    };
    match imports.get(&module).and_then(|i| i.get(name)) {
        Some(Some(from)) if depth < 8 => {
            let through = [from.as_slice(), &path[module.len() + 1..]].concat();
            resolve(&through, modules, imports, depth + 1)
        }
        // Brought in from another crate.
        Some(_) => None,
        None => Some((module, name.clone())),
    }
}

/// The import circles between the files of each folder under `src`. Each file of a folder is
/// one node, and so is each sub-folder (all its files). The folder's own file (`mod.rs`, or
/// `name.rs` beside `name/`) is the folder itself, its face and common words, not a node: its
/// children naming it, or it naming them, is no circle (as `farm-studio look` draws it). A file
/// imports another when its code names it: a `use` or a path through `crate::`, `super::`,
/// `self::` or a child module, followed through the `use` that brought a name into a module (so
/// `super::RootsFilter`, handed on by `mod.rs`, names `server.rs`, where it is defined). A
/// `pub use` hands names on and imports nothing itself. Test code is left out: `#[cfg(test)]`
/// items and modules declared under them. The top level is LAYERS' concern.
fn circles(src: &Path) -> Vec<Circle> {
    let files = source::crate_files(src);
    let modules: BTreeSet<Module> = files.keys().cloned().collect();
    let child_of = |module: &Module, name: &str| {
        modules.contains(&[module.as_slice(), &[name.to_owned()]].concat())
    };
    let named: BTreeMap<&Module, Vec<Named>> = files
        .iter()
        .filter(|(_, f)| !f.test_only)
        .map(|(m, f)| {
            let is_child = |name: &str| child_of(m, name);
            (m, named_paths(&source::production(&f.code), &is_child))
        })
        .collect();
    let mut imports: Imports = HashMap::new();
    for (module, names) in &named {
        let is_child = |name: &str| child_of(module, name);
        for n in names {
            if let Some(binding) = &n.binding {
                let from = absolute(module, &n.path, &is_child);
                imports
                    .entry((*module).clone())
                    .or_default()
                    .insert(binding.clone(), from);
            }
        }
    }
    // Per folder, (from, to) -> the names that tie them.
    let mut edges: BTreeMap<Module, BTreeMap<(String, String), BTreeSet<String>>> = BTreeMap::new();
    for (module, names) in &named {
        let is_child = |name: &str| child_of(module, name);
        for n in names.iter().filter(|n| !n.handed_on) {
            let Some(path) = absolute(module, &n.path, &is_child) else {
                continue;
            };
            let Some((target, name)) = resolve(&path, &modules, &imports, 0) else {
                continue;
            };
            let shared = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // Both below the folder they share: two of its nodes.
            if shared == 0 || shared == module.len() || shared == target.len() {
                continue;
            }
            edges
                .entry(module[..shared].to_vec())
                .or_default()
                .entry((module[shared].clone(), target[shared].clone()))
                .or_default()
                .insert(name);
        }
    }
    let crate_dir = src.parent().unwrap();
    let shown = |folder: &Module, node: &str| {
        let module = [folder.as_slice(), &[node.to_owned()]].concat();
        let path = files[&module].path.strip_prefix(crate_dir).unwrap();
        if path.ends_with("mod.rs") {
            format!("{}/", path.parent().unwrap().display())
        } else {
            path.display().to_string()
        }
    };
    let mut found = Vec::new();
    for (folder, ties) in &edges {
        let reaches = |from: &str, to: &str| {
            let mut seen = BTreeSet::from([from.to_owned()]);
            let mut next = vec![from.to_owned()];
            while let Some(at) = next.pop() {
                for (_, b) in ties.keys().filter(|(a, _)| *a == at) {
                    if b == to {
                        return true;
                    }
                    if seen.insert(b.clone()) {
                        next.push(b.clone());
                    }
                }
            }
            false
        };
        let nodes: BTreeSet<&String> = ties.keys().flat_map(|(a, b)| [a, b]).collect();
        let mut placed = BTreeSet::new();
        for node in &nodes {
            if placed.contains(*node) || !reaches(node, node) {
                continue;
            }
            let members: BTreeSet<&String> = nodes
                .iter()
                .filter(|other| reaches(node, other) && reaches(other, node))
                .copied()
                .collect();
            placed.extend(members.iter().map(|m| (*m).clone()));
            let mut files: Vec<String> = members.iter().map(|m| shown(folder, m)).collect();
            files.sort();
            let ties = ties
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), names)| {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    format!(
                        "{} -> {}: {}",
                        shown(folder, a),
                        shown(folder, b),
                        names.join(", ")
                    )
                })
                .collect();
            found.push(Circle { files, ties });
        }
    }
    found
}

#[test]
fn files_in_a_folder_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = circles(&src);
    let mut problems = Vec::new();
    for circle in &found {
        if !KNOWN_CIRCLES.contains(
            &circle
                .files
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
        ) {
            problems.push(format!(
                "an import circle: {}\n  {}",
                circle.files.join(", "),
                circle.ties.join("\n  ")
            ));
        }
    }
    for known in KNOWN_CIRCLES {
        if !found.iter().any(|c| c.files == *known) {
            problems.push(format!(
                "{known:?} is no longer a circle: delete it from KNOWN_CIRCLES"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_sees_a_circle_inside_a_folder_and_only_there() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod m;\npub mod other;\n");
    write("other.rs", "use crate::m::Thing;\n");
    // m's face hands names on (no import of its own) and has one function of its own.
    write(
        "m/mod.rs",
        "mod a;\nmod b;\nmod c;\nmod d;\npub use a::Thing;\npub(crate) use b::{Other, helper as help};\n\
         pub fn own() { c::f(); }\n#[cfg(test)]\nmod tests;\n",
    );
    // a -> b through the name m's face hands on; b -> a by a path; a circle.
    write("m/a.rs", "use super::Other;\npub struct Thing;\n");
    write(
        "m/b.rs",
        "pub struct Other;\npub fn helper() { let _ = super::a::Thing; }\n",
    );
    // c -> d (grouped, renamed), d -> m's own file, which names c: no circle.
    write("m/c.rs", "use super::{d::{self, Deep as _}};\n");
    write("m/d.rs", "pub struct Deep;\nfn f() { super::own(); }\n");
    // Test code naming c from d and d from c: no circle from it.
    write("m/tests.rs", "use super::c::*;\nuse super::d::*;\n");
    write(
        "m/d.rs",
        "pub struct Deep;\nfn f() { super::own(); }\n#[cfg(test)]\nmod t { use super::super::c; }\n",
    );
    // A folder inside m: its files' circle is its own; n names m's a from outside n.
    write("m/n/mod.rs", "mod x;\nmod y;\nuse crate::m::a::Thing;\n");
    write(
        "m/n/x.rs",
        "// super::y::Y in a comment\nuse super::y::Y;\npub struct X;\n",
    );
    write(
        "m/n/y.rs",
        "pub struct Y;\nconst S: &str = \"super::x::X\";\nfn f(_: crate::m::n::x::X) {}\n",
    );
    write(
        "m/mod.rs",
        &(std::fs::read_to_string(src.join("m/mod.rs")).unwrap() + "mod n;\n"),
    );
    let found = circles(&src);
    let files: Vec<&Vec<String>> = found.iter().map(|c| &c.files).collect();
    assert_eq!(
        files,
        [
            &vec!["src/m/a.rs".to_owned(), "src/m/b.rs".to_owned()],
            &vec!["src/m/n/x.rs".to_owned(), "src/m/n/y.rs".to_owned()],
        ],
        "{found:#?}"
    );
    assert_eq!(
        found[0].ties,
        [
            "src/m/a.rs -> src/m/b.rs: Other",
            "src/m/b.rs -> src/m/a.rs: Thing"
        ]
    );
}

/// The most lines a source file of `src/` may have. Test code does not count: a module declared
/// under `#[cfg(test)]` (`tests.rs`, `send_tests.rs`, `testing.rs`) not at all, and in any other
/// file the lines from a `#[cfg(test)]` to the end of its item (`mod tests { ... }`) are left
/// out. Everything else counts: code, comments, blank lines.
const MAX_LINES: usize = 800;

/// Files over [`MAX_LINES`] today, to be split. The test fails on a file over the limit not
/// listed here, and on a listed one that is within it now: delete its entry then.
const KNOWN_LONG_FILES: &[&str] = &[];

/// Each file of `src` over [`MAX_LINES`], with its counted lines.
fn long_files(src: &Path) -> Vec<(String, usize)> {
    let crate_dir = src.parent().unwrap();
    source::crate_files(src)
        .values()
        .map(|f| {
            let shown = f
                .path
                .strip_prefix(crate_dir)
                .unwrap()
                .display()
                .to_string();
            (shown, source::counted_lines(f))
        })
        .filter(|(_, lines)| *lines > MAX_LINES)
        .collect()
}

#[test]
fn no_source_file_is_over_800_lines_outside_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long = long_files(&src);
    let mut problems = Vec::new();
    for (file, lines) in &long {
        if !KNOWN_LONG_FILES.contains(&file.as_str()) {
            problems.push(format!(
                "{file}: {lines} lines (at most {MAX_LINES} outside tests)"
            ));
        }
    }
    for known in KNOWN_LONG_FILES {
        if !long.iter().any(|(file, _)| file == known) {
            problems.push(format!(
                "{known} is within {MAX_LINES} lines now (or gone): delete it from KNOWN_LONG_FILES"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_size_check_counts_lines_outside_tests() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let write = |path: &str, text: String| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let lines = |n: usize| "// a line\n".repeat(n);
    write(
        "lib.rs",
        "pub mod at_limit;\npub mod big;\npub mod m;\npub mod tested;\n".into(),
    );
    write("at_limit.rs", lines(MAX_LINES));
    write("big.rs", lines(MAX_LINES + 1));
    // Its test module's lines do not count, from the attribute to the closing brace.
    write(
        "tested.rs",
        format!(
            "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
            lines(MAX_LINES - 1),
            lines(300)
        ),
    );
    // Nor does a test module in a file of its own.
    write("m/mod.rs", "#[cfg(test)]\nmod tests;\n".into());
    write("m/tests.rs", lines(2 * MAX_LINES));
    assert_eq!(long_files(&src), [("src/big.rs".to_owned(), MAX_LINES + 1)]);
}
