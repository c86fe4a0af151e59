//! `workspace/executeCommand`: the `mcp-sidecar.*` commands, one [`Handler`] per file, listed in
//! [`HANDLERS`]. A handler's type says its name (a constant of [`crate::contract`]), its argument
//! type, its execution class ([`Class`]: long ones run under the [`Gate`]'s permit) and what it
//! does with trust ([`Trust`]); [`run`] does what those say around the handler's own work.
//!
//! A new command is its constant in `contract` and one file here, listed in [`HANDLERS`] (the
//! drift test in `tests/it/contract_docs.rs` checks the table against the contract).
//!
//! Each handler's future is boxed on its own, sized to that command: the commands in one future
//! would make every command pay for copying the largest (forms asked step by step, sign-in:
//! some tens of KiB) into its box, the quickest included (a `tools/call` future is about 10 KiB
//! at opt-level 3, most of it rmcp's request).

use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::{ExecuteCommandParams, ProgressToken};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

use super::editor::Editor;
use super::gate::Gate;
use crate::contract::CallError;
use crate::contract::shown;
use crate::elicitation::arguments::NoArguments;
use crate::gateway::Gateway;
use crate::mcp::{Manager, Reply};

mod answer_document;
mod app_request;
mod call_tool;
mod cancel_task;
mod choose_tool;
mod close_app;
mod complete;
mod expand_uri_template;
mod gateway_info;
mod get_prompt;
mod list_apps;
mod list_prompts;
mod list_resource_templates;
mod list_resources;
mod list_servers;
mod list_skills;
mod list_tasks;
mod list_tools;
mod open_app;
mod open_sampling_log;
mod read_resource;
mod read_skill;
mod restart_server;
mod sign_in;
mod sign_out;
mod subscribe_resource;
mod trust_server;
mod unsubscribe_resource;
mod untrust_server;

/// Every command the editor's face answers. A command not here is -32602 "unknown command".
pub const HANDLERS: &[Entry] = &[
    entry::<list_servers::ListServers>(),
    entry::<list_tools::ListTools>(),
    entry::<call_tool::CallTool>(),
    entry::<restart_server::RestartServer>(),
    entry::<open_sampling_log::OpenSamplingLog>(),
    entry::<trust_server::TrustServer>(),
    entry::<untrust_server::UntrustServer>(),
    entry::<sign_in::SignIn>(),
    entry::<sign_out::SignOut>(),
    entry::<list_resources::ListResources>(),
    entry::<list_resource_templates::ListResourceTemplates>(),
    entry::<read_resource::ReadResource>(),
    entry::<subscribe_resource::SubscribeResource>(),
    entry::<unsubscribe_resource::UnsubscribeResource>(),
    entry::<list_prompts::ListPrompts>(),
    entry::<get_prompt::GetPrompt>(),
    entry::<complete::Complete>(),
    entry::<gateway_info::GatewayInfo>(),
    entry::<expand_uri_template::ExpandUriTemplate>(),
    entry::<list_apps::ListApps>(),
    entry::<open_app::OpenApp>(),
    entry::<close_app::CloseApp>(),
    entry::<app_request::AppRequest>(),
    entry::<list_tasks::ListTasks>(),
    entry::<cancel_task::CancelTask>(),
    entry::<list_skills::ListSkills>(),
    entry::<read_skill::ReadSkill>(),
];

/// Plain LSP's own commands (`contract::PLAIN_COMMANDS`), for editors without a plugin.
pub const PLAIN_HANDLERS: &[Entry] = &[
    entry::<answer_document::AnswerDocument>(),
    entry::<choose_tool::ChooseTool>(),
];

/// One command.
pub trait Handler {
    /// Its name: a constant of [`crate::contract`] (in `COMMANDS`).
    const NAME: &'static str;
    /// Whether it waits on servers or people.
    const CLASS: Class;
    /// Whether it records a trust decision.
    const TRUST: Trust;
    /// Its argument, read from the first of `arguments` (a missing one reads as `{}`); a
    /// command that takes none ignores what it is sent ([`NoArgs`]).
    type Args: DeserializeOwned;

