//! How the loop reads a message: what it reads of every one ([`Head`]), and a
//! `workspace/executeCommand` in one pass where it can ([`LaneMessage`]).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use tower_lsp_server::gen_lsp_types::ProgressToken;
use tower_lsp_server::jsonrpc::Id;

use super::super::commands::{Arg, Command};

pub(super) const EXECUTE_COMMAND: &str = "workspace/executeCommand";

/// What is read of every message before deciding where it goes.
#[derive(Deserialize)]
pub(super) struct Head<'a> {
    #[serde(default, borrow)]
    pub(super) method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) params: Option<&'a RawValue>,
}

/// `ExecuteCommandParams` as the lane reads them: the same members under the same rules as
/// lsp-types' derived reading (an object only, `command` required, a member named twice refused,
/// others ignored), the first argument kept as its JSON (a command parses its argument into its
/// own types in one go: building `Value` trees first, with `preserve_order`'s hashed maps, was
/// about a tenth of a small call's instructions), borrowed from the message.
pub(super) struct LaneParams<'a> {
    command: Cow<'a, str>,
    /// The first of `arguments` (the only one a command takes).
    argument: Option<&'a RawValue>,
    work_done_token: Option<ProgressToken>,
}

impl<'a> LaneParams<'a> {
    pub(super) fn command(self) -> Command {
        Command {
            name: self.command.into_owned(),
            arg: self
                .argument
                .map_or(Arg::None, |raw| Arg::Raw(raw.to_owned())),
            token: self.work_done_token,
            begun: false,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LaneParams<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
        /// `arguments`: a list (its first element kept) or `null`.
        struct First<'a>(Option<&'a RawValue>);
        impl<'de: 'a, 'a> Deserialize<'de> for First<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct List<'a>(std::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> Visitor<'de> for List<'a> {
                    type Value = First<'a>;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a list")
                    }
                    fn visit_seq<S: SeqAccess<'de>>(
                        self,
                        mut seq: S,
                    ) -> Result<First<'a>, S::Error> {
                        let first = seq.next_element()?;
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        Ok(First(first))
                    }
                }
                d.deserialize_seq(List(std::marker::PhantomData))
            }
        }
        /// A string borrowed from the message where it can be (one with an escape is copied).
        struct Text<'a>(Cow<'a, str>);
        impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Str<'a>(std::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> Visitor<'de> for Str<'a> {
                    type Value = Text<'a>;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Text<'a>, E> {
                        Ok(Text(Cow::Borrowed(text)))
                    }
                    fn visit_str<E>(self, text: &str) -> Result<Text<'a>, E> {
                        Ok(Text(Cow::Owned(text.to_owned())))
                    }
                }
                d.deserialize_str(Str(std::marker::PhantomData))
            }
        }
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = LaneParams<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("ExecuteCommandParams")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<LaneParams<'a>, M::Error> {
                let (mut command, mut arguments, mut token) = (None, None, None);
                while let Some(Text(key)) = map.next_key::<Text<'a>>()? {
                    match &*key {
                        "command" if command.is_none() => {
                            command = Some(map.next_value::<Text<'a>>()?.0);
                        }
                        "arguments" if arguments.is_none() => {
                            arguments = Some(map.next_value::<Option<First<'a>>>()?);
                        }
                        "workDoneToken" if token.is_none() => {
                            token = Some(map.next_value::<Option<ProgressToken>>()?);
                        }
                        "command" | "arguments" | "workDoneToken" => {
                            return Err(M::Error::custom(format_args!("duplicate field `{key}`")));
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(LaneParams {
                    command: command.ok_or_else(|| M::Error::missing_field("command"))?,
                    argument: arguments.flatten().and_then(|first| first.0),
                    work_done_token: token.flatten(),
                })
            }
        }
        d.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// A `workspace/executeCommand` request read in one pass, its params as the lane reads them
/// (rather than the message first with its params skipped, then the params again).
#[derive(Deserialize)]
pub(super) struct LaneMessage<'a> {
    #[serde(borrow)]
    pub(super) jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) method: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) id: &'a RawValue,
    #[serde(borrow)]
    pub(super) params: LaneParams<'a>,
}

#[derive(Deserialize)]
pub(super) struct Cancel<'a> {
    #[serde(borrow)]
    pub(super) id: &'a RawValue,
}

/// Whether a message's text names `workspace/executeCommand` anywhere (then the one-pass read is
/// tried; a searcher is built once, not per message).
pub(super) fn execute_command_named(body: &[u8]) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(EXECUTE_COMMAND));
    FINDER.find(body).is_some()
}

