#![allow(deprecated)] // logging: deprecated by SEP-2577, still in the protocol
//! What every agent session shares: the routes from the names agents see to the servers, the
//! open sessions and `subscriptions/listen` streams, and the servers' notifications passed on
//! to the sessions that follow them.

//! The MCP server the agents talk to, on rmcp's server side: one handler per agent session, all
//! over the one [`Manager`] the editor's face uses (the same running servers, roots and flows;
//! a question a server asks during an agent's call is answered in the editor, like one asked
//! during the editor's own call).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use rmcp::{
    ErrorData, RoleServer,
    model::{
        LoggingLevel, LoggingMessageNotificationParam, Prompt, Resource, ResourceTemplate,
        ResourceUpdatedNotificationParam, Skill, SkillValidationError, Tool, validate_skills,
    },
    service::{Peer, SubscriptionSink},
};
use serde_json::Value;
use tokio::sync::broadcast;

use super::names;
use super::pass::{self};
use super::routes::Routes;
use super::tasks::AgentTasks;
use crate::contract::CallError;
use crate::mcp::{Manager, Observed};

pub use super::names::Scope;

/// What every agent session shares.
pub struct Shared {
    pub manager: Arc<Manager>,
    pub(super) routes: Routes,
    /// Legacy sessions, told about changes (`notifications/*/list_changed`, logs, updates).
    pub(super) sessions: Mutex<Vec<Arc<Session>>>,
    /// 2026-07-28 `subscriptions/listen` streams: (id, scope, sink).
    pub(super) listeners: Mutex<Vec<(u64, Scope, SubscriptionSink)>>,
    pub(super) next: AtomicU64,
    /// Results on their way to agents as the bytes the servers sent.
    pub passing: Arc<pass::Passing>,
    /// Servers' views, offered in the editor when an agent calls a tool that has one.
    pub apps: Arc<crate::views::Apps>,
    /// The tasks agents started, by the ids they see.
    pub(super) tasks: AgentTasks,
}

/// One agent session's own state.
pub struct Session {
    pub(super) id: u64,
    pub(super) scope: Scope,
    pub(super) peer: OnceLock<Peer<RoleServer>>,
    /// Set by `logging/setLevel`: the servers' log messages at or above it are passed on.
    pub(super) log_level: Mutex<Option<LoggingLevel>>,
    /// URIs of `resources/subscribe`.
    pub(super) subscribed: Mutex<HashSet<String>>,
}

/// A list that can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Tools,
    Prompts,
    Resources,
}

impl Scope {
    pub(super) fn server(&self) -> Option<&str> {
        match self {
            Scope::All => None,
            Scope::One(name) => Some(name),
        }
    }

    pub(super) fn covers(&self, server: &str) -> bool {
        self.server().is_none_or(|one| one == server)
    }
}