    /// The command's own work, once its argument is read and its permit taken.
    fn run<'a>(
        cx: &'a Context<'a>,
        args: Self::Args,
        delivery: Delivery,
    ) -> impl Future<Output = Result<Reply>> + Send + 'a;
}

/// How a command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Answers from what the sidecar holds, or after one short request to the editor: at once.
    Quick,
    /// Waits on servers or people: under a permit of the [`Gate`], refused with `busy` past its
    /// cap, so that long commands never take every slot of the serve loop.
    Long,
}

/// What a command does with the person's trust decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Nothing: it works with the servers trust lets run (the manager refuses the others).
    Follows,
    /// Records a decision: once it succeeded the configuration is re-read (trusting starts the
    /// server, untrusting stops it).
    Decides,
}

/// A command of the table: its name, and its [`Handler`] run as its type says ([`run`]).
pub struct Entry {
    pub name: &'static str,
    run: for<'a> fn(&'a Context<'a>, Arg, Delivery) -> BoxFuture<'a, Result<Reply>>,
    pub class: Class,
}

const fn entry<H: Handler>() -> Entry {
    Entry {
        name: H::NAME,
        run: run::<H>,
        class: H::CLASS,
    }
}

impl Entry {
    /// The handler of command `name`.
    pub fn find(name: &str) -> Option<&'static Entry> {
        HANDLERS
            .iter()
            .chain(PLAIN_HANDLERS)
            .find(|entry| entry.name == name)
    }

    /// Runs `command` (named as this entry is).
    pub fn run<'a>(&self, cx: &'a Context<'a>, command: Command) -> BoxFuture<'a, Result<Reply>> {
        let delivery = Delivery {
            token: command.token,
            begun: command.begun,
        };
        (self.run)(cx, command.arg, delivery)
    }
}

/// The error of a command no handler has.
pub fn unknown(name: &str) -> Error {
    Error::invalid_params(format!("unknown command \"{name}\""))
}

/// A command as its [`Handler`] says: the argument read, then the permit taken (a bad argument
/// is refused before a busy gate), the work, then the configuration re-read after a decision.
fn run<'a, H: Handler>(
    cx: &'a Context<'a>,
    arg: Arg,
    delivery: Delivery,
) -> BoxFuture<'a, Result<Reply>> {
    Box::pin(async move {
        let args: H::Args = parse_arg(arg)?;
        let _permit = match H::CLASS {
            Class::Long => Some(cx.gate.enter().map_err(to_lsp)?),
            Class::Quick => None,
        };
        let reply = H::run(cx, args, delivery).await?;
        if H::TRUST == Trust::Decides {
            (cx.reconfigure)();
        }
        Ok(reply)
    })
}

/// What a command works with: the backend's handles, lent for one command.
pub struct Context<'a> {
    pub client: &'a Client,
    pub manager: &'a Manager,
    pub gate: &'a Gate,
    pub editor: Editor,
    /// The agents' face, once the editor is connected.
    pub gateway: &'a parking_lot::Mutex<Option<std::sync::Arc<Gateway>>>,
    /// Asks for the configuration to be re-read (after a trust decision).
    pub reconfigure: &'a (dyn Fn() + Sync),
    /// Servers' views (MCP Apps).
    pub apps: &'a std::sync::Arc<crate::views::Apps>,
}

/// A `workspace/executeCommand` as the commands read it: its name, its first argument (the
/// only one they take) and the editor's progress token.
pub struct Command {
    pub name: String,
    pub arg: Arg,
    pub token: Option<ProgressToken>,
    /// The token's progress was begun by the sidecar (plain LSP's cancellable progress): the
    /// command reports on it, but neither begins nor ends it.
    pub begun: bool,
}

/// How a command's result travels besides its reply: the editor's progress token.
pub struct Delivery {
    pub token: Option<ProgressToken>,
    /// See [`Command::begun`].
    pub begun: bool,
}

/// A command's argument: parsed already (tower-lsp-server's reading of the params), or the
/// JSON as the serve loop's one-pass reading kept it, which becomes the command's typed
/// arguments in one parse, with no `Value` tree built first.
pub enum Arg {
    None,
    Value(Value),
    Raw(Box<serde_json::value::RawValue>),
}

