//! A JSON line checked as it comes in, a read at a time.
//!
//! A big answer arrives in many reads while the server is still writing it. [`Scan`] checks the
//! syntax of each read's bytes as they come (a push-down state machine that stops anywhere, even
//! inside a number or an escape) and notes where the answer's parts lie: the `id` and the
//! `result` (the [`Outline`]). When the newline comes, only the last read is left to check, and
//! the waiting call gets the result as a slice of the line.
//!
//! It accepts only JSON (RFC 8259: no trailing commas, no comments, no control characters in
//! strings, no leading zeros or lone signs). A line whose containers nest deeper than
//! [`LINE_DEPTH`] is [`Scan::too_deep`]: the transport refuses it ([`nests_deeper`] is the same
//! bound for the lines this scan does not see). It gives no outline, and the line goes the usual
//! way (one `serde_json` scan, then rmcp's parse, with their errors), for anything unusual: an
//! answer that is no object or lacks an `id` or a `result` object, a key at those levels with an
//! escape, a member named twice there, and any `\uD800`–`\uDFFF` escape (serde_json's scan
//! accepts a lone one, which a full parse refuses). UTF-8 is the codec's check, not this one's.
//! A test holds the outline to what the `serde_json` reading finds, split at every point.

use std::ops::Range;

/// How deep a server's result (or a request's or notification's params) may nest, itself
/// counted as one level: deeper ones are refused on every path (stdio lines big and small, HTTP
/// events and bodies), so the editor and agents never get them (Neovim's JSON decoder drops a
/// reply nested a few thousand levels, and the call never ends). serde_json refuses past 128
/// levels of the whole message, but its `RawValue` and `IgnoredAny` skip that limit.
pub const MAX_DEPTH: usize = 100;
/// The same bound on a whole message line: its own object is one level more.
pub const LINE_DEPTH: usize = MAX_DEPTH + 1;

/// What a call refused for its depth is told (its `what`: "result", "error").
pub fn refusal(what: &str) -> String {
    format!("its {what} nests deeper than {MAX_DEPTH} levels; the sidecar does not pass it on")
}

/// Where a complete answer's parts lie in its line: byte ranges, each a whole JSON value
/// without the whitespace around it (a key without its quotes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outline {
    pub id: Range<usize>,
    /// The result object, from its `{` to its `}`.
    pub result: Range<usize>,
    /// The result's members in order: the key's text between its quotes, and the value.
    pub members: Vec<(Range<usize>, Range<usize>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must come: at the start, after `:`, after `,` in an array.
    Value,
    /// After `[`: a value or `]`.
    ValueOrClose,
    /// After `{`: a key or `}`.
    KeyOrClose,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value in a container: `,` or the container's close.
    Next,
    /// After the top value: only whitespace.
    End,
    /// In a string.
    Str,
    /// After a backslash in a string.
    Escape,
    /// In `\u`, this many hex digits read.
    Unicode(u8),
    /// After `-`: a digit must come.
    Minus,
    /// After a leading `0`.
    Zero,
    /// In the integer digits.
    Int,
    /// After `.`: a digit must come.
    Dot,
    /// In the fraction's digits.
    Frac,
    /// After `e`: a sign or a digit.
    Exp,
    /// After the exponent's sign: a digit must come.
    ExpSign,
    /// In the exponent's digits.
    ExpInt,
    /// In `true`, `false` or `null`: the letters still to come.
    Literal(&'static [u8]),
    /// Not JSON, or nothing to outline: the rest is not looked at.
    Failed,
}

/// Which member of the answer's top object is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Top {
    Id,
    Result,
    Other,
}

/// One line's check so far. [`Scan::feed`] the line's bytes in order, then [`Scan::finish`].
#[derive(Debug)]
pub struct Scan {
    state: State,
    /// Bytes fed so far: where the next byte lies in the line.
    at: usize,
    /// Open containers, innermost last: true for an object.
    stack: Vec<bool>,
    /// Whether the string being read is a key.
    in_key: bool,
    /// Where the string being read starts (after its quote), and whether it has an escape.
    str_start: usize,
    str_escaped: bool,
    /// The first hex digit of a `\u` escape, to tell a surrogate.
    hex_first: u8,
    /// The top object's member being read, and where its value starts.
    top: Top,
    top_start: usize,
    id: Option<Range<usize>>,
    result: Option<Range<usize>>,
    /// The result's member being read: its key, and where its value starts.
    key: Range<usize>,
    member_start: usize,
    members: Vec<(Range<usize>, Range<usize>)>,
    /// Where the number or literal being read started.
    token_start: usize,
    /// Whether the line nests deeper than [`LINE_DEPTH`] (the scan stopped there).
    too_deep: bool,
}

impl Default for Scan {
    fn default() -> Self {
        Scan {
            state: State::Value,
            at: 0,
            stack: Vec::new(),
            in_key: false,
            str_start: 0,
            str_escaped: false,
            hex_first: 0,
            top: Top::Other,
            top_start: 0,
            id: None,
            result: None,
            key: 0..0,
            member_start: 0,
            members: Vec::new(),
            token_start: 0,
            too_deep: false,
        }
    }
}

