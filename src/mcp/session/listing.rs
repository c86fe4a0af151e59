//! A server's paginated lists (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) fetched page by page, following `nextCursor`, within bounds: a
//! server that never stops paging (or sends the same cursor again) ends the listing with one
//! error naming it and the bound, and one log line, instead of growing the sidecar without end.

use std::collections::HashSet;
use std::hash::BuildHasher;

use rmcp::model::{
    Cursor, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool,
};
use rmcp::service::ServiceError;

/// At most this many pages of one listing.
pub const MAX_PAGES: usize = 100;
/// At most this many items in one listing (all its pages together).
pub const MAX_ITEMS: usize = 10_000;

/// One page of a paginated list.
pub trait Page {
    type Item;
    /// The request's method, for messages.
    const METHOD: &'static str;
    fn split(self) -> (Vec<Self::Item>, Option<Cursor>);
}

macro_rules! page {
    ($result:ty, $item:ty, $field:ident, $method:literal) => {
        impl Page for $result {
            type Item = $item;
            const METHOD: &'static str = $method;
            fn split(self) -> (Vec<$item>, Option<Cursor>) {
                (self.$field, self.next_cursor)
            }
        }
    };
}

page!(ListToolsResult, Tool, tools, "tools/list");
page!(ListPromptsResult, Prompt, prompts, "prompts/list");
page!(ListResourcesResult, Resource, resources, "resources/list");
page!(
    ListResourceTemplatesResult,
    ResourceTemplate,
    resource_templates,
    "resources/templates/list"
);

/// Why a listing ended without its list.
#[derive(Debug)]
pub enum Failed {
    /// A request failed.
    Service(ServiceError),
    /// The server went past a bound: what to tell the person (without the server's name, which
    /// the caller's error carries).
    Bound(String),
}

/// Every page of a listing from the first, each asked with `fetch`, until a page has no
/// `nextCursor`. Past [`MAX_PAGES`] pages, [`MAX_ITEMS`] items or a cursor given before, the
/// listing ends with [`Failed::Bound`] (logged once, naming `server`).
pub async fn all_pages<P, Fut>(
    server: &str,
    mut fetch: impl FnMut(Option<PaginatedRequestParams>) -> Fut,
) -> Result<Vec<P::Item>, Failed>
where
    P: Page,
    Fut: Future<Output = Result<P, ServiceError>>,
{
    let mut items = Vec::new();
    // Hashes of the cursors so far: a cursor may be as long as a message.
    let hasher = std::hash::RandomState::new();
    let mut seen = HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let (page, next) = fetch(Some(params)).await.map_err(Failed::Service)?.split();
        if page.len() > MAX_ITEMS - items.len() {
            return Err(bound::<P>(
                server,
                format!("listed more than {MAX_ITEMS} items"),
            ));
        }
        items.extend(page);
        let Some(next) = next else {
            return Ok(items);
        };
        if !seen.insert(hasher.hash_one(&next)) {
            return Err(bound::<P>(
                server,
                "sent a cursor it had sent before".into(),
            ));
        }
        cursor = Some(next);
    }
    Err(bound::<P>(
        server,
        format!("had more than {MAX_PAGES} pages"),
    ))
}

fn bound<P: Page>(server: &str, what: String) -> Failed {
    let message = format!("{} {what}; the listing was abandoned", P::METHOD);
    tracing::warn!(%server, "{message}");
    Failed::Bound(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A server's pages: `size` tools each, the cursor after page `n` from `next(n)`.
    async fn listing(
        size: usize,
        next: impl Fn(usize) -> Option<String>,
        asked: &Cell<usize>,
    ) -> Result<Vec<Tool>, Failed> {
        all_pages::<ListToolsResult, _>("s", |params| {
            let n = asked.get();
            asked.set(n + 1);
            let cursor = params.and_then(|p| p.cursor);
            assert_eq!(cursor, (n > 0).then(|| next(n - 1)).flatten(), "page {n}");
            let tools = (0..size)
                .map(|i| Tool::new(format!("t{n}_{i}"), "", rmcp::model::JsonObject::default()))
                .collect();
            let mut page = ListToolsResult::with_all_items(tools);
            page.next_cursor = next(n);
            std::future::ready(Ok(page))
        })
        .await
    }

    fn bound(result: Result<Vec<Tool>, Failed>) -> String {
        match result {
            Err(Failed::Bound(message)) => message,
            other => panic!("{:?}", other.map(|l| l.len())),
        }
    }

    #[tokio::test]
    async fn pages_are_followed_to_the_end_within_the_bounds() {
        let asked = Cell::new(0);
        let last = MAX_PAGES - 1;
        let all = listing(3, |n| (n < last).then(|| n.to_string()), &asked).await;
        assert_eq!(all.unwrap().len(), 3 * MAX_PAGES);
        assert_eq!(asked.get(), MAX_PAGES);

        let asked = Cell::new(0);
        let message = bound(listing(3, |n| Some(n.to_string()), &asked).await);
        assert_eq!(
            message,
            "tools/list had more than 100 pages; the listing was abandoned"
        );
        assert_eq!(asked.get(), MAX_PAGES);

        let asked = Cell::new(0);
        let message = bound(listing(MAX_ITEMS / 4 + 1, |n| Some(n.to_string()), &asked).await);
        assert!(message.contains("more than 10000 items"), "{message}");
        assert_eq!(asked.get(), 4);

        let asked = Cell::new(0);
        let message = bound(listing(1, |n| Some(["a", "b", "a"][n.min(2)].into()), &asked).await);
        assert!(message.contains("a cursor it had sent before"), "{message}");
        assert_eq!(asked.get(), 3);

        let failed = all_pages::<ListToolsResult, _>("s", |_| {
            std::future::ready(Err(ServiceError::TransportClosed))
        })
        .await;
        assert!(matches!(failed, Err(Failed::Service(_))));
    }
}