impl From<ExecuteCommandParams> for Command {
    fn from(params: ExecuteCommandParams) -> Self {
        let arg = params.arguments.unwrap_or_default().into_iter().next();
        Command {
            name: params.command,
            arg: arg.map_or(Arg::None, Arg::Value),
            token: params.work_done_progress_params.work_done_token,
            begun: false,
        }
    }
}

/// The argument of a command that takes none: whatever is sent is ignored.
pub struct NoArgs;

impl<'de> serde::Deserialize<'de> for NoArgs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoArgs)
    }
}

/// The command's single argument object; a missing argument is an empty object.
fn parse_arg<T: DeserializeOwned>(arg: Arg) -> Result<T> {
    let parsed = match arg {
        Arg::None => serde_json::from_value(Value::Object(Default::default())),
        Arg::Value(value) => serde_json::from_value(value),
        Arg::Raw(raw) => serde_json::from_str(raw.get()),
    };
    parsed.map_err(|e| Error::invalid_params(format!("bad command argument: {e}")))
}

fn to_value<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A result as JSON.
fn json<T: serde::Serialize>(value: T) -> Result<Reply> {
    Ok(Reply::Json(to_value(value)))
}

/// Maps an operation's error to an LSP error with `data.kind` for the editor.
pub fn to_lsp(error: CallError) -> Error {
    // -32800 (RequestCancelled) is only ever the answer to the editor's own `$/cancelRequest`
    // (the serve loop sends it); a person dismissing a prompt is a -32000 with
    // `data.kind = "cancelled"`, which editors such as Neovim do not swallow.
    let code = match error {
        CallError::UnknownServer(_) => ErrorCode::InvalidParams,
        _ => ErrorCode::ServerError(-32000),
    };
    Error {
        code,
        // The message quotes servers (their errors, names): shown, so cleaned; `data` is exact.
        message: shown::block(&error.to_string(), shown::MAX_MESSAGE)
            .into_owned()
            .into(),
        data: Some(error.data()),
    }
}