pub(super) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Shared {
    pub fn new(manager: Arc<Manager>, apps: Arc<crate::views::Apps>) -> Arc<Shared> {
        let observed = manager.observe();
        let shared = Arc::new(Shared {
            apps,
            manager,
            routes: Routes::default(),
            sessions: Mutex::default(),
            listeners: Mutex::default(),
            next: AtomicU64::new(1),
            passing: Arc::default(),
            tasks: AgentTasks::default(),
        });
        tokio::spawn(follow(Arc::downgrade(&shared), observed));
        shared
    }

    /// The tools `scope` offers, each under the name the agent sees; remembers the routes.
    pub(super) async fn tools(&self, scope: &Scope) -> Result<Vec<Tool>, CallError> {
        let listed = self.manager.server_tools(scope.server()).await?;
        let mut out = Vec::new();
        let mut routes = self.routes.tools.lock();
        let mut seen = HashSet::new();
        for (server, tools) in listed {
            // A tool for its server's views only is not the agents' (MCP Apps visibility).
            let for_agents = tools.iter().filter(|t| {
                crate::apps::meta::visibility(t.meta.as_deref()).allows(crate::apps::Surface::Model)
            });
            for tool in for_agents {
                let name = match scope {
                    Scope::All => names::exposed(&server, &tool.name),
                    Scope::One(_) => tool.name.to_string(),
                };
                if !seen.insert(name.clone()) {
                    tracing::warn!(%server, tool = %tool.name, "gateway: a second tool named {name} is left out");
                    continue;
                }
                if matches!(scope, Scope::All) {
                    routes.insert(name.clone(), (server.clone(), tool.name.to_string()));
                }
                let mut tool = tool.clone();
                tool.name = Cow::Owned(name);
                out.push(tool);
            }
        }
        Ok(out)
    }

    /// The (server, tool) an exposed name stands for; lists again once when it is not known.
    pub(super) async fn route(&self, scope: &Scope, name: &str) -> Option<(String, String)> {
        routed(scope, name, &self.routes.tools, self.tools(scope)).await
    }

    /// The prompts `scope` offers, named like tools; remembers the routes.
    pub(super) async fn prompts(&self, scope: &Scope) -> Result<Vec<Prompt>, CallError> {
        let listed = self.manager.list_prompts(scope.server()).await?;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for row in listed {
            let name = match scope {
                Scope::All => names::exposed(&row.server, &row.name),
                Scope::One(_) => row.name.clone(),
            };
            if !seen.insert(name.clone()) {
                tracing::warn!(server = %row.server, prompt = %row.name, "gateway: a second prompt named {name} is left out");
                continue;
            }
            let Some(prompt) = agent_row::<Prompt>(&row, "name", &name) else {
                continue;
            };
            if matches!(scope, Scope::All) {
                self.routes
                    .prompts
                    .lock()
                    .insert(name, (row.server.clone(), row.name.clone()));
            }
            out.push(prompt);
        }
        Ok(out)
    }

    /// The (server, prompt) an exposed name stands for; lists again once when it is not known.
    pub(super) async fn prompt_route(&self, scope: &Scope, name: &str) -> Option<(String, String)> {
        routed(scope, name, &self.routes.prompts, self.prompts(scope)).await
    }

    /// The resources `scope` offers, with their own URIs; a URI a second server lists too is
    /// left out. Remembers which server lists each.
    pub(super) async fn resources(&self, scope: &Scope) -> Result<Vec<Resource>, CallError> {
        let listed = self.manager.list_resources(scope.server()).await?;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for row in listed {
            if !seen.insert(row.uri.clone()) {
                tracing::warn!(server = %row.server, uri = %row.uri, "gateway: a resource another server lists too is left out");
                continue;
            }
            let Some(resource) = agent_row::<Resource>(&row, "uri", &row.uri) else {
                continue;
            };
            self.routes
                .resources
                .lock()
                .insert(row.uri.clone(), row.server.clone());
            out.push(resource);
        }
        Ok(out)
    }

    pub(super) async fn templates(
        &self,
        scope: &Scope,
    ) -> Result<Vec<ResourceTemplate>, CallError> {
        let listed = self.manager.list_resource_templates(scope.server()).await?;
        let mut out = Vec::new();
        let mut known = Vec::new();
        for row in listed {
            let Some(template) =
                agent_row::<ResourceTemplate>(&row, "uriTemplate", &row.uri_template)
            else {
                continue;
            };
            known.push((row.server.clone(), row.uri_template.clone()));
            out.push(template);
        }
        if matches!(scope, Scope::All) {
            *self.routes.templates.lock() = known;
        }
        Ok(out)
    }

    /// The server of a resource URI (see [`Routes::resource`]); lists again once when unknown.
    pub(super) async fn resource_route(
        &self,
        scope: &Scope,
        uri: &str,
    ) -> Result<String, ErrorData> {
        if let Scope::One(server) = scope {
            return Ok(server.clone());
        }
        if let Some(server) = self.routes.resource(uri) {
            return Ok(server);
        }
        let _ = self.resources(scope).await;
        let _ = self.templates(scope).await;
        if let Some(server) = self.routes.resource(uri) {
            return Ok(server);
        }
        let _ = self.skills(scope).await;
        self.routes.resource(uri).ok_or_else(|| {
            ErrorData::resource_not_found(
                format!(
                    "no server of this gateway lists the resource {uri} or a skill it is a file \
                     of, and no one server's template matches it (see resources/list, \
                     resources/templates/list and skills/list)"
                ),
                None,
            )
        })
    }

    /// The skills `scope` offers (Skills extension), each entry as its server sent it, with
    /// `_meta["mcp-sidecar/server"]`; a URI a second server lists too is left out, as is an
    /// entry that breaks the extension's rules. Remembers which server lists each.
    pub(super) async fn skills(&self, scope: &Scope) -> Result<Vec<Skill>, CallError> {
        let names = match scope {
            Scope::All => self.manager.server_names(),
            Scope::One(server) => vec![server.clone()],
        };
        let mut skills: Vec<Skill> = Vec::new();
        let mut servers: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for name in names {
            if !self.manager.offers_skills(&name) {
                continue;
            }
            let entries = match self.manager.skill_entries(&name).await {
                Ok(entries) => entries,
                Err(e) if matches!(scope, Scope::One(_)) => return Err(e),
                Err(e) => {
                    tracing::info!(server = %name, "gateway: its skills could not be listed: {e}");
                    continue;
                }
            };
            for entry in entries {
                let Some(skill) = agent_skill(&name, entry) else {
                    continue;
                };
                if !seen.insert(skill.uri.clone()) {
                    tracing::warn!(server = %name, uri = %skill.uri, "gateway: a skill another server lists too is left out");
                    continue;
                }
                skills.push(skill);
                servers.push(name.clone());
            }
        }
        drop_encoded_twins(&mut skills, &mut servers);
        if matches!(scope, Scope::All) {
            *self.routes.skills.lock() = skills
                .iter()
                .zip(&servers)
                .map(|(s, server)| (s.uri.clone(), server.clone()))
                .collect();
        }
        Ok(skills)
    }

    /// The server of a skill's `SKILL.md` URI: the one that listed it; lists again once when it
    /// is not known; a skill no server lists goes to the one server that offers skills, if
    /// there is one (a listing that leaves a skill out proves nothing).
    pub(super) async fn skill_route(&self, scope: &Scope, uri: &str) -> Result<String, ErrorData> {
        if let Scope::One(server) = scope {
            return Ok(server.clone());
        }
        if let Some(server) = self.routes.skill(uri) {
            return Ok(server);
        }
        let _ = self.skills(scope).await;
        if let Some(server) = self.routes.skill(uri) {
            return Ok(server);
        }
        let mut offering = self
            .manager
            .server_names()
            .into_iter()
            .filter(|name| self.manager.offers_skills(name));
        match (offering.next(), offering.next()) {
            (Some(one), None) => Ok(one),
            _ => Err(ErrorData::invalid_params(
                format!("no server of this gateway lists the skill {uri} (see skills/list)"),
                None,
            )),
        }
    }

    /// A fingerprint of every server's tools, and one of the running servers (whose prompts
    /// and resources the gateway offers).
    pub async fn fingerprint(&self) -> (u64, u64) {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let tools = match self.manager.server_tools(None).await {
            Ok(listed) => serde_json::to_string(&listed).unwrap_or_default(),
            Err(_) => String::new(),
        };
        let running: Vec<String> = self
            .manager
            .list_servers()
            .into_iter()
            .filter(|s| s.status.state == crate::contract::ServerState::Running)
            .map(|s| s.status.name)
            .collect();
        let hash = |text: String| BuildHasherDefault::<DefaultHasher>::default().hash_one(text);
        (hash(tools), hash(running.join("\0")))
    }

    pub(super) fn open_sessions(&self) -> Vec<Arc<Session>> {
        let mut sessions = self.sessions.lock();
        sessions.retain(|s| s.peer.get().is_some_and(|p| !p.is_transport_closed()));
        sessions.clone()
    }

    /// Tells every open session whose scope covers `server` (every one for `None`) that `list`
    /// changed: legacy sessions by notification, 2026-07-28 ones on their listen streams.
    pub async fn notify(&self, list: List, server: Option<&str>) {
        let covers = |scope: &Scope| server.is_none_or(|s| scope.covers(s));
        for session in self.open_sessions() {
            let Some(peer) = session.peer.get().filter(|_| covers(&session.scope)) else {
                continue;
            };
            let sent = match list {
                List::Tools => peer.notify_tool_list_changed().await,
                List::Prompts => peer.notify_prompt_list_changed().await,
                List::Resources => peer.notify_resource_list_changed().await,
            };
            if let Err(e) = sent {
                tracing::debug!("gateway: could not send a list_changed: {e}");
            }
        }
        let sinks: Vec<_> = self
            .listeners
            .lock()
            .iter()
            .filter(|(_, scope, _)| covers(scope))
            .map(|(_, _, sink)| sink.clone())
            .collect();
        for sink in sinks {
            // A stream that did not ask for this list refuses it; that is fine.
            let _ = match list {
                List::Tools => sink.notify_tool_list_changed().await,
                List::Prompts => sink.notify_prompt_list_changed().await,
                List::Resources => sink.notify_resource_list_changed().await,
            };
        }
    }

    /// Passes one server notification on to the sessions that follow it.
    pub(super) async fn pass_on(&self, observed: Observed) {
        match observed {
            Observed::Log {
                server,
                level,
                logger,
                data,
            } => {
                for session in self.open_sessions() {
                    let wanted = *session.log_level.lock();
                    let Some(peer) = session.peer.get().filter(|_| {
                        session.scope.covers(&server)
                            && wanted.is_some_and(|min| severity(level) >= severity(min))
                    }) else {
                        continue;
                    };
                    let mut param = LoggingMessageNotificationParam::new(level, data.clone());
                    param.logger = Some(match &logger {
                        Some(logger) => format!("{server}/{logger}"),
                        None => server.clone(),
                    });
                    let _ = peer.notify_logging_message(param).await;
                }
            }
            Observed::ResourceUpdated { server, uri } => {
                for session in self.open_sessions() {
                    if !session.scope.covers(&server) || !session.subscribed.lock().contains(&uri) {
                        continue;
                    }
                    if let Some(peer) = session.peer.get() {
                        let _ = peer
                            .notify_resource_updated(ResourceUpdatedNotificationParam::new(
                                uri.clone(),
                            ))
                            .await;
                    }
                }
                let sinks: Vec<_> = self
                    .listeners
                    .lock()
                    .iter()
                    .filter(|(_, scope, _)| scope.covers(&server))
                    .map(|(_, _, sink)| sink.clone())
                    .collect();
                for sink in sinks {
                    let _ = sink.notify_resource_updated(uri.clone()).await;
                }
            }
            Observed::ResourcesChanged { server } => {
                self.notify(List::Resources, Some(&server)).await;
            }
            Observed::PromptsChanged { server } => {
                self.notify(List::Prompts, Some(&server)).await;
            }
        }
    }
}

