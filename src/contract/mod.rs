//! The editor contract, version 1: every custom LSP method, command and capability the sidecar
//! and the editors share, and the error kinds the editor sees (`error.data.kind`). Plain data: it
//! knows neither LSP nor rmcp (the LSP method types that carry these are in `lsp::methods`).
//! Names and fields are spelled exactly as in `docs/lsp-extensions.md`;
//! `tests/it/contract_docs.rs` fails when the two drift apart.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod error;
mod extensions;
pub mod shown;
pub use error::CallError;
pub use extensions::*;

/// Version of the contract announced in `initialize` (`capabilities.experimental.mcpSidecar`).
pub const CONTRACT_VERSION: u32 = 1;

/// Every custom method, sidecar → editor.
pub const INPUT_BOX: &str = "mcp-sidecar/inputBox";
pub const QUICK_PICK: &str = "mcp-sidecar/quickPick";
pub const EDIT_DRAFT: &str = "mcp-sidecar/editDraft";
pub const CANCEL_PROMPT: &str = "mcp-sidecar/cancelPrompt";
pub const CLIPBOARD: &str = "mcp-sidecar/clipboard";
pub const LANGUAGE_MODEL: &str = "mcp-sidecar/languageModel";
pub const SERVER_STATUS: &str = "mcp-sidecar/serverStatus";
pub const RESOURCE_UPDATED: &str = "mcp-sidecar/resourceUpdated";
pub const OPEN_APP: &str = "mcp-sidecar/openApp";
pub const CLOSE_APP: &str = "mcp-sidecar/closeApp";

/// Every `workspace/executeCommand` command the sidecar advertises.
pub const CMD_LIST_SERVERS: &str = "mcp-sidecar.listServers";
pub const CMD_LIST_TOOLS: &str = "mcp-sidecar.listTools";
pub const CMD_CALL_TOOL: &str = "mcp-sidecar.callTool";
pub const CMD_RESTART_SERVER: &str = "mcp-sidecar.restartServer";
pub const CMD_OPEN_SAMPLING_LOG: &str = "mcp-sidecar.openSamplingLog";
pub const CMD_TRUST_SERVER: &str = "mcp-sidecar.trustServer";
pub const CMD_UNTRUST_SERVER: &str = "mcp-sidecar.untrustServer";
pub const CMD_SIGN_IN: &str = "mcp-sidecar.signIn";
pub const CMD_SIGN_OUT: &str = "mcp-sidecar.signOut";
pub const CMD_LIST_RESOURCES: &str = "mcp-sidecar.listResources";
pub const CMD_LIST_RESOURCE_TEMPLATES: &str = "mcp-sidecar.listResourceTemplates";
pub const CMD_READ_RESOURCE: &str = "mcp-sidecar.readResource";
pub const CMD_SUBSCRIBE_RESOURCE: &str = "mcp-sidecar.subscribeResource";
pub const CMD_UNSUBSCRIBE_RESOURCE: &str = "mcp-sidecar.unsubscribeResource";
pub const CMD_LIST_PROMPTS: &str = "mcp-sidecar.listPrompts";
pub const CMD_GET_PROMPT: &str = "mcp-sidecar.getPrompt";
pub const CMD_COMPLETE: &str = "mcp-sidecar.complete";
pub const CMD_GATEWAY_INFO: &str = "mcp-sidecar.gatewayInfo";
pub const CMD_EXPAND_URI_TEMPLATE: &str = "mcp-sidecar.expandUriTemplate";
pub const CMD_LIST_APPS: &str = "mcp-sidecar.listApps";
pub const CMD_OPEN_APP: &str = "mcp-sidecar.openApp";
pub const CMD_CLOSE_APP: &str = "mcp-sidecar.closeApp";
pub const CMD_APP_REQUEST: &str = "mcp-sidecar.appRequest";

/// Plain LSP's own commands, for editors without a plugin (docs/editors.md): what a question's
/// document's code actions run, and a tool call that asks for everything it needs.
pub const CMD_ANSWER_DOCUMENT: &str = "mcp-sidecar.answerDocument";
pub const CMD_CHOOSE_TOOL: &str = "mcp-sidecar.chooseTool";

pub const PLAIN_COMMANDS: &[&str] = &[CMD_ANSWER_DOCUMENT, CMD_CHOOSE_TOOL];

