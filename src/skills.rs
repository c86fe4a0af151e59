//! Skills (SEP-2640): a server's skill listing read and checked, and a skill's files verified
//! before anything uses them. Plain JSON in, plain results out: no rmcp, no LSP.
//!
//! A skill is named by (server, `SKILL.md` URI), never by its name. Its manifest must list its
//! `SKILL.md`, hold only URIs under the skill's folder with no `.`/`..` segments, at most
//! [`MAX_FILES`] files and [`MAX_BYTES`] bytes; its folder's name is its `frontmatter.name`. A
//! file is used only when its size, then its SHA-256 digest, match the manifest, and a
//! `SKILL.md` only when its YAML frontmatter matches the listing's field by field.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::contract::{SkillFile, SkillRef, SkillSummary, shown};

/// The largest manifest loaded (the spec's floor for hosts).
pub const MAX_FILES: usize = 512;
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// The most skills read from one server's listing.
pub const MAX_SKILLS: usize = 1000;

/// One skill as a server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub uri: String,
    pub frontmatter: Map<String, Value>,
    /// `None` for `"dynamic"`.
    pub files: Option<Vec<SkillFile>>,
    /// Why it cannot be loaded.
    pub problem: Option<String>,
    /// The entry as the server sent it (what the gateway passes on).
    pub entry: Value,
}

impl Skill {
    /// Reads one entry of `skills/list` or `skills/get`; an entry without a URI or a
    /// frontmatter object is refused, one whose manifest breaks a rule keeps its `problem`.
    pub fn read(entry: &Value) -> Result<Skill, String> {
        let uri = entry
            .get("uri")
            .and_then(Value::as_str)
            .ok_or("a skill without a uri")?
            .to_string();
        let frontmatter = entry
            .get("frontmatter")
            .and_then(Value::as_object)
            .cloned()
            .ok_or("a skill without a frontmatter object")?;
        let mut skill = Skill {
            uri,
            frontmatter,
            files: None,
            problem: None,
            entry: entry.clone(),
        };
        match entry.get("resources") {
            Some(Value::String(s)) if s == "dynamic" => {}
            Some(Value::Array(files)) if files.len() > MAX_FILES => {
                skill.problem = Some(format!(
                    "its manifest lists {} files (at most {MAX_FILES})",
                    files.len()
                ));
            }
            Some(Value::Array(files)) => match files.iter().map(file).collect() {
                Ok(files) => {
                    skill.files = Some(files);
                    skill.problem = skill.check().err();
                }
                Err(e) => skill.problem = Some(e),
            },
            _ => skill.problem = Some("its manifest is neither a list nor \"dynamic\"".into()),
        }
        if skill.problem.is_none() {
            skill.problem = skill.check_name().err();
        }
        Ok(skill)
    }

    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The folder the skill's files are in (its URI without `SKILL.md`).
    fn folder(&self) -> Option<&str> {
        self.uri.strip_suffix("SKILL.md")
    }

