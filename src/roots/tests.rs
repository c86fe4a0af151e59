use super::*;
use crate::config::DiscoverSettings;

fn folder(path: &Path, name: &str) -> Folder {
    Folder {
        uri: Url::from_directory_path(path).unwrap(),
        name: name.into(),
    }
}

#[test]
fn one_root_per_file_folder_and_others_dropped() {
    let a = tempfile::tempdir().unwrap();
    let folders = vec![
        folder(a.path(), "alpha"),
        Folder {
            uri: Url::parse("vscode-vfs://github/x/y").unwrap(),
            name: "remote".into(),
        },
    ];
    let roots = compute(&folders, &RootsSettings::default());
    assert_eq!(roots.len(), 1);
    assert_eq!(roots[0].name, "alpha");
    assert!(roots[0].uri.starts_with("file:///"));
    assert!(!roots[0].uri.ends_with('/'));
    assert_eq!(roots[0].path().unwrap(), a.path());
}

#[test]
fn a_folder_at_the_file_system_root_is_file_slash_slash_slash() {
    let folders = vec![folder(Path::new("/"), "everything")];
    let roots = compute(&folders, &RootsSettings::default());
    assert_eq!(roots.len(), 1);
    assert_eq!(roots[0].uri, "file:///");
    assert_eq!(roots[0].path().unwrap(), Path::new("/"));
    let extra = RootsSettings {
        extra: vec!["/".into()],
        ..Default::default()
    };
    assert_eq!(compute(&[], &extra)[0].uri, "file:///");
    let excluded = RootsSettings {
        exclude: vec!["/".into()],
        ..Default::default()
    };
    assert!(compute(&folders, &excluded).is_empty());
}

#[test]
fn exclude_extra_and_per_server_filters() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let folders = vec![folder(a.path(), "a"), folder(b.path(), "b")];
    let settings = RootsSettings {
        exclude: vec![b.path().display().to_string()],
        extra: vec![extra.path().display().to_string()],
        discover: None,
    };
    let roots = compute(&folders, &settings);
    let names: Vec<_> = roots.iter().map(|r| r.path().unwrap()).collect();
    assert_eq!(
        names,
        vec![a.path().to_path_buf(), extra.path().to_path_buf()]
    );
    assert!(for_server(&roots, &RootsFilter::None).is_empty());
    let only = for_server(&roots, &RootsFilter::Only(vec![extra.path().to_path_buf()]));
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].path().unwrap(), extra.path());

    let glob = RootsSettings {
        exclude: vec![format!("{}/*", a.path().parent().unwrap().display())],
        ..Default::default()
    };
    assert!(compute(&folders, &glob).is_empty());
}

#[test]
fn discovery_finds_nested_projects_and_respects_gitignore_and_depth() {
    let root = tempfile::tempdir().unwrap();
    let p = root.path();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::write(p.join(".gitignore"), "ignored/\n").unwrap();
    std::fs::create_dir_all(p.join("crates/core")).unwrap();
    std::fs::write(p.join("crates/core/Cargo.toml"), "").unwrap();
    std::fs::create_dir_all(p.join("ignored/app")).unwrap();
    std::fs::write(p.join("ignored/app/package.json"), "{}").unwrap();
    std::fs::create_dir_all(p.join("a/b/c/d")).unwrap();
    std::fs::write(p.join("a/b/c/d/package.json"), "{}").unwrap();
    let settings = RootsSettings {
        discover: Some(DiscoverSettings::default()),
        ..Default::default()
    };
    let roots = compute(&[folder(p, "w")], &settings);
    let names: Vec<_> = roots.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["w", "w/crates/core"]);
}