pub const COMMANDS: &[&str] = &[
    CMD_LIST_SERVERS,
    CMD_LIST_TOOLS,
    CMD_CALL_TOOL,
    CMD_RESTART_SERVER,
    CMD_OPEN_SAMPLING_LOG,
    CMD_TRUST_SERVER,
    CMD_UNTRUST_SERVER,
    CMD_SIGN_IN,
    CMD_SIGN_OUT,
    CMD_LIST_RESOURCES,
    CMD_LIST_RESOURCE_TEMPLATES,
    CMD_READ_RESOURCE,
    CMD_SUBSCRIBE_RESOURCE,
    CMD_UNSUBSCRIBE_RESOURCE,
    CMD_LIST_PROMPTS,
    CMD_GET_PROMPT,
    CMD_COMPLETE,
    CMD_GATEWAY_INFO,
    CMD_EXPAND_URI_TEMPLATE,
    CMD_LIST_APPS,
    CMD_OPEN_APP,
    CMD_CLOSE_APP,
    CMD_APP_REQUEST,
    CMD_LIST_TASKS,
    CMD_CANCEL_TASK,
    CMD_LIST_SKILLS,
    CMD_READ_SKILL,
];

pub const METHODS: &[&str] = &[
    INPUT_BOX,
    QUICK_PICK,
    EDIT_DRAFT,
    CANCEL_PROMPT,
    CLIPBOARD,
    LANGUAGE_MODEL,
    SERVER_STATUS,
    RESOURCE_UPDATED,
    OPEN_APP,
    CLOSE_APP,
    TASK_STATUS,
];

/// What the editor implements, from `initialize` `capabilities.experimental.mcpSidecar`.
/// A missing key means "not implemented"; the sidecar degrades instead of waiting forever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct EditorCapabilities {
    pub input_box: bool,
    pub quick_pick: bool,
    pub edit_draft: bool,
    pub clipboard: bool,
    pub language_model: bool,
    /// The editor reports each of its servers' scope in the settings' `serverScopes`; without
    /// it every server from the editor's settings needs trust.
    pub server_scopes: bool,
    /// The editor hosts app views itself (`mcp-sidecar/openApp`); without it they open in the
    /// browser through the loopback page.
    pub open_app: bool,
}

impl EditorCapabilities {
    /// Reads `capabilities.experimental.mcpSidecar`; anything malformed counts as absent.
    pub fn from_experimental(experimental: Option<&Value>) -> Self {
        experimental
            .and_then(|e| e.get("mcpSidecar"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

/// `mcp-sidecar/inputBox` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputBoxParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub password: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_steps: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub can_go_back: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub can_skip: bool,
}

/// `mcp-sidecar/inputBox` result; `null` (dismissed) is `None` around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InputBoxResult {
    Value { value: String },
    Back { back: bool },
    Skip { skip: bool },
}

/// One `mcp-sidecar/quickPick` item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuickPickItem {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub picked: bool,
}

impl QuickPickItem {
    pub fn new(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            ..Self::default()
        }
    }

    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// `mcp-sidecar/quickPick` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuickPickParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    pub items: Vec<QuickPickItem>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub can_pick_many: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_steps: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub can_go_back: bool,
    /// With `can_pick_many`: the field is optional, and `{"skip": true}` leaves it empty.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub can_skip: bool,
}

/// `mcp-sidecar/quickPick` result; `null` (dismissed) is `None` around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum QuickPickResult {
    Selected { selected: Vec<usize> },
    Back { back: bool },
    Skip { skip: bool },
}

impl QuickPickResult {
    /// The first chosen item's index (`None` for Back, Skip or nothing chosen).
    pub fn first(&self) -> Option<usize> {
        match self {
            QuickPickResult::Selected { selected } => selected.first().copied(),
            QuickPickResult::Back { .. } | QuickPickResult::Skip { .. } => None,
        }
    }
}

/// `mcp-sidecar/editDraft` kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DraftKind {
    SamplingRequest,
    SamplingResponse,
    Form,
    ToolArguments,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DraftProblem {
    pub line: u32,
    pub message: String,
}

/// `mcp-sidecar/editDraft` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditDraftParams {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub kind: DraftKind,
    pub title: String,
    pub language: String,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub problems: Vec<DraftProblem>,
}

/// `mcp-sidecar/editDraft` result; `null` (closed without choosing) is `None` around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum EditDraftResult {
    Accept { text: String },
    Reject,
}

/// `mcp-sidecar/cancelPrompt` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CancelPromptParams {
    pub id: String,
}

/// `mcp-sidecar/clipboard` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClipboardParams {
    pub text: String,
}

/// Lifecycle states reported in `mcp-sidecar/serverStatus` and `mcp-sidecar.listServers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ServerState {
    Starting,
    Running,
    Stopped,
    Failed,
    NeedsTrust,
    /// An HTTP server answered `401` and nobody is signed in (or the grant was revoked, or the
    /// person signed out); `message` names the authorization server's host.
    NeedsAuth,
}

