//! The web dashboard, served at `/`: one page, its script modules (a page
//! of the dashboard each, under `js/`) and one style sheet, embedded in the
//! binary (the machines it runs on may have no internet: no CDN, no build
//! step). The page holds no data of its own: the script signs in with a
//! token kept in the browser's session and calls the API with it as the
//! bearer, so the dashboard can see and do exactly what the token can.

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("index.html");

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file under `/ui/`: its name, type and body.
const ASSETS: &[(&str, &str, &str)] = &[
    ("app.css", CSS, include_str!("app.css")),
    ("app.js", JS, include_str!("js/app.js")),
    ("api.js", JS, include_str!("js/api.js")),
    ("dom.js", JS, include_str!("js/dom.js")),
    ("jobs.js", JS, include_str!("js/jobs.js")),
    ("job.js", JS, include_str!("js/job.js")),
    ("tasks.js", JS, include_str!("js/tasks.js")),
    ("queues.js", JS, include_str!("js/queues.js")),
    ("tenants.js", JS, include_str!("js/tenants.js")),
    ("workflows.js", JS, include_str!("js/workflows.js")),
    ("schedules.js", JS, include_str!("js/schedules.js")),
    ("webhooks.js", JS, include_str!("js/webhooks.js")),
    ("read.js", JS, include_str!("js/read.js")),
    ("secrets.js", JS, include_str!("js/secrets.js")),
    ("events.js", JS, include_str!("js/events.js")),
    ("charts.js", JS, include_str!("js/charts.js")),
    // uPlot 1.6.32 (MIT, vendor/uplot/LICENSE), byte for byte as its npm
    // package ships it; its script defines `uPlot`, which a module exports.
    (
        "uplot.js",
        JS,
        concat!(
            include_str!("vendor/uplot/uPlot.iife.min.js"),
            "\nexport default uPlot;\n"
        ),
    ),
    ("uplot.css", CSS, include_str!("vendor/uplot/uPlot.min.css")),
];

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

/// One of the dashboard's files: a script module or the style sheet.
#[utoipa::path(get, path = "/ui/{file}", tag = "operate", security(()),
    params(("file" = String, Path, description = "The file's name, such as `app.js`")),
    responses(
        (status = 200, description = "The file", content_type = "text/javascript", body = String),
        (status = 404, description = "No such file of the dashboard's", content_type = "text/plain", body = String)))]
pub async fn file(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, kind, body)) => asset(kind, body),
        // Plain text, as the page's other files are: this module sits
        // below the API and does not speak its error shape.
        None => (StatusCode::NOT_FOUND, "no such file of the dashboard's\n").into_response(),
    }
}