/// The (server, name) an exposed name stands for in `routes`: the name itself in one server's
/// scope; else the route recorded by the last list, or by `relist` when it is not known yet.
pub(super) async fn routed<T>(
    scope: &Scope,
    name: &str,
    routes: &Mutex<HashMap<String, (String, String)>>,
    relist: impl Future<Output = T>,
) -> Option<(String, String)> {
    if let Scope::One(server) = scope {
        return Some((server.clone(), name.to_string()));
    }
    if let Some(route) = routes.lock().get(name).cloned() {
        return Some(route);
    }
    // Not known: its server may have started since the agent listed (the list records it).
    let _ = relist.await;
    routes.lock().get(name).cloned()
}

/// Follows the servers' notifications for as long as the gateway exists.
pub(super) async fn follow(shared: Weak<Shared>, mut observed: broadcast::Receiver<Observed>) {
    loop {
        let notification = match observed.recv().await {
            Ok(notification) => notification,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "gateway: fell behind the servers' notifications");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let Some(shared) = shared.upgrade() else {
            break;
        };
        shared.pass_on(notification).await;
    }
}

/// A manager's row as the agent sees it: without the `server` field, `key` set to the name the
/// agent sees, and `_meta["mcp-sidecar/server"]` saying which server it is from.
pub(super) fn agent_row<T: serde::de::DeserializeOwned>(
    row: &impl serde::Serialize,
    key: &str,
    shown: &str,
) -> Option<T> {
    let mut value = serde_json::to_value(row).ok()?;
    let object = value.as_object_mut()?;
    let server = object.remove("server")?;
    object.insert(key.into(), Value::String(shown.into()));
    object.insert("_meta".into(), serde_json::json!({ SERVER_META: server }));
    serde_json::from_value(value)
        .map_err(|e| tracing::warn!("gateway: a row the agent cannot be sent: {e}"))
        .ok()
}

