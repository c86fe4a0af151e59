//! `roots.discover`: nested projects (directories holding a marker such as `.git` or
//! `Cargo.toml`) below a workspace folder, found with a bounded, gitignore-aware walk.

use std::path::{Path, PathBuf};

use crate::config::DiscoverSettings;

/// Hard cap on directories visited per folder, so a huge tree cannot stall the sidecar.
const MAX_ENTRIES: usize = 20_000;

pub fn nested_projects(folder: &Path, settings: &DiscoverSettings) -> Vec<PathBuf> {
    if settings.markers.is_empty() || settings.max_depth == 0 {
        return Vec::new();
    }
    let walker = ignore::WalkBuilder::new(folder)
        .max_depth(Some(settings.max_depth))
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut found = Vec::new();
    for entry in walker.filter_map(Result::ok).take(MAX_ENTRIES) {
        let path = entry.path();
        if path == folder || !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        if settings.markers.iter().any(|m| path.join(m).exists()) {
            found.push(path.to_path_buf());
        }
    }
    found.sort();
    found
}
