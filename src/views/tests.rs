use super::*;

#[test]
fn the_apps_html_is_read_from_text_or_blob_of_its_type() {
    let text = json!({"contents": [
        {"uri": "ui://other", "mimeType": "text/plain", "text": "no"},
        {"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "text": "<p>a</p>",
         "_meta": {"ui": {"csp": {"connectDomains": ["https://x.example"]}}}}
    ]});
    let (html, ui) = html_of(&text, "ui://a").unwrap();
    assert_eq!(html, "<p>a</p>");
    assert_eq!(ui.unwrap()["csp"]["connectDomains"][0], "https://x.example");
    let blob = json!({"contents": [{"uri": "ui://b", "mimeType": "text/html; profile=mcp-app", "blob": "PHA+YjwvcD4="}]});
    assert_eq!(html_of(&blob, "ui://b").unwrap().0, "<p>b</p>");
    for bad in [
        json!({}),
        json!({"contents": [{"uri": "ui://a", "mimeType": "text/html", "text": "<p>"}]}),
        json!({"contents": [{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "blob": "%%%"}]}),
        json!({"contents": [{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app", "blob": "/w=="}]}),
        json!({"contents": [{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app"}]}),
    ] {
        assert!(html_of(&bad, "ui://a").is_err(), "{bad}");
    }
}
