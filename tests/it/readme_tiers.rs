//! Keeps the README's test table in step with `scripts/test-all.sh`: the same tiers in the same
//! order as the script's default `TIERS` and its `tier NAME BUDGET` lines, each with the script's
//! budget (in minutes), and every `.cache/` directory the test scripts install into named in the
//! README. Read from the files' text, so it needs no build of anything else.

use std::path::Path;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The script's default tier list: `TIERS="${TIERS:-lint peers ...}"`.
fn default_tiers(script: &str) -> Vec<String> {
    let marker = "TIERS=\"${TIERS:-";
    let start = script
        .find(marker)
        .expect("scripts/test-all.sh sets a default TIERS")
        + marker.len();
    let end = script[start..].find('}').unwrap() + start;
    script[start..end]
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The script's `has NAME && tier NAME BUDGET ...` lines: (name, budget in seconds).
fn script_tiers(script: &str) -> Vec<(String, u64)> {
    script
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("has ")?;
            let (guard, call) = rest.split_once(" && tier ")?;
            let mut words = call.split_whitespace();
            let name = words.next()?;
            assert_eq!(
                guard, name,
                "scripts/test-all.sh: `{line}` guards another tier"
            );
            let budget = words.next()?.parse().unwrap_or_else(|_| {
                panic!("scripts/test-all.sh: `{line}`: the budget is not a number of seconds")
            });
            Some((name.to_owned(), budget))
        })
        .collect()
}

/// The README's test table (the one headed `| tier | what | budget |`): (tier, budget cell).
fn readme_tiers(readme: &str) -> Vec<(String, String)> {
    let header = "| tier | what | budget |";
    let start = readme.find(header).expect("README.md has the test table") + header.len();
    readme[start..]
        .lines()
        .skip(2) // the rest of the header line, and |---|---|---|
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            assert!(
                cells.len() >= 3,
                "README.md: a test table row with too few cells: {line}"
            );
            (
                cells[0].trim().to_owned(),
                cells[cells.len() - 1].trim().to_owned(),
            )
        })
        .collect()
}

fn minutes(seconds: u64) -> String {
    assert_eq!(
        seconds % 60,
        0,
        "a tier's budget of {seconds}s is not whole minutes"
    );
    format!("{} min", seconds / 60)
}

#[test]
fn the_readme_test_table_is_the_scripts_tiers_and_budgets() {
    let script = read("scripts/test-all.sh");
    let readme = read("README.md");
    let tiers = script_tiers(&script);
    assert!(
        tiers.len() >= 5,
        "found only {tiers:?} in scripts/test-all.sh"
    );
    let names: Vec<String> = tiers.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(
        default_tiers(&script),
        names,
        "scripts/test-all.sh: the default TIERS and the `tier` lines disagree"
    );
    let want: Vec<(String, String)> = tiers
        .iter()
        .map(|(name, seconds)| (name.clone(), minutes(*seconds)))
        .collect();
    assert_eq!(
        readme_tiers(&readme),
        want,
        "README.md's test table (tier, budget) is not scripts/test-all.sh's tiers: update the table"
    );
}

/// The `.cache/NAME` directories a text names.
fn cache_dirs(text: &str) -> std::collections::BTreeSet<String> {
    text.match_indices(".cache/")
        .map(|(at, m)| {
            text[at + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn the_readme_names_every_cache_directory_the_tests_install_into() {
    let scripts = [
        "scripts/install-peers.sh",
        "scripts/install-node.sh",
        "scripts/conformance.sh",
        "editors/nvim/test/install.sh",
        "editors/nvim/test/lint.sh",
        "editors/vscode/test/install.sh",
    ];
    let used: std::collections::BTreeSet<String> = scripts
        .iter()
        .flat_map(|path| cache_dirs(&read(path)))
        .collect();
    for dir in ["peers", "node", "nvim", "lint", "vscode", "conformance"] {
        assert!(
            used.contains(dir),
            "the scripts no longer use .cache/{dir}: {used:?}"
        );
    }
    let readme = cache_dirs(&read("README.md"));
    let missing: Vec<&String> = used.difference(&readme).collect();
    assert!(
        missing.is_empty(),
        "README.md does not say that the tests install into .cache/{missing:?}"
    );
}

#[test]
fn the_parsers_read_what_they_are_given() {
    let script = "TIERS=\"${TIERS:-a b}\"\nhas a && tier a 120 a\n  has b && tier b 90 b\n";
    assert_eq!(default_tiers(script), ["a", "b"]);
    assert_eq!(
        script_tiers(script),
        [("a".to_owned(), 120), ("b".to_owned(), 90)]
    );
    let readme = "x\n| tier | what | budget |\n|---|---|---|\n| a | it \\| that | 2 min |\n| b | c | 1 min |\n\nafter\n";
    assert_eq!(
        readme_tiers(readme),
        [
            ("a".to_owned(), "2 min".to_owned()),
            ("b".to_owned(), "1 min".to_owned())
        ]
    );
    assert_eq!(
        cache_dirs("a .cache/peers/env.sh and \"$ROOT/.cache/node\" and .cache/"),
        ["node".to_owned(), "peers".to_owned()].into()
    );
}
