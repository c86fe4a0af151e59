//! Rust source as the layering checks read it, from the text alone (no build): the code without
//! comments and literals, which of it is test code, and the module each file of `src/` is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
pub fn sources(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// The code of a file without its comments and with the insides of its string and character
/// literals left out (a log target naming `rmcp::...` imports nothing; a `'{'` opens nothing).
/// Line breaks stay where they were, so a line of the result is that line of the file.
pub fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Line breaks inside what is left out are kept.
    let skip = |from: usize, to: usize, out: &mut String| {
        out.extend(chars[from..to].iter().filter(|c| **c == '\n'));
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ident = |at: usize| chars[at].is_alphanumeric() || chars[at] == '_';
        // `r"..."` and `br"..."` are raw strings; `for"` is not.
        let raw_may_start =
            i == 0 || !ident(i - 1) || (chars[i - 1] == 'b' && (i < 2 || !ident(i - 2)));
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(chars.len(), |p| i + p);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < chars.len() && depth > 0 {
                match (chars[j], chars.get(j + 1)) {
                    ('/', Some('*')) => (depth, j) = (depth + 1, j + 2),
                    ('*', Some('/')) => (depth, j) = (depth - 1, j + 2),
                    _ => j += 1,
                }
            }
            skip(i, j, &mut out);
            i = j;
        } else if c == 'r' && raw_may_start && matches!(next, Some('"' | '#')) && {
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            chars.get(i + 1 + hashes) == Some(&'"')
        } {
            // A raw string: r"...", r#"..."#, and so on.
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            let body = i + 2 + hashes;
            let mut j = body;
            while j < chars.len()
                && !(chars[j] == '"'
                    && chars[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|c| **c == '#')
                        .count()
                        == hashes)
            {
                j += 1;
            }
            out.push_str("\"\"");
            skip(body, j, &mut out);
            i = (j + 1 + hashes).min(chars.len());
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            skip(i + 1, j.min(chars.len()), &mut out);
            i = j + 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{1F600}'.
            let mut j = i + 3;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            out.push_str("' '");
            i = j + 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else {
            // Anything else, a lifetime's quote included.
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where the `#[cfg(test)]` items of `code` (from [`code`]) are, as byte ranges from the
/// attribute to the item's end (its `;`, or the `}` closing its body).
pub fn test_items(code: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = code.as_bytes();
    let mut items = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let start = from + found;
        let mut i = start;
        let (mut depth, mut opened) = (0usize, false);
        while i < bytes.len() {
            match bytes[i] {
                b'{' => (depth, opened) = (depth + 1, true),
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && opened {
                        break;
                    }
                }
                b';' if !opened => break,
                _ => {}
            }
            i += 1;
        }
        let end = (i + 1).min(bytes.len());
        items.push(start..end);
        from = end;
    }
    items
}

/// `code` without its test items (their line breaks kept).
pub fn production(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut at = 0;
    for item in test_items(code) {
        out.push_str(&code[at..item.start]);
        out.extend(code[item.clone()].chars().filter(|c| *c == '\n'));
        at = item.end;
    }
    out.push_str(&code[at..]);
    out
}

/// A module of the crate, as its path from the crate root (`["mcp", "http", "auth"]`).
pub type Module = Vec<String>;

/// A file of `src/` and what the checks know of it.
pub struct File {
    pub path: PathBuf,
    pub module: Module,
    /// Its code ([`code`]), test items included.
    pub code: String,
    /// Compiled only for tests: a module declared under `#[cfg(test)]` (`mod tests;`), or a
    /// file inside one.
    pub test_only: bool,
}

/// The files of `src/` by module: `lib.rs` is the crate root, a module is `name.rs` or
/// `name/mod.rs` and `name/` holds its children; `main.rs` (the binary, another crate) is read
/// as a module `main`.
pub fn crate_files(src: &Path) -> BTreeMap<Module, File> {
    let mut files = BTreeMap::new();
    for path in sources(src) {
        let relative = path.strip_prefix(src).unwrap();
        let mut module: Module = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|m| m == "mod") || module == ["lib"] {
            module.pop();
        }
        let code = code(&std::fs::read_to_string(&path).unwrap());
        files.insert(
            module.clone(),
            File {
                path,
                module,
                code,
                test_only: false,
            },
        );
    }
    // A module declared in a test item of its parent is test code, and so is all under it.
    let mut test_modules: Vec<Module> = Vec::new();
    for file in files.values() {
        for item in test_items(&file.code) {
            for declared in declared_modules(&file.code[item]) {
                let mut module = file.module.clone();
                module.push(declared);
                test_modules.push(module);
            }
        }
    }
    for file in files.values_mut() {
        file.test_only = test_modules.iter().any(|t| file.module.starts_with(t));
    }
    files
}

/// The names of the `mod name;` declarations in `code`.
fn declared_modules(code: &str) -> Vec<String> {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ';'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|w| w[0] == "mod")
        .filter_map(|w| w[1].strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn code_leaves_out_comments_and_literals_and_keeps_lines() {
    let text = "let a = \"{ // not a comment\"; // a comment\n\
                /* block /* nested */ still\n comment */ let b = '{';\n\
                let c = r#\"raw \" } \"#; let d: &'static str = \"\\\"\";\n\
                fn f<'a>(x: &'a u8) -> char { '\\'' }\n";
    let code = code(text);
    assert_eq!(
        code,
        "let a = \"\"; \n\n let b = ' ';\n\
         let c = \"\"; let d: &'static str = \"\";\n\
         fn f<'a>(x: &'a u8) -> char { ' ' }\n"
    );
}

#[test]
fn test_items_run_from_the_attribute_to_the_items_end() {
    let code = code(
        "fn a() {}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[allow(x)]\nfn b() { if x { '}' } }\n\
         fn c() {}\n#[cfg(test)]\nmod more {\n    use super::*;\n}\n",
    );
    let production = production(&code);
    assert_eq!(production, "fn a() {}\n\n\n\n\n\nfn c() {}\n\n\n\n\n");
    assert_eq!(declared_modules(&code), ["tests"]);
}

/// The lines of `file` that count toward its size: all, but for its test code (none of a
/// [`File::test_only`] file; in another, the lines from each `#[cfg(test)]` to its item's end).
pub fn counted_lines(file: &File) -> usize {
    if file.test_only {
        return 0;
    }
    let line_of = |at: usize| file.code[..at].matches('\n').count();
    let mut test_lines = std::collections::BTreeSet::new();
    for item in test_items(&file.code) {
        test_lines.extend(line_of(item.start)..=line_of(item.end - 1));
    }
    file.code.lines().count() - test_lines.len()
}
