use super::*;
use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The scan's outline of `line`, fed in pieces cut at `cuts`.
fn scan(line: &[u8], cuts: &[usize]) -> Option<Outline> {
    let mut scan = Scan::default();
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (line.len() + 1)).collect();
    cuts.sort_unstable();
    for cut in cuts {
        scan.feed(&line[..cut]);
    }
    scan.feed(line);
    scan.finish()
}

/// What the `serde_json` reading finds.
fn serde(line: &[u8]) -> Option<Outline> {
    outline(&Bytes::copy_from_slice(line), None)
}

fn text(line: &[u8], r: &Range<usize>) -> String {
    String::from_utf8(line[r.clone()].to_vec()).unwrap()
}

#[test]
fn an_answer_is_outlined_wherever_it_is_cut() {
    let line = br#" {"jsonrpc":"2.0", "id" : "a\"b" ,"result":{ "content":[{"type":"text","text":"x\u00e9\n"}],"isError" :false,"n":-0.5e+3,"z":null } } "#;
    let whole = scan(line, &[]).unwrap();
    assert_eq!(text(line, &whole.id), r#""a\"b""#);
    assert!(text(line, &whole.result).starts_with("{ \"content\""));
    assert!(text(line, &whole.result).ends_with("null }"));
    let members: Vec<(String, String)> = whole
        .members
        .iter()
        .map(|(k, v)| (text(line, k), text(line, v)))
        .collect();
    assert_eq!(
        members,
        [
            ("content", r#"[{"type":"text","text":"x\u00e9\n"}]"#),
            ("isError", "false"),
            ("n", "-0.5e+3"),
            ("z", "null")
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    assert_eq!(Some(whole.clone()), serde(line));
    for cut in 0..=line.len() {
        assert_eq!(scan(line, &[cut]).as_ref(), Some(&whole), "cut at {cut}");
    }
    // Byte by byte.
    let every: Vec<usize> = (0..=line.len()).collect();
    assert_eq!(scan(line, &every).as_ref(), Some(&whole));
}

#[test]
fn what_is_not_json_or_not_such_an_answer_has_no_outline() {
    let ok = |result: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
    let bad = [
        ok(r#"{"a":1,}"#),
        ok(r#"{"a":[1,]}"#),
        ok(r#"{"a":01}"#),
        ok(r#"{"a":-}"#),
        ok(r#"{"a":1.}"#),
        ok(r#"{"a":1e}"#),
        ok(r#"{"a":.5}"#),
        ok(r#"{"a":+1}"#),
        ok(r#"{"a":tru}"#),
        ok(r#"{"a":nul1}"#),
        ok("{\"a\":\"tab\tin\"}"),
        ok(r#"{"a":"\x"}"#),
        ok(r#"{"a":"\u12G4"}"#),
        ok(r#"{"a":"\ud83d\ude00"}"#),
        ok(r#"{"a":"\uDC00"}"#),
        ok(r#"{"a":[}"#),
        ok(r#"{"a":{]}"#),
        ok(r#"{"a" 1}"#),
        ok(r#"{"a":1 "b":2}"#),
        ok(r#"{a:1}"#),
        ok(r#"{"a\u0062":1}"#),
        ok("[1]"),
        ok("\"text\""),
        ok("{}"),
        ok(r#"{"a":1}} "#),
        ok(r#"{"a":1}"#) + " x",
        ok(r#"{"a":1}"#).replacen(r#""id":1,"#, "", 1),
        ok(r#"{"a":1}"#).replacen(r#""id":1,"#, r#""id":1,"id":2,"#, 1),
        ok(r#"{"a":1}"#).replacen(r#""jsonrpc""#, r#""json\u0072pc""#, 1),
        format!(r#"{}{}"#, ok(r#"{"a":1}"#), r#","result":{"b":2}}"#).replacen("}}", "}", 1),
        ok(&format!(
            r#"{{"a":{}1{}}}"#,
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        )),
        ok(r#"{"a":1}"#).trim_end_matches('}').to_string(),
        "[1,2]".into(),
        String::new(),
    ];
    for line in bad {
        for cut in [0, line.len() / 2, line.len()] {
            assert_eq!(scan(line.as_bytes(), &[cut]), None, "{line}");
        }
    }
    // Each is one edit from what has an outline.
    let deep = ok(&format!(
        r#"{{"a":{}1{}}}"#,
        "[".repeat(MAX_DEPTH - 2),
        "]".repeat(MAX_DEPTH - 2)
    ));
    for line in [ok(r#"{"a":1}"#), ok(r#"{"a":"\u0041\t"}"#), deep] {
        assert!(scan(line.as_bytes(), &[]).is_some(), "{line}");
        assert_eq!(scan(line.as_bytes(), &[]), serde(line.as_bytes()), "{line}");
    }
}

#[test]
fn an_escaped_backslash_before_ud800_is_no_surrogate_escape() {
    // `\\ud800` is a backslash, then the text `ud800`: the scan reads escapes exactly,
    // where the relay's other reading declines anything that might be one.
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"a":"\\ud800"}}"#;
    let outline = scan(line, &[]).unwrap();
    assert_eq!(text(line, &outline.members[0].1), r#""\\ud800""#);
    assert_eq!(serde(line), None);
    // A backslash escaped, then a surrogate escape.
    let line = br#"{"jsonrpc":"2.0","id":1,"result":{"a":"\\\ud800"}}"#;
    assert_eq!(scan(line, &[]), None);
}

/// How many containers `value` nests, itself counted.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn the_scan_stops_past_the_depth_bound_and_says_so() {
    let line = |levels: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{}1{}}}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    // The result nests `levels` deep, itself counted; the line one more.
    let at_bound = line(MAX_DEPTH);
    let value: Value = serde_json::from_str(&at_bound).unwrap();
    assert_eq!(depth(&value["result"]), MAX_DEPTH);
    let mut scan = Scan::default();
    scan.feed(at_bound.as_bytes());
    assert!(!scan.too_deep() && scan.complete());
    assert!(scan.finish().is_some());
    for levels in [MAX_DEPTH + 1, 1_000_000] {
        let past = line(levels);
        let mut scan = Scan::default();
        // Fed in two reads: it stops at the first bracket past the bound.
        scan.feed(&past.as_bytes()[..past.len() * 3 / 4]);
        assert!(scan.too_deep(), "{levels}");
        scan.feed(past.as_bytes());
        assert!(scan.too_deep() && !scan.complete(), "{levels}");
        assert!(scan.finish().is_none());
    }
    assert!(!nests_deeper(at_bound.as_bytes(), LINE_DEPTH));
    assert!(nests_deeper(line(MAX_DEPTH + 1).as_bytes(), LINE_DEPTH));
    assert!(!value_nests_deeper(&value["result"], MAX_DEPTH));
    let past: Value = serde_json::from_str(&line(MAX_DEPTH + 1)).unwrap();
    assert!(value_nests_deeper(&past["result"], MAX_DEPTH));
}

#[test]
fn brackets_in_strings_are_no_nesting() {
    let text = format!(
        r#"{{"a":"{}\"{}\\","b":[1]}}"#,
        "[{".repeat(500),
        "\\u005b".repeat(9)
    );
    assert!(!nests_deeper(text.as_bytes(), 2));
    assert!(nests_deeper(text.as_bytes(), 1));
    // A million levels are found in the first bound's worth of bytes.
    let deep = "[".repeat(1_000_000);
    assert!(nests_deeper(deep.as_bytes(), LINE_DEPTH));
    // Cut text is not read past its end.
    for cut in [r#"["\"#, r#"["a"#, r#"[""#, "[[", r#"[\"#] {
        assert!(!nests_deeper(cut.as_bytes(), 2), "{cut}");
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        "[\\x00-\\x1f\"\\\\a-c]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            proptest::collection::btree_map("[a-z\"\\\\]{0,4}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_with_brackets() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        "[\\[\\]{}\"\\\\a\\x00-\\x1f]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("[a-z\\[{\"]{0,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn answer() -> impl Strategy<Value = Vec<u8>> {
    (
        json_value(),
        proptest::collection::btree_map("[a-z_]{1,8}", json_value(), 1..5),
        any::<bool>(),
    )
        .prop_map(|(id, result, pretty)| {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            if pretty {
                serde_json::to_vec_pretty(&answer).unwrap()
            } else {
                serde_json::to_vec(&answer).unwrap()
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// The depth found from the text without a parse is the parsed value's, brackets and
    /// escaped quotes in strings and all.
    #[test]
    fn the_depth_is_found_without_a_parse(
        value in json_with_brackets(),
        limit in 0usize..7,
        pretty in any::<bool>(),
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        prop_assert_eq!(nests_deeper(text.as_bytes(), limit), depth(&value) > limit, "{}", text);
        prop_assert_eq!(value_nests_deeper(&value, limit), depth(&value) > limit);
    }


    /// A well-formed answer is outlined as the `serde_json` reading finds it, however
    /// its bytes come.
    #[test]
    fn answers_are_outlined_as_serde_json_reads_them(
        line in answer(),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let expected = serde(&line);
        prop_assert!(expected.is_some());
        prop_assert_eq!(scan(&line, &cuts), expected);
    }

    /// Broken lines: an outline only for JSON, and then the one `serde_json` finds; the
    /// same whether the bytes come at once or in pieces.
    #[test]
    fn broken_answers_are_outlined_only_when_they_are_json(
        line in answer(),
        edits in proptest::collection::vec(
            (any::<usize>(), 0u8..3, proptest::sample::select(
                b"{}[]\",:\\0123456789-+.eEtrufalsn \t\x01x".to_vec())),
            1..4),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let mut line = line;
        for (at, kind, byte) in edits {
            let at = at % (line.len() + 1);
            match kind {
                0 => line.insert(at, byte),
                1 if at < line.len() => { line.remove(at); }
                _ if at < line.len() => line[at] = byte,
                _ => {}
            }
        }
        let whole = scan(&line, &[]);
        prop_assert_eq!(&scan(&line, &cuts), &whole);
        // UTF-8 is the codec's check: the outline is used only for a line that passed it.
        if let Some(outline) = whole.filter(|_| std::str::from_utf8(&line).is_ok()) {
            prop_assert!(serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok());
            prop_assert_eq!(serde(&line), Some(outline), "{}", String::from_utf8_lossy(&line));
        }
    }
}

// The `serde_json` reading the scan is held to.

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    result: Members<'a>,
}

/// Where the parts of an answer lie in `line`, read in one `serde_json` scan of the whole line:
/// its syntax, and the result's members each as raw JSON (UTF-8 checked, as a full parse does,
/// unless `text` says it is known already), building no tree. The transport has the same
/// outline from [`super::scan::Scan`] as the line came in, with no scan left to do.
pub(crate) fn outline(line: &Bytes, text: Option<&str>) -> Option<Outline> {
    // Only an object is a message: serde reads a struct from an array too, which took a batch
    // `[7, {...}]` for an answer to request 7 with the second member as its result.
    if line.iter().find(|&&b| !is_space(b)) != Some(&b'{') {
        return None;
    }
    // Where the result lies is found from pointers into `line`: a `text` that is not that line
    // finds no result there and the line goes the usual way.
    let head: Head = match text {
        Some(text) => serde_json::from_str(text).ok()?,
        None => serde_json::from_slice(line).ok()?,
    };
    let offset = |s: &str| {
        let at = (s.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
        (at + s.len() <= line.len()).then_some(at..at + s.len())
    };
    let members = head.result.0;
    let result = object_span(line, &members)?;
    if crate::mcp::reply::has_surrogate_escape(&line[result.clone()]) {
        return None;
    }
    Some(Outline {
        id: offset(head.id.get())?,
        members: members
            .iter()
            .map(|(key, value)| Some((offset(key)?, offset(value.get())?)))
            .collect::<Option<_>>()?,
        result,
    })
}

/// Where the object whose `members` were read from `line` lies in it: from the `{` before the
/// first key to the `}` after the last value. Keys and values borrow from the line (a key with
/// an escape cannot, and fails the scan), and only JSON whitespace may stand between them and
/// the braces; `None` for an object without members, which is no big result.
fn object_span(line: &[u8], members: &[(&str, &RawValue)]) -> Option<std::ops::Range<usize>> {
    let offset = |s: &str| {
        let at = (s.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
        (at + s.len() <= line.len()).then_some(at)
    };
    let (first, _) = members.first()?;
    let (_, last) = members.last()?;
    // The first key's opening quote, then back over whitespace to the brace.
    let quote = offset(first)?.checked_sub(1)?;
    let open = line[..quote].iter().rposition(|&b| !is_space(b))?;
    let end = offset(last.get())? + last.get().len();
    let close = end + line[end..].iter().position(|&b| !is_space(b))?;
    (line[quote] == b'"' && line[open] == b'{' && line[close] == b'}').then_some(open..close + 1)
}

/// A result's top-level members in order, values unread.
struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Members<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}
