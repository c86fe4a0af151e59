//! The editor's sign-in, over the [`Prompter`]: "<server> needs you to sign in at <host>" (Sign
//! in / Not now), then the URL consent URL-mode elicitation uses (its checks: https, or http on
//! this machine; the host the URL opens, the URL once, the warnings, and one more when that host
//! is not the authorization server's; //! warnings; Open / Copy URL), with "Paste the address you were redirected to" for a browser
//! that cannot reach this machine's loopback (a remote or SSH session), then a waiting prompt
//! that the flow closes when the redirect arrives.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{BrowserStep, SignIn, Stopped};
use crate::contract::{InputBoxParams, InputBoxResult, QuickPickItem, QuickPickParams};
use crate::elicitation::url::{check, consent_items, host as url_host};
use crate::ui::{Level, Prompter};

const PASTE: &str = "Paste the address you were redirected to";

/// The sign-in the editor face uses.
pub struct EditorSignIn {
    ui: Arc<dyn Prompter>,
}

impl EditorSignIn {
    pub fn new(ui: Arc<dyn Prompter>) -> EditorSignIn {
        EditorSignIn { ui }
    }

    async fn pick(&self, server: &str, title: String, items: Vec<QuickPickItem>) -> Option<usize> {
        self.ui
            .quick_pick(QuickPickParams {
                server: Some(server.to_owned()),
                title,
                items,
                ..Default::default()
            })
            .await
            .and_then(|r| r.first())
    }

    /// The consent prompt, until the person opens the URL, pastes an address or gives up. The
    /// URL gets the checks of every URL the editor is asked to open; the prompt names the host
    /// it opens, and warns when that is not the authorization server's.
    async fn consent(&self, step: &BrowserStep) -> Result<Option<String>, Stopped> {
        let url = check(&step.url).map_err(|why| {
            Stopped::Failed(format!(
                "the authorization server's sign-in address is not one the sidecar opens: {why}"
            ))
        })?;
        let host = url_host(&url);
        let elsewhere = (!same_host(&host, &step.host)).then(|| {
            format!(
                "the page is not at the authorization server ({})",
                step.host
            )
        });
        let more: Vec<String> = elsewhere.into_iter().collect();
        let mut copied = false;
        loop {
            let [open, copy] = consent_items(&url, &step.url, copied, &more);
            let items = vec![
                open,
                copy,
                QuickPickItem::new(PASTE).with_description(format!(
                    "when the browser could not reach {}",
                    step.redirect_uri
                )),
                QuickPickItem::new("Cancel").with_description("do not sign in now"),
            ];
            let title = format!("{}: sign in at {host}", step.server);
            match self.pick(&step.server, title, items).await {
                Some(0) => {
                    if self.ui.open_external(step.url.clone()).await {
                        return self.wait(step, &host).await;
                    }
                    self.ui.show_message(
                        Level::Warning,
                        format!(
                            "The editor could not open the browser; copy the sign-in URL for {} instead.",
                            step.server
                        ),
                    );
                }
                Some(1) => {
                    self.ui.clipboard(step.url.clone());
                    copied = true;
                }
                Some(2) => return self.paste(step).await,
                _ => return Err(Stopped::Cancelled),
            }
        }
    }

    /// While the browser step runs: the flow drops this future (closing the prompt) when the
    /// redirect reaches the listener.
    async fn wait(&self, step: &BrowserStep, host: &str) -> Result<Option<String>, Stopped> {
        let items = vec![
            QuickPickItem::new(PASTE).with_description(format!(
                "when the browser could not reach {}",
                step.redirect_uri
            )),
            QuickPickItem::new("Cancel sign-in"),
        ];
        let title = format!("{}: waiting for the sign-in at {host}", step.server);
        match self.pick(&step.server, title, items).await {
            Some(0) => self.paste(step).await,
            _ => Err(Stopped::Cancelled),
        }
    }

