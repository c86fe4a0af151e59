//! URL mode: show the message, the full URL and its host (with warnings), ask consent, and only
//! then open it in the system browser. The sidecar never fetches the URL.

use std::net::IpAddr;

use super::Outcome;
use crate::lsp::ext::{QuickPickItem, QuickPickParams, QuickPickResult};
use crate::ui::{Level, Prompter};

/// What a person should know about a URL before opening it.
pub fn warnings(url: &url::Url) -> Vec<String> {
    let mut out = Vec::new();
    if url.scheme() == "http" {
        out.push("not encrypted (http:)".to_string());
    }
    match url.host() {
        Some(url::Host::Ipv4(_)) | Some(url::Host::Ipv6(_)) => {
            out.push("the host is a raw IP address".to_string());
        }
        Some(url::Host::Domain(d)) if d.split('.').any(|l| l.starts_with("xn--")) => {
            out.push(format!(
                "internationalized host ({d}) that may imitate another site"
            ));
        }
        _ => {}
    }
    if url.username() != "" || url.password().is_some() {
        out.push("the URL carries credentials".to_string());
    }
    out
}

pub async fn run(ui: &dyn Prompter, server: &str, message: &str, raw: &str) -> Outcome {
    let url = match url::Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "https" | "http") => u,
        _ => {
            ui.show_message(
                Level::Warning,
                format!("{server} asked to open \"{raw}\", which is not a web address; declined."),
            );
            return Outcome::Decline;
        }
    };
    let host = url.host_str().unwrap_or_default().to_string();
    let host = match host.parse::<IpAddr>() {
        Ok(_) => host,
        Err(_) => host.trim_end_matches('.').to_string(),
    };
    let warn = warnings(&url);
    let detail = if warn.is_empty() {
        None
    } else {
        Some(format!("⚠ {}", warn.join("; ")))
    };
    let mut copied = false;
    loop {
        let mut open =
            QuickPickItem::new(format!("Open {host} in the browser")).with_description(raw);
        open.detail = detail.clone();
        let copy = QuickPickItem::new(if copied {
            "Copy URL (copied)"
        } else {
            "Copy URL"
        })
        .with_description(raw);
        let items = vec![
            open,
            copy,
            QuickPickItem::new("Decline").with_description(format!("tell {server} no")),
            QuickPickItem::new("Cancel").with_description("dismiss without answering"),
        ];
        let picked = ui
            .quick_pick(QuickPickParams {
                server: Some(server.to_string()),
                title: format!("{server}: {message}"),
                placeholder: Some(format!("{server} wants to open {raw}")),
                items,
                ..Default::default()
            })
            .await;
        match picked.as_ref().and_then(QuickPickResult::first) {
            Some(0) => {
                if ui.open_external(raw.to_string()).await {
                    return Outcome::Accept(None);
                }
                ui.show_message(Level::Warning, format!("The editor could not open {raw}."));
                return Outcome::Cancel;
            }
            Some(1) => {
                ui.clipboard(raw.to_string());
                copied = true;
            }
            Some(2) => return Outcome::Decline,
            _ => return Outcome::Cancel,
        }
    }
}
