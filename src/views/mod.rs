//! The app views' face (MCP Apps, `docs/apps.md`): opens a server's view after a call of a tool
//! that has one (the editor hosts it, or the browser does through the loopback page), answers
//! the view's messages through the manager, and closes views. The rules a view lives by are in
//! `crate::apps`; this module carries them out. Layer 5, below the gateway (which opens views
//! for agents' calls) and the editor's face.

mod host;
mod page;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::apps::{self, View, Views, csp, request, views::Opening};
use crate::config::OpenForAgents;
use crate::contract::{
    AppSummary, CloseAppParams, OpenAppParams, QuickPickItem, QuickPickParams, QuickPickResult,
    shown,
};
use crate::mcp::{Caller, Manager, Reply};
use crate::ui::{Headless, Prompter};

pub use host::Reach;

/// The open views and the page that serves them.
/// After a view of an agent's call of one tool opened, the next opens no sooner than this.
pub const AGENT_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// An agent's call whose view waits to be offered: its arguments and result.
type Waiting = Option<(Value, Value)>;

pub struct Apps {
    me: std::sync::Weak<Apps>,
    /// The tools of agents' calls being offered now (server, tool), each with a later call
    /// waiting.
    offers: parking_lot::Mutex<std::collections::HashMap<(String, String), Waiting>>,
    manager: Arc<Manager>,
    views: Views,
    page: OnceCell<Arc<page::Page>>,
}

impl Apps {
    pub fn new(manager: Arc<Manager>) -> Arc<Apps> {
        Arc::new_cyclic(|me| Apps {
            me: me.clone(),
            offers: Default::default(),
            manager,
            views: Views::default(),
            page: OnceCell::new(),
        })
    }

    fn ui(&self) -> Arc<dyn Prompter> {
        self.manager.ui().unwrap_or_else(|| Arc::new(Headless))
    }

    /// A call of `tool` on `server` about to be made, if the tool has a view: what opens the
    /// view once the result is there ([`Pending::done`]). `arguments` are read only then.
    pub async fn pending(
        self: &Arc<Self>,
        server: &str,
        tool: &str,
        arguments: impl FnOnce() -> Value,
        by: By,
    ) -> Option<Pending> {
        self.manager.tool_view(server, tool).await?;
        Some(Pending {
            apps: self.clone(),
            server: server.to_string(),
            tool: tool.to_string(),
            arguments: arguments(),
            by,
        })
    }

