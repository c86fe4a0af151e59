//! Workspace folders → MCP roots: one `file://` root per folder, minus `roots.exclude`, plus
//! `roots.extra` and (optionally) nested projects found by `roots.discover`, narrowed per server.

mod discover;

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSetBuilder};
use url::Url;

use crate::config::RootsFilter;
pub use crate::config::RootsSettings;
use crate::paths::expand_home;

/// One root as MCP spells it: a `file://` URI and a display name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Root {
    pub uri: String,
    pub name: String,
}

impl Root {
    fn from_path(path: &Path, name: Option<String>) -> Option<Root> {
        let uri = Url::from_directory_path(path).ok()?;
        let name = name.unwrap_or_else(|| base_name(path));
        // `file:///some/dir/` → `file:///some/dir`, but the file system root stays `file:///`.
        let uri = match uri.as_str().strip_suffix('/') {
            Some(rest) if uri.path() != "/" => rest.to_string(),
            _ => uri.to_string(),
        };
        Some(Root { uri, name })
    }

    pub fn path(&self) -> Option<PathBuf> {
        Url::parse(&self.uri).ok()?.to_file_path().ok()
    }
}

/// A workspace folder as the editor sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    pub uri: Url,
    pub name: String,
}

fn base_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Computes the full root set from the editor's folders and the settings. Non-`file` folders
/// are dropped with a warning. The order is the folders' order, then discovered projects, then
/// extras; duplicates are removed.
pub fn compute(folders: &[Folder], settings: &RootsSettings) -> Vec<Root> {
    let mut roots: Vec<Root> = Vec::new();
    let mut folder_paths = Vec::new();
    for folder in folders {
        if folder.uri.scheme() != "file" {
            tracing::warn!(uri = %folder.uri, "workspace folder is not a file:// URI; not shared as a root");
            continue;
        }
        let Ok(path) = folder.uri.to_file_path() else {
            tracing::warn!(uri = %folder.uri, "workspace folder URI has no local path; not shared as a root");
            continue;
        };
        if let Some(root) = Root::from_path(&path, Some(folder.name.clone())) {
            roots.push(root);
            folder_paths.push((path, folder.name.clone()));
        }
    }
    if let Some(discover) = &settings.discover {
        for (path, name) in &folder_paths {
            for nested in discover::nested_projects(path, discover) {
                let rel = nested
                    .strip_prefix(path)
                    .unwrap_or(&nested)
                    .display()
                    .to_string();
                roots.extend(Root::from_path(&nested, Some(format!("{name}/{rel}"))));
            }
        }
    }
    for extra in &settings.extra {
        roots.extend(Root::from_path(&expand_home(extra), None));
    }
    let excluded = Excludes::new(&settings.exclude);
    let mut seen = std::collections::HashSet::new();
    roots.retain(|r| seen.insert(r.uri.clone()) && !r.path().is_some_and(|p| excluded.matches(&p)));
    roots
}

/// Narrows the full set for one server.
pub fn for_server(roots: &[Root], filter: &RootsFilter) -> Vec<Root> {
    match filter {
        RootsFilter::All => roots.to_vec(),
        RootsFilter::None => Vec::new(),
        RootsFilter::Only(allowed) => roots
            .iter()
            .filter(|r| {
                r.path()
                    .is_some_and(|p| allowed.iter().any(|a| p.starts_with(a)))
            })
            .cloned()
            .collect(),
    }
}

/// `roots.exclude`: plain paths match themselves; patterns with glob characters match paths.
struct Excludes {
    paths: Vec<PathBuf>,
    globs: globset::GlobSet,
}

impl Excludes {
    fn new(patterns: &[String]) -> Self {
        let mut paths = Vec::new();
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            if pattern.contains(['*', '?', '[', '{']) {
                match Glob::new(&expand_home(pattern).to_string_lossy()) {
                    Ok(glob) => {
                        builder.add(glob);
                    }
                    Err(e) => tracing::warn!(pattern, "ignoring bad roots.exclude glob: {e}"),
                }
            } else {
                let trimmed = pattern.trim_end_matches('/');
                paths.push(expand_home(if trimmed.is_empty() { "/" } else { trimmed }));
            }
        }
        let globs = builder
            .build()
            .unwrap_or_else(|_| globset::GlobSet::empty());
        Self { paths, globs }
    }

    fn matches(&self, path: &Path) -> bool {
        self.paths.iter().any(|p| p == path) || self.globs.is_match(path)
    }
}

#[cfg(test)]
mod tests;
