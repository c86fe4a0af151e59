use super::*;
use serde_json::json;

const BODY: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";
const FORMS: &str = "Supporting content.\n";
const SKILL: &str = "skill://pdf-processing/SKILL.md";
const FORMS_URI: &str = "skill://pdf-processing/references/FORMS.md";

fn entry(body: &str) -> Value {
    json!({
        "uri": SKILL,
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": [
            {"uri": SKILL, "digest": digest(body.as_bytes()), "size": body.len()},
            {"uri": FORMS_URI, "digest": digest(FORMS.as_bytes()), "size": FORMS.len()},
        ],
    })
}

#[test]
fn a_listed_file_is_used_only_when_size_digest_and_frontmatter_match() {
    let skill = Skill::read(&entry(BODY)).unwrap();
    assert_eq!(skill.problem, None);
    let file = skill.file(SKILL).unwrap();
    skill.verify(file, SKILL, BODY.as_bytes()).unwrap();
    let forms = skill.file(FORMS_URI).unwrap();
    skill.verify(forms, FORMS_URI, FORMS.as_bytes()).unwrap();
    // The conformance suite's three tampered bodies.
    let evil = BODY.replace("Skill body.", "Evil body!!");
    let err = skill.verify(file, SKILL, evil.as_bytes()).unwrap_err();
    assert!(err.contains("digest"), "{err}");
    let longer = format!("{BODY}extra bytes the entry did not account for\n");
    let err = skill.verify(file, SKILL, longer.as_bytes()).unwrap_err();
    assert!(err.contains("bytes"), "{err}");
    let other = BODY.replace(
        "description: Extract, fill, and assemble PDF documents",
        "description: Exfiltrate credentials",
    );
    let lying = Skill::read(&entry(&other)).unwrap();
    let err = lying
        .verify(lying.file(SKILL).unwrap(), SKILL, other.as_bytes())
        .unwrap_err();
    assert!(err.contains("description"), "{err}");
}

#[test]
fn an_unlisted_file_is_refused_without_asking() {
    let skill = Skill::read(&entry(BODY)).unwrap();
    let err = skill
        .file("skill://pdf-processing/scripts/extract.py")
        .unwrap_err();
    assert!(err.contains("does not list"), "{err}");
}

#[test]
fn manifests_that_break_the_rules_keep_their_problem() {
    let mut dotdot = entry(BODY);
    dotdot["resources"][1]["uri"] = json!("skill://pdf-processing/../good/SKILL.md");
    let mut no_skill_md = entry(BODY);
    no_skill_md["resources"].as_array_mut().unwrap().remove(0);
    let mut renamed = entry(BODY);
    renamed["frontmatter"]["name"] = json!("other");
    let mut huge = entry(BODY);
    huge["resources"] = json!((0..100_000)
        .map(|i| json!({"uri": format!("skill://pdf-processing/f{i}"), "digest": digest(b""), "size": 0}))
        .collect::<Vec<_>>());
    let mut big = entry(BODY);
    big["resources"][1]["size"] = json!(MAX_BYTES);
    let mut bad_digest = entry(BODY);
    bad_digest["resources"][0]["digest"] = json!("md5:abc");
    for (what, e) in [
        ("outside", dotdot),
        ("does not list its SKILL.md", no_skill_md),
        ("folder", renamed),
        ("100000 files", huge),
        ("bytes", big),
        ("sha256", bad_digest),
    ] {
        let skill = Skill::read(&e).unwrap();
        let problem = skill.problem.clone().unwrap_or_default();
        assert!(problem.contains(what), "{what}: {problem}");
        assert!(skill.file(SKILL).is_err(), "{what}");
    }
    assert!(Skill::read(&json!({"uri": SKILL})).is_err());
}

#[test]
fn a_dynamic_skill_reads_only_inside_its_folder_unverified() {
    let skill = Skill::read(
        &json!({"uri": SKILL, "frontmatter": {"name": "pdf-processing"}, "resources": "dynamic"}),
    )
    .unwrap();
    assert_eq!(skill.problem, None);
    assert_eq!(skill.file(FORMS_URI).unwrap(), None);
    assert!(skill.file("skill://other/SKILL.md").is_err());
    assert!(skill.file("skill://pdf-processing/%2e%2e/x").is_err());
}

#[test]
fn the_frontmatter_is_read_as_yaml_reads_it() {
    let text = "---\nname: 'it''s'\ndescription: \"a \\\"q\\\"\" # not a comment inside\nversion: 3\nplain: a # comment\nblock: |\n  line one\n  line two\nfolded: >-\n  a\n  b\nmetadata:\n  owner: x\ntags: [a, b]\n---\nbody";
    let fields = frontmatter(text).unwrap();
    assert_eq!(fields["name"], "it's");
    assert_eq!(fields["version"], 3);
    assert_eq!(fields["plain"], "a");
    assert_eq!(fields["block"], "line one\nline two\n");
    assert_eq!(fields["folded"], "a b");
    assert_eq!(fields["metadata"], Value::Null);
    assert_eq!(fields["tags"], Value::Null);
    assert!(frontmatter("no frontmatter").is_err());
    assert!(frontmatter("---\nname: a\n").is_err());
    assert!(frontmatter("---\nname: a\nname: b\n---\n").is_err());
    // Nested fields compare by presence; scalars by value.
    let listed = json!({"name": "it's", "metadata": {"owner": "x"}});
    let found = json!({"name": "it's", "metadata": null});
    compare(listed.as_object().unwrap(), found.as_object().unwrap()).unwrap();
    let extra = json!({"name": "it's", "metadata": null, "allowed-tools": "Bash"});
    assert!(compare(listed.as_object().unwrap(), extra.as_object().unwrap()).is_err());
}

#[test]
fn same_names_are_shown_on_both_rows() {
    let a = Skill::read(&json!({"uri": "skill://a/dup/SKILL.md", "frontmatter": {"name": "dup"}, "resources": "dynamic"})).unwrap();
    let b = Skill::read(&json!({"uri": "skill://b/dup/SKILL.md", "frontmatter": {"name": "dup"}, "resources": "dynamic"})).unwrap();
    let mut rows = vec![a.summary("s1"), b.summary("s2")];
    mark_clashes(&mut rows);
    assert_eq!(
        rows[0].same_name,
        vec![SkillRef {
            server: "s2".into(),
            uri: "skill://b/dup/SKILL.md".into()
        }]
    );
    assert_eq!(rows[1].same_name[0].server, "s1");
}

proptest::proptest! {
    #[test]
    fn the_frontmatter_reader_never_panics(text in "\\PC{0,300}") {
        let _ = frontmatter(&format!("---\n{text}\n---\n"));
        let _ = frontmatter(&text);
    }
}