    fn check_name(&self) -> Result<(), String> {
        let folder = self
            .folder()
            .ok_or("its URI does not end in SKILL.md")?
            .trim_end_matches('/');
        let last = folder.rsplit('/').next().unwrap_or("");
        if self.name().is_empty() || last != self.name() {
            return Err(format!(
                "its name \"{}\" is not its folder's (\"{}\")",
                shown::line(self.name(), shown::MAX_NAME),
                shown::line(last, shown::MAX_NAME)
            ));
        }
        if has_dot_segment(&self.uri) {
            return Err("its URI has a . or .. segment".into());
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        let files = self.files.as_deref().unwrap_or_default();
        let folder = self.folder().ok_or("its URI does not end in SKILL.md")?;
        if !files.iter().any(|f| f.uri == self.uri) {
            return Err("its manifest does not list its SKILL.md".into());
        }
        let mut total = 0u64;
        for f in files {
            if !f.uri.starts_with(folder) || has_dot_segment(&f.uri) {
                return Err(format!(
                    "its manifest lists a file outside its folder: {}",
                    shown::line(&f.uri, shown::MAX_TEXT)
                ));
            }
            total = total.saturating_add(f.size);
        }
        if total > MAX_BYTES {
            return Err(format!("its files are {total} bytes (at most {MAX_BYTES})"));
        }
        Ok(())
    }

    /// The manifest's entry for `uri`: a file the manifest does not list is refused here,
    /// without asking the server.
    pub fn file(&self, uri: &str) -> Result<Option<&SkillFile>, String> {
        if let Some(problem) = &self.problem {
            return Err(format!("the skill cannot be loaded: {problem}"));
        }
        match &self.files {
            None if uri.starts_with(self.folder().unwrap_or(&self.uri))
                && !has_dot_segment(uri) =>
            {
                Ok(None)
            }
            None => Err("the file is not in the skill's folder".into()),
            Some(files) => files
                .iter()
                .find(|f| f.uri == uri)
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "the skill's manifest does not list {}; it is not read",
                        shown::line(uri, shown::MAX_TEXT)
                    )
                }),
        }
    }

    /// Checks a file's bytes: size, then digest; for the `SKILL.md`, its frontmatter too.
    pub fn verify(&self, file: Option<&SkillFile>, uri: &str, bytes: &[u8]) -> Result<(), String> {
        if let Some(file) = file {
            if bytes.len() as u64 != file.size {
                return Err(format!(
                    "it is {} bytes, the manifest says {}",
                    bytes.len(),
                    file.size
                ));
            }
            let digest = digest(bytes);
            if digest != file.digest {
                return Err(format!(
                    "its digest is {digest}, the manifest says {}",
                    shown::line(&file.digest, shown::MAX_NAME)
                ));
            }
        }
        if uri == self.uri {
            let text = std::str::from_utf8(bytes).map_err(|_| "its SKILL.md is not UTF-8")?;
            let found = frontmatter(text)?;
            compare(&self.frontmatter, &found)?;
        }
        Ok(())
    }

    /// The row `listSkills` shows.
    pub fn summary(&self, server: &str) -> SkillSummary {
        SkillSummary {
            server: server.to_string(),
            uri: self.uri.clone(),
            name: shown::line(self.name(), shown::MAX_NAME).into_owned(),
            description: self
                .frontmatter
                .get("description")
                .and_then(Value::as_str)
                .map(|d| shown::line(d, shown::MAX_TEXT).into_owned()),
            files: self.files.clone(),
            same_name: Vec::new(),
            problem: self.problem.clone(),
        }
    }
}

/// Marks the skills listed under the same name (by any server): each row names the others.
pub fn mark_clashes(rows: &mut [SkillSummary]) {
    let refs: Vec<(String, SkillRef)> = rows
        .iter()
        .map(|r| {
            let key = r.name.clone();
            (
                key,
                SkillRef {
                    server: r.server.clone(),
                    uri: r.uri.clone(),
                },
            )
        })
        .collect();
    for row in rows.iter_mut() {
        row.same_name = refs
            .iter()
            .filter(|(name, r)| *name == row.name && !(r.server == row.server && r.uri == row.uri))
            .map(|(_, r)| r.clone())
            .collect();
    }
}

/// `sha256:<64 lowercase hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

fn file(entry: &Value) -> Result<SkillFile, String> {
    let uri = entry
        .get("uri")
        .and_then(Value::as_str)
        .ok_or("a manifest entry without a uri")?;
    let digest = entry
        .get("digest")
        .and_then(Value::as_str)
        .filter(|d| {
            d.strip_prefix("sha256:").is_some_and(|hex| {
                hex.len() == 64
                    && hex
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            })
        })
        .ok_or("a manifest entry without a sha256 digest")?;
    let size = entry
        .get("size")
        .and_then(Value::as_u64)
        .ok_or("a manifest entry without a size")?;
    Ok(SkillFile {
        uri: uri.to_string(),
        digest: digest.to_string(),
        size,
    })
}

/// Whether a URI's path has a `.` or `..` segment (also percent-encoded).
fn has_dot_segment(uri: &str) -> bool {
    let path = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    path.split('/').any(|segment| {
        let s = segment.to_ascii_lowercase().replace("%2e", ".");
        s == "." || s == ".."
    })
}