/// `mcp-sidecar/serverStatus` params (also one row of `mcp-sidecar.listServers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatusParams {
    pub name: String,
    /// How to show `name`, when it cannot be shown as it is (control, bidirectional or
    /// invisible characters, over 100 characters): cleaned by `contract::shown`. `name` stays
    /// exact, for sending back.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    pub state: ServerState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One row of `mcp-sidecar.listServers`: the status plus what the sidecar knows of the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerSummary {
    #[serde(flatten)]
    pub status: ServerStatusParams,
    pub transport: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    pub tool_count: usize,
    pub restarts: u32,
    /// The sign-in of an `http` server that uses OAuth (it asked for it, or a grant is stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthSummary>,
}

/// `auth` of a `mcp-sidecar.listServers` row: what is known of the server's sign-in. Never a
/// token.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthSummary {
    pub signed_in: bool,
    /// The authorization server (its `issuer`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The scopes granted.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub scopes: Vec<String>,
    /// When the access token expires, in seconds since the Unix epoch (it is refreshed before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

/// One row of `mcp-sidecar.listTools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSummary {
    pub server: String,
    pub name: String,
    /// How to show `name`, when it cannot be shown as it is (control, bidirectional or
    /// invisible characters, over 100 characters): cleaned by `contract::shown`. `name` stays
    /// exact, for sending back.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    /// The tool has a view (MCP Apps): `{"resourceUri": "ui://…"}`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ui: Option<ToolUi>,
}

/// Where a tool's view is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    pub resource_uri: String,
}

/// `mcp-sidecar/openApp` params: a view for the editor to host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenAppParams {
    pub view: String,
    pub server: String,
    pub tool: Value,
    pub title: String,
    pub html: String,
    pub csp: String,
    pub arguments: Value,
    pub result: Value,
    pub host_context: Value,
}

/// `mcp-sidecar/openApp` result, and `mcp-sidecar.openApp`'s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenAppResult {
    pub opened: bool,
}

/// `mcp-sidecar/closeApp` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CloseAppParams {
    pub view: String,
    pub reason: String,
}

/// `mcp-sidecar.openApp` and `mcp-sidecar.closeApp` argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppArgs {
    pub view: String,
}

/// `mcp-sidecar.appRequest` argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppRequestArgs {
    pub view: String,
    pub message: Value,
}

/// One row of `mcp-sidecar.listApps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppSummary {
    pub view: String,
    pub server: String,
    pub tool: String,
    pub title: String,
    pub url: String,
    pub initialized: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model_context: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message: Option<String>,
}

/// `mcp-sidecar.listTools` argument.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListToolsArgs {
    #[serde(default)]
    pub server: Option<String>,
}

/// `mcp-sidecar.answerDocument` argument: a question's document and what to do with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AnswerDocumentArgs {
    pub uri: String,
    /// `send` (a form once it is valid), `decline`, `reject` or `cancel`.
    pub action: String,
}

/// `mcp-sidecar.chooseTool` argument: what is not given is asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChooseToolArgs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// `mcp-sidecar.callTool` argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallToolArgs {
    pub server: String,
    pub tool: String,
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub arguments: Option<ObjectText>,
}

/// A JSON object kept as the text it came in: a tool's arguments go to the server as the
/// editor wrote them, with no tree built on the way (docs/architecture.md, "One big result").
/// Reading one checks that it is an object. It is valid JSON, but it may still be JSON that
/// `serde_json` cannot read into a `Map` (a lone surrogate escape, a number past `f64`, nesting
/// past 128): written as it came, such text reaches the server, which judges its arguments; read
/// into an object ([`ObjectText::to_map`]), it is an error.
#[derive(Debug, Clone)]
pub struct ObjectText(Box<serde_json::value::RawValue>);

impl ObjectText {
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The object as an object (for a caller that must look inside).
    pub fn to_map(&self) -> Result<serde_json::Map<String, Value>, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    pub fn into_raw(self) -> Box<serde_json::value::RawValue> {
        self.0
    }
}

impl PartialEq for ObjectText {
    fn eq(&self, other: &Self) -> bool {
        match (self.to_map(), other.to_map()) {
            (Ok(a), Ok(b)) => a == b,
            _ => self.get() == other.get(),
        }
    }
}

impl Serialize for ObjectText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ObjectText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
        if !raw.get().starts_with('{') {
            return Err(serde::de::Error::invalid_type(
                serde::de::Unexpected::Other(raw.get().get(..1).unwrap_or("nothing")),
                &"a JSON object",
            ));
        }
        Ok(ObjectText(raw))
    }
}

