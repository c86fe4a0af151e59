//! `mcp-sidecar.expandUriTemplate`: a template's variables and the URI it expands to (RFC 6570,
//! all four levels, `crate::uri_template`). A malformed template, or one past the bounds, is
//! `refused` with what is wrong. It waits on no server and no person.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, json, to_lsp};
use crate::contract::{self, CallError, ExpandUriTemplateArgs, ExpandUriTemplateResult};
use crate::mcp::Reply;
use crate::uri_template::{Template, Value};

pub struct ExpandUriTemplate;

impl Handler for ExpandUriTemplate {
    const NAME: &'static str = contract::CMD_EXPAND_URI_TEMPLATE;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = ExpandUriTemplateArgs;

    async fn run(_: &Context<'_>, args: ExpandUriTemplateArgs, _: Delivery) -> Result<Reply> {
        let refused = |e: crate::uri_template::Error| to_lsp(CallError::Refused(e.to_string()));
        let template = Template::parse(&args.uri_template).map_err(refused)?;
        let values = args.values.unwrap_or_default();
        let uri = template
            .expand(|name| {
                values.get(name).map(|value| match value {
                    contract::TemplateValue::String(text) => Value::String(text),
                    contract::TemplateValue::List(items) => Value::List(items),
                    contract::TemplateValue::Map(pairs) => Value::Map(pairs),
                })
            })
            .map_err(refused)?;
        let variables = template.variables().into_iter().map(str::to_owned);
        json(ExpandUriTemplateResult {
            variables: variables.collect(),
            uri,
        })
    }
}
