//! The one place raw JSON passes through rmcp's typed model.
//!
//! Two things a server sends must reach the sidecar exactly as written, and rmcp's types would
//! change them (checked against rmcp 3.11):
//!
//! - `sampling/createMessage` params: `temperature` and the model-preference priorities are
//!   `f32` fields, and rmcp writes request params through `serde_json::to_value`, which widens
//!   them: `temperature: 0.7` comes back as `0.699999988079071`. The drafts a person reads and
//!   the request a provider gets would show the widened number.
//! - a form's `requestedSchema`: rmcp's `ElicitationSchema` keeps only the keywords it models
//!   (`x-…` annotations and any keyword it does not know are dropped), and a schema outside the
//!   spec's subset (a nested object, say) does not parse, so the whole `elicitation/create`
//!   becomes a custom request, which rmcp's client answers with "method not found". The
//!   sidecar's own form parser reads the schema as sent and refuses what it cannot show,
//!   naming the property (-32602). Property order, once a reason too (rmcp kept
//!   `properties` in a sorted map), survives since rmcp 3.11 (`property_order`).
//!
//! So the transports ([`crate::mcp::wire::transport`] for stdio, [`crate::mcp::wire::http`]) parse each incoming line
//! that mentions one of those methods into a `Value` once, move the raw parts into `_meta`
//! ([`stash_schemas`]), and convert the `Value` to rmcp's types once. The handler reads them
//! back with [`form_schema`] and [`sampling_params`], which fall back to re-serializing the
//! typed value (once) when nothing was stashed.
//!
//! What would let this module go: rmcp keeping the JSON numbers of those fields (`f64`, or
//! serializing params without a `Value` in between), and a form schema type that keeps unknown
//! keywords and lets a client see (and refuse) a schema outside the subset, e.g. an opaque
//! `Value` beside the typed one. The upstream issue texts are in `docs/upstream/rmcp-raw-json.md`;
//! the tests at the end of this file fail once rmcp changes, the signal to revisit.

use rmcp::RoleClient;
use rmcp::model::{
    JsonRpcMessage, RequestMetaObject, ServerJsonRpcMessage, ServerRequest, ServerResult,
};
use rmcp::service::RxJsonRpcMessage;
use serde::Serialize;
use serde_json::{Value, json};

/// Where a form's `requestedSchema` is kept exactly as the server sent it.
pub const RAW_SCHEMA_META: &str = "dev.mcp-sidecar/requestedSchema";
/// Where a `sampling/createMessage` params object is kept exactly as sent.
pub const RAW_PARAMS_META: &str = "dev.mcp-sidecar/params";

/// The methods whose params are kept raw.
const KEPT: [&[u8]; 2] = [b"elicitation/create", b"sampling/createMessage"];

/// Whether a message (one line, or one SSE event's data) may carry something kept raw: a cheap
/// byte search, so other messages are parsed straight into rmcp's types.
pub fn mentions_kept(message: &[u8]) -> bool {
    KEPT.iter()
        .any(|method| memchr::memmem::find(message, method).is_some())
}

/// One message from a server, typed, with its raw parts stashed: bytes to `Value` once and
/// `Value` to rmcp's types once when it mentions a kept method, else straight to the types.
pub fn parse(message: &[u8]) -> serde_json::Result<RxJsonRpcMessage<RoleClient>> {
    if !mentions_kept(message) {
        return serde_json::from_slice(message);
    }
    let mut value = serde_json::from_slice::<Value>(message)?;
    stash_schemas(&mut value);
    serde_json::from_value(value)
}