    /// Asks for the address the browser was sent to, until it is one of the listener's.
    async fn paste(&self, step: &BrowserStep) -> Result<Option<String>, Stopped> {
        let mut problem = None;
        let mut value = None;
        loop {
            let answer = self
                .ui
                .input_box(InputBoxParams {
                    server: Some(step.server.clone()),
                    title: format!("{}: paste the address you were redirected to", step.server),
                    prompt: Some(format!(
                        "After you signed in, the browser went to an address starting with {}",
                        step.redirect_uri
                    )),
                    placeholder: Some(format!("{}?code=…", step.redirect_uri)),
                    value: value.take(),
                    validation_message: problem.take(),
                    ..Default::default()
                })
                .await;
            let Some(InputBoxResult::Value { value: typed }) = answer else {
                return Err(Stopped::Cancelled);
            };
            let typed = typed.trim().to_owned();
            if is_redirect(&typed, &step.redirect_uri) {
                return Ok(Some(typed));
            }
            problem = Some(format!(
                "That is not the address of this sign-in: it must start with {}?",
                step.redirect_uri
            ));
            value = Some(typed);
        }
    }
}

/// Whether two hosts are one, as people read them (case and a final dot aside).
fn same_host(a: &str, b: &str) -> bool {
    a.trim_end_matches('.')
        .eq_ignore_ascii_case(b.trim_end_matches('.'))
}

/// Whether `typed` is an address of `redirect_uri` with a query (the code, or an error).
fn is_redirect(typed: &str, redirect_uri: &str) -> bool {
    typed
        .strip_prefix(redirect_uri)
        .is_some_and(|rest| rest.starts_with('?'))
}

