//! The contract's custom methods as LSP request and notification types (the names and shapes
//! are in [`crate::contract`]).

use serde_json::Value;
use tower_lsp_server::gen_lsp_types::{
    LspNotificationMethod, LspRequestMethod, MessageDirection, Notification, Request,
};

use crate::contract::*;

macro_rules! request {
    ($ty:ident, $method:expr, $params:ty, $result:ty) => {
        #[doc = concat!("The `", stringify!($ty), "` request of the contract.")]
        pub enum $ty {}
        impl Request for $ty {
            type Params = $params;
            type Result = $result;
            const METHOD: LspRequestMethod<'static> = LspRequestMethod::Custom($method);
            const MESSAGE_DIRECTION: MessageDirection = MessageDirection::ServerToClient;
        }
    };
}

macro_rules! notification {
    ($ty:ident, $method:expr, $params:ty) => {
        #[doc = concat!("The `", stringify!($ty), "` notification of the contract.")]
        pub enum $ty {}
        impl Notification for $ty {
            type Params = $params;
            const METHOD: LspNotificationMethod<'static> = LspNotificationMethod::Custom($method);
            const MESSAGE_DIRECTION: MessageDirection = MessageDirection::ServerToClient;
        }
    };
}

request!(InputBox, INPUT_BOX, InputBoxParams, Option<InputBoxResult>);
request!(
    QuickPick,
    QUICK_PICK,
    QuickPickParams,
    Option<QuickPickResult>
);
request!(
    EditDraft,
    EDIT_DRAFT,
    EditDraftParams,
    Option<EditDraftResult>
);
request!(LanguageModel, LANGUAGE_MODEL, Value, Value);
notification!(CancelPrompt, CANCEL_PROMPT, CancelPromptParams);
notification!(Clipboard, CLIPBOARD, ClipboardParams);
notification!(ServerStatus, SERVER_STATUS, ServerStatusParams);
notification!(ResourceUpdated, RESOURCE_UPDATED, ResourceArgs);
request!(OpenApp, OPEN_APP, OpenAppParams, Option<OpenAppResult>);
notification!(CloseApp, CLOSE_APP, CloseAppParams);
notification!(TaskStatus, TASK_STATUS, TaskInfo);