/// A JSON body arrives typed: forms and sampling requests are re-serialized, stashed raw and
/// parsed again so the sidecar sees them as it does on stdio.
pub fn stash_typed(message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let relevant = match &message {
        JsonRpcMessage::Request(r) => match &r.request {
            ServerRequest::ElicitRequest(_) | ServerRequest::CreateMessageRequest(_) => true,
            ServerRequest::CustomRequest(c) => KEPT.contains(&c.method.as_bytes()),
            _ => false,
        },
        JsonRpcMessage::Response(r) => match &r.result {
            ServerResult::InputRequiredResult(_) => true,
            ServerResult::GetTaskResult(r) => {
                r.task.status() == rmcp::model::TaskStatus::InputRequired
            }
            // A form rmcp's types refuse makes the whole result a custom one: stashing the raw
            // schema lets it parse as what it is.
            ServerResult::CustomResult(c) => {
                c.0.get("resultType").and_then(Value::as_str) == Some("input_required")
            }
            _ => false,
        },
        _ => false,
    };
    if !relevant {
        return message;
    }
    let Ok(mut value) = serde_json::to_value(&message) else {
        return message;
    };
    stash_schemas(&mut value);
    serde_json::from_value(value).unwrap_or(message)
}

/// Moves each form's `requestedSchema` into `_meta` (key [`RAW_SCHEMA_META`]) and leaves an empty
/// object schema in its place, and copies each `sampling/createMessage` params object into its
/// own `_meta` (key [`RAW_PARAMS_META`]): in legacy requests and in `input_required` results.
pub fn stash_schemas(message: &mut Value) {
    if let Some(method) = message.get("method").and_then(Value::as_str) {
        let method = method.to_string();
        if let Some(params) = message.get_mut("params") {
            stash(&method, params);
        }
        return;
    }
    let requests = message
        .get_mut("result")
        .filter(|r| {
            // An `input_required` round, or a task asking (`tasks/get`, Tasks extension).
            r.get("resultType").and_then(Value::as_str) == Some("input_required")
                || r.get("status").and_then(Value::as_str) == Some("input_required")
        })
        .and_then(|r| r.get_mut("inputRequests"))
        .and_then(Value::as_object_mut);
    for request in requests.into_iter().flat_map(|m| m.values_mut()) {
        let Some(method) = request.get("method").and_then(Value::as_str) else {
            continue;
        };
        let method = method.to_string();
        if let Some(params) = request.get_mut("params") {
            stash(&method, params);
        }
    }
}

fn stash(method: &str, params: &mut Value) {
    match method {
        "elicitation/create" => stash_schema(params),
        "sampling/createMessage" => stash_params(params),
        _ => {}
    }
}

/// Keeps a whole `sampling/createMessage` params object as sent, under [`RAW_PARAMS_META`].
fn stash_params(params: &mut Value) {
    let raw = params.clone();
    if let Some(meta) = meta_of(params) {
        meta.insert(RAW_PARAMS_META.into(), raw);
    }
}

/// Moves a form's schema under [`RAW_SCHEMA_META`]; URL-mode params are left alone.
fn stash_schema(params: &mut Value) {
    let Some(obj) = params.as_object_mut() else {
        return;
    };
    if obj.get("mode").and_then(Value::as_str).unwrap_or("form") != "form" {
        return;
    }
    let Some(schema) = obj.insert(
        "requestedSchema".into(),
        json!({"type": "object", "properties": {}}),
    ) else {
        return;
    };
    if let Some(meta) = meta_of(params) {
        meta.insert(RAW_SCHEMA_META.into(), schema);
    }
}

