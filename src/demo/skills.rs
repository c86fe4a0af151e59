//! The demo's skills (the Skills extension, `io.modelcontextprotocol/skills`): the folder
//! `fixtures/skills-demo/` built into the binary, served by `skills/list`, `skills/get` and
//! `resources/read`.
//!
//! Each file is `skill://<skill>/<path>`; a skill's entry lists its files with the `sha256:`
//! digest and size of their bytes, computed once at start. The frontmatter comes from the
//! `SKILL.md` itself, so the listing cannot drift from the file a client reads.

use rmcp::{
    ErrorData,
    model::{ResourceContents, Skill, SkillFrontmatter, SkillResource, SkillResources},
};

/// One embedded file: its path under `fixtures/skills-demo/` and its bytes.
struct File {
    path: &'static str,
    text: &'static str,
}

/// Every file, grouped by skill (the first segment of the path), `SKILL.md` first.
const FILES: &[File] = &[
    File {
        path: "flight-report/SKILL.md",
        text: include_str!("../../fixtures/skills-demo/flight-report/SKILL.md"),
    },
    File {
        path: "flight-report/templates/report.md",
        text: include_str!("../../fixtures/skills-demo/flight-report/templates/report.md"),
    },
    File {
        path: "trip-checklist/SKILL.md",
        text: include_str!("../../fixtures/skills-demo/trip-checklist/SKILL.md"),
    },
];

const SCHEME: &str = "skill://";
const MIME_TYPE: &str = "text/markdown";

/// The skills and their files, built once per server.
pub(super) struct Catalog {
    skills: Vec<Skill>,
}

impl Catalog {
    pub(super) fn new() -> Self {
        let mut skills: Vec<Skill> = Vec::new();
        for file in FILES {
            let uri = format!("{SCHEME}{}", file.path);
            let entry = SkillResource::from_bytes(&uri, file.text.as_bytes());
            match skills.last_mut() {
                Some(skill) if uri.starts_with(skill_root(&skill.uri)) => {
                    let SkillResources::Files(files) = &mut skill.resources else {
                        unreachable!("the demo's skills list their files")
                    };
                    files.push(entry);
                }
                _ => {
                    let frontmatter = frontmatter(file.text)
                        .unwrap_or_else(|| panic!("{}: no name and description", file.path));
                    let skill = Skill::new(uri, frontmatter, SkillResources::Files(vec![entry]));
                    skills.push(skill);
                }
            }
        }
        Self { skills }
    }

    /// `skills/list`: every skill.
    pub(super) fn list(&self) -> Vec<Skill> {
        self.skills.clone()
    }

    /// `skills/get`: the skill whose `SKILL.md` is at `uri`.
    pub(super) fn get(&self, uri: &str) -> Result<Skill, ErrorData> {
        (self.skills.iter().find(|skill| skill.uri == uri).cloned())
            .ok_or_else(|| unknown(&format!("no skill at {uri:?}")))
    }

    /// Whether `resources/read` of `uri` is this catalog's to answer.
    pub(super) fn owns(uri: &str) -> bool {
        uri.starts_with(SCHEME)
    }

    /// `resources/read` of one skill file.
    pub(super) fn read(&self, uri: &str) -> Result<ResourceContents, ErrorData> {
        let file = FILES
            .iter()
            .find(|file| uri.strip_prefix(SCHEME) == Some(file.path))
            .ok_or_else(|| unknown(&format!("no skill file {uri:?}")))?;
        Ok(ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(MIME_TYPE.into()),
            text: file.text.to_owned(),
            meta: None,
        })
    }
}

/// The folder of a skill's `SKILL.md` URI, with its trailing slash.
fn skill_root(skill_uri: &str) -> &str {
    skill_uri.strip_suffix("SKILL.md").unwrap_or(skill_uri)
}

/// An unknown skill or file is a bad argument (-32602), in both eras.
fn unknown(message: &str) -> ErrorData {
    ErrorData::invalid_params(message.to_owned(), None)
}

/// `name` and `description` from the `---` block that opens a `SKILL.md` (the demo's files hold
/// one `key: value` a line, nothing YAML needs more for).
fn frontmatter(text: &str) -> Option<SkillFrontmatter> {
    let block = text.strip_prefix("---\n")?.split("\n---\n").next()?;
    let field = |key: &str| {
        block.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim() == key).then(|| value.trim().to_owned())
        })
    };
    Some(SkillFrontmatter::new(field("name")?, field("description")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_skills_are_valid_and_named_after_their_folders() {
        let catalog = Catalog::new();
        let names: Vec<&str> = catalog.skills.iter().map(Skill::name).collect();
        assert_eq!(names, ["flight-report", "trip-checklist"]);
        rmcp::model::validate_skills(&catalog.skills).unwrap();
        for skill in &catalog.skills {
            let folder = rmcp::model::skill_name_from_uri(&skill.uri);
            assert_eq!(folder, Some(skill.name()));
            assert!(!skill.frontmatter.description.is_empty());
        }
        let SkillResources::Files(files) = &catalog.skills[0].resources else {
            panic!("files")
        };
        let uris: Vec<&str> = files.iter().map(|file| file.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://flight-report/SKILL.md",
                "skill://flight-report/templates/report.md"
            ]
        );
    }

    #[test]
    fn frontmatter_needs_the_opening_block_with_both_fields() {
        let good = "---\nname: a-b\ndescription: Does: things\n---\n\n# A\n";
        let parsed = frontmatter(good).unwrap();
        assert_eq!(
            (parsed.name.as_str(), parsed.description.as_str()),
            ("a-b", "Does: things")
        );
        assert!(frontmatter("# no block\nname: x\ndescription: y\n").is_none());
        assert!(frontmatter("---\nname: x\n---\n").is_none());
    }
}