/// A request id the one-pass reading takes: an integer or a string.
pub(super) fn integer_or_string(raw: &RawValue) -> Option<Id> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'"' => serde_json::from_str(text).ok().map(Id::String),
        b'-' | b'0'..=b'9' => text.parse().ok().map(Id::Number),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The params of a `workspace/executeCommand` as the lane reads them.
    fn lane_params(text: &str) -> Option<Command> {
        serde_json::from_str::<LaneParams>(text)
            .ok()
            .map(LaneParams::command)
    }

    /// The lane reads the params as lsp-types' `ExecuteCommandParams` reads them.
    #[test]
    fn the_lanes_params_are_read_as_lsp_types_reads_them() {
        use tower_lsp_server::gen_lsp_types::ExecuteCommandParams;
        for text in [
            r#"{"command":"c"}"#,
            r#"{"command":"c","arguments":[{"a":[1,{"b":null}]},"x",2.5]}"#,
            r#"{"command":"c","arguments":null,"workDoneToken":"t-1"}"#,
            r#"{"workDoneToken":7,"command":"c","arguments":[],"extra":{"x":1}}"#,
            r#"{"command":"c","workDoneToken":null}"#,
            r#"{"command":"c","workDoneToken":1.5}"#,
            r#"{"command":"c","workDoneToken":[1]}"#,
            r#"{"command":3}"#,
            r#"{"arguments":[]}"#,
            r#"{"command":"c","arguments":{"a":1}}"#,
            r#"["c",[]]"#,
            r#"{"command":"c","command":"d"}"#,
            r#"{"command":"c","arguments":[1],"arguments":[2]}"#,
            r#"{"comm\u0061nd":"c\n\u00e9","arguments":[[1,2],{"x":"y"}]}"#,
            r#"{"command":"c","arguments":"a"}"#,
            r#"{"command":"c","arguments":[],"workDoneToken":"x","workDoneToken":"y"}"#,
            r#"{"command":"c","arguments":[{"deep":[[[{"a":"\"]"}]]]}],"z":[{"command":1}]}"#,
            r#"{"command":null}"#,
            r#"{}"#,
            r#"null"#,
        ] {
            let typed = serde_json::from_str::<ExecuteCommandParams>(text).ok();
            let seen = |c: Command| {
                let arg = match c.arg {
                    Arg::None => None,
                    Arg::Value(v) => Some(v),
                    Arg::Raw(raw) => Some(serde_json::from_str::<Value>(raw.get()).unwrap()),
                };
                (c.name, arg, c.token)
            };
            let lane = lane_params(text).map(seen);
            assert_eq!(lane, typed.map(|t| seen(t.into())), "{text}");
            if let Some(Command { arg, .. }) = lane_params(text) {
                assert!(!matches!(arg, Arg::Value(_)), "the lane keeps the JSON");
            }
        }
    }

    /// A message read in one pass runs the command tower-lsp-server's reading would run (the
    /// message as its `Request`, the params as `ExecuteCommandParams`), with the same id,
    /// argument and token; what the one pass does not take goes that general way.
    #[test]
    fn the_one_pass_reading_runs_what_the_general_one_runs() {
        use tower_lsp_server::gen_lsp_types::ExecuteCommandParams;
        use tower_lsp_server::jsonrpc::Request;
        let general = |text: &str| {
            let request: Request = serde_json::from_str(text).ok()?;
            (request.method() == EXECUTE_COMMAND).then_some(())?;
            let (_, id, params) = request.into_parts();
            let params: ExecuteCommandParams = serde_json::from_value(params?).ok()?;
            Some((id?, Command::from(params)))
        };
        let one_pass = |text: &str| {
            execute_command_named(text.as_bytes()).then_some(())?;
            let m: LaneMessage = serde_json::from_str(text).ok()?;
            (m.method == EXECUTE_COMMAND && m.jsonrpc == "2.0").then_some(())?;
            Some((integer_or_string(m.id)?, m.params.command()))
        };
        let seen = |c: Option<(Id, Command)>| {
            c.map(|(id, c)| {
                let arg = match c.arg {
                    Arg::None => None,
                    Arg::Value(v) => Some(v),
                    Arg::Raw(raw) => Some(serde_json::from_str::<Value>(raw.get()).unwrap()),
                };
                (id, c.name, arg, c.token)
            })
        };
        let params = r#"{"command":"mcp-sidecar.callTool","arguments":[{"server":"s","tool":"t","arguments":{"a":1}}],"workDoneToken":"w"}"#;
        let mut taken = 0;
        for text in [
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"params":{params},"method":"workspace/executeCommand","id":"x","jsonrpc":"2.0"}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{params},"extra":[1]}}"#
            ),
            r#"{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"command":"c"}}"#
                .to_string(),
            r#"{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand"}"#.to_string(),
            format!(r#"{{"jsonrpc":"2.0","method":"workspace/executeCommand","params":{params}}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7.5,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"1.0","id":7,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{params},"id":8}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace\/executeCommand","params":{params}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"other","params":{params}}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":[{params}]}}"#
            ),
            r#"{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"command":"a","command":"b"}}"#
                .to_string(),
        ] {
            let one = seen(one_pass(&text));
            if one.is_some() {
                taken += 1;
                assert_eq!(one, seen(general(&text)), "{text}");
            }
        }
        assert_eq!(taken, 4, "the usual requests are read in one pass");
    }

    #[test]
    fn only_integer_and_string_ids_take_the_fast_lane() {
        let id = |s: &str| integer_or_string(&RawValue::from_string(s.into()).unwrap());
        assert_eq!(id("7"), Some(Id::Number(7)));
        assert_eq!(id("-3"), Some(Id::Number(-3)));
        assert_eq!(id(r#""a\"b""#), Some(Id::String("a\"b".into())));
        assert_eq!(id("1.5"), None);
        assert_eq!(id("null"), None);
        assert_eq!(id("{}"), None);
    }
}