/// The params' `_meta` object, created when missing; `None` when the params (or a `_meta` the
/// server sent) are not objects.
fn meta_of(params: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    params
        .as_object_mut()?
        .entry("_meta")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

/// A form's schema as the server sent it: the stash in the first of `metas` that has one, else
/// the typed schema re-serialized.
pub fn form_schema(metas: &[Option<&RequestMetaObject>], typed: &impl Serialize) -> Value {
    metas
        .iter()
        .flatten()
        .find_map(|meta| kept(meta, RAW_SCHEMA_META))
        .unwrap_or_else(|| to_value(typed))
}

/// A `sampling/createMessage` params object as the server sent it: the stash in `meta`, else
/// the typed params re-serialized.
pub fn sampling_params(meta: Option<&RequestMetaObject>, typed: &impl Serialize) -> Value {
    meta.and_then(|meta| kept(meta, RAW_PARAMS_META))
        .unwrap_or_else(|| to_value(typed))
}

fn kept(meta: &RequestMetaObject, key: &str) -> Option<Value> {
    meta.0.0.get(key).cloned()
}

fn to_value(typed: &impl Serialize) -> Value {
    serde_json::to_value(typed).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams};

    /// Why the params are kept raw. When this fails, rmcp keeps numbers exact and the params
    /// stash can go (see the module doc).
    #[test]
    fn rmcp_still_widens_the_sampling_floats() {
        let wire = r#"{"messages":[],"maxTokens":5,"temperature":0.7,"modelPreferences":{"speedPriority":0.3}}"#;
        let typed: CreateMessageRequestParams = serde_json::from_str(wire).unwrap();
        let again = serde_json::to_value(&typed).unwrap();
        assert_ne!(again["temperature"], 0.7, "{again}");
        assert_eq!(again["temperature"], 0.699999988079071);
        assert_ne!(again["modelPreferences"]["speedPriority"], 0.3, "{again}");
        // Sending: the same widening is written on the wire (what the demo server avoids).
        let params = CreateMessageRequestParams::new(vec![], 5).with_temperature(0.2);
        let request = rmcp::model::ServerRequest::CreateMessageRequest(
            rmcp::model::CreateMessageRequest::new(params),
        );
        let text = serde_json::to_string(&request).unwrap();
        assert!(
            text.contains(r#""temperature":0.20000000298023224"#),
            "{text}"
        );
        // The raw read-back is exact.
        let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",
            "params": serde_json::from_str::<Value>(wire).unwrap()});
        stash_schemas(&mut message);
        assert_eq!(
            message["params"]["_meta"][RAW_PARAMS_META]["temperature"],
            0.7
        );
    }

    /// Why the schemas are kept raw. When this fails, rmcp keeps what servers send and the
    /// schema stash can go (see the module doc).
    #[test]
    fn rmcp_still_loses_schema_keywords_and_refuses_other_shapes() {
        let form = |properties: Value| {
            json!({"mode": "form", "message": "m", "requestedSchema": {
                "type": "object", "properties": properties, "x-order": ["z", "a"]}})
        };
        let typed: ElicitRequestParams = serde_json::from_value(form(
            json!({"z": {"type": "string", "x-hint": "kept?"}, "a": {"type": "boolean"}}),
        ))
        .unwrap();
        let again = serde_json::to_value(&typed).unwrap();
        let schema = &again["requestedSchema"];
        assert!(schema.get("x-order").is_none(), "{again}");
        assert!(schema["properties"]["z"].get("x-hint").is_none(), "{again}");
        // Property order, the other reason this module was written, is kept since rmcp 3.11
        // (`ElicitationSchema::property_order`).
        let order: Vec<_> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["z", "a"], "{again}");
        // A nested object (outside the spec's subset) does not parse at all.
        let nested = form(json!({"z": {"type": "object"}}));
        assert!(serde_json::from_value::<ElicitRequestParams>(nested).is_err());
    }

    #[test]
    fn only_messages_that_mention_a_kept_method_go_through_a_value() {
        assert!(mentions_kept(br#"{"method":"elicitation/create"}"#));
        assert!(mentions_kept(br#"{"method":"sampling/createMessage"}"#));
        assert!(!mentions_kept(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        let Ok(message) = parse(
            br#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"temperature":0.7}}"#,
        ) else {
            panic!()
        };
        let rmcp::model::JsonRpcMessage::Request(request) = message else {
            panic!()
        };
        let rmcp::model::ServerRequest::CreateMessageRequest(request) = request.request else {
            panic!("{:?}", request.request)
        };
        let meta = request.extensions.get::<RequestMetaObject>();
        assert_eq!(
            sampling_params(meta, &request.params)["temperature"],
            0.7,
            "read back exactly"
        );
        // Without a stash the typed value is re-serialized.
        let bare = CreateMessageRequestParams::new(vec![], 3);
        assert_eq!(sampling_params(None, &bare)["maxTokens"], 3);
        let schema = json!({"type": "object", "properties": {"b": {"type": "boolean"}}});
        let mut meta = RequestMetaObject::new();
        meta.0.0.insert(RAW_SCHEMA_META.into(), schema.clone());
        assert_eq!(form_schema(&[None, Some(&meta)], &Value::Null), schema);
        assert_eq!(form_schema(&[None], &json!({"t": 1})), json!({"t": 1}));
    }
}
