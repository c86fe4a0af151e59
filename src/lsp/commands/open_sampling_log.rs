//! `mcp-sidecar.openSamplingLog`: opens the sampling audit log in the editor.

use tower_lsp_server::jsonrpc::{Error, Result};

use super::{Class, Context, Delivery, Handler, NoArgs, Trust, json};
use crate::contract;
use crate::mcp::Reply;

pub struct OpenSamplingLog;

impl Handler for OpenSamplingLog {
    const NAME: &'static str = contract::CMD_OPEN_SAMPLING_LOG;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = NoArgs;

    /// The log is created empty if nothing was logged yet.
    async fn run(cx: &Context<'_>, _: NoArgs, _: Delivery) -> Result<Reply> {
        let path = crate::sampling::audit::log_path()
            .ok_or_else(|| Error::invalid_params("no home or state directory is known"))?;
        if !path.exists() {
            // Created as the log itself would be: 0600 in the 0700 state directory.
            let _ = crate::store::open_append(&path);
        }
        let opened = crate::ui::Prompter::show_file(&cx.editor, path.clone()).await;
        json(serde_json::json!({"path": path, "opened": opened}))
    }
}
