//! The host's log: `tracing` events and spans written as text to stderr, or appended to a file
//! (`--log-file`); never to stdout, which carries the protocol. The level comes from
//! [`LOG_ENV`] in `EnvFilter` syntax (`info`, `warn,agent_tier=debug`), default [`DEFAULT`].
//!
//! Each tool call is one span (`tool_call`, opened by the registry with the tool's name, the
//! surface and the origin); its close is logged at `info` with the time it took
//! (`time.busy` + `time.idle`).
//!
//! Each MCP session's client gets the events that matter to it as `notifications/message` (the
//! server declares the `logging` capability): warnings and errors, and the `info` events marked
//! `notice = true` (a language server restarted after a crash) as level `notice`, from every
//! target but `rmcp`'s own. The session holds its [`ClientLog`] — its client's threshold,
//! default `notice`, set by its `logging/setLevel` — and the subscription ends with the session;
//! the logger is the event's target, the data its message and fields. This is independent of
//! [`LOG_ENV`], which only decides what the log file or stderr gets.

use crate::error::LogError;
use parking_lot::Mutex;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::{Context, Filter, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// The environment variable holding the log filter.
pub const LOG_ENV: &str = "AGENT_TOOLS_LOG";

/// The filter when [`LOG_ENV`] is unset or empty: warnings and errors only.
pub const DEFAULT: &str = "warn";

/// Install the process-wide subscriber: to `log_file` (appended, created if missing) or stderr.
/// An unreadable filter falls back to [`DEFAULT`] with a warning on stderr; a log file that
/// cannot be opened is an error (the caller refuses to start rather than log nowhere).
pub fn init(log_file: Option<&Path>) -> Result<(), LogError> {
    let filter = match std::env::var(LOG_ENV) {
        Ok(text) if !text.trim().is_empty() => EnvFilter::try_new(&text).unwrap_or_else(|e| {
            let _ = writeln!(
                std::io::stderr(),
                "agent-tools: `{LOG_ENV}` = `{text}` is not a log filter ({e}); logging at `{DEFAULT}`"
            );
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    };
    let fmt = tracing_subscriber::fmt::layer()
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(false);
    let installed = match log_file {
        Some(path) => {
            let file = File::options()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| LogError::File {
                    path: path.to_path_buf(),
                    source,
                })?;
            tracing_subscriber::registry()
                // tracing-subscriber writes to a file through its `MakeWriter` for std's mutex.
                .with(
                    fmt.with_writer(std::sync::Mutex::new(file))
                        .with_filter(filter),
                )
                .with(ToClients.with_filter(ClientsFilter))
                .try_init()
        }
        None => tracing_subscriber::registry()
            .with(fmt.with_writer(std::io::stderr).with_filter(filter))
            .with(ToClients.with_filter(ClientsFilter))
            .try_init(),
    };
    Ok(installed?)
}

// MCP logging is deprecated by SEP-2577 in rmcp; clients of the 2025 revisions still read it.
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};

/// MCP levels as ranks, lowest first.
#[allow(deprecated)]
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[allow(deprecated)]
fn level_of(rank: u8) -> LoggingLevel {
    match rank {
        0 => LoggingLevel::Debug,
        1 => LoggingLevel::Info,
        2 => LoggingLevel::Notice,
        3 => LoggingLevel::Warning,
        _ => LoggingLevel::Error,
    }
}

/// The rank of a `tracing` level (`info` counts as `notice` when the event says `notice = true`).
fn rank_of(level: &Level, notice: bool) -> u8 {
    match *level {
        Level::ERROR => 4,
        Level::WARN => 3,
        Level::INFO if notice => 2,
        Level::INFO => 1,
        _ => 0,
    }
}

/// A client's threshold before it sends `logging/setLevel`.
const DEFAULT_RANK: u8 = 2;
/// No client listens.
const NOBODY: u8 = u8::MAX;

/// One session's client and its threshold.
struct Listener {
    peer: rmcp::Peer<rmcp::service::RoleServer>,
    rank: AtomicU8,
}

/// The sessions' clients and the lowest threshold among them.
struct Listeners {
    all: Mutex<Vec<Arc<Listener>>>,
    lowest: AtomicU8,
    queue: tokio::sync::mpsc::Sender<Note>,
    /// The queue's other end, until the first client starts the task that sends.
    unsent: Mutex<Option<tokio::sync::mpsc::Receiver<Note>>>,
}

/// One message for the clients: its rank, logger and data.
type Note = (u8, String, serde_json::Value);

fn listeners() -> &'static Listeners {
    static L: OnceLock<Listeners> = OnceLock::new();
    L.get_or_init(|| {
        // Bounded: a client that stops reading loses log messages, never memory.
        let (queue, rx) = tokio::sync::mpsc::channel(256);
        Listeners {
            all: Mutex::new(Vec::new()),
            lowest: AtomicU8::new(NOBODY),
            queue,
            unsent: Mutex::new(Some(rx)),
        }
    })
}