/// Leaves out the later of two skills whose URIs differ only in their percent-encoding (one
/// skill; rmcp refuses a listing with both). `servers[i]` lists `skills[i]`.
fn drop_encoded_twins(skills: &mut Vec<Skill>, servers: &mut Vec<String>) {
    // Only a URI with an escape can be another's twin (a character a URI cannot hold is
    // compared as its escape).
    while skills.iter().any(|s| s.uri.contains('%')) {
        let Err(SkillValidationError::DuplicateSkill(uri)) = validate_skills(skills) else {
            break;
        };
        let Some(at) = skills.iter().rposition(|s| s.uri == uri) else {
            break;
        };
        skills.remove(at);
        let server = servers.remove(at);
        tracing::warn!(%server, %uri, "gateway: a skill another server lists too is left out");
    }
}

/// A skill entry as its server sent it, as the agent gets it: with
/// `_meta["mcp-sidecar/server"]` saying which server it is from; `None` (and a log line) for
/// one that breaks the extension's rules, which rmcp's server side would refuse whole listings
/// for.
pub(super) fn agent_skill(server: &str, mut entry: Value) -> Option<Skill> {
    let object = entry.as_object_mut()?;
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    if !meta.is_object() {
        *meta = Value::Object(Default::default());
    }
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(SERVER_META.into(), Value::String(server.into()));
    }
    let skill: Skill = serde_json::from_value(entry)
        .map_err(|e| tracing::warn!(server, "gateway: a skill the agent cannot be sent: {e}"))
        .ok()?;
    skill
        .validate()
        .map_err(|e| tracing::warn!(server, "gateway: a skill the agent cannot be sent: {e}"))
        .ok()?;
    Some(skill)
}

