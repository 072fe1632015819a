//! Starting a session, for `launch` and `attach`: reach the adapter, run the DAP start-up
//! sequence with the kept breakpoints, wait for the first stop, and say where it is.

use super::plan;
use super::rows::{breakpoint_rows, function_rows};
use super::stop::after_move;
use crate::DapError;
use crate::adapters::{self, AdapterId, AttachVia};
use crate::args::Exceptions;
use crate::breakpoints::Wanted;
use crate::protocol::{Attach, Configuration, Launch};
use crate::report::{Built, Heading, Started};
use crate::session::Session;
use crate::state::Run;
use crate::supervisor::Supervisor;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A session to start.
pub(super) struct Start<'a> {
    pub adapter: AdapterId,
    pub binary: &'a Path,
    /// The marker directory: the adapter's working directory.
    pub marker: &'a Path,
    /// What is debugged, as the model sees it.
    pub target: String,
    /// The `launch` or `attach` request's arguments.
    pub arguments: Configuration,
    /// For `attach`: the port, and how it is reached.
    pub attach_port: Option<(u16, AttachVia)>,
    /// Environment of the adapter's own process.
    pub adapter_env: Vec<(String, String)>,
    /// Which exceptions stop the debuggee.
    pub exceptions: Exceptions,
    /// The program file, when launching one (where function names are looked up from).
    pub program: Option<&'a Path>,
    /// What the launch built first, said in the result.
    pub built: Option<plan::Built>,
}

pub(super) async fn start(sup: &Supervisor, st: Start<'_>) -> Result<Started, DapError> {
    let cfg = &sup.config;
    let adapter = st.adapter;
    let attach = st.attach_port.is_some();
    let request = if attach { "attach" } else { "launch" };
    let started = match st.attach_port {
        Some((port, AttachVia::DapServer)) => {
            adapters::connect_server(port, cfg.startup_timeout.min(Duration::from_secs(10)))
                .await
                .map_err(|e| DapError::Spawn {
                    adapter: adapter.name(),
                    command: format!("connect {}", st.target),
                    detail: e.to_string(),
                })?
        }
        Some((_, AttachVia::Adapter)) | None => {
            adapters::start(
                adapter.adapter(),
                st.binary,
                &sup.prefix,
                st.marker,
                &st.adapter_env,
                cfg.startup_timeout,
            )
            .await?
        }
    };
    let id = sup.next_id.fetch_add(1, Ordering::Relaxed);
    let session = Session::new(
        id,
        adapter,
        st.target,
        started,
        cfg.ttl,
        cfg.request_timeout,
        attach,
    );
    *sup.session.lock().await = Some(session.clone());
    let gen_before = session.state().stop_gen;
    // Line breakpoints follow their line's text to where edits since they were set moved it.
    let reanchored: Vec<String> = {
        let mut map = sup.breakpoints.lock();
        map.iter_mut()
            .flat_map(|(path, bps)| bps.reanchor(&sup.root, path))
            .collect()
    };
    let asked = sup.breakpoints.lock().clone();
    let functions = sup.functions.lock().clone();
    let wanted = Wanted {
        files: &asked,
        functions: &functions,
        locator: sup.locator(),
        near: st.program,
        root: &sup.root,
    };
    let configured = if attach {
        session
            .configure::<Attach>(st.arguments, &wanted, st.exceptions, cfg.startup_timeout)
            .await
    } else {
        session
            .configure::<Launch>(st.arguments, &wanted, st.exceptions, cfg.startup_timeout)
            .await
    };
    let configured = match configured {
        Ok(r) => r,
        Err(e) => {
            // The TTL (or the adapter dying) may have ended the session first: say so.
            let ended = session.state().ended;
            session.end(format!("{request} failed"), true).await;
            return Err(match ended {
                Some(why) => DapError::NoSession {
                    ended: format!(" (session {id} ended during start-up: {why}; {e})"),
                },
                None => e,
            });
        }
    };
    *sup.placed.lock() = configured
        .placement
        .as_ref()
        .map(|p| p.placed.clone())
        .unwrap_or_default();
    // Configured and launched: running until an event says otherwise.
    session.shared.state.send_modify(|st| {
        if st.run == Run::Starting {
            st.run = Run::Running;
        }
    });
    let state = session.wait_stop(gen_before, cfg.run_wait).await;
    let breakpoints = configured
        .files
        .iter()
        .flat_map(|(file, bps)| {
            let requested = asked
                .get(file)
                .map(|f| f.lines.as_slice())
                .unwrap_or_default();
            breakpoint_rows(sup, file, requested, bps)
        })
        .collect();
    let function_breakpoints = configured
        .functions
        .as_ref()
        .map(|bps| function_rows(sup, &functions.names, bps));
    let built = st.built.as_ref().map(|b| Built {
        command: b.command.clone(),
        executable: b.executable.display().to_string(),
        target: b.target.clone(),
        shown: sup.shown(&b.executable),
    });
    let moved = after_move(sup, &session, &state, cfg.run_wait).await;
    Ok(Started {
        heading: Heading {
            attached: attach,
            target: session.target.clone(),
            adapter: adapter.name(),
            command: session.command.clone(),
        },
        moved,
        session: id,
        adapter_pid: session.adapter_pgid(),
        debuggee_pid: session.state().debuggee_pid,
        breakpoints,
        reanchored,
        placed_by_definitions: (configured.functions.is_some() && configured.placement.is_some())
            .then(|| adapter.name()),
        function_breakpoints,
        built,
        exceptions: st.exceptions.name(),
        exception_filters: configured.filters,
        attach_note: None,
    })
}
