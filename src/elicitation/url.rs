//! URL mode: show the message, the URL (once, cut to a line) and the host it opens (with
//! warnings), ask consent, and only then open it in the system browser. The sidecar never
//! fetches the URL. [`check`] and [`consent_items`] are every URL consent's (sign-in too).

use std::net::IpAddr;

use super::Outcome;
use crate::contract::shown;
use crate::contract::{QuickPickItem, QuickPickParams, QuickPickResult};
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
    if let Some(place) = url.host().and_then(|h| local_host(&h)) {
        out.push(format!(
            "the host is {place}, not a public site: the page could reach services on it"
        ));
    }
    if let Some(port) = url.port() {
        out.push(format!("unusual port {port}"));
    }
    if url.username() != "" || url.password().is_some() {
        out.push("the URL carries credentials".to_string());
    }
    out
}

/// Whether a host names this machine or a private network, from its spelling only (no DNS).
fn local_host(host: &url::Host<&str>) -> Option<&'static str> {
    match host {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            (d == "localhost" || d.ends_with(".localhost")).then_some("this machine")
        }
        url::Host::Ipv4(ip) => local_ip(IpAddr::V4(*ip)),
        url::Host::Ipv6(ip) => local_ip(IpAddr::V6(*ip)),
    }
}

fn local_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) if ip.is_loopback() || ip.is_unspecified() => Some("this machine"),
        IpAddr::V4(ip) if ip.is_private() => Some("a private network address"),
        IpAddr::V4(ip) if ip.is_link_local() => Some("a link-local address"),
        IpAddr::V6(ip) if ip.is_loopback() || ip.is_unspecified() => Some("this machine"),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => local_ip(IpAddr::V4(v4)),
            None if ip.segments()[0] & 0xfe00 == 0xfc00 => Some("a private network address"),
            None if ip.segments()[0] & 0xffc0 == 0xfe80 => Some("a link-local address"),
            None => None,
        },
        IpAddr::V4(_) => None,
    }
}

/// Whether the sidecar may ask the editor to open `raw`: an `https:` address, or an `http:` one
/// on this machine (a loopback sign-in redirect, a local development server). Every URL the
/// editor is asked to open passes here first; the reason otherwise.
pub fn check(raw: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(raw).map_err(|_| "it is not a web address".to_string())?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if url.host().and_then(|h| local_host(&h)) == Some("this machine") => Ok(url),
        "http" => Err("it is not encrypted (http:) and not on this machine".to_string()),
        other => Err(format!("it is not a web address ({other}:)")),
    }
}

/// The host a URL will open, as the person reads it.
pub fn host(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    let host = match host.parse::<IpAddr>() {
        Ok(_) => host,
        Err(_) => host.trim_end_matches('.'),
    };
    shown::line(host, shown::MAX_NAME).into_owned()
}

/// The two choices of a URL consent: "Open <host> in the browser" (the URL shown once, cut to a
/// line, with the warnings), and "Copy URL" (the whole URL goes to the clipboard). `more` adds
/// warnings of the caller's.
pub fn consent_items(
    url: &url::Url,
    raw: &str,
    copied: bool,
    more: &[String],
) -> [QuickPickItem; 2] {
    let mut warn = warnings(url);
    warn.extend(more.iter().cloned());
    let mut open = QuickPickItem::new(format!("Open {} in the browser", host(url)))
        .with_description(shown::line(raw, shown::MAX_LINE));
    open.detail = (!warn.is_empty()).then(|| format!("⚠ {}", warn.join("; ")));
    let copy = QuickPickItem::new(if copied {
        "Copy URL (copied)"
    } else {
        "Copy URL"
    })
    .with_description("the whole address, to paste into a browser");
    [open, copy]
}

pub async fn run(ui: &dyn Prompter, server: &str, message: &str, raw: &str) -> Outcome {
    let url = match check(raw) {
        Ok(url) => url,
        Err(why) => {
            ui.show_message(
                Level::Warning,
                format!(
                    "{server} asked to open \"{}\"; declined: {why}.",
                    shown::line(raw, shown::MAX_LINE)
                ),
            );
            return Outcome::Decline;
        }
    };
    let host = host(&url);
    let mut copied = false;
    loop {
        let [open, copy] = consent_items(&url, raw, copied, &[]);
        let items = vec![
            open,
            copy,
            QuickPickItem::new("Decline").with_description(format!("tell {server} no")),
            QuickPickItem::new("Cancel").with_description("dismiss without answering"),
        ];
        let picked = ui
            .quick_pick(QuickPickParams {
                server: Some(server.to_string()),
                title: crate::ui::title(ui, server, message),
                placeholder: Some(format!("{server} wants to open a page at {host}")),
                items,
                ..Default::default()
            })
            .await;
        match picked.as_ref().and_then(QuickPickResult::first) {
            Some(0) => {
                if ui.open_external(raw.to_string()).await {
                    return Outcome::Accept(None);
                }
                ui.show_message(
                    Level::Warning,
                    format!("The editor could not open the page at {host}."),
                );
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

#[cfg(test)]
mod tests {
    use super::*;

    fn warned(url: &str) -> String {
        warnings(&url::Url::parse(url).unwrap()).join("; ")
    }

    #[test]
    fn local_and_private_hosts_and_unusual_ports_are_warned_about() {
        for url in [
            "https://localhost/x",
            "https://LOCALHOST./x",
            "https://admin.localhost/x",
            "https://127.0.0.1/x",
            "https://127.9.9.9/x",
            "https://[::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://0.0.0.0/x",
        ] {
            assert!(
                warned(url).contains("this machine"),
                "{url}: {}",
                warned(url)
            );
        }
        for url in [
            "https://10.1.2.3/",
            "https://172.16.0.1/",
            "https://172.31.255.255/",
            "https://192.168.1.1/",
            "https://[fc00::1]/",
            "https://[fd12:3456::1]/",
        ] {
            assert!(
                warned(url).contains("private network"),
                "{url}: {}",
                warned(url)
            );
        }
        for url in ["https://169.254.169.254/latest", "https://[fe80::1]/"] {
            assert!(warned(url).contains("link-local"), "{url}: {}", warned(url));
        }
        assert!(warned("https://example.com:8443/").contains("unusual port 8443"));
        assert!(warned("http://example.com:8080/").contains("unusual port 8080"));
        // Default ports, public addresses and look-alike names (no DNS is resolved) are quiet.
        for url in [
            "https://example.com/",
            "https://example.com:443/",
            "https://localhost.example.com/",
            "https://172.32.0.1/",
            "https://8.8.8.8/",
        ] {
            let w = warned(url);
            assert!(
                !w.contains("this machine") && !w.contains("private") && !w.contains("port"),
                "{url}: {w}"
            );
        }
    }
}