/// The top-level fields of a `SKILL.md`'s YAML frontmatter (between `---` lines): plain,
/// single- or double-quoted strings, numbers, booleans and block scalars (`|`, `>`) as YAML reads
/// them. A nested field (an indented mapping or list, a flow collection) is kept as `null`, so it
/// is compared only by its presence.
pub fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().peekable();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("its SKILL.md has no frontmatter".into());
    }
    let mut fields = Map::new();
    while let Some(line) = lines.next() {
        if line.trim_end() == "---" {
            return Ok(fields);
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t', '-']) {
            // Part of the previous field's nested block.
            continue;
        }
        let (key, value) = line.split_once(':').ok_or_else(|| {
            format!(
                "its frontmatter line \"{}\" is not key: value",
                shown::line(line, shown::MAX_NAME)
            )
        })?;
        let key = key.trim().trim_matches(['"', '\'']).to_string();
        let value = value.trim();
        let value = match value.chars().next() {
            None => Value::Null,
            Some(style @ ('|' | '>')) => {
                let mut block = Vec::new();
                while let Some(next) = lines.peek() {
                    if next.trim_end() == "---"
                        || !(next.starts_with([' ', '\t']) || next.trim().is_empty())
                    {
                        break;
                    }
                    block.push(next.trim());
                    lines.next();
                }
                while block.last().is_some_and(|l| l.is_empty()) {
                    block.pop();
                }
                let joined = if style == '|' {
                    block.join("\n")
                } else {
                    block.join(" ")
                };
                let keep = if value.contains('-') { "" } else { "\n" };
                Value::String(format!("{joined}{keep}"))
            }
            Some(_) => scalar(value)?,
        };
        if fields.insert(key.clone(), value).is_some() {
            return Err(format!("its frontmatter has {key} twice"));
        }
    }
    Err("its SKILL.md's frontmatter has no closing ---".into())
}

fn scalar(value: &str) -> Result<Value, String> {
    if value.starts_with(['[', '{']) {
        // A flow collection: compared by presence.
        return Ok(Value::Null);
    }
    if let Some(rest) = value.strip_prefix('"') {
        let mut escaped = false;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
            .map(|(i, _)| i)
            .ok_or("an unclosed \" in its frontmatter")?;
        trailing(&rest[end + 1..])?;
        return serde_json::from_str(&format!("\"{}\"", &rest[..end]))
            .map_err(|_| "a string its frontmatter escapes wrongly".to_string());
    }
    if let Some(rest) = value.strip_prefix('\'') {
        let mut text = String::new();
        let mut chars = rest.chars().peekable();
        loop {
            match chars.next() {
                Some('\'') if chars.peek() == Some(&'\'') => {
                    chars.next();
                    text.push('\'');
                }
                Some('\'') => break,
                Some(c) => text.push(c),
                None => return Err("an unclosed ' in its frontmatter".into()),
            }
        }
        trailing(&chars.collect::<String>())?;
        return Ok(Value::String(text));
    }
    let plain = value.split(" #").next().unwrap_or(value).trim_end();
    Ok(match plain {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" | "~" => Value::Null,
        _ => plain
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(plain.to_string())),
    })
}

/// What may follow a quoted scalar on its line: nothing, or a comment.
fn trailing(rest: &str) -> Result<(), String> {
    let rest = rest.trim();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err("text after a quoted string in its frontmatter".into())
    }
}

/// The listing's frontmatter against the file's, field by field: every scalar field of either
/// must be the same in the other; a nested one must be present in both.
fn compare(listed: &Map<String, Value>, found: &Map<String, Value>) -> Result<(), String> {
    let keys: std::collections::BTreeSet<&String> = listed.keys().chain(found.keys()).collect();
    for key in keys {
        let (a, b) = (listed.get(key), found.get(key));
        let same = match (a, b) {
            (Some(a), Some(Value::Null)) if a.is_object() || a.is_array() => true,
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if !same {
            return Err(format!(
                "its frontmatter's {} differs from the listing's",
                shown::line(key, shown::MAX_NAME)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
