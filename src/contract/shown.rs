//! Text from outside the person's control (servers, workspace files, URLs, authorization
//! servers) as the editor shows it. Every string the sidecar puts on the person's screen that
//! such a party chose passes through here once: control characters, ANSI escapes, NUL and
//! invisible characters cannot change what the rest of the line appears to say, bidirectional
//! controls are shown as what they are (`⟨U+202E⟩`), and length is capped. What is *sent back*
//! (to a server, to a URL) is never cleaned: only what is shown.
//!
//! [`line`] and [`block`] clean one text; [`Shown`] cleans the contract's messages as the LSP
//! face sends them (prompts, status, list rows, with a [`label`] beside a name sent back).

use std::borrow::Cow;

use serde_json::Value;

use super::{
    AuthSummary, EditDraftParams, InputBoxParams, PromptSummary, QuickPickParams, ResourceSummary,
    ResourceTemplateSummary, ServerStatusParams, ServerSummary, ToolSummary,
};

/// What a cut text ends with.
pub const CUT: &str = "… (truncated)";
/// The longest name (server, tool, prompt, resource) shown, in characters.
pub const MAX_NAME: usize = 100;
/// The longest one-line text (a title, a label, a URL) shown, in characters.
pub const MAX_LINE: usize = 200;
/// The longest description or detail shown, in characters.
pub const MAX_TEXT: usize = 500;
/// The longest message shown, in characters.
pub const MAX_MESSAGE: usize = 2000;

/// Characters that reorder or hide the text around them: the bidirectional embeddings,
/// overrides and isolates, the directional marks, the zero-width and other invisible
/// characters, and the tag characters (text no one sees).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}'                  // soft hyphen
        | '\u{034F}'                // combining grapheme joiner
        | '\u{061C}'                // Arabic letter mark
        | '\u{115F}' | '\u{1160}'   // Hangul fillers
        | '\u{17B4}' | '\u{17B5}'   // Khmer inherent vowels
        | '\u{180E}'                // Mongolian vowel separator
        | '\u{200B}'..='\u{200F}'   // zero-width space, non-joiner, joiner, LRM, RLM
        | '\u{202A}'..='\u{202E}'   // LRE, RLE, PDF, LRO, RLO
        | '\u{2060}'..='\u{206F}'   // word joiner, invisible operators, LRI, RLI, FSI, PDI, ...
        | '\u{3164}'                // Hangul filler
        | '\u{FEFF}'                // zero-width no-break space
        | '\u{FFA0}'                // halfwidth Hangul filler
        | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotations
        | '\u{E0000}'..='\u{E007F}' // tags
    )
}

fn line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whether `text` needs no change to be shown on one line of at most `max` characters.
fn plain_line(text: &str, max: usize) -> bool {
    let mut count = 0;
    let mut previous_space = true;
    for c in text.chars() {
        count += 1;
        let space = c == ' ';
        // Other white space (a no-break space, an em space) is written as a space.
        if c.is_whitespace() && !space {
            return false;
        }
        if count > max
            || c.is_control()
            || invisible(c)
            || line_break(c)
            || (space && previous_space)
        {
            return false;
        }
        previous_space = space;
    }
    !previous_space || text.is_empty()
}

/// `text` as one line of at most `max` characters: line breaks, tabs and other white space
/// become one space, runs of spaces collapse, the ends are trimmed, an ANSI escape sequence is dropped whole, any other
/// control character and every invisible or bidirectional one is written as `⟨U+XXXX⟩`; a
/// longer text is cut and ends with [`CUT`] (with `…` when `max` leaves no room for it). What
/// comes out comes out again unchanged.
pub fn line(text: &str, max: usize) -> Cow<'_, str> {
    if plain_line(text, max) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(clean(text, max, false))
}

/// `text` as a block: like [`line`], but line breaks are kept (as `\n`, at most two in a row)
/// and spaces are not collapsed.
pub fn block(text: &str, max: usize) -> Cow<'_, str> {
    let plain = text.chars().count() <= max
        && !text.contains("\n\n\n")
        && !text.ends_with(char::is_whitespace)
        && text
            .chars()
            .all(|c| c == '\n' || !(c.is_control() || invisible(c) || line_break(c)));
    if plain {
        return Cow::Borrowed(text);
    }
    Cow::Owned(clean(text, max, true))
}

