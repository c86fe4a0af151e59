//! Which server an agent's request goes to: tools and prompts by their exposed name
//! (`<server>__<name>`), resources and skills by their URI, which the agent sees unchanged. Each
//! list an agent asks for records its rows; a skill's files (its folder: the `SKILL.md` URI
//! without `SKILL.md`) go to the server that listed the skill; a URI that no list has shown yet
//! (one made from a template) goes to the one server whose template matches it.

use std::collections::HashMap;

use parking_lot::Mutex;

/// The routes every agent session shares (only the all-servers scope needs them).
#[derive(Default)]
pub struct Routes {
    /// Exposed tool name → (server, tool).
    pub tools: Mutex<HashMap<String, (String, String)>>,
    /// Exposed prompt name → (server, prompt).
    pub prompts: Mutex<HashMap<String, (String, String)>>,
    /// Resource URI → server.
    pub resources: Mutex<HashMap<String, String>>,
    /// (server, URI template) of every template listed last.
    pub templates: Mutex<Vec<(String, String)>>,
    /// (`SKILL.md` URI, server) of every skill listed last.
    pub skills: Mutex<Vec<(String, String)>>,
}

impl Routes {
    /// The server of a resource URI: the one that listed it, else the one that listed the skill
    /// it is a file of, else the one server with a template that matches it (or that is it: a
    /// completion's `ref/resource`).
    pub fn resource(&self, uri: &str) -> Option<String> {
        if let Some(server) = self.resources.lock().get(uri) {
            return Some(server.clone());
        }
        if let Some(server) = self.skill_file(uri) {
            return Some(server);
        }
        let templates = self.templates.lock();
        let mut servers: Vec<&str> = templates
            .iter()
            .filter(|(_, template)| template == uri || matches(template, uri))
            .map(|(server, _)| server.as_str())
            .collect();
        servers.dedup();
        match servers.as_slice() {
            [one] => Some(one.to_string()),
            _ => None,
        }
    }

    /// The server that listed the skill whose `SKILL.md` is at `uri`.
    pub fn skill(&self, uri: &str) -> Option<String> {
        let skills = self.skills.lock();
        let found = skills.iter().find(|(skill, _)| skill == uri);
        found.map(|(_, server)| server.clone())
    }

    /// The server of a file of a listed skill: the one that listed the skill whose folder holds
    /// `uri` (the deepest such folder).
    pub fn skill_file(&self, uri: &str) -> Option<String> {
        let skills = self.skills.lock();
        skills
            .iter()
            .filter_map(|(skill, server)| Some((skill.strip_suffix("SKILL.md")?, server)))
            .filter(|(folder, _)| folder.ends_with('/') && uri.starts_with(folder))
            .max_by_key(|(folder, _)| folder.len())
            .map(|(_, server)| server.clone())
    }
}

/// Whether `uri` can come from the RFC 6570 `template`: its literal parts, in order, with
/// anything between them for each `{expression}`.
pub fn matches(template: &str, uri: &str) -> bool {
    let mut literals = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return false;
        };
        literals.push(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    literals.push(rest);
    if literals.len() == 1 {
        return template == uri;
    }
    let Some(mut left) = uri.strip_prefix(literals[0]) else {
        return false;
    };
    let last = literals.len() - 1;
    for literal in &literals[1..last] {
        match left.find(literal) {
            Some(at) if !literal.is_empty() => left = &left[at + literal.len()..],
            Some(_) => {}
            None => return false,
        }
    }
    left.ends_with(literals[last])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_the_uris_made_from_them() {
        assert!(matches(
            "test://template/{id}/data",
            "test://template/7/data"
        ));
        assert!(!matches("test://template/{id}/data", "test://other/7/data"));
        assert!(!matches(
            "test://template/{id}/data",
            "test://template/7/info"
        ));
        assert!(matches("file:///{+path}", "file:///a/b.txt"));
        assert!(matches("db://{table}/{row}", "db://users/3"));
        assert!(!matches("db://{table}/{row}", "db:/users"));
        assert!(matches("plain://x", "plain://x"));
        assert!(!matches("broken://{x", "broken://y"));
    }

    #[test]
    fn a_uri_goes_to_the_server_that_listed_it_or_the_one_whose_template_matches() {
        let routes = Routes::default();
        routes
            .resources
            .lock()
            .insert("file:///a".into(), "files".into());
        routes.templates.lock().extend([
            ("everything".to_string(), "test://t/{id}".to_string()),
            ("one".to_string(), "both://{x}".to_string()),
            ("two".to_string(), "both://{y}".to_string()),
        ]);
        assert_eq!(routes.resource("file:///a").as_deref(), Some("files"));
        assert_eq!(routes.resource("test://t/9").as_deref(), Some("everything"));
        assert_eq!(
            routes.resource("test://t/{id}").as_deref(),
            Some("everything")
        );
        assert_eq!(routes.resource("both://z"), None, "two servers match");
        assert_eq!(routes.resource("nope://x"), None);
    }

    #[test]
    fn a_skills_files_go_to_the_server_that_listed_the_skill() {
        let routes = Routes::default();
        routes.skills.lock().extend([
            ("skill://report/SKILL.md".to_string(), "demo".to_string()),
            (
                "skill://report/deep/SKILL.md".to_string(),
                "other".to_string(),
            ),
            ("skill://odd.md".to_string(), "odd".to_string()),
        ]);
        routes
            .templates
            .lock()
            .push(("tpl".into(), "skill://{x}".into()));
        assert_eq!(
            routes.skill("skill://report/SKILL.md").as_deref(),
            Some("demo")
        );
        assert_eq!(routes.skill("skill://report/x.md"), None);
        for (uri, server) in [
            ("skill://report/SKILL.md", "demo"),
            ("skill://report/templates/a.md", "demo"),
            ("skill://report/deep/SKILL.md", "other"),
            ("skill://report/deep/b.md", "other"),
        ] {
            assert_eq!(routes.resource(uri).as_deref(), Some(server), "{uri}");
        }
        // Not a file of a listed skill: the template's.
        assert_eq!(
            routes.resource("skill://reports/a.md").as_deref(),
            Some("tpl")
        );
        assert_eq!(routes.skill_file("skill://odd.md"), None);
    }
}
