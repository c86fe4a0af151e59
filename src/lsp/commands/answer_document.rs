//! `mcp-sidecar.answerDocument` (plain LSP): what a question's document's code actions and
//! lenses run: send it (a form once it is valid), decline, reject or cancel.

use tower_lsp_server::jsonrpc::{Error, Result};

use super::{Class, Context, Delivery, Handler, Trust, json};
use crate::contract::{self, AnswerDocumentArgs};
use crate::lsp::plain::documents::Sent;
use crate::mcp::Reply;

pub struct AnswerDocument;

impl Handler for AnswerDocument {
    const NAME: &'static str = contract::CMD_ANSWER_DOCUMENT;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = AnswerDocumentArgs;

    async fn run(cx: &Context<'_>, args: AnswerDocumentArgs, _: Delivery) -> Result<Reply> {
        let uri: url::Url = args
            .uri
            .parse()
            .map_err(|_| Error::invalid_params("\"uri\" is not a URI"))?;
        let Some(plain) = cx.editor.plain() else {
            return Err(Error::invalid_params(
                "the editor has the plugin: it has no questions' documents",
            ));
        };
        match plain.documents().act_on(&uri, &args.action) {
            Sent::Answered => json(serde_json::json!({"answered": true})),
            Sent::Problems(problems) => {
                crate::ui::Prompter::show_message(
                    &cx.editor,
                    crate::ui::Level::Warning,
                    format!("Not sent: {problems} problem(s), marked on their lines."),
                );
                json(serde_json::json!({"answered": false, "problems": problems}))
            }
            Sent::Unknown => Err(Error::invalid_params(
                "not an open question's document, or not an action it has",
            )),
        }
    }
}