    /// The view's resource of `tool` on `server`, if the tool has one.
    pub async fn view_of(&self, server: &str, tool: &str) -> Option<(Value, String)> {
        let tools = self.manager.tool_definitions(server).await.ok()?;
        let tool = tools
            .into_iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))?;
        let uri = apps::meta::resource_uri(tool.get("_meta").and_then(Value::as_object))?;
        let uri = uri.to_string();
        Some((tool, uri))
    }

    /// Opens the view of a call of `tool` that came back with `result`, if the tool has one,
    /// and asks the editor to show it. Errors are logged: the call's result stands.
    pub async fn after_call(
        self: &Arc<Self>,
        server: &str,
        tool: &str,
        arguments: Value,
        result: Value,
    ) {
        let Some((definition, uri)) = self.view_of(server, tool).await else {
            return;
        };
        match self.open(server, definition, uri, arguments, result).await {
            Ok(view) => {
                self.show(&view).await;
            }
            Err(why) => tracing::warn!(server, tool, "the tool's view did not open: {why}"),
        }
    }

    /// An agent's call of a tool that has a view: opened as `apps.openForAgents` says (`ask`:
    /// the person chooses in the editor). Calls of one tool coalesce: while its question is open,
    /// and for [`AGENT_EVERY`] after a view of it opened, a new call only takes the place of the
    /// one waiting, whose view then opens with the latest call's. A failed call is not offered.
    pub async fn offer_for_agent(
        self: &Arc<Self>,
        server: &str,
        tool: &str,
        arguments: Value,
        result: Value,
    ) {
        let setting = self.manager.apps_settings().open_for_agents;
        if setting == OpenForAgents::Never || result.get("isError") == Some(&Value::Bool(true)) {
            return;
        }
        let key = (server.to_string(), tool.to_string());
        {
            let mut offers = self.offers.lock();
            if let Some(waiting) = offers.get_mut(&key) {
                *waiting = Some((arguments, result));
                return;
            }
            offers.insert(key.clone(), None);
        }
        let mut call = Some((arguments, result));
        while let Some((arguments, result)) = call.take() {
            if setting == OpenForAgents::Ask && !self.ask_for_agent(server, tool).await {
                // Declined: the calls that came meanwhile are declined with it.
                break;
            }
            let (arguments, result) = self
                .offers
                .lock()
                .get_mut(&key)
                .and_then(Option::take)
                .unwrap_or((arguments, result));
            self.after_call(server, tool, arguments, result).await;
            tokio::time::sleep(AGENT_EVERY).await;
            call = self.offers.lock().get_mut(&key).and_then(Option::take);
        }
        self.offers.lock().remove(&key);
    }

    /// Asks the person whether to open the view of an agent's call.
    async fn ask_for_agent(&self, server: &str, tool: &str) -> bool {
        let shown_tool = shown::line(tool, shown::MAX_NAME);
        let picked = self
            .ui()
            .quick_pick(QuickPickParams {
                server: Some(server.to_string()),
                title: format!("{server}: an agent called {shown_tool}, which has a view"),
                placeholder: Some("Open the view?".into()),
                items: vec![
                    QuickPickItem::new("Open the view")
                        .with_description("in the editor, or in the browser"),
                    QuickPickItem::new("Not now"),
                ],
                ..Default::default()
            })
            .await;
        picked.as_ref().and_then(QuickPickResult::first) == Some(0)
    }

    /// Reads the view's HTML and registers the view (not shown yet).
    pub async fn open(
        self: &Arc<Self>,
        server: &str,
        tool: Value,
        resource_uri: String,
        arguments: Value,
        result: Value,
    ) -> Result<Arc<View>, String> {
        let (html, ui) = self.read_html(server, &resource_uri).await?;
        let policy = csp::build(ui.as_ref());
        if !policy.dropped.is_empty() {
            tracing::warn!(
                server,
                "the view's CSP declares entries that are not plain origins; dropped: {}",
                shown::line(&policy.dropped.join(", "), shown::MAX_TEXT)
            );
        }
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let label = tool.get("title").and_then(Value::as_str).unwrap_or(name);
        let title = shown::line(&format!("{server}: {label}"), shown::MAX_LINE).into_owned();
        let token = crate::net::secret().map_err(|e| format!("no random token: {e}"))?;
        let opening = Opening {
            server: server.to_string(),
            tool,
            title,
            resource_uri,
            csp: policy.header,
            arguments,
            result,
            html: Some(html),
        };
        let (view, pushed) = self.views.open(opening, token);
        if let Some(old) = pushed {
            self.closed(&old, "more than 16 views were open");
        }
        let apps = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(apps::views::HANDSHAKE).await;
            if let Some(apps) = apps.upgrade() {
                for view in apps.views.expire(std::time::Instant::now()) {
                    apps.closed(&view, "the view did not finish its handshake within 60 s");
                }
            }
        });
        Ok(view)
    }

    /// The app's HTML and the `_meta.ui` of its content item, read from its server.
    async fn read_html(&self, server: &str, uri: &str) -> Result<(String, Option<Value>), String> {
        let reply = self
            .manager
            .read_resource(server, uri, Caller::default())
            .await
            .map_err(|e| e.to_string())?;
        let value = host::value_of(reply).map_err(|(_, m)| m)?;
        html_of(&value, uri)
    }

    /// Asks the editor to show the view: it hosts it (`openApp`) or opens the loopback page.
    pub async fn show(&self, view: &View) -> bool {
        let ui = self.ui();
        if ui.capabilities().open_app {
            let html = match view.take_html() {
                Some(html) => html,
                None => match self
                    .read_html(view.server(), &view.opening.resource_uri)
                    .await
                {
                    Ok((html, _)) => html,
                    Err(why) => {
                        tracing::warn!(server = view.server(), "the view's HTML: {why}");
                        return false;
                    }
                },
            };
            let o = &view.opening;
            return ui
                .open_app(OpenAppParams {
                    view: view.id.clone(),
                    server: o.server.clone(),
                    tool: o.tool.clone(),
                    title: o.title.clone(),
                    html,
                    csp: o.csp.clone(),
                    arguments: o.arguments.clone(),
                    result: o.result.clone(),
                    host_context: host_context(),
                })
                .await;
        }
        match self.url(view).await {
            Ok(url) => ui.open_external(url).await,
            Err(why) => {
                tracing::warn!("the views' page did not start: {why}");
                false
            }
        }
    }

    /// The view's loopback page (its listener starts the first time).
    pub async fn url(&self, view: &View) -> std::io::Result<String> {
        let port = self.page().await.page_port(&view.id)?;
        Ok(format!("http://127.0.0.1:{port}/view/{}", view.token))
    }

    async fn page(&self) -> &Arc<page::Page> {
        let me = self.me.clone();
        self.page
            .get_or_init(|| async move { page::Page::new(me) })
            .await
    }

    pub fn by_id(&self, id: &str) -> Option<Arc<View>> {
        self.views.by_id(id)
    }

    /// The open views, as `listApps` shows them.
    pub async fn list(&self) -> Vec<AppSummary> {
        let mut rows = Vec::new();
        for view in self.views.list() {
            let shown = view.shown();
            rows.push(AppSummary {
                view: view.id.clone(),
                server: view.server().to_string(),
                tool: view.tool_name().to_string(),
                title: view.opening.title.clone(),
                url: self.url(&view).await.unwrap_or_default(),
                initialized: shown.initialized,
                model_context: shown.model_context,
                message: shown.message,
            });
        }
        rows
    }

    /// Closes a view (its state is gone) and tells the editor.
    pub fn close(&self, id: &str, reason: &str) -> bool {
        match self.views.close(id, reason) {
            Some(view) => {
                self.closed(&view, reason);
                true
            }
            None => false,
        }
    }

    /// Closes the views of a server (it stopped).
    pub fn close_server(&self, server: &str, reason: &str) {
        for view in self.views.close_where(reason, |v| v.server() == server) {
            self.closed(&view, reason);
        }
    }

    fn closed(&self, view: &View, reason: &str) {
        if let Some(page) = self.page.get() {
            page.forget(&view.id);
        }
        tracing::debug!(
            server = view.server(),
            view = view.id,
            "view closed: {reason}"
        );
        self.ui().close_app(CloseAppParams {
            view: view.id.clone(),
            reason: reason.to_string(),
        });
    }

    /// Answers one message of the view `id`'s app (`None` for a notification).
    pub async fn answer(&self, id: &str, message: &Value) -> Option<Value> {
        let Some(view) = self.views.by_id(id) else {
            return message.get("id").map(|id| {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": request::DENIED, "message": "the view is not open"}})
            });
        };
        self.answer_view(&view, message).await
    }

    async fn answer_view(&self, view: &View, message: &Value) -> Option<Value> {
        let reach = Reach {
            manager: &self.manager,
            ui: self.ui(),
        };
        let answer = request::answer(&reach, view, message).await;
        if answer.close {
            self.close(&view.id, "the view asked to be closed");
        }
        answer.response
    }
}

