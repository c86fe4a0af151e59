//! `mcp-sidecar conformance <url>`: a headless client for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance client --command "mcp-sidecar conformance"`).
//!
//! It is the editor path without an editor: the same configuration parsing, server manager,
//! connection handshake (both eras), MRTR driver and elicitation engine (with the
//! `acceptDefaults` policy, so no person is asked). Only the choice of which tools to call is
//! per scenario. The suite passes the server URL as the last argument and the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, the wire revision in `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for
//! some scenarios, a JSON object in `MCP_CONFORMANCE_CONTEXT`. Exit status 0 means every step
//! succeeded.
//!
//! Sign-in (the `auth/*` scenarios) is the editor's flow too; only the browser step is headless
//! ([`FollowRedirects`]: the suite's authorization server approves at once, so a plain GET of the
//! authorization URL, redirects followed, reaches the flow's loopback listener). A pre-registered
//! client comes from the context (`client_id`, `client_secret`); the Client ID Metadata Document
//! is the suite's own (`CLIENT_METADATA_URL`), used where its authorization server takes one.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::config::{self, Context, Layer, Source};
use crate::contract::ServerState;
use crate::mcp::{Caller, Event, EventReceiver, Manager, ToolArguments};

/// The name the server gets in the configuration (and in log lines).
const SERVER: &str = "conformance";
/// How long the connection may take to come up.
const START_BOUND: Duration = Duration::from_secs(20);
/// The Client ID Metadata Document the suite's authorization servers know.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// How long the headless browser step may take.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(10);

/// The headless browser step: GET the authorization URL and follow its redirects (to the
/// loopback listener). Grants are not kept (each run is a new server).
pub struct FollowRedirects;

impl crate::auth::SignIn for FollowRedirects {
    fn confirm<'a>(&'a self, _: &'a str, _: &'a str) -> futures::future::BoxFuture<'a, bool> {
        Box::pin(async { true })
    }

    fn authorize<'a>(
        &'a self,
        step: &'a crate::auth::BrowserStep,
    ) -> futures::future::BoxFuture<'a, Result<Option<String>, crate::auth::Stopped>> {
        use crate::auth::Stopped::Failed;
        Box::pin(async move {
            let parsed = url::Url::parse(&step.url)
                .map_err(|e| Failed(format!("bad authorization URL: {e}")))?;
            tracing::info!(server = %step.server, host = parsed.host_str().unwrap_or(""), "following the authorization URL");
            // A browser follows every redirect; the last one is the loopback listener's.
            let client = crate::net::client_builder(&parsed, BROWSER_TIMEOUT)
                .redirect(reqwest::redirect::Policy::limited(10))
                .timeout(BROWSER_TIMEOUT)
                .build()
                .map_err(|e| Failed(format!("could not set up the browser step: {e}")))?;
            let response = client.get(parsed).send().await.map_err(|e| {
                Failed(format!(
                    "the authorization page failed: {}",
                    crate::net::innermost(&e)
                ))
            })?;
            if !response.status().is_success() {
                return Err(Failed(format!(
                    "the authorization page answered HTTP {}",
                    response.status()
                )));
            }
            Ok(None)
        })
    }

    fn keeps_grants(&self) -> bool {
        false
    }
}

/// What the suite tells the client.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub url: String,
    pub scenario: String,
    /// The revision the scenario runs at (`2025-11-25` when the suite does not say).
    pub protocol_version: String,
    pub context: Option<Value>,
}

impl Run {
    /// Reads the scenario from the environment, the way the suite passes it.
    pub fn from_env(url: String) -> Result<Run, String> {
        let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
        let protocol_version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "2025-11-25".into());
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) if !text.trim().is_empty() => Some(
                serde_json::from_str(&text)
                    .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            ),
            _ => None,
        };
        Ok(Run {
            url,
            scenario,
            protocol_version,
            context,
        })
    }

    /// The configuration this run uses: one Streamable HTTP server pinned to the scenario's
    /// revision, elicitation answered with the schema's defaults.
    pub fn settings(&self) -> Value {
        let context = |key: &str| {
            self.context
                .as_ref()
                .and_then(|c| c.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let mut oauth = json!({"clientMetadataUrl": CLIENT_METADATA_URL});
        if let Some(id) = context("client_id") {
            oauth["clientId"] = id.into();
            if let Some(secret) = context("client_secret") {
                oauth["clientSecret"] = secret.into();
            }
        }
        if self.scenario == "auth/client-credentials-basic" {
            oauth["grant"] = "client_credentials".into();
        }
        json!({
            "servers": {
                SERVER: {
                    "type": "http",
                    "url": self.url,
                    "protocolVersion": self.protocol_version,
                    "elicitation": {"policy": "acceptDefaults"},
                    "oauth": oauth,
                }
            },
            "maxRestarts": 0,
        })
    }
}

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Call a tool by name with these arguments.
    Call(String, Map<String, Value>),
    /// List the tools (the scenario watches what the client does with them).
    ListTools,
    /// Call every tool the server lists, with arguments made from its input schema.
    CallEveryTool,
    /// Pass one tool's `inputSchema`, as listed, to another tool as its `schema` argument (to
    /// show that schemas reach the editor unaltered).
    EchoSchema { of: String, to: String },
    /// List the skills (Skills extension); with `load`, load each one as an agent would: its
    /// `SKILL.md`, then each file of its manifest, every one verified, stopping at the first
    /// that does not match.
    Skills { load: bool },
}