/// The offset of the first `"`, `\` or control character in `s`, eight bytes at a time.
#[inline]
fn special(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while i + 8 <= s.len() {
        let w = u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        // A byte of zero in `quote`/`backslash`, or under 0x20 in `w`: the lowest flag found
        // this way is exact (higher ones may be borrows), and the lowest is all that is used.
        let found = (quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash
            | w.wrapping_sub(ONES * 0x20) & !w)
            & HIGH;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| i + p)
}

/// Whether JSON text `json` has containers nested deeper than `limit`, strings skipped; the
/// text is not otherwise checked (a parse after this does that). Text with at most `limit`
/// brackets is passed on one `memchr` count (a small call's answer is mostly that); else it
/// stops at the first bracket past the limit.
pub fn nests_deeper(json: &[u8], limit: usize) -> bool {
    if memchr::memchr2_iter(b'[', b'{', json).nth(limit).is_none() {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        match b {
            b'"' => loop {
                i += 1;
                let Some(p) = json.get(i..).and_then(special) else {
                    return false;
                };
                i += p;
                match json[i] {
                    b'"' => break,
                    // The escaped byte is stepped over by the next turn's `i += 1`.
                    b'\\' => i += 1,
                    _ => {}
                }
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// [`nests_deeper`] for a parsed value (serde_json built it, so it is at most 128 deep).
pub fn value_nests_deeper(value: &serde_json::Value, limit: usize) -> bool {
    use serde_json::Value;
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| value_nests_deeper(v, limit - 1)),
        Value::Object(members) => {
            limit == 0 || members.values().any(|v| value_nests_deeper(v, limit - 1))
        }
        _ => false,
    }
}

/// JSON's whitespace.
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Scan {
    /// The line so far: what is past [`Scan::len`] is new (the line only ever grows).
    pub fn feed(&mut self, line: &[u8]) {
        let mut i = self.at;
        self.at = line.len();
        while i < line.len() {
            let b = line[i];
            match self.state {
                // Text runs to the next quote, backslash or control character, and a
                // one-letter escape is stepped over here: the text of a big answer (a file,
                // a log) escapes a newline or a quote every few dozen bytes.
                State::Str => loop {
                    let Some(p) = special(&line[i..]) else {
                        return;
                    };
                    i += p;
                    match line[i] {
                        b'"' => {
                            self.string_done(line, i);
                            break;
                        }
                        b'\\' => {
                            self.str_escaped = true;
                            if let Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') =
                                line.get(i + 1)
                            {
                                i += 2;
                                continue;
                            }
                            self.state = State::Escape;
                            break;
                        }
                        _ => return self.fail(),
                    }
                },
                State::Escape => match b {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        self.state = State::Str
                    }
                    b'u' => self.state = State::Unicode(0),
                    _ => return self.fail(),
                },
                State::Unicode(n) => {
                    if !b.is_ascii_hexdigit() {
                        return self.fail();
                    }
                    match n {
                        0 => self.hex_first = b,
                        // `\uD800`–`\uDFFF`: see the module's note.
                        1 if matches!(self.hex_first, b'd' | b'D')
                            && matches!(b, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F') =>
                        {
                            return self.fail();
                        }
                        _ => {}
                    }
                    self.state = if n == 3 {
                        State::Str
                    } else {
                        State::Unicode(n + 1)
                    };
                }
                State::Value | State::ValueOrClose => {
                    if is_space(b) {
                    } else if b == b']' && self.state == State::ValueOrClose {
                        if !self.close(false, i) {
                            return;
                        }
                    } else if !self.value(b, i) {
                        return;
                    }
                }
                State::KeyOrClose | State::Key => {
                    if is_space(b) {
                    } else if b == b'"' {
                        self.in_key = true;
                        self.str_start = i + 1;
                        self.str_escaped = false;
                        self.state = State::Str;
                    } else if b == b'}' && self.state == State::KeyOrClose {
                        if !self.close(true, i) {
                            return;
                        }
                    } else {
                        return self.fail();
                    }
                }
                State::Colon => {
                    if is_space(b) {
                    } else if b == b':' {
                        self.state = State::Value;
                    } else {
                        return self.fail();
                    }
                }
                State::Next => {
                    if is_space(b) {
                    } else if b == b',' {
                        self.state = if self.stack.last() == Some(&true) {
                            State::Key
                        } else {
                            State::Value
                        };
                    } else if b == b'}' || b == b']' {
                        if !self.close(b == b'}', i) {
                            return;
                        }
                    } else {
                        return self.fail();
                    }
                }
                State::End => {
                    if !is_space(b) {
                        return self.fail();
                    }
                }
                State::Minus => match b {
                    b'0' => self.state = State::Zero,
                    b'1'..=b'9' => self.state = State::Int,
                    _ => return self.fail(),
                },
                State::Zero | State::Int | State::Frac | State::ExpInt => match (self.state, b) {
                    (State::Int | State::Frac | State::ExpInt, b'0'..=b'9') => {}
                    (State::Zero | State::Int, b'.') => self.state = State::Dot,
                    (State::Zero | State::Int | State::Frac, b'e' | b'E') => {
                        self.state = State::Exp
                    }
                    _ => {
                        // The number ended before this byte, which is read again.
                        self.value_done(i);
                        continue;
                    }
                },
                State::Dot => match b {
                    b'0'..=b'9' => self.state = State::Frac,
                    _ => return self.fail(),
                },
                State::Exp => match b {
                    b'+' | b'-' => self.state = State::ExpSign,
                    b'0'..=b'9' => self.state = State::ExpInt,
                    _ => return self.fail(),
                },
                State::ExpSign => match b {
                    b'0'..=b'9' => self.state = State::ExpInt,
                    _ => return self.fail(),
                },
                State::Literal(rest) => {
                    if rest[0] != b {
                        return self.fail();
                    }
                    if rest.len() == 1 {
                        self.value_done(i + 1);
                    } else {
                        self.state = State::Literal(&rest[1..]);
                    }
                }
                State::Failed => return,
            }
            i += 1;
        }
    }

    /// Whether the line fed so far nests containers deeper than [`LINE_DEPTH`] (the scan
    /// stops there; a line it stopped on for another reason is not known to be shallow).
    pub fn too_deep(&self) -> bool {
        self.too_deep
    }

    /// Whether what was fed is one whole JSON object, so nested at most [`LINE_DEPTH`] deep.
    pub fn complete(&self) -> bool {
        self.state == State::End
    }

    /// The line is complete: its outline, if it is JSON with one.
    pub fn finish(mut self) -> Option<Outline> {
        if matches!(
            self.state,
            State::Zero | State::Int | State::Frac | State::ExpInt
        ) {
            self.value_done(self.at);
        }
        if self.state != State::End {
            return None;
        }
        let (id, result) = (self.id?, self.result?);
        // An object without members is no big result.
        if self.members.is_empty() {
            return None;
        }
        Some(Outline {
            id,
            result,
            members: self.members,
        })
    }

    fn fail(&mut self) {
        self.state = State::Failed;
    }

    /// A value starts with `b` at `at`; false when that fails the line.
    fn value(&mut self, b: u8, at: usize) -> bool {
        match self.stack.len() {
            // Only an object can be an answer, and only an object its result.
            0 if b != b'{' => {
                self.fail();
                return false;
            }
            1 if self.top == Top::Result && b != b'{' => {
                self.fail();
                return false;
            }
            1 => self.top_start = at,
            2 if self.top == Top::Result => self.member_start = at,
            _ => {}
        }
        match b {
            b'{' | b'[' => {
                if self.stack.len() == LINE_DEPTH {
                    self.too_deep = true;
                    self.fail();
                    return false;
                }
                self.stack.push(b == b'{');
                self.state = if b == b'{' {
                    State::KeyOrClose
                } else {
                    State::ValueOrClose
                };
            }
            b'"' => {
                self.in_key = false;
                self.str_start = at + 1;
                self.str_escaped = false;
                self.state = State::Str;
            }
            b'-' => self.start_token(State::Minus, at),
            b'0' => self.start_token(State::Zero, at),
            b'1'..=b'9' => self.start_token(State::Int, at),
            b't' => self.start_token(State::Literal(b"rue"), at),
            b'f' => self.start_token(State::Literal(b"alse"), at),
            b'n' => self.start_token(State::Literal(b"ull"), at),
            _ => {
                self.fail();
                return false;
            }
        }
        true
    }

    fn start_token(&mut self, state: State, at: usize) {
        self.token_start = at;
        self.state = state;
    }

    /// A string ended with the quote at `at`.
    fn string_done(&mut self, line: &[u8], at: usize) {
        if !self.in_key {
            return self.value_done(at + 1);
        }
        self.state = State::Colon;
        let key = self.str_start..at;
        match self.stack.len() {
            1 => {
                if self.str_escaped {
                    return self.fail();
                }
                self.top = match &line[key] {
                    b"id" => Top::Id,
                    b"result" => Top::Result,
                    _ => Top::Other,
                };
            }
            2 if self.top == Top::Result => {
                if self.str_escaped {
                    return self.fail();
                }
                self.key = key;
            }
            _ => {}
        }
    }

    /// A container closes with the byte at `at` (an object's `}` when `object`): false when
    /// that fails the line.
    fn close(&mut self, object: bool, at: usize) -> bool {
        if self.stack.pop() != Some(object) {
            self.fail();
            return false;
        }
        self.value_done(at + 1);
        true
    }

    /// A value ended before `end`, in the container now innermost.
    fn value_done(&mut self, end: usize) {
        self.state = if self.stack.is_empty() {
            State::End
        } else {
            State::Next
        };
        match self.stack.len() {
            1 => {
                let span = self.top_start..end;
                let slot = match self.top {
                    Top::Id => &mut self.id,
                    Top::Result => &mut self.result,
                    Top::Other => return,
                };
                if slot.replace(span).is_some() {
                    // Named twice.
                    self.fail();
                }
            }
            2 if self.top == Top::Result => {
                let key = self.key.clone();
                self.members.push((key, self.member_start..end));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