/// One row of `mcp-sidecar.listResources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    pub server: String,
    pub uri: String,
    pub name: String,
    /// How to show `name`, when it cannot be shown as it is (control, bidirectional or
    /// invisible characters, over 100 characters): cleaned by `contract::shown`. `name` stays
    /// exact, for sending back.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// One row of `mcp-sidecar.listResourceTemplates`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateSummary {
    pub server: String,
    pub uri_template: String,
    pub name: String,
    /// How to show `name`, when it cannot be shown as it is (control, bidirectional or
    /// invisible characters, over 100 characters): cleaned by `contract::shown`. `name` stays
    /// exact, for sending back.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// `mcp-sidecar.expandUriTemplate` argument: an RFC 6570 template (a resource template's
/// `uriTemplate`) and the values of its variables; a variable without one is undefined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpandUriTemplateArgs {
    pub uri_template: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<std::collections::BTreeMap<String, TemplateValue>>,
}

/// A variable's value for `mcp-sidecar.expandUriTemplate`: a string, a list of strings, or an
/// object of strings (RFC 6570's associative array, its members kept in the order written).
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[serde(untagged)]
pub enum TemplateValue {
    String(String),
    List(Vec<String>),
    Map(#[schemars(with = "std::collections::BTreeMap<String, String>")] Vec<(String, String)>),
}

impl Serialize for TemplateValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TemplateValue::String(text) => serializer.serialize_str(text),
            TemplateValue::List(items) => serializer.collect_seq(items),
            TemplateValue::Map(pairs) => serializer.collect_map(pairs.iter().map(|(k, v)| (k, v))),
        }
    }
}

impl<'de> Deserialize<'de> for TemplateValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = TemplateValue;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string, a list of strings or an object whose values are strings")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TemplateValue, E> {
                Ok(TemplateValue::String(text.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<TemplateValue, E> {
                Ok(TemplateValue::String(text))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<TemplateValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(TemplateValue::List(items))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<TemplateValue, A::Error> {
                let mut pairs = Vec::new();
                while let Some(pair) = map.next_entry()? {
                    pairs.push(pair);
                }
                Ok(TemplateValue::Map(pairs))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `mcp-sidecar.expandUriTemplate` result: the template's variables in order of first
/// appearance, each once, and the URI it expands to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExpandUriTemplateResult {
    pub variables: Vec<String>,
    pub uri: String,
}

/// One row of `mcp-sidecar.listPrompts`; `arguments` as the server lists them (`name`,
/// `title?`, `description?`, `required?`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptSummary {
    pub server: String,
    pub name: String,
    /// How to show `name`, when it cannot be shown as it is (control, bidirectional or
    /// invisible characters, over 100 characters): cleaned by `contract::shown`. `name` stays
    /// exact, for sending back.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<Value>>,
}

/// `mcp-sidecar.readResource`, `subscribeResource`, `unsubscribeResource` argument, and the
/// `mcp-sidecar/resourceUpdated` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceArgs {
    pub server: String,
    pub uri: String,
}

/// `mcp-sidecar.getPrompt` argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetPromptArgs {
    pub server: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// `mcp-sidecar.complete` argument: `ref` and `argument` (and `context`) as in MCP's
/// `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompleteArgs {
    pub server: String,
    #[serde(rename = "ref")]
    pub reference: Value,
    pub argument: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
}

/// The argument of the commands on one named server: `mcp-sidecar.trustServer`,
/// `untrustServer`, `signIn`, `signOut`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerArgs {
    pub server: String,
}

/// `mcp-sidecar.signOut` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignOutResult {
    pub server: String,
    pub signed_out: bool,
    /// Whether the authorization server confirmed the revocation (RFC 7009); `false` when it
    /// offers none or could not be reached (the grant is forgotten either way).
    pub revoked: bool,
}

/// `mcp-sidecar.restartServer` argument.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RestartServerArgs {
    #[serde(default)]
    pub server: Option<String>,
}

/// The `initialize` result's `capabilities.experimental.mcpSidecar`: what this sidecar offers.
pub fn server_experimental() -> Value {
    serde_json::json!({
        "mcpSidecar": {
            "version": CONTRACT_VERSION,
            "commands": COMMANDS,
            "methods": METHODS,
        }
    })
}

#[cfg(test)]
mod tests;

/// `mcp-sidecar.gatewayInfo` result: where agents reach the gateway.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInfo {
    /// The Streamable HTTP endpoint (`http://127.0.0.1:<port>/mcp`).
    pub url: String,
    /// The headers that authenticate to it (`Authorization: Bearer <secret>`).
    pub headers: std::collections::BTreeMap<String, String>,
    /// The environment under which `mcp-sidecar gateway` finds it.
    pub env: std::collections::BTreeMap<String, String>,
}