/// Which tools each scenario calls (after the connection, which every scenario needs).
pub fn plan(run: &Run) -> Vec<Step> {
    let args = |v: Value| v.as_object().cloned().unwrap_or_default();
    match run.scenario.as_str() {
        "initialize" => vec![],
        "tools_call" => vec![Step::Call(
            "add_numbers".into(),
            args(json!({"a": 5, "b": 3})),
        )],
        "elicitation-sep1034-client-defaults" => vec![Step::Call(
            "test_client_elicitation_defaults".into(),
            Map::new(),
        )],
        "sse-retry" => vec![Step::Call("test_reconnection".into(), Map::new())],
        "json-schema-ref-no-deref" => vec![Step::ListTools],
        "sep-2640-client-no-prefetch" => vec![Step::Skills { load: false }],
        s if s.starts_with("sep-2640-client-") => vec![Step::Skills { load: true }],
        "json-schema-2020-12-preservation" => vec![Step::EchoSchema {
            of: "json_schema_2020_12_tool".into(),
            to: "json_schema_echo".into(),
        }],
        _ => {
            // The suite may say which calls to make: `toolCalls: [{name, arguments}]`, or one
            // `toolName` with `arguments`.
            let context = run.context.as_ref();
            let single = context.filter(|c| c.get("toolName").is_some()).cloned();
            let calls = context
                .and_then(|c| c.get("toolCalls"))
                .and_then(Value::as_array)
                .cloned()
                .or_else(|| single.map(|s| vec![s]));
            match calls {
                Some(calls) => calls
                    .iter()
                    .filter_map(|c| {
                        let name = c.get("name").or_else(|| c.get("toolName"))?.as_str()?;
                        let arguments = c.get("arguments").cloned().unwrap_or_default();
                        Some(Step::Call(name.to_string(), args(arguments)))
                    })
                    .collect(),
                None => vec![Step::CallEveryTool],
            }
        }
    }
}

/// Arguments for a tool from its input schema: each required property gets its default, its
/// first enum value, or a plain value of its type.
pub fn arguments_for(schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let mut out = Map::new();
    for name in required {
        let property = properties.and_then(|p| p.get(name));
        out.insert(
            name.to_string(),
            sample_value(property.unwrap_or(&Value::Null)),
        );
    }
    out
}

fn sample_value(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(constant) = property.get("const") {
        return constant.clone();
    }
    let kind = match property.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str).unwrap_or("string"),
        Some(Value::String(kind)) => kind.as_str(),
        _ => "string",
    };
    match kind {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => Value::Object(arguments_for(property)),
        "null" => Value::Null,
        _ => json!("conformance"),
    }
}

/// Runs one scenario to its end; the error says which step failed.
pub async fn run(run: Run) -> Result<(), String> {
    tracing::info!(scenario = %run.scenario, version = %run.protocol_version, url = %run.url, "conformance run");
    let layers = [Layer::new(Source::EditorSettings, run.settings())];
    // The settings are the sidecar's own (no editor): its servers run without trust.
    let cx = Context {
        editor_scopes: config::EditorScopes::Own,
        ..Context::default()
    };
    let (resolved, errors) = config::resolve(&layers, &cx);
    if let Some(e) = errors.first() {
        return Err(format!("configuration: {e}"));
    }
    let (manager, mut events) = Manager::new();
    manager.set_ui(std::sync::Arc::new(crate::ui::Headless));
    manager.set_sign_in(std::sync::Arc::new(FollowRedirects));
    manager.apply(resolved).await;
    let outcome = async {
        wait_running(&mut events).await?;
        for step in plan(&run) {
            match step {
                Step::Call(tool, arguments) => call(&manager, &tool, arguments).await?,
                Step::ListTools => {
                    list_tools(&manager).await?;
                }
                Step::CallEveryTool => {
                    for tool in list_tools(&manager).await? {
                        call(&manager, &tool.name, arguments_for(&tool.input_schema)).await?;
                    }
                }
                Step::EchoSchema { of, to } => {
                    let tools = list_tools(&manager).await?;
                    let schema = tools
                        .into_iter()
                        .find(|t| t.name == of)
                        .ok_or_else(|| format!("the server lists no tool \"{of}\""))?
                        .input_schema;
                    let mut arguments = Map::new();
                    arguments.insert("schema".into(), schema);
                    call(&manager, &to, arguments).await?;
                }
                Step::Skills { load } => skills(&manager, load).await?,
            }
        }
        Ok(())
    }
    .await;
    manager.shutdown().await;
    outcome
}