/// What a text cut at `max` characters ends with.
fn marker(max: usize) -> &'static str {
    if max > 2 * CUT.chars().count() {
        CUT
    } else {
        "…"
    }
}

fn clean(text: &str, max: usize, keep_lines: bool) -> String {
    let marker = marker(max);
    // A cut text keeps this many characters of its own before the marker.
    let keep = max.saturating_sub(marker.chars().count());
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(4)));
    let mut count = 0usize;
    // Where the text is cut if it turns out longer than `max`: before the first piece that
    // would not fit in `keep`.
    let mut cut_at = None;
    let mut chars = text.chars().peekable();
    let mut breaks = 0usize;
    let mut buf = [0u8; 4];
    while let Some(c) = chars.next() {
        // On one line, white space of any kind is a space (collapsed and trimmed like one).
        let c = if !keep_lines && c.is_whitespace() && !line_break(c) && c != '\t' {
            ' '
        } else {
            c
        };
        let code;
        let piece: &str = if c == '\u{1B}' {
            // An escape sequence: CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or `ESC \`),
            // or a two-character escape. Dropped whole.
            match chars.peek() {
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7E}').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{07}' {
                            break;
                        }
                        if c == '\u{1B}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            }
            continue;
        } else if line_break(c) || c == '\t' {
            if keep_lines && line_break(c) {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    continue;
                }
                breaks += 1;
                if breaks > 2 {
                    continue;
                }
                "\n"
            } else if keep_lines {
                " "
            } else if out.is_empty() || out.ends_with(' ') {
                continue;
            } else {
                " "
            }
        } else if c == ' ' && !keep_lines && (out.is_empty() || out.ends_with(' ')) {
            continue;
        } else if c.is_control() || invisible(c) {
            code = format!("⟨U+{:04X}⟩", c as u32);
            &code
        } else {
            c.encode_utf8(&mut buf)
        };
        if !line_break(c) {
            breaks = 0;
        }
        let n = piece.chars().count();
        if cut_at.is_none() && count + n > keep {
            cut_at = Some(out.len());
        }
        if count + n > max {
            out.truncate(cut_at.unwrap_or(out.len()));
            let kept = out.trim_end().len();
            out.truncate(kept);
            out.push_str(marker);
            return out;
        }
        out.push_str(piece);
        count += n;
    }
    let kept = out.trim_end().len();
    out.truncate(kept);
    out
}

/// The longest log line shown, in characters.
pub const MAX_LOG: usize = 16 * 1024;

/// A message of the editor contract as the editor shows it: every text another party chose,
/// cleaned and capped; every value that is sent back (a row's name and URI, a prefilled answer,
/// a draft's text) kept exact. A prompt's `server` is only shown (and keys what the editor
/// tracks per server, the same for every prompt), so it is cleaned. The LSP face sends nothing
/// else.
pub trait Shown {
    #[must_use]
    fn shown(self) -> Self;
}

type Clean = for<'a> fn(&'a str, usize) -> Cow<'a, str>;

fn fix(text: &mut String, clean: Clean, max: usize) {
    if let Cow::Owned(shown) = clean(text, max) {
        *text = shown;
    }
}

fn fix_opt(text: &mut Option<String>, clean: Clean, max: usize) {
    if let Some(text) = text {
        fix(text, clean, max);
    }
}

/// How a name that is sent back is shown, when it cannot be shown as it is.
pub fn label(name: &str) -> Option<String> {
    match line(name, MAX_NAME) {
        Cow::Owned(shown) => Some(shown),
        Cow::Borrowed(_) => None,
    }
}

/// The strings of a JSON object's members (a server's `serverInfo`, a prompt's argument),
/// cleaned as lines; `keep` names the members sent back.
fn fix_members(value: &mut Value, keep: &[&str]) {
    if let Value::Object(members) = value {
        for (key, member) in members.iter_mut() {
            if let Value::String(text) = member
                && !keep.contains(&key.as_str())
            {
                fix(text, line, MAX_TEXT);
            }
        }
    }
}

impl<T: Shown> Shown for Vec<T> {
    fn shown(self) -> Self {
        self.into_iter().map(Shown::shown).collect()
    }
}

/// A prompt's server and title.
fn heading(server: &mut Option<String>, title: &mut String) {
    fix_opt(server, line, MAX_NAME);
    fix(title, line, MAX_MESSAGE);
}

