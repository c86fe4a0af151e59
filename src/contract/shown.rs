//! Text from outside the person's control (servers, workspace files, URLs, authorization
//! servers) as the editor shows it. Every string the sidecar puts on the person's screen that
//! such a party chose passes through here once: control characters, ANSI escapes, NUL and
//! invisible characters cannot change what the rest of the line appears to say, bidirectional
//! controls are shown as what they are (`⟨U+202E⟩`), and length is capped. What is *sent back*
//! (to a server, to a URL) is never cleaned: only what is shown.

use std::borrow::Cow;

/// What a cut text ends with.
pub const CUT: &str = "… (truncated)";
/// The longest name (server, tool, prompt, resource) shown, in characters.
pub const MAX_NAME: usize = 100;
/// The longest one-line text (a title, a label, a URL) shown, in characters.
pub const MAX_LINE: usize = 200;

/// Characters that reorder or hide the text around them: the bidirectional embeddings,
/// overrides and isolates, the directional marks, and the zero-width characters.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}'                  // Arabic letter mark
        | '\u{200B}'..='\u{200F}'   // zero-width space, non-joiner, joiner, LRM, RLM
        | '\u{202A}'..='\u{202E}'   // LRE, RLE, PDF, LRO, RLO
        | '\u{2060}'..='\u{2064}'   // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}'   // LRI, RLI, FSI, PDI
        | '\u{FEFF}'                // zero-width no-break space
        | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotations
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
        if count > max || c.is_control() || invisible(c) || (space && previous_space) {
            return false;
        }
        previous_space = space;
    }
    !previous_space || text.is_empty()
}

/// `text` as one line: line breaks and tabs become one space, runs of spaces collapse, the
/// ends are trimmed, an ANSI escape sequence is dropped whole, any other control character and
/// every invisible or bidirectional one is written as `⟨U+XXXX⟩`; cut at `max` characters.
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
        && text
            .chars()
            .all(|c| c == '\n' || !(c.is_control() || invisible(c) || line_break(c)));
    if plain {
        return Cow::Borrowed(text);
    }
    Cow::Owned(clean(text, max, true))
}

fn clean(text: &str, max: usize, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4 + CUT.len()));
    let mut count = 0usize;
    let mut chars = text.chars().peekable();
    let mut breaks = 0usize;
    let push = |out: &mut String, s: &str, count: &mut usize| -> bool {
        let n = s.chars().count();
        if *count + n > max {
            return false;
        }
        out.push_str(s);
        *count += n;
        true
    };
    while let Some(c) = chars.next() {
        let piece: Cow<'_, str> = if c == '\u{1B}' {
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
                Cow::Borrowed("\n")
            } else if keep_lines {
                Cow::Borrowed(" ")
            } else if out.is_empty() || out.ends_with(' ') {
                continue;
            } else {
                Cow::Borrowed(" ")
            }
        } else if c == ' ' && !keep_lines && (out.is_empty() || out.ends_with(' ')) {
            continue;
        } else if c.is_control() || invisible(c) {
            Cow::Owned(format!("⟨U+{:04X}⟩", c as u32))
        } else {
            let mut buf = [0u8; 4];
            Cow::Owned(c.encode_utf8(&mut buf).to_string())
        };
        if !line_break(c) {
            breaks = 0;
        }
        if !push(&mut out, &piece, &mut count) {
            let kept = out.trim_end().len();
            out.truncate(kept);
            out.push_str(CUT);
            return out;
        }
    }
    let kept = out.trim_end().len();
    out.truncate(kept);
    out
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
        assert_eq!(line("éééééé", 5), format!("ééééé{CUT}"));
        let long = "x".repeat(10_000);
        assert_eq!(
            line(&long, MAX_LINE).chars().count(),
            MAX_LINE + CUT.chars().count()
        );
        // A visible control counts by what is shown.
        assert_eq!(line("ab\u{202E}", 4), format!("ab{CUT}"));
    }

    #[test]
    fn a_block_keeps_lines_but_not_a_wall_of_them() {
        assert_eq!(block("one\r\ntwo\n\n\n\n\nthree", 100), "one\ntwo\n\nthree");
        assert_eq!(block("tab\there", 100), "tab here");
    }
}
