//! What a server sends for the Tasks and Skills extensions: a `skills/list` entry and a
//! `SKILL.md` (`skills::Skill`, `skills::frontmatter`), and a `tasks/get` answer
//! (`mcp::tasks::read_poll`). The input is one JSON value (else the whole input is the
//! `SKILL.md` text). Never a panic; a skill that reads has no file outside its folder and none
//! with a `..` segment unless it carries its `problem`; a file it refuses stays refused; a poll
//! that reads keeps only what its status allows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::contract::TaskState;
use mcp_sidecar::skills::{self, Skill};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = skills::frontmatter(text);
        }
        return;
    };
    if let Ok(skill) = Skill::read(&value) {
        let folder = skill.uri.strip_suffix("SKILL.md").unwrap_or("\u{0}");
        for file in skill.files.iter().flatten() {
            if skill.problem.is_none() {
                assert!(file.uri.starts_with(folder), "{}", file.uri);
                assert!(!file.uri.split('/').any(|s| s == ".."), "{}", file.uri);
            }
        }
        if skill.problem.is_some() {
            assert!(skill.file(&skill.uri).is_err());
        }
        let _ = skill.file("skill://x/../SKILL.md");
        if let Some(text) = value.get("body").and_then(|b| b.as_str()) {
            let entry = skill.file(&skill.uri).ok().flatten();
            let _ = skill.verify(entry, &skill.uri, text.as_bytes());
        }
    }
    if let Ok(poll) = mcp_sidecar::mcp::tasks::read_poll(&value) {
        assert_eq!(poll.result.is_some(), poll.status == TaskState::Completed);
        assert!(poll.input_requests.is_empty() || poll.status == TaskState::InputRequired);
    }
});
