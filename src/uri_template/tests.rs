use super::*;

/// A value as the tests write it.
enum V {
    S(&'static str),
    L(Vec<String>),
    M(Vec<(String, String)>),
}

fn list(items: &[&str]) -> V {
    V::L(items.iter().map(|s| s.to_string()).collect())
}

fn map(pairs: &[(&str, &str)]) -> V {
    V::M(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

/// The variables of RFC 6570 §3.2 (a superset of those of §1.2, with the same values).
fn rfc_values() -> Vec<(&'static str, V)> {
    vec![
        ("count", list(&["one", "two", "three"])),
        ("dom", list(&["example", "com"])),
        ("dub", V::S("me/too")),
        ("hello", V::S("Hello World!")),
        ("half", V::S("50%")),
        ("var", V::S("value")),
        ("who", V::S("fred")),
        ("base", V::S("http://example.com/home/")),
        ("path", V::S("/foo/bar")),
        ("list", list(&["red", "green", "blue"])),
        ("keys", map(&[("semi", ";"), ("dot", "."), ("comma", ",")])),
        ("v", V::S("6")),
        ("x", V::S("1024")),
        ("y", V::S("768")),
        ("empty", V::S("")),
        ("empty_keys", map(&[])),
        // `undef` is left out: undefined.
    ]
}

fn expand_with(template: &str, values: &[(&str, V)]) -> Result<String, Error> {
    let template = Template::parse(template)?;
    template.expand(|name| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| match v {
                V::S(s) => Value::String(s),
                V::L(items) => Value::List(items),
                V::M(pairs) => Value::Map(pairs),
            })
    })
}

/// Every `(template, expected)` row expands as the RFC says.
fn table(rows: &[(&str, &str)]) {
    let values = rfc_values();
    for (template, expected) in rows {
        assert_eq!(
            expand_with(template, &values).as_deref(),
            Ok(*expected),
            "{template}"
        );
    }
}

#[test]
fn rfc_1_2_level_1() {
    table(&[("{var}", "value"), ("{hello}", "Hello%20World%21")]);
}

#[test]
fn rfc_1_2_level_2() {
    table(&[
        ("{+var}", "value"),
        ("{+hello}", "Hello%20World!"),
        ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"),
        ("X{#var}", "X#value"),
        ("X{#hello}", "X#Hello%20World!"),
    ]);
}

#[test]
fn rfc_1_2_level_3() {
    table(&[
        ("map?{x,y}", "map?1024,768"),
        ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("{+x,hello,y}", "1024,Hello%20World!,768"),
        ("{+path,x}/here", "/foo/bar,1024/here"),
        ("{#x,hello,y}", "#1024,Hello%20World!,768"),
        ("{#path,x}/here", "#/foo/bar,1024/here"),
        ("X{.var}", "X.value"),
        ("X{.x,y}", "X.1024.768"),
        ("{/var}", "/value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y}", ";x=1024;y=768"),
        ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ]);
}

#[test]
fn rfc_1_2_level_4() {
    table(&[
        ("{var:3}", "val"),
        ("{var:30}", "value"),
        ("{list}", "red,green,blue"),
        ("{list*}", "red,green,blue"),
        ("{keys}", "semi,%3B,dot,.,comma,%2C"),
        ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
        ("{+path:6}/here", "/foo/b/here"),
        ("{+list}", "red,green,blue"),
        ("{+list*}", "red,green,blue"),
        ("{+keys}", "semi,;,dot,.,comma,,"),
        ("{+keys*}", "semi=;,dot=.,comma=,"),
        ("{#path:6}/here", "#/foo/b/here"),
        ("{#list}", "#red,green,blue"),
        ("{#list*}", "#red,green,blue"),
        ("{#keys}", "#semi,;,dot,.,comma,,"),
        ("{#keys*}", "#semi=;,dot=.,comma=,"),
        ("X{.var:3}", "X.val"),
        ("X{.list}", "X.red,green,blue"),
        ("X{.list*}", "X.red.green.blue"),
        ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
        ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
        ("{/var:1,var}", "/v/value"),
        ("{/list}", "/red,green,blue"),
        ("{/list*}", "/red/green/blue"),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
        ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
        ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
        ("{;hello:5}", ";hello=Hello"),
        ("{;list}", ";list=red,green,blue"),
        ("{;list*}", ";list=red;list=green;list=blue"),
        ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
        ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
        ("{?var:3}", "?var=val"),
        ("{?list}", "?list=red,green,blue"),
        ("{?list*}", "?list=red&list=green&list=blue"),
        ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
        ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
        ("{&var:3}", "&var=val"),
        ("{&list}", "&list=red,green,blue"),
        ("{&list*}", "&list=red&list=green&list=blue"),
        ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
        ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
    ]);
}

#[test]
fn rfc_3_2_1_variable_expansion() {
    table(&[
        ("{count}", "one,two,three"),
        ("{count*}", "one,two,three"),
        ("{/count}", "/one,two,three"),
        ("{/count*}", "/one/two/three"),
        ("{;count}", ";count=one,two,three"),
        ("{;count*}", ";count=one;count=two;count=three"),
        ("{?count}", "?count=one,two,three"),
        ("{?count*}", "?count=one&count=two&count=three"),
        ("{&count*}", "&count=one&count=two&count=three"),
    ]);
}

#[test]
fn rfc_3_2_2_simple_string_expansion() {
    table(&[
        ("{var}", "value"),
        ("{hello}", "Hello%20World%21"),
        ("{half}", "50%25"),
        ("O{empty}X", "OX"),
        ("O{undef}X", "OX"),
        ("{x,y}", "1024,768"),
        ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("?{x,empty}", "?1024,"),
        ("?{x,undef}", "?1024"),
        ("?{undef,y}", "?768"),
        ("{var:3}", "val"),
        ("{var:30}", "value"),
        ("{list}", "red,green,blue"),
        ("{list*}", "red,green,blue"),
        ("{keys}", "semi,%3B,dot,.,comma,%2C"),
        ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ]);
}

#[test]
fn rfc_3_2_3_reserved_expansion() {
    table(&[
        ("{+var}", "value"),
        ("{+hello}", "Hello%20World!"),
        ("{+half}", "50%25"),
        ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
        ("{+base}index", "http://example.com/home/index"),
        ("O{+empty}X", "OX"),
        ("O{+undef}X", "OX"),
        ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"),
        ("up{+path}{var}/here", "up/foo/barvalue/here"),
        ("{+x,hello,y}", "1024,Hello%20World!,768"),
        ("{+path,x}/here", "/foo/bar,1024/here"),
        ("{+path:6}/here", "/foo/b/here"),
        ("{+list}", "red,green,blue"),
        ("{+list*}", "red,green,blue"),
        ("{+keys}", "semi,;,dot,.,comma,,"),
        ("{+keys*}", "semi=;,dot=.,comma=,"),
    ]);
}

#[test]
fn rfc_3_2_4_fragment_expansion() {
    table(&[
        ("{#var}", "#value"),
        ("{#hello}", "#Hello%20World!"),
        ("{#half}", "#50%25"),
        ("foo{#empty}", "foo#"),
        ("foo{#undef}", "foo"),
        ("{#x,hello,y}", "#1024,Hello%20World!,768"),
        ("{#path,x}/here", "#/foo/bar,1024/here"),
        ("{#path:6}/here", "#/foo/b/here"),
        ("{#list}", "#red,green,blue"),
        ("{#list*}", "#red,green,blue"),
        ("{#keys}", "#semi,;,dot,.,comma,,"),
        ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ]);
}

#[test]
fn rfc_3_2_5_label_expansion_with_dot_prefix() {
    table(&[
        ("{.who}", ".fred"),
        ("{.who,who}", ".fred.fred"),
        ("{.half,who}", ".50%25.fred"),
        ("www{.dom*}", "www.example.com"),
        ("X{.var}", "X.value"),
        ("X{.empty}", "X."),
        ("X{.undef}", "X"),
        ("X{.var:3}", "X.val"),
        ("X{.list}", "X.red,green,blue"),
        ("X{.list*}", "X.red.green.blue"),
        ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
        ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
        ("X{.empty_keys}", "X"),
        ("X{.empty_keys*}", "X"),
    ]);
}

#[test]
fn rfc_3_2_6_path_segment_expansion() {
    table(&[
        ("{/who}", "/fred"),
        ("{/who,who}", "/fred/fred"),
        ("{/half,who}", "/50%25/fred"),
        ("{/who,dub}", "/fred/me%2Ftoo"),
        ("{/var}", "/value"),
        ("{/var,empty}", "/value/"),
        ("{/var,undef}", "/value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{/var:1,var}", "/v/value"),
        ("{/list}", "/red,green,blue"),
        ("{/list*}", "/red/green/blue"),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
        ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
        ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ]);
}

#[test]
fn rfc_3_2_7_path_style_parameter_expansion() {
    table(&[
        ("{;who}", ";who=fred"),
        ("{;half}", ";half=50%25"),
        ("{;empty}", ";empty"),
        ("{;v,empty,who}", ";v=6;empty;who=fred"),
        ("{;v,bar,who}", ";v=6;who=fred"),
        ("{;x,y}", ";x=1024;y=768"),
        ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{;x,y,undef}", ";x=1024;y=768"),
        ("{;hello:5}", ";hello=Hello"),
        ("{;list}", ";list=red,green,blue"),
        ("{;list*}", ";list=red;list=green;list=blue"),
        ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
        ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ]);
}

#[test]
fn rfc_3_2_8_form_style_query_expansion() {
    table(&[
        ("{?who}", "?who=fred"),
        ("{?half}", "?half=50%25"),
        ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="),
        ("{?x,y,undef}", "?x=1024&y=768"),
        ("{?var:3}", "?var=val"),
        ("{?list}", "?list=red,green,blue"),
        ("{?list*}", "?list=red&list=green&list=blue"),
        ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
        ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ]);
}

#[test]
fn rfc_3_2_9_form_style_query_continuation() {
    table(&[
        ("{&who}", "&who=fred"),
        ("{&half}", "&half=50%25"),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{&x,y,empty}", "&x=1024&y=768&empty="),
        ("{&var:3}", "&var=val"),
        ("{&list}", "&list=red,green,blue"),
        ("{&list*}", "&list=red&list=green&list=blue"),
        ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
        ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
    ]);
}

#[test]
fn variables_come_in_order_of_first_appearance_each_once() {
    let template = Template::parse("x://{a}/{+b,a}{?c,b}{&d*}{#e:3}{/a.b,%41_z}").unwrap();
    assert_eq!(
        template.variables(),
        ["a", "b", "c", "d", "e", "a.b", "%41_z"]
    );
    assert!(
        Template::parse("plain:no/variables")
            .unwrap()
            .variables()
            .is_empty()
    );
}

#[test]
fn with_no_values_every_variable_is_undefined() {
    let template = Template::parse("x://s{/p*}{?q,lang}{#f}").unwrap();
    assert_eq!(template.expand(|_| None).as_deref(), Ok("x://s"));
}

#[test]
fn values_are_utf8_and_pct_encoded_and_triplets_kept_where_reserved_characters_are() {
    let values = [
        ("v", V::S("é €/ü")),
        ("p", V::S("%41%zz%")),
        ("k", map(&[("ké y", "v%2F")])),
    ];
    for (template, expected) in [
        ("{v}", "%C3%A9%20%E2%82%AC%2F%C3%BC"),
        ("{+v}", "%C3%A9%20%E2%82%AC/%C3%BC"),
        ("{#v}", "#%C3%A9%20%E2%82%AC/%C3%BC"),
        // A triplet passes only where reserved characters do; a lone "%" is always encoded.
        ("{p}", "%2541%25zz%25"),
        ("{+p}", "%41%25zz%25"),
        ("{?k*}", "?k%C3%A9%20y=v%252F"),
        ("{+k*}", "k%C3%A9%20y=v%2F"),
        // A prefix counts characters, not bytes, and never splits a triplet where it is kept.
        ("{v:2}", "%C3%A9%20"),
        ("{+p:1}", "%41"),
        ("{+p:2}", "%41%25"),
        ("{p:1}", "%25"),
    ] {
        assert_eq!(
            expand_with(template, &values).as_deref(),
            Ok(expected),
            "{template}"
        );
    }
}

#[test]
fn literals_outside_the_uri_syntax_are_pct_encoded() {
    // RFC 6570 §3.1: copied where the URI syntax allows them, else pct-encoded as UTF-8.
    for (template, expected) in [
        ("x://a b/é", "x://a%20b/%C3%A9"),
        ("x://100%/%2f", "x://100%25/%2f"),
        ("x://<\"|\\^`>", "x://%3C%22%7C%5C%5E%60%3E"),
        ("x://a\nb", "x://a%0Ab"),
    ] {
        assert_eq!(expand_with(template, &[]).as_deref(), Ok(expected));
    }
}

/// The message of the error a template gets (from parsing or, with `values`, expanding).
fn error(template: &str, values: &[(&str, V)]) -> String {
    match expand_with(template, values) {
        Err(e) => e.to_string(),
        Ok(uri) => panic!("{template:?} expanded to {uri:?}"),
    }
}

#[test]
fn malformed_templates_are_refused_with_what_is_wrong_and_where() {
    let cases: &[(&str, &str)] = &[
        (
            "x://{id",
            "the \"{\" at character 5 of the URI template is not closed",
        ),
        (
            "{/id*",
            "the \"{\" at character 1 of the URI template is not closed",
        ),
        (
            "/id*}",
            "the \"}\" at character 5 of the URI template has no \"{\" before it",
        ),
        (
            "x://{a{b}}",
            "a \"{\" at character 7 inside the expression that starts at character 5",
        ),
        (
            "x://{}",
            "the expression \"{}\" at character 5 of the URI template names no variable",
        ),
        (
            "{=path}",
            "uses the operator \"=\", which RFC 6570 reserves for future extensions",
        ),
        ("{!hello}", "uses the operator \"!\""),
        ("{|var*}", "uses the operator \"|\""),
        ("{,a}", "uses the operator \",\""),
        ("{@a}", "uses the operator \"@\""),
        (
            "{$var}",
            "\"$var\" in the expression \"{$var}\" at character 1 of the URI template is not a variable name",
        ),
        ("{/?id}", "\"?id\" in the expression \"{/?id}\""),
        ("{??hello}", "\"?hello\" in the expression"),
        ("{a b}", "\"a b\" in the expression"),
        (
            "/resolution{?x, y}",
            "\" y\" in the expression \"{?x, y}\" at character 12",
        ),
        (
            "{?empty=default,var}",
            "\"empty=default\" in the expression",
        ),
        ("/h{#hello+}", "\"hello+\" in the expression"),
        ("{a,}", "\"\" in the expression \"{a,}\""),
        ("{+}", "\"\" in the expression \"{+}\""),
        ("{..a}", "\".a\" in the expression"),
        ("{a.}", "\"a.\" in the expression"),
        ("{a..b}", "\"a..b\" in the expression"),
        ("{%4}", "\"%4\" in the expression"),
        ("{%zz}", "\"%zz\" in the expression"),
        ("{~thing}", "\"~thing\" in the expression"),
        ("{é}", "\"é\" in the expression"),
        (
            "{var:prefix}",
            "\"var:prefix\" in the expression \"{var:prefix}\" at character 1 of the URI template has a bad modifier: a prefix length is a whole number from 1 to 9999",
        ),
        ("{var:}", "a prefix length is a whole number from 1 to 9999"),
        (
            "{var:0}",
            "a prefix length is a whole number from 1 to 9999",
        ),
        (
            "{var:01}",
            "a prefix length is a whole number from 1 to 9999",
        ),
        (
            "{var:10000}",
            "a prefix length is a whole number from 1 to 9999",
        ),
        (
            "{var:-1}",
            "a prefix length is a whole number from 1 to 9999",
        ),
        (
            "{hello:2*}",
            "a prefix \":n\" or an explode \"*\", not both",
        ),
        ("{;keys:1*}", "not both"),
        ("{*keys?}", "\"\" in the expression \"{*keys?}\""),
        ("{keys**}", "nothing may follow \"*\""),
        ("{keys*:1}", "nothing may follow \"*\""),
    ];
    for (template, needle) in cases {
        let message = error(template, &[]);
        assert!(message.contains(needle), "{template:?}: {message}");
    }
    // The edges of what is valid: the largest prefix, a dot as the operator.
    assert!(Template::parse("{var:9999}").is_ok());
    assert_eq!(Template::parse("{.a}").unwrap().variables(), ["a"]);
}

#[test]
fn a_prefix_of_a_list_or_an_object_is_refused_when_expanded() {
    let values = rfc_values();
    for template in ["{keys:1}", "{+keys:1}", "{?list:2}"] {
        let message = error(template, &values);
        assert!(
            message.contains("cannot shorten") && message.contains("§2.4.1"),
            "{template}: {message}"
        );
    }
    // Undefined, it expands to nothing, as any undefined variable.
    assert_eq!(expand_with("{empty_keys:1}", &values).as_deref(), Ok(""));
}

#[test]
fn templates_and_expansions_are_bounded() {
    let long = "a".repeat(MAX_TEMPLATE + 1);
    assert_eq!(
        Template::parse(&long),
        Err(Error::TemplateTooLong(MAX_TEMPLATE + 1))
    );
    assert!(Template::parse(&"a".repeat(MAX_TEMPLATE)).is_ok());
    // A big value repeated past the bound: refused, not built.
    let big = "é".repeat(4096);
    let values = [("v", V::S(Box::leak(big.into_boxed_str())))];
    let template = "{v}".repeat(10);
    assert_eq!(expand_with(&template, &values), Err(Error::UriTooLong));
    // Within the bound, the same value expands.
    assert_eq!(expand_with("{v}", &values).map(|u| u.len()), Ok(4096 * 6));
    // A long list or object stops at the bound too.
    let items: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
    let values = [("l", V::L(items))];
    assert_eq!(expand_with("{l*}", &values), Err(Error::UriTooLong));
    assert_eq!(expand_with("{?l*}", &values), Err(Error::UriTooLong));
}

#[test]
fn errors_quote_little_of_a_long_template() {
    let name = "x".repeat(500);
    let message = error(&format!("{{{name} }}"), &[]);
    assert!(message.len() < 300, "{message}");
    assert!(message.contains('…'), "{message}");
}

/// What a percent-decoded expansion gives back (for the round-trip property).
fn decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn is_uri_char(c: char) -> bool {
    is_unreserved(c) || is_reserved(c) || c == '%'
}

proptest::proptest! {
    /// Nothing panics on arbitrary templates and values; what expands is ASCII a URI may hold
    /// and within the bound.
    #[test]
    fn expansion_never_panics(
        template in concat!(
            "\\PC{0,60}|[{}+#./;?&=,!@|*:%0-9a-z_ ]{0,60}|",
            "([a-z/%é ]{0,3}\\{[+#./;?&]?[a-c](:[1-9]|\\*)?(,[a-c](:[1-9][0-9]?|\\*)?){0,2}\\}){0,5}",
        ),
        strings in proptest::collection::vec("\\PC{0,12}", 0..4),
        lists in proptest::collection::vec(proptest::collection::vec("\\PC{0,6}", 0..4), 0..3),
        shape in 0usize..3,
    ) {
        let Ok(parsed) = Template::parse(&template) else {
            return Ok(());
        };
        let pairs: Vec<Vec<(String, String)>> = lists
            .iter()
            .map(|l| l.iter().map(|s| (s.clone(), s.clone())).collect())
            .collect();
        let expanded = parsed.expand(|name| {
            let key = name.bytes().map(usize::from).sum::<usize>();
            let i = key % 4;
            match (key + shape) % 3 {
                0 => strings.get(i).map(|s| Value::String(s)),
                1 => lists.get(i % 3).map(|l| Value::List(l)),
                _ => pairs.get(i % 3).map(|p| Value::Map(p)),
            }
        });
        if let Ok(uri) = expanded {
            proptest::prop_assert!(uri.len() <= MAX_URI);
            proptest::prop_assert!(uri.chars().all(is_uri_char), "{uri:?}");
        }
        for name in parsed.variables() {
            proptest::prop_assert!(template.contains(name));
        }
    }

    /// A template of URI characters with no expression expands to itself.
    #[test]
    fn a_template_without_expressions_expands_to_itself(
        template in "([A-Za-z0-9._~:/?#\\[\\]@!$&'()*+,;=-]|%[0-9A-Fa-f]{2}){0,80}",
    ) {
        let parsed = Template::parse(&template).unwrap();
        proptest::prop_assert!(parsed.variables().is_empty());
        proptest::prop_assert_eq!(parsed.expand(|_| None).unwrap(), template);
    }

    /// A simple expansion decodes back to the value, whatever the value.
    #[test]
    fn a_simple_expansion_decodes_back_to_its_value(value in "\\PC{0,40}") {
        let uri = Template::parse("{v}").unwrap().expand(|_| Some(Value::String(&value))).unwrap();
        proptest::prop_assert_eq!(decode(&uri), value.as_bytes());
    }
}