/// Who made a call of a tool that has a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The person in the editor: the view opens.
    Person,
    /// An agent through the gateway: as `apps.openForAgents` says.
    Agent,
}

/// A call of a tool that has a view, whose result is awaited.
pub struct Pending {
    apps: Arc<Apps>,
    server: String,
    tool: String,
    arguments: Value,
    by: By,
}

impl Pending {
    /// The call came back with `reply`: its view opens (or is offered) on a task of its own,
    /// so the caller's answer does not wait for it.
    pub fn done(self, reply: &Reply) {
        let reply = reply.clone();
        tokio::spawn(async move {
            let Pending {
                apps,
                server,
                tool,
                arguments,
                by,
            } = self;
            let result = reply.into_value().unwrap_or_default();
            match by {
                By::Person => apps.after_call(&server, &tool, arguments, result).await,
                By::Agent => {
                    apps.offer_for_agent(&server, &tool, arguments, result)
                        .await
                }
            }
        });
    }
}

/// What the host tells every view of itself.
fn host_context() -> Value {
    json!({"displayMode": "inline", "availableDisplayModes": ["inline"], "platform": "desktop"})
}

/// The app's HTML in a `resources/read` result: the content item of `uri` (or the first) whose
/// MIME type is the app's, as `text` or `blob`, and its `_meta.ui`.
pub fn html_of(result: &Value, uri: &str) -> Result<(String, Option<Value>), String> {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .ok_or("the resource has no contents")?;
    let is_app = |c: &&Value| {
        c.get("mimeType")
            .and_then(Value::as_str)
            .is_some_and(|m| m.replace(' ', "").eq_ignore_ascii_case(apps::MIME_TYPE))
    };
    let item = contents
        .iter()
        .filter(is_app)
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| contents.iter().find(is_app))
        .ok_or_else(|| format!("the resource is not of type {}", apps::MIME_TYPE))?;
    let html = if let Some(text) = item.get("text").and_then(Value::as_str) {
        text.to_string()
    } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|_| "the resource's blob is not base64")?;
        String::from_utf8(bytes).map_err(|_| "the resource's blob is not UTF-8")?
    } else {
        return Err("the resource has neither text nor blob".into());
    };
    let ui = item.get("_meta").and_then(|m| m.get("ui")).cloned();
    Ok((html, ui))
}

#[cfg(test)]
mod tests;
