//! The live decisions page: one embedded HTML page (no external assets),
//! fed by a server-sent-events stream of decisions ([`DecisionFeed`]),
//! with the last replay's report beside it; `serve` mounts it behind its
//! token, `wasm-hooks ui` on 127.0.0.1 for one person.
//!
//! A browser cannot send a bearer token when it opens a page, so the
//! address carries it once (`/ui?token=…`): the page answers with a
//! cookie holding it (HttpOnly, SameSite=Strict) and sends the browser on
//! to `/ui`, so that the token leaves the address bar and history. The
//! stream and the report take the cookie or the bearer token; a request
//! from another site's page (an `Origin` that is not this server) is
//! refused.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use futures_util::Stream;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::feed::{DecisionFeed, DecisionNote};

/// The page.
const PAGE: &str = include_str!("page.html");

/// The cookie that carries the token.
const COOKIE: &str = "wasm_hooks_page";

/// What the page's routes serve.
#[derive(Debug)]
pub struct PageState {
    /// The decisions.
    pub feed: Arc<DecisionFeed>,
    /// The token the page and its data need (none: open to this machine).
    pub token: Option<String>,
    /// The last replay's report, if there is one.
    pub replay: Option<Value>,
    /// How often a quiet stream says it is alive.
    pub heartbeat: Duration,
}

/// `GET /ui`, `GET /v1/decisions` (the stream) and `GET /v1/replay`.
pub fn routes(state: Arc<PageState>) -> axum::Router {
    axum::Router::new()
        .route("/ui", get(page))
        .route("/v1/decisions", get(decisions))
        .route("/v1/replay", get(replay))
        .with_state(state)
}

/// Why a request may not have the page's data, if it may not.
fn refusal(state: &PageState, headers: &HeaderMap) -> Option<(StatusCode, &'static str)> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if let Some(origin) = origin
        && host.is_none_or(|host| origin != format!("http://{host}"))
    {
        return Some((
            StatusCode::FORBIDDEN,
            "requests from another site's page are refused",
        ));
    }
    let token = state.token.as_deref()?;
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .next();
    let given = bearer.or(cookie);
    (!given.is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes())))
        .then_some((
            StatusCode::UNAUTHORIZED,
            "no token, or the wrong one: open the address `wasm-hooks serve` or `wasm-hooks ui` printed (`/ui?token=…`)",
        ))
}

async fn page(State(state): State<Arc<PageState>>, uri: Uri, headers: HeaderMap) -> Response {
    let given = uri
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("token="));
    if let (Some(given), Some(token)) = (given, &state.token) {
        if !same_secret(given.as_bytes(), token.as_bytes()) {
            return (StatusCode::UNAUTHORIZED, "the wrong token").into_response();
        }
        let cookie = format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
        return (
            StatusCode::SEE_OTHER,
            [
                (header::SET_COOKIE, cookie),
                (header::LOCATION, "/ui".to_owned()),
            ],
        )
            .into_response();
    }
    if let Some((status, why)) = refusal(&state, &headers) {
        return (status, why).into_response();
    }
    let mut response = Html(PAGE).into_response();
    let headers = response.headers_mut();
    // Nothing but this page's own script, style and data.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// `GET /v1/decisions`: the decisions kept, then each one as it is made
/// (`decision` events); `dropped` when this page fell behind and lost
/// some (with how many, in all); a comment line as a heartbeat.
async fn decisions(State(state): State<Arc<PageState>>, headers: HeaderMap) -> Response {
    if let Some((status, why)) = refusal(&state, &headers) {
        return (status, why).into_response();
    }
    let (recent, receiver) = state.feed.subscribe();
    let stream = notes(recent, receiver);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(state.heartbeat).text("heartbeat"))
        .into_response()
}

/// What one page's stream carries.
#[derive(Debug)]
enum Item {
    /// A decision.
    Decision(Arc<DecisionNote>),
    /// The page fell behind: this many were dropped, `total` in all.
    Dropped { now: u64, total: u64 },
}

/// The stream of one page: `recent` first, then what `receiver` gets,
/// and a [`Item::Dropped`] when the page fell behind its buffer.
fn items(
    recent: Vec<Arc<DecisionNote>>,
    receiver: tokio::sync::broadcast::Receiver<Arc<DecisionNote>>,
) -> impl Stream<Item = Item> {
    let first = futures_util::stream::iter(recent.into_iter().map(Item::Decision));
    let live =
        futures_util::stream::unfold((receiver, 0u64), |(mut receiver, mut total)| async move {
            let item = match receiver.recv().await {
                Ok(note) => Item::Decision(note),
                Err(RecvError::Lagged(now)) => {
                    total += now;
                    tracing::warn!(
                        "a decisions page fell behind: {now} decisions dropped ({total} in all)"
                    );
                    Item::Dropped { now, total }
                }
                Err(RecvError::Closed) => return None,
            };
            Some((item, (receiver, total)))
        });
    futures_util::StreamExt::chain(first, live)
}

/// The stream as server-sent events: `decision`, and `dropped`.
fn notes(
    recent: Vec<Arc<DecisionNote>>,
    receiver: tokio::sync::broadcast::Receiver<Arc<DecisionNote>>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures_util::StreamExt::map(items(recent, receiver), |item| {
        Ok(match item {
            Item::Decision(note) => SseEvent::default()
                .event("decision")
                .json_data(&*note)
                .unwrap_or_else(|_| SseEvent::default().comment("a note that does not serialize")),
            Item::Dropped { now, total } => SseEvent::default()
                .event("dropped")
                .data(serde_json::json!({"dropped": now, "total": total}).to_string()),
        })
    })
}

/// `GET /v1/replay`: the last replay's report (404 without one).
async fn replay(State(state): State<Arc<PageState>>, headers: HeaderMap) -> Response {
    if let Some((status, why)) = refusal(&state, &headers) {
        return (status, why).into_response();
    }
    match &state.replay {
        Some(report) => axum::Json(report.clone()).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "no replay yet: run `wasm-hooks replay`",
        )
            .into_response(),
    }
}

/// Whether two secrets are equal, in a time that does not depend on where
/// they differ.
pub(crate) fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt as _;

    use super::*;

    fn note(n: usize) -> DecisionNote {
        DecisionNote {
            time: String::new(),
            project: "-".into(),
            session: format!("s{n}"),
            event: "PreToolUse".into(),
            subject: None,
            about: String::new(),
            verdict: "proceed".into(),
            decided_by: None,
            hooks: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_page_that_falls_behind_loses_the_oldest_and_is_told_how_many() {
        let feed = DecisionFeed::new();
        feed.publish(note(0));
        let (recent, receiver) = feed.subscribe();
        // More than a page's buffer, while the page reads nothing.
        for n in 1..=1100 {
            feed.publish(note(n));
        }
        let mut stream = std::pin::pin!(items(recent, receiver));
        let Some(Item::Decision(first)) = stream.next().await else {
            panic!("the kept note first");
        };
        assert_eq!(first.session, "s0");
        let Some(Item::Dropped { now, total }) = stream.next().await else {
            panic!("then how many were dropped");
        };
        assert_eq!((now, total), (76, 76));
        let Some(Item::Decision(next)) = stream.next().await else {
            panic!("then the oldest still kept");
        };
        assert_eq!(next.session, "s77");
    }
}
