//! How a server is asked: the document synced first ([`open`]), a request retried while the
//! server is busy or still loading ([`ask`]), and asked again until its answer settles
//! ([`ask_settled`]); a request whose answer is an edit is asked again only once, when the
//! server says its content was modified ([`ask_edit`]).

use crate::client::{CONTENT_MODIFIED, REQUEST_CANCELLED, SERVER_CANCELLED, Server};
use crate::error::LspError;
use crate::protocol::{self, Locations, MaybeEmpty, WorkspaceEdit};
use crate::state::State;
use crate::tools::Target;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The request `R` with retries: ContentModified / cancelled are retried; an empty answer
/// from a server that is still young or loading is asked again. Returns the answer and
/// whether it may be partial.
pub(super) async fn ask<R>(
    st: &State,
    srv: &Server,
    params: &R::Params,
) -> Result<(R::Result, bool), LspError>
where
    R: agent_rpc::Request,
    R::Result: MaybeEmpty,
{
    let ready_timeout = st.sup.cfg.ready_timeout;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        match srv.call::<R>(params).await {
            Err(LspError::Rpc { code, .. })
                if attempt < 8
                    && (code == CONTENT_MODIFIED
                        || code == SERVER_CANCELLED
                        || code == REQUEST_CANCELLED) =>
            {
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
                srv.wait_ready(ready_timeout).await;
            }
            Err(e) => return Err(e),
            Ok(v) => {
                let empty = v.is_empty();
                let young = srv.started.elapsed() < Duration::from_secs(20);
                if empty && (young || !srv.is_idle()) && attempt < 5 {
                    tokio::time::sleep(Duration::from_millis(700)).await;
                    srv.wait_ready(ready_timeout).await;
                    continue;
                }
                return Ok((v, empty && !srv.is_idle()));
            }
        }
    }
}

/// [`ask`], repeated until two consecutive answers hold the same locations (bounded
/// by the ready timeout); an answer that never settled is partial.
pub(super) async fn ask_settled<R>(
    st: &State,
    srv: &Server,
    params: &R::Params,
) -> Result<(Locations, bool), LspError>
where
    R: agent_rpc::Request<Result = Locations>,
{
    fn key(v: &Locations) -> Vec<protocol::AnyLocation> {
        let mut k = v.0.clone();
        k.sort();
        k
    }
    let deadline = Instant::now() + st.sup.cfg.ready_timeout;
    let (mut last, _) = ask::<R>(st, srv, params).await?;
    loop {
        if Instant::now() >= deadline {
            return Ok((last, true));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        srv.wait_ready(deadline.saturating_duration_since(Instant::now()))
            .await;
        let (next, p) = ask::<R>(st, srv, params).await?;
        if key(&next) == key(&last) {
            return Ok((next, p));
        }
        last = next;
    }
}

pub(super) async fn open(st: &State, t: &Target) -> Result<(Arc<Server>, bool), LspError> {
    let srv = st.sup.server_for(&t.path).await?;
    srv.sync(&t.path, &t.text, false).await?;
    let ready = srv.wait_ready(st.sup.cfg.ready_timeout).await;
    Ok((srv, ready))
}

/// A request whose answer is an edit (`rename`, `workspace/willRenameFiles`), asked again once
/// if the content was modified meanwhile; no edit (`null`) is an empty one.
pub(super) async fn ask_edit<R>(
    st: &State,
    srv: &Server,
    params: &R::Params,
) -> Result<WorkspaceEdit, LspError>
where
    R: agent_rpc::Request<Result = Option<WorkspaceEdit>>,
{
    let edit = match srv.call::<R>(params).await {
        Err(LspError::Rpc { code, .. }) if code == CONTENT_MODIFIED => {
            srv.wait_ready(st.sup.cfg.ready_timeout).await;
            srv.call::<R>(params).await
        }
        other => other,
    }?;
    Ok(edit.unwrap_or_default())
}
