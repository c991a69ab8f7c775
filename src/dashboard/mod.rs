//! The web dashboard, served at `/`: one page, one script and one style
//! sheet, embedded in the binary (the machines it runs on may have no
//! internet: no CDN, no build step). The page holds no data of its own: the
//! script signs in with a token kept in the browser's session and calls the
//! API with it as the bearer, so the dashboard can see and do exactly what
//! the token can.

use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("app.js");
const STYLE: &str = include_str!("app.css");

/// Nothing but this origin's own files, and calls to its own API: a
/// value shown on a page (a job's input, a guest's log) cannot become code.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
    frame-ancestors 'none'";

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (CONTENT_TYPE, kind),
            (CONTENT_SECURITY_POLICY, POLICY),
            // A new binary's assets must not be mixed with an old page's.
            (CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The dashboard's page.
#[utoipa::path(get, path = "/", tag = "operate", security(()),
    responses((status = 200, description = "The dashboard's page", content_type = "text/html", body = String)))]
pub async fn page() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

/// The dashboard's script.
#[utoipa::path(get, path = "/ui/app.js", tag = "operate", security(()),
    responses((status = 200, description = "The dashboard's script", content_type = "text/javascript", body = String)))]
pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

/// The dashboard's style sheet.
#[utoipa::path(get, path = "/ui/app.css", tag = "operate", security(()),
    responses((status = 200, description = "The dashboard's style sheet", content_type = "text/css", body = String)))]
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}