/// The error of a command whose arguments the person declined (`refused`) or dismissed.
fn not_asked(why: NoArguments, what: &str, so: &str) -> Error {
    to_lsp(match why {
        NoArguments::Declined => {
            CallError::Refused(format!("the arguments for {what} were declined; {so}"))
        }
        NoArguments::Cancelled => CallError::Cancelled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Caller;

    /// Each command runs its own future in its own box, and holds only its own path: `callTool`
    /// and `getPrompt` little more than the call they make, the listings little at all (a
    /// list's fetch, rmcp's paging requests, is boxed: it made `callTool` 6 KiB, and every
    /// listing and `getPrompt` 11 KiB, copied into their boxes on every call).
    #[test]
    fn each_commands_future_holds_only_its_own_work() {
        let mut client = None;
        let (service, _socket) = tower_lsp_server::LspService::new(|c| {
            client = Some(c.clone());
            super::super::Backend::new(c)
        });
        let client = client.unwrap();
        let manager = service.inner().manager();
        let gate = Gate::new(4);
        let gateway = parking_lot::Mutex::new(None);
        let cx = Context {
            client: &client,
            manager: &manager,
            gate: &gate,
            editor: Editor::new(client.clone(), Default::default()),
            gateway: &gateway,
            reconfigure: &|| {},
            apps: &crate::views::Apps::new(manager.clone()),
        };
        let delivery = || Delivery {
            token: None,
            begun: false,
        };
        let call = std::mem::size_of_val(&manager.call_tool("a", "b", None, Caller::default()));
        // The call's own future holds only the common path: a legacy stdio call past rmcp's
        // peer; rmcp's request, URL steps and input rounds are boxed.
        assert!(call < 4096, "the call's future is {call} bytes");
        let args = serde_json::from_value(serde_json::json!({"server": "a", "tool": "b"})).unwrap();
        let tool = std::mem::size_of_val(&<call_tool::CallTool as Handler>::run(
            &cx,
            args,
            delivery(),
        ));
        assert!(tool < call + 1024, "callTool's future is {tool} bytes");
        let args = serde_json::from_value(serde_json::json!({"server": "a", "name": "b"})).unwrap();
        let prompt = std::mem::size_of_val(&<get_prompt::GetPrompt as Handler>::run(
            &cx,
            args,
            delivery(),
        ));
        let get = std::mem::size_of_val(&manager.get_prompt("a", "b", None, Caller::default()));
        assert!(prompt < get + 1024, "getPrompt's future is {prompt} bytes");
        let lists = [
            std::mem::size_of_val(&manager.list_tools(None)),
            std::mem::size_of_val(&manager.list_resources(None)),
            std::mem::size_of_val(&manager.list_resource_templates(None)),
            std::mem::size_of_val(&manager.list_prompts(None)),
        ];
        assert!(
            lists.iter().all(|&l| l < 1024),
            "the listings' futures: {lists:?}"
        );
        let args = || serde_json::from_value(serde_json::json!({})).unwrap();
        let listing = [
            std::mem::size_of_val(&<list_tools::ListTools as Handler>::run(
                &cx,
                args(),
                delivery(),
            )),
            std::mem::size_of_val(&<list_prompts::ListPrompts as Handler>::run(
                &cx,
                args(),
                delivery(),
            )),
        ];
        assert!(
            listing.iter().all(|&l| l < 2048),
            "the listing commands' futures: {listing:?}"
        );
    }

    /// A command's entry runs it as its type says: the argument read before the permit is
    /// taken, a long command refused at once when the gate is full, a quick one not.
    #[tokio::test]
    async fn an_entry_runs_its_command_as_its_type_says() {
        let mut client = None;
        let (service, _socket) = tower_lsp_server::LspService::new(|c| {
            client = Some(c.clone());
            super::super::Backend::new(c)
        });
        let client = client.unwrap();
        let manager = service.inner().manager();
        let gate = Gate::new(1);
        let _taken = gate.enter().unwrap();
        let gateway = parking_lot::Mutex::new(None);
        let reconfigured = std::sync::atomic::AtomicUsize::new(0);
        let reconfigure = || {
            reconfigured.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let cx = &Context {
            client: &client,
            manager: &manager,
            gate: &gate,
            editor: Editor::new(client.clone(), Default::default()),
            gateway: &gateway,
            reconfigure: &reconfigure,
            apps: &crate::views::Apps::new(manager.clone()),
        };
        let run = |entry: &Entry, arg: Value| {
            let command = Command {
                name: entry.name.into(),
                arg: Arg::Value(arg),
                token: None,
                begun: false,
            };
            entry.run(cx, command)
        };
        let kind = |r: &Result<Reply>| {
            r.as_ref()
                .err()
                .and_then(|e| e.data.as_ref())
                .map(|d| d["kind"].clone())
        };
        let busy = Some(serde_json::json!("busy"));

        let list_tools = Entry::find(crate::contract::CMD_LIST_TOOLS).unwrap();
        let bad = run(list_tools, serde_json::json!({"server": 1})).await;
        assert_eq!(
            bad.err().map(|e| e.code),
            Some(ErrorCode::InvalidParams),
            "the argument is read before the permit is taken"
        );
        // An argument every command reads.
        let arg = serde_json::json!({"server": "x", "tool": "t", "uri": "u", "name": "n",
            "ref": {"type": "ref/prompt", "name": "n"}, "argument": {"name": "a", "value": ""},
            "uriTemplate": "u{?q}", "view": "v1", "message": {}});
        for entry in HANDLERS {
            // It writes the sampling log under the state directory.
            if entry.name == crate::contract::CMD_OPEN_SAMPLING_LOG {
                continue;
            }
            let reply = run(entry, arg.clone()).await;
            assert_eq!(
                kind(&reply) == busy,
                entry.class == Class::Long,
                "{}: {:?}",
                entry.name,
                reply.err()
            );
        }
        // A trust decision about a server the workspace does not define is refused, and nothing
        // is re-read.
        assert_eq!(reconfigured.load(std::sync::atomic::Ordering::Relaxed), 0);
        let unknown = Entry::find("mcp-sidecar.nope");
        assert!(unknown.is_none());
    }
}