impl Shown for InputBoxParams {
    fn shown(mut self) -> Self {
        heading(&mut self.server, &mut self.title);
        fix_opt(&mut self.prompt, block, MAX_MESSAGE);
        fix_opt(&mut self.placeholder, line, MAX_TEXT);
        fix_opt(&mut self.validation_message, line, MAX_TEXT);
        self
    }
}

impl Shown for QuickPickParams {
    fn shown(mut self) -> Self {
        heading(&mut self.server, &mut self.title);
        fix_opt(&mut self.placeholder, line, MAX_TEXT);
        for item in &mut self.items {
            fix(&mut item.label, line, MAX_LINE);
            fix_opt(&mut item.description, line, MAX_TEXT);
            fix_opt(&mut item.detail, line, MAX_TEXT);
        }
        self
    }
}

impl Shown for EditDraftParams {
    fn shown(mut self) -> Self {
        heading(&mut self.server, &mut self.title);
        for problem in &mut self.problems {
            fix(&mut problem.message, line, MAX_TEXT);
        }
        self
    }
}

impl Shown for ServerStatusParams {
    fn shown(mut self) -> Self {
        self.label = label(&self.name);
        fix_opt(&mut self.protocol_version, line, MAX_NAME);
        fix_opt(&mut self.source, line, MAX_TEXT);
        fix_opt(&mut self.message, block, MAX_MESSAGE);
        self
    }
}

impl Shown for ServerSummary {
    fn shown(mut self) -> Self {
        self.status = self.status.shown();
        if let Some(info) = &mut self.server_info {
            fix_members(info, &[]);
        }
        if let Some(AuthSummary { issuer, scopes, .. }) = &mut self.auth {
            fix_opt(issuer, line, MAX_LINE);
            for scope in scopes {
                fix(scope, line, MAX_LINE);
            }
        }
        self
    }
}

/// A listed item's label (its name cleaned, when that changes it), title and description.
fn named(
    label_: &mut Option<String>,
    name: &str,
    title: &mut Option<String>,
    description: &mut Option<String>,
) {
    *label_ = label(name);
    fix_opt(title, line, MAX_LINE);
    fix_opt(description, block, MAX_MESSAGE);
}

impl Shown for ToolSummary {
    fn shown(mut self) -> Self {
        named(
            &mut self.label,
            &self.name,
            &mut self.title,
            &mut self.description,
        );
        self
    }
}

impl Shown for PromptSummary {
    fn shown(mut self) -> Self {
        named(
            &mut self.label,
            &self.name,
            &mut self.title,
            &mut self.description,
        );
        for argument in self.arguments.iter_mut().flatten() {
            fix_members(argument, &["name"]);
        }
        self
    }
}

impl Shown for ResourceSummary {
    fn shown(mut self) -> Self {
        named(
            &mut self.label,
            &self.name,
            &mut self.title,
            &mut self.description,
        );
        fix_opt(&mut self.mime_type, line, MAX_NAME);
        self
    }
}