/// The `_meta` key of a listed prompt, resource, template or skill that names its server.
pub const SERVER_META: &str = "mcp-sidecar/server";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(uri: &str, name: &str) -> Value {
        json!({"uri": uri, "frontmatter": {"name": name, "description": "d", "x-extra": [1]},
               "resources": [{"uri": uri, "size": 1,
                              "digest": format!("sha256:{}", "a".repeat(64))}],
               "_meta": {"theirs": true}})
    }

    #[test]
    fn a_skill_keeps_its_entry_and_says_its_server() {
        let skill = agent_skill("demo", entry("skill://a-b/SKILL.md", "a-b")).unwrap();
        let value = serde_json::to_value(&skill).unwrap();
        assert_eq!(value["_meta"], json!({"theirs": true, SERVER_META: "demo"}));
        assert_eq!(value["frontmatter"]["x-extra"], json!([1]));
        let mut odd = entry("skill://a-b/SKILL.md", "a-b");
        odd["_meta"] = json!("not an object");
        let value = serde_json::to_value(agent_skill("demo", odd).unwrap()).unwrap();
        assert_eq!(value["_meta"], json!({SERVER_META: "demo"}));
        // Rules rmcp would refuse the whole listing for.
        for bad in [
            entry("skill://a-b/SKILL.md", "other"),
            entry("skill://a-b/README.md", "a-b"),
            json!({"uri": "skill://a-b/SKILL.md"}),
            json!([1]),
        ] {
            assert!(agent_skill("demo", bad.clone()).is_none(), "{bad}");
        }
    }

    #[test]
    fn of_two_spellings_of_one_skill_the_first_is_kept() {
        let mut skills: Vec<Skill> = [
            "skill://a-b/SKILL.md",
            "skill://c/SKILL.md",
            "skill://a%2Db/SKILL.md",
        ]
        .iter()
        .map(|uri| {
            let name = if uri.contains("c/") { "c" } else { "a-b" };
            agent_skill("s", entry(uri, name)).unwrap()
        })
        .collect();
        let mut servers = vec!["one".to_string(), "one".into(), "two".into()];
        drop_encoded_twins(&mut skills, &mut servers);
        let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        assert_eq!(uris, ["skill://a-b/SKILL.md", "skill://c/SKILL.md"]);
        assert_eq!(servers, ["one", "one"]);
    }
}