async fn list_tools(manager: &Manager) -> Result<Vec<crate::contract::ToolSummary>, String> {
    manager
        .list_tools(Some(SERVER))
        .await
        .map_err(|e| format!("tools/list: {e}"))
}

async fn call(manager: &Manager, tool: &str, arguments: Map<String, Value>) -> Result<(), String> {
    let result = manager
        .call_tool(
            SERVER,
            tool,
            Some(ToolArguments::Object(arguments)),
            Caller::default(),
        )
        .await
        .map_err(|e| format!("tools/call {tool}: {e}"))?
        .into_value()
        .unwrap_or_default();
    tracing::info!(tool, %result, "tool result");
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(format!(
            "tools/call {tool} returned an error result: {result}"
        ));
    }
    Ok(())
}

/// Lists the server's skills and, with `load`, reads and verifies each one's files.
async fn skills(manager: &Manager, load: bool) -> Result<(), String> {
    let listed = manager
        .list_skills(Some(SERVER))
        .await
        .map_err(|e| format!("skills/list: {e}"))?;
    tracing::info!(skills = listed.len(), "skills listed");
    if !load {
        return Ok(());
    }
    for skill in listed {
        let skill_md = manager
            .read_skill(SERVER, &skill.uri, None)
            .await
            .map_err(|e| format!("loading {}: {e}", skill.uri))?;
        tracing::info!(uri = %skill_md.uri, verified = skill_md.verified, "skill loaded");
        for file in skill.files.iter().flatten().filter(|f| f.uri != skill.uri) {
            manager
                .read_skill(SERVER, &skill.uri, Some(&file.uri))
                .await
                .map_err(|e| format!("reading {}: {e}", file.uri))?;
        }
    }
    Ok(())
}

/// Waits until the server is connected; a failure ends the run with the server's reason.
async fn wait_running(events: &mut EventReceiver) -> Result<(), String> {
    let wait = async {
        while let Some(event) = events.recv().await {
            match event {
                Event::Status(status) if status.name == SERVER => match status.state {
                    ServerState::Running => return Ok(()),
                    ServerState::Failed | ServerState::Stopped => {
                        return Err(format!(
                            "connection {}: {}",
                            if status.state == ServerState::Failed {
                                "failed"
                            } else {
                                "stopped"
                            },
                            status.message.unwrap_or_default()
                        ));
                    }
                    _ => {}
                },
                // What the editor would show; the sidecar's own log has the same at its level.
                Event::Log { message, .. } | Event::Message { message, .. } => {
                    tracing::debug!("{message}");
                }
                _ => {}
            }
        }
        Err("the server manager stopped".to_string())
    };
    tokio::time::timeout(START_BOUND, wait)
        .await
        .map_err(|_| format!("not connected after {} s", START_BOUND.as_secs()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_for(scenario: &str, context: Option<Value>) -> Run {
        Run {
            url: "http://localhost:1/mcp".into(),
            scenario: scenario.into(),
            protocol_version: "2026-07-28".into(),
            context,
        }
    }

    #[test]
    fn settings_go_through_the_normal_configuration() {
        let run = run_for("tools_call", None);
        let (resolved, errors) = config::resolve(
            &[Layer::new(Source::EditorSettings, run.settings())],
            &Context::default(),
        );
        assert!(errors.is_empty(), "{errors:?}");
        let spec = resolved.servers[0].as_ref().expect("valid server");
        assert_eq!(spec.name, SERVER);
    }

    #[test]
    fn known_scenarios_call_their_tool_and_others_call_every_tool() {
        assert_eq!(
            plan(&run_for("tools_call", None)),
            vec![Step::Call(
                "add_numbers".into(),
                json!({"a": 5, "b": 3}).as_object().unwrap().clone()
            )]
        );
        assert!(plan(&run_for("initialize", None)).is_empty());
        assert_eq!(
            plan(&run_for("http-custom-headers", None)),
            vec![Step::CallEveryTool]
        );
        let context = json!({"toolName": "x", "arguments": {"k": 1}});
        assert_eq!(
            plan(&run_for("anything", Some(context))),
            vec![Step::Call(
                "x".into(),
                json!({"k": 1}).as_object().unwrap().clone()
            )]
        );
        let context = json!({"toolCalls": [{"name": "a", "arguments": {"k": 1}}, {"name": "b"}]});
        assert_eq!(
            plan(&run_for("anything", Some(context))),
            vec![
                Step::Call("a".into(), json!({"k": 1}).as_object().unwrap().clone()),
                Step::Call("b".into(), Map::new())
            ]
        );
    }

    #[test]
    fn arguments_come_from_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "enum": ["eu", "us"]},
                "count": {"type": "integer"},
                "flag": {"type": "boolean", "default": false},
                "name": {"type": "string"},
                "nested": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                "optional": {"type": "string"}
            },
            "required": ["region", "count", "flag", "name", "nested"]
        });
        assert_eq!(
            Value::Object(arguments_for(&schema)),
            json!({"region": "eu", "count": 1, "flag": false, "name": "conformance", "nested": {"x": 1}})
        );
    }
}
