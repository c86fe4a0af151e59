//! Which server an agent's request goes to: tools and prompts by their exposed name
//! (`<server>__<name>`), resources by their URI, which the agent sees unchanged. Each list an
//! agent asks for records its rows; a URI that no list has shown yet (one made from a template)
//! goes to the one server whose template matches it.

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
}

impl Routes {
    /// The server of a resource URI: the one that listed it, else the one server with a
    /// template that matches it (or that is it: a completion's `ref/resource`).
    pub fn resource(&self, uri: &str) -> Option<String> {
        if let Some(server) = self.resources.lock().get(uri) {
            return Some(server.clone());
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
}