impl SignIn for EditorSignIn {
    fn confirm<'a>(&'a self, server: &'a str, host: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let items = vec![
                QuickPickItem::new("Sign in")
                    .with_description("asks before it opens the sign-in page in the browser"),
                QuickPickItem::new("Not now"),
            ];
            let title = format!("{server} needs you to sign in at {host}");
            self.pick(server, title, items).await == Some(0)
        })
    }

    fn authorize<'a>(
        &'a self,
        step: &'a BrowserStep,
    ) -> BoxFuture<'a, Result<Option<String>, Stopped>> {
        Box::pin(self.consent(step))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::testing::Script;

    fn step() -> BrowserStep {
        BrowserStep {
            server: "linear".into(),
            host: "auth.example".into(),
            url: "https://auth.example/authorize?client_id=c&state=s".into(),
            redirect_uri: "http://127.0.0.1:4711/callback".into(),
        }
    }

    fn pick(i: usize) -> Value {
        json!({"selected": [i]})
    }

    fn value(v: &str) -> Value {
        json!({"value": v})
    }

    fn shown(ui: &Script, i: usize) -> Value {
        ui.shown()[i]["params"].clone()
    }

    #[test]
    fn only_an_address_of_the_listener_counts_as_the_redirect() {
        let uri = "http://127.0.0.1:4711/callback";
        assert!(is_redirect(
            "http://127.0.0.1:4711/callback?code=a&state=b",
            uri
        ));
        assert!(!is_redirect("http://127.0.0.1:4711/callback", uri));
        assert!(!is_redirect("http://127.0.0.1:4712/callback?code=a", uri));
        assert!(!is_redirect("http://127.0.0.1:4711/callbackx?code=a", uri));
        assert!(!is_redirect(
            "https://evil.example/?http://127.0.0.1:4711/callback?",
            uri
        ));
    }

    #[tokio::test]
    async fn sign_in_or_not_now() {
        let ui = Arc::new(Script::new(vec![pick(0), pick(1), Value::Null]));
        let sign_in = EditorSignIn::new(ui.clone());
        assert!(sign_in.confirm("linear", "auth.example").await);
        assert!(!sign_in.confirm("linear", "auth.example").await);
        assert!(
            !sign_in.confirm("linear", "auth.example").await,
            "dismissed"
        );
        let asked = shown(&ui, 0);
        assert_eq!(
            asked["title"],
            "linear needs you to sign in at auth.example"
        );
        assert_eq!(asked["server"], "linear");
        assert_eq!(asked["items"][0]["label"], "Sign in");
        assert_eq!(asked["items"][1]["label"], "Not now");
    }

    #[tokio::test]
    async fn copy_then_paste_a_wrong_then_the_right_address() {
        let good = "http://127.0.0.1:4711/callback?code=a&state=s";
        let ui = Arc::new(Script::new(vec![
            pick(1),
            pick(2),
            value("https://elsewhere.example/?code=a"),
            value(good),
        ]));
        let sign_in = EditorSignIn::new(ui.clone());
        let step = step();
        assert_eq!(sign_in.authorize(&step).await, Ok(Some(good.to_owned())));
        assert_eq!(*ui.clipboard.lock(), vec![step.url.clone()]);
        assert!(ui.opened.lock().is_empty(), "nothing opened without Open");
        let consent = shown(&ui, 0);
        assert_eq!(consent["title"], "linear: sign in at auth.example");
        assert_eq!(
            consent["items"][0]["label"],
            "Open auth.example in the browser"
        );
        assert_eq!(consent["items"][0]["description"], step.url.as_str());
        assert_eq!(shown(&ui, 1)["items"][1]["label"], "Copy URL (copied)");
        assert_eq!(
            shown(&ui, 2)["title"],
            "linear: paste the address you were redirected to"
        );
        let again = shown(&ui, 3);
        assert!(
            again["validationMessage"]
                .as_str()
                .unwrap()
                .contains("must start with http://127.0.0.1:4711/callback"),
            "{again}"
        );
        assert_eq!(again["value"], "https://elsewhere.example/?code=a");
    }

    #[tokio::test]
    async fn an_authorization_url_the_sidecar_would_not_open_is_refused_before_asking() {
        for url in [
            "javascript:alert(document.cookie)",
            "file:///etc/passwd",
            "vscode://vscode.git/clone?url=https://evil.example/x",
            "http://auth.example/authorize?state=s",
        ] {
            let ui = Arc::new(Script::new(vec![pick(0)]));
            let sign_in = EditorSignIn::new(ui.clone());
            let step = BrowserStep {
                url: url.into(),
                ..step()
            };
            let Err(Stopped::Failed(why)) = sign_in.authorize(&step).await else {
                panic!("{url} was not refused");
            };
            assert!(why.contains("not one the sidecar opens"), "{why}");
            assert!(ui.shown().is_empty(), "{url}: nothing asked");
            assert!(ui.opened.lock().is_empty(), "{url}: nothing opened");
        }
    }

    #[tokio::test]
    async fn the_prompt_names_the_host_that_opens_not_the_issuers() {
        let ui = Arc::new(Script::new(vec![pick(0), Value::Null]));
        let sign_in = EditorSignIn::new(ui.clone());
        let url = format!("https://evil.example/authorize?{}", "x".repeat(5000));
        let step = BrowserStep {
            url: url.clone(),
            ..step()
        };
        assert_eq!(sign_in.authorize(&step).await, Err(Stopped::Cancelled));
        assert_eq!(*ui.opened.lock(), vec![url]);
        let consent = shown(&ui, 0);
        assert_eq!(consent["title"], "linear: sign in at evil.example");
        assert_eq!(
            consent["items"][0]["label"],
            "Open evil.example in the browser"
        );
        assert!(
            consent["items"][0]["detail"]
                .as_str()
                .unwrap()
                .contains("not at the authorization server (auth.example)"),
            "{consent}"
        );
        let text = consent.to_string();
        assert_eq!(text.matches("https://evil.example/").count(), 1, "{text}");
        assert!(text.len() < 1500, "the long URL is cut: {}", text.len());
        assert_eq!(
            shown(&ui, 1)["title"],
            "linear: waiting for the sign-in at evil.example"
        );
    }

    #[tokio::test]
    async fn open_waits_and_cancel_stops() {
        let ui = Arc::new(Script::new(vec![pick(0), pick(1)]));
        let sign_in = EditorSignIn::new(ui.clone());
        let step = step();
        assert_eq!(sign_in.authorize(&step).await, Err(Stopped::Cancelled));
        assert_eq!(*ui.opened.lock(), vec![step.url.clone()]);
        assert_eq!(
            shown(&ui, 1)["title"],
            "linear: waiting for the sign-in at auth.example"
        );
        // Dismissing the consent is a cancel too.
        let ui = Arc::new(Script::new(vec![Value::Null]));
        let sign_in = EditorSignIn::new(ui);
        assert_eq!(sign_in.authorize(&step).await, Err(Stopped::Cancelled));
    }
}