/// Recompute the lowest threshold; `tracing` re-asks the filter which callsites are enabled.
fn relevel(all: &mut Vec<Arc<Listener>>) {
    all.retain(|l| !l.peer.is_transport_closed());
    let lowest = all
        .iter()
        .map(|l| l.rank.load(Ordering::Relaxed))
        .min()
        .unwrap_or(NOBODY);
    if listeners().lowest.swap(lowest, Ordering::SeqCst) != lowest {
        tracing::callsite::rebuild_interest_cache();
    }
}

/// One MCP session's subscription to the log: its client hears the events at or above its
/// threshold while this lives. Held by the session; dropping it (the session ended) ends the
/// subscription.
pub struct ClientLog(Arc<Listener>);

impl ClientLog {
    /// Subscribe the client behind `peer`, at `notice` and above until it sets a level. Must be
    /// called on the host's runtime (the first subscription starts the task that sends).
    pub fn open(peer: rmcp::Peer<rmcp::service::RoleServer>) -> ClientLog {
        if let Ok(rt) = tokio::runtime::Handle::try_current()
            && let Some(mut rx) = listeners().unsent.lock().take()
        {
            rt.spawn(async move {
                while let Some((rank, logger, data)) = rx.recv().await {
                    forward(rank, logger, data).await;
                }
            });
        }
        let listener = Arc::new(Listener {
            peer,
            rank: AtomicU8::new(DEFAULT_RANK),
        });
        let mut all = listeners().all.lock();
        all.push(listener.clone());
        relevel(&mut all);
        ClientLog(listener)
    }

    /// The client's `logging/setLevel`: it hears messages at `level` and above.
    #[allow(deprecated)]
    pub fn set_level(&self, level: LoggingLevel) {
        self.0.rank.store(rank(level), Ordering::Relaxed);
        relevel(&mut listeners().all.lock());
    }
}

impl Drop for ClientLog {
    fn drop(&mut self) {
        let mut all = listeners().all.lock();
        all.retain(|l| !Arc::ptr_eq(l, &self.0));
        relevel(&mut all);
    }
}

/// Send one message to every client whose threshold it meets.
#[allow(deprecated)]
async fn forward(rank: u8, logger: String, data: serde_json::Value) {
    let peers: Vec<_> = {
        let mut all = listeners().all.lock();
        relevel(&mut all);
        all.iter()
            .filter(|l| l.rank.load(Ordering::Relaxed) <= rank)
            .map(|l| l.peer.clone())
            .collect()
    };
    for peer in peers {
        let note = LoggingMessageNotificationParam::new(level_of(rank), data.clone())
            .with_logger(logger.clone());
        let _ = peer.notify_logging_message(note).await;
    }
}

/// Whether events of `target` may go to clients: not the MCP library's own (sending one would
/// log again).
fn forwardable(target: &str) -> bool {
    !(target == "rmcp" || target.starts_with("rmcp::"))
}

/// Which events reach [`ToClients`]: those at or above the lowest client threshold.
struct ClientsFilter;

impl<S> Filter<S> for ClientsFilter {
    fn enabled(&self, meta: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        let lowest = listeners().lowest.load(Ordering::Relaxed);
        // `info` may be a notice: its fields decide in `on_event`.
        meta.is_event() && forwardable(meta.target()) && rank_of(meta.level(), true) >= lowest
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.is_event() && forwardable(meta.target()) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match listeners().lowest.load(Ordering::Relaxed) {
            NOBODY => LevelFilter::OFF,
            0 => LevelFilter::DEBUG,
            1 | 2 => LevelFilter::INFO,
            3 => LevelFilter::WARN,
            _ => LevelFilter::ERROR,
        })
    }
}

/// The layer that hands events to the clients' queue (never blocking the code that logs).
struct ToClients;

#[derive(Default)]
struct Fields {
    message: String,
    notice: bool,
    rest: serde_json::Map<String, serde_json::Value>,
}

impl Visit for Fields {
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "notice" {
            self.notice = value;
        } else {
            self.rest.insert(field.name().into(), value.into());
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.rest.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.rest.insert(field.name().into(), value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.rest.insert(field.name().into(), value.into());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.message = text;
        } else {
            self.rest.insert(field.name().into(), text.into());
        }
    }
}

impl<S: Subscriber> Layer<S> for ToClients {
    fn on_event(&self, event: &Event<'_>, _cx: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let rank = rank_of(event.metadata().level(), f.notice);
        if rank < listeners().lowest.load(Ordering::Relaxed) {
            return;
        }
        let mut data = serde_json::Map::new();
        data.insert("message".into(), f.message.into());
        data.extend(f.rest);
        let logger = event.metadata().target().to_string();
        let _ = listeners()
            .queue
            .try_send((rank, logger, serde_json::Value::Object(data)));
    }
}
