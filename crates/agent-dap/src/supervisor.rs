//! The per-conversation (per-room) supervisor: the workspace, the configuration, the one session
//! slot, the breakpoints kept across sessions, the last launch (for `restart`), and the
//! questions every operation asks of them (which session is live, how a path is shown). The
//! operations themselves are in `ops`.

use crate::adapters::{self, AdapterId, Detected, Scratch};
use crate::breakpoints::{FileBreakpoints, FunctionBreakpoints, Placed};
use crate::session::Session;
use crate::{DapConfig, DapError};
use agent_tier::locate::SymbolLocator;
use agent_tier::workspace::display_path;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub(crate) struct Supervisor {
    pub root: PathBuf,
    /// The sandbox prefix every process is started under (empty on the host).
    pub prefix: Vec<String>,
    pub config: DapConfig,
    pub session: tokio::sync::Mutex<Option<Arc<Session>>>,
    /// Breakpoints per file, set again in every new session.
    pub breakpoints: Mutex<BTreeMap<PathBuf, FileBreakpoints>>,
    /// Function breakpoints, set again in every new session.
    pub functions: Mutex<FunctionBreakpoints>,
    /// Function breakpoints placed on lines in the live session (its adapter has none).
    pub placed: Mutex<Vec<Placed>>,
    /// The run's symbol locator, if a family provided one.
    locator: Option<Arc<dyn SymbolLocator>>,
    pub next_id: AtomicU64,
    /// Where delve builds a package's binary for the current session, outside the workspace.
    pub scratch: Mutex<Option<Scratch>>,
    /// The conversation's last `launch`, for `restart`.
    pub last_launch: Mutex<Option<crate::args::DebugCommand>>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // The room or the run is ending: kill whatever the session still runs. Dropping the
        // session's guards kills the process groups even without a runtime.
        if let Ok(mut s) = self.session.try_lock() {
            s.take();
        }
    }
}

impl Supervisor {
    pub fn new(
        root: PathBuf,
        prefix: Vec<String>,
        config: DapConfig,
        locator: Option<Arc<dyn SymbolLocator>>,
    ) -> Self {
        Supervisor {
            root,
            prefix,
            config,
            session: tokio::sync::Mutex::new(None),
            breakpoints: Mutex::new(BTreeMap::new()),
            functions: Mutex::new(FunctionBreakpoints::default()),
            placed: Mutex::new(Vec::new()),
            locator,
            next_id: AtomicU64::new(1),
            scratch: Mutex::new(None),
            last_launch: Mutex::new(None),
        }
    }

    /// Every adapter, detected for a program at `start`.
    pub fn detect_all(&self, start: &Path) -> Vec<Detected> {
        AdapterId::ALL
            .iter()
            .map(|id| adapters::detect(*id, &self.root, start, &self.config.extra_bin_dirs))
            .collect()
    }

    /// The run's symbol locator, if a family provided one.
    pub fn locator(&self) -> Option<Arc<dyn SymbolLocator>> {
        self.locator.clone()
    }

    /// A path as the model sees it: relative to the root, `.` for the root itself.
    pub fn shown(&self, p: &Path) -> String {
        let s = display_path(&self.root, p);
        if s.is_empty() { ".".to_string() } else { s }
    }

    /// The session, live or ended.
    pub async fn current(&self) -> Option<Arc<Session>> {
        self.session.lock().await.clone()
    }

    /// The session, which must be live.
    pub async fn live(&self) -> Result<Arc<Session>, DapError> {
        match self.current().await {
            None => Err(DapError::NoSession {
                ended: String::new(),
            }),
            Some(s) => {
                s.check_live()?;
                Ok(s)
            }
        }
    }

    /// "session 1 (debugpy on prog.py, stopped (breakpoint, thread 1))".
    pub fn describe(&self, s: &Session) -> String {
        format!(
            "session {} ({} on {}, {})",
            s.id,
            s.adapter.name(),
            s.target,
            s.state().describe()
        )
    }

    /// Fail when a session is live: it is never replaced silently.
    pub async fn reject_live(&self) -> Result<(), DapError> {
        if let Some(s) = self.current().await
            && s.check_live().is_ok()
        {
            return Err(DapError::AlreadyLive {
                live: self.describe(&s),
            });
        }
        Ok(())
    }
}
