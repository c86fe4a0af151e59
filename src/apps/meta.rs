//! What a tool's `_meta` says of its view: the `ui://` resource (`_meta.ui.resourceUri`, or the
//! deprecated `_meta["ui/resourceUri"]`) and who may call it (`_meta.ui.visibility`).

use serde_json::{Map, Value};

/// The extension's identifier, as declared to servers.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of a view's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Who may call a tool: the model (a person in the editor, an agent) and the views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    pub model: bool,
    pub app: bool,
}

impl Default for Visibility {
    fn default() -> Self {
        Self {
            model: true,
            app: true,
        }
    }
}

/// Where a call comes from, as visibility reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Surface {
    /// A person in the editor, or an agent.
    #[default]
    Model,
    /// A server's view.
    App,
}

impl Visibility {
    pub fn allows(self, surface: Surface) -> bool {
        match surface {
            Surface::Model => self.model,
            Surface::App => self.app,
        }
    }
}

/// The view's resource of a tool with this `_meta`: a `ui://` URI, the nested key first.
pub fn resource_uri(meta: Option<&Map<String, Value>>) -> Option<&str> {
    let meta = meta?;
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .and_then(Value::as_str)
        .or_else(|| meta.get("ui/resourceUri").and_then(Value::as_str))
        .filter(|uri| uri.starts_with("ui://"))
}

/// Who may call a tool with this `_meta`: both, unless `_meta.ui.visibility` is a list (then
/// those of `"model"` and `"app"` it names; other entries are ignored).
pub fn visibility(meta: Option<&Map<String, Value>>) -> Visibility {
    let Some(list) = meta
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array)
    else {
        return Visibility::default();
    };
    let has = |name: &str| list.iter().any(|v| v.as_str() == Some(name));
    Visibility {
        model: has("model"),
        app: has("app"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_resource_is_read_from_the_nested_key_then_the_flat_one() {
        let nested =
            meta(json!({"ui": {"resourceUri": "ui://a/b.html"}, "ui/resourceUri": "ui://flat"}));
        assert_eq!(resource_uri(Some(&nested)), Some("ui://a/b.html"));
        let flat = meta(json!({"ui/resourceUri": "ui://flat/x.html"}));
        assert_eq!(resource_uri(Some(&flat)), Some("ui://flat/x.html"));
        for bad in [
            json!({"ui": {"resourceUri": "https://evil.example/x.html"}}),
            json!({"ui": {"resourceUri": 7}}),
            json!({"ui": "ui://x"}),
            json!({}),
        ] {
            assert_eq!(resource_uri(Some(&meta(bad.clone()))), None, "{bad}");
        }
        assert_eq!(resource_uri(None), None);
    }

    #[test]
    fn visibility_defaults_to_both_and_reads_the_list() {
        assert_eq!(visibility(None), Visibility::default());
        assert_eq!(
            visibility(Some(&meta(json!({"ui": {"visibility": "app"}})))),
            Visibility::default()
        );
        let app_only = visibility(Some(&meta(json!({"ui": {"visibility": ["app"]}}))));
        assert!(app_only.allows(Surface::App) && !app_only.allows(Surface::Model));
        let model_only = visibility(Some(&meta(json!({"ui": {"visibility": ["model", "x"]}}))));
        assert!(!model_only.allows(Surface::App) && model_only.allows(Surface::Model));
        let none = visibility(Some(&meta(json!({"ui": {"visibility": []}}))));
        assert!(!none.allows(Surface::App) && !none.allows(Surface::Model));
    }
}