impl Shown for ResourceTemplateSummary {
    fn shown(mut self) -> Self {
        named(
            &mut self.label,
            &self.name,
            &mut self.title,
            &mut self.description,
        );
        fix_opt(&mut self.mime_type, line, MAX_NAME);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_as_it_is() {
        assert!(matches!(
            line("weather", MAX_NAME),
            Cow::Borrowed("weather")
        ));
        assert!(matches!(block("a\nb", 10), Cow::Borrowed("a\nb")));
        assert_eq!(line("", 5), "");
    }

    #[test]
    fn line_breaks_padding_and_escapes_cannot_fake_a_second_line() {
        assert_eq!(
            line(
                "demo     \n\r\nfrom ~/.config/mcp-sidecar/mcp.json",
                MAX_LINE
            ),
            "demo from ~/.config/mcp-sidecar/mcp.json"
        );
        assert_eq!(line("\u{1B}[2J\u{1B}[31mred\u{1B}[0m", 50), "red");
        assert_eq!(
            line("a\u{1B}]8;;http://x\u{07}link\u{1B}]8;;\u{1B}\\", 50),
            "alink"
        );
        assert_eq!(line("nul\0byte", 50), "nul⟨U+0000⟩byte");
        assert_eq!(line("   padded   ", 50), "padded");
    }

    #[test]
    fn bidirectional_controls_are_shown_as_what_they_are() {
        assert_eq!(line("invoice\u{202E}fdp.exe", 50), "invoice⟨U+202E⟩fdp.exe");
        assert_eq!(block("a\u{2066}b", 50), "a⟨U+2066⟩b");
        assert_eq!(line("zero\u{200B}width", 50), "zero⟨U+200B⟩width");
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(line("ééééé", 5), "ééééé");
        assert_eq!(line("éééééé", 5), "éééé…");
        let long = "x".repeat(10_000);
        let cut = line(&long, MAX_LINE);
        assert_eq!(cut.chars().count(), MAX_LINE);
        assert!(cut.ends_with(CUT));
        // A visible control counts by what is shown, and is never cut in half.
        assert_eq!(line("ab\u{202E}", 9), "ab…");
        let shown = line(
            &format!("{}\u{202E}{}", "x".repeat(180), "y".repeat(50)),
            MAX_LINE,
        )
        .into_owned();
        assert_eq!(shown, format!("{}{CUT}", "x".repeat(180)));
        assert_eq!(
            line(&shown, MAX_LINE),
            shown,
            "cleaning twice changes nothing"
        );
    }

    #[test]
    fn a_block_keeps_lines_but_not_a_wall_of_them() {
        assert_eq!(block("one\r\ntwo\n\n\n\n\nthree", 100), "one\ntwo\n\nthree");
        assert_eq!(block("tab\there", 100), "tab here");
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Text with the characters that matter here: controls, escapes, bidirectional and
    /// invisible ones, line breaks, spaces, multibyte letters.
    fn hostile() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            Just("\u{1B}[31m".to_string()),
            Just("\u{1B}]8;;http://x\u{07}".to_string()),
            Just("\u{1B}".to_string()),
            Just("\r\n".to_string()),
            Just("  ".to_string()),
            Just("⟨U+202E⟩".to_string()),
            proptest::char::range('\u{0}', '\u{3F}').prop_map(String::from),
            prop_oneof![
                Just('\u{202E}'),
                Just('\u{2066}'),
                Just('\u{200B}'),
                Just('\u{FEFF}'),
                Just('\u{85}'),
                Just('\u{2028}'),
                Just('\u{E0041}'),
                Just('é'),
                Just('界'),
            ]
            .prop_map(String::from),
            "[a-z]{1,8}",
            any::<char>().prop_map(String::from),
        ];
        proptest::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
    }

    fn hidden(c: char) -> bool {
        (c.is_control() && c != '\n') || invisible(c)
    }

    /// What a text without escapes shows, ignoring white space: each hidden character by its
    /// code.
    fn visible(text: &str) -> String {
        text.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| {
                if hidden(c) {
                    format!("⟨U+{:04X}⟩", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn a_line_is_one_capped_line_of_visible_characters(text in hostile(), max in 1usize..80) {
            let shown = line(&text, max);
            prop_assert!(shown.chars().count() <= max, "{shown:?}");
            prop_assert!(!shown.chars().any(|c| hidden(c) || line_break(c) || c == '\t'), "{shown:?}");
            prop_assert!(!shown.contains("  ") && shown.trim() == shown, "{shown:?}");
            prop_assert_eq!(line(&shown, max), shown.clone(), "cleaning twice changes nothing");
        }

        #[test]
        fn a_block_keeps_lines_and_hides_nothing(text in hostile(), max in 1usize..80) {
            let shown = block(&text, max);
            prop_assert!(shown.chars().count() <= max, "{shown:?}");
            prop_assert!(!shown.chars().any(|c| hidden(c) || (line_break(c) && c != '\n')), "{shown:?}");
            prop_assert!(!shown.contains("\n\n\n"), "{shown:?}");
            prop_assert_eq!(block(&shown, max), shown.clone(), "cleaning twice changes nothing");
        }

        #[test]
        fn nothing_visible_is_lost_or_added_unless_cut(text in hostile()) {
            let text = text.replace('\u{1B}', "");
            let max = 10_000;
            prop_assert_eq!(visible(&line(&text, max)), visible(&text));
            prop_assert_eq!(visible(&block(&text, max)), visible(&text));
        }

        #[test]
        fn plain_text_is_shown_as_it_is(words in proptest::collection::vec("[a-zA-Z0-9éß界.:/-]{1,10}", 0..10)) {
            let text = words.join(" ");
            prop_assert!(matches!(line(&text, MAX_LINE), Cow::Borrowed(_)));
            prop_assert!(matches!(block(&text, MAX_LINE), Cow::Borrowed(_)));
        }
    }
}
