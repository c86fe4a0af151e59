//! `mcp-sidecar.callTool`: a server's tool, after the whole exchange; its progress as LSP
//! work-done progress.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;
use tower_lsp_server::gen_lsp_types::{ProgressNotification, ProgressParams, ProgressToken};
use tower_lsp_server::jsonrpc::{Error, Result};

use super::{Class, Context, Delivery, Handler, Trust, not_asked, to_lsp};
use crate::contract::{self, CallToolArgs, shown};
use crate::elicitation::arguments;
use crate::mcp::{Caller, ProgressFn, ProgressUpdate, Reply, ToolArguments};
use crate::views::By;

pub struct CallTool;

impl Handler for CallTool {
    const NAME: &'static str = contract::CMD_CALL_TOOL;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = CallToolArgs;

    async fn run(cx: &Context<'_>, args: CallToolArgs, delivery: Delivery) -> Result<Reply> {
        let (progress, reporter) = match delivery.token {
            Some(token) => {
                let title = format!("{}: {}", args.server, args.tool);
                let (tx, rx) = watch::channel::<Option<ProgressUpdate>>(None);
                let reporter = tokio::spawn(report_progress(
                    cx.client.clone(),
                    token,
                    (!delivery.begun).then_some(title),
                    rx,
                ));
                let sink: ProgressFn = Arc::new(move |u| {
                    tx.send_replace(Some(u));
                });
                (Some(sink), Some(reporter))
            }
            None => (None, None),
        };
        let arguments = match args.arguments {
            Some(text) => ToolArguments::Text(text),
            None => ToolArguments::Object(ask_arguments(cx, &args.server, &args.tool).await?),
        };
        // A tool with a view (MCP Apps) opens it once the result is there.
        let input = || match &arguments {
            ToolArguments::Text(text) => serde_json::from_str(text.get()).unwrap_or_default(),
            ToolArguments::Object(map) => Value::Object(map.clone()),
        };
        let view = cx
            .apps
            .pending(&args.server, &args.tool, input, By::Person)
            .await;
        let caller = Caller {
            progress,
            ..Caller::default()
        };
        let result = cx
            .manager
            .call_tool(&args.server, &args.tool, Some(arguments), caller)
            .await;
        if let Some(reporter) = reporter {
            // The sender is dropped with the call; the reporter ends its progress and exits.
            let _ = reporter.await;
        }
        if let (Some(view), Ok(reply)) = (view, &result) {
            view.done(reply);
        }
        result.map_err(to_lsp)
    }
}

/// `callTool` without `arguments`: ask for them with the tool's own `inputSchema`.
async fn ask_arguments(
    cx: &Context<'_>,
    server: &str,
    tool: &str,
) -> Result<serde_json::Map<String, Value>> {
    let tools = cx.manager.list_tools(Some(server)).await.map_err(to_lsp)?;
    let schema = tools
        .into_iter()
        .find(|t| t.name == tool)
        .map(|t| t.input_schema)
        .ok_or_else(|| {
            Error::invalid_params(format!("server \"{server}\" has no tool \"{tool}\""))
        })?;
    arguments::ask(&cx.editor, server, tool, &schema)
        .await
        .map_err(|why| not_asked(why, tool, "the tool was not called"))
}

/// At most this many progress reports a second reach the editor for one call.
pub const PROGRESS_PER_SECOND: u32 = 100;

/// Turns MCP `notifications/progress` into LSP work-done progress on the editor's token: `begin`
/// (with a title: else the sidecar began it and ends it), a `report` per update (its message
/// with the amount; `percentage` when the server gives a total), `end`. Updates coalesce to the latest one: at most [`PROGRESS_PER_SECOND`] reports a
/// second, and the last update before the call ends is always reported.
async fn report_progress(
    client: tower_lsp_server::Client,
    token: ProgressToken,
    title: Option<String>,
    mut updates: watch::Receiver<Option<ProgressUpdate>>,
) {
    let send = |value: Value| {
        client.send_notification::<ProgressNotification>(ProgressParams::new(token.clone(), value))
    };
    let own = title.is_some();
    if let Some(title) = title {
        send(serde_json::json!({"kind": "begin", "title": title})).await;
    }
    let pace = std::time::Duration::from_secs(1) / PROGRESS_PER_SECOND;
    // `changed` reports a value not yet seen before it reports the sender gone.
    while updates.changed().await.is_ok() {
        let update = updates.borrow_and_update().clone();
        if let Some(update) = update {
            send(progress_report(&update)).await;
        }
        tokio::time::sleep(pace).await;
    }
    if own {
        send(serde_json::json!({"kind": "end"})).await;
    }
}

/// One `WorkDoneProgressReport` for an MCP progress update.
fn progress_report(update: &ProgressUpdate) -> Value {
    let percentage = match update.total {
        Some(total) if total > 0.0 && update.progress.is_finite() => {
            Some((100.0 * update.progress / total).clamp(0.0, 100.0).round() as u32)
        }
        _ => None,
    };
    // A task's status has no amount (NaN).
    let amount = match percentage {
        Some(p) => Some(format!("{p}%")),
        None => update
            .progress
            .is_finite()
            .then(|| format!("{}", update.progress)),
    };
    let message = match (&update.message, amount) {
        (Some(m), Some(amount)) => format!("{} ({amount})", shown::line(m, shown::MAX_TEXT)),
        (Some(m), None) => shown::line(m, shown::MAX_TEXT).into_owned(),
        (None, amount) => amount.unwrap_or_default(),
    };
    let mut report = serde_json::json!({"kind": "report", "message": message});
    if let Some(p) = percentage {
        report["percentage"] = p.into();
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reports_carry_a_percentage_when_the_total_is_known() {
        let update = |progress, total, message: Option<&str>| ProgressUpdate {
            progress,
            total,
            message: message.map(str::to_string),
        };
        assert_eq!(
            progress_report(&update(1.0, Some(3.0), Some("step 1 of 3"))),
            serde_json::json!({"kind": "report", "message": "step 1 of 3 (33%)", "percentage": 33})
        );
        assert_eq!(
            progress_report(&update(f64::NAN, None, Some("task working: step 2"))),
            serde_json::json!({"kind": "report", "message": "task working: step 2"})
        );
        assert_eq!(
            progress_report(&update(7.0, None, None)),
            serde_json::json!({"kind": "report", "message": "7"})
        );
        // Past the total (servers do that) stays within LSP's 0..=100.
        assert_eq!(
            progress_report(&update(5.0, Some(4.0), None))["percentage"],
            100
        );
    }
}
