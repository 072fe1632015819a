//! The terminal port: the card on a real TTY (stdin for typing, stderr for the card).

use crate::card::{AskOutcome, Card};
use crate::error::NotAttached;
use crate::port::{AskPort, BoxFuture};
use agent_tier::display::duration;
use std::io::{BufRead, IsTerminal, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Options of the terminal port.
#[derive(Debug, Clone, Default)]
pub struct TerminalOptions {
    /// The port's own limit on how long a person has; the shorter of this and the card's
    /// timeout applies. `None`: only the card's timeout.
    pub timeout: Option<Duration>,
}

/// The card on the process's terminal: rendered on stderr, answered by typing a line on stdin.
///
/// When stdin or stderr is not a terminal, [`AskPort::ask`] resolves to
/// [`AskOutcome::Unavailable`] at once — it never blocks on a pipe and never reads a script's
/// input as an answer. Cards are shown one at a time. While a card is shown the port reads
/// stdin, so the host must not read stdin concurrently.
#[derive(Debug, Default)]
pub struct TerminalPort {
    options: TerminalOptions,
    one_at_a_time: tokio::sync::Mutex<()>,
    /// Held by the thread that reads the terminal, so that a withdrawn card's thread has
    /// stopped reading before the next card's starts.
    reader: Arc<parking_lot::Mutex<()>>,
}

impl TerminalPort {
    /// The terminal port on this process's stdin and stderr.
    pub fn new(options: TerminalOptions) -> Self {
        TerminalPort {
            options,
            one_at_a_time: tokio::sync::Mutex::new(()),
            reader: Arc::default(),
        }
    }

    /// Whether a person can be reached: stdin and stderr are both terminals.
    pub fn attached() -> Result<(), NotAttached> {
        if !std::io::stdin().is_terminal() {
            return Err(NotAttached::Stdin);
        }
        if !std::io::stderr().is_terminal() {
            return Err(NotAttached::Stderr);
        }
        Ok(())
    }
}

impl AskPort for TerminalPort {
    fn name(&self) -> &str {
        "terminal"
    }

    /// The terminal has one person behind it: every card goes to them, whoever the requester.
    fn ask(
        &self,
        mut card: Card,
        _requester: Option<Arc<dyn agent_tier::Requester>>,
    ) -> BoxFuture<'_, AskOutcome> {
        Box::pin(async move {
            if let Err(reason) = Self::attached() {
                return AskOutcome::Unavailable(reason.to_string());
            }
            card.timeout = match (card.timeout, self.options.timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let _turn = self.one_at_a_time.lock().await;
            let cancel = Arc::new(AtomicBool::new(false));
            let _withdraw = SetOnDrop(cancel.clone());
            let reader = self.reader.clone();
            let job = tokio::task::spawn_blocking(move || {
                let _reading = reader.lock();
                run_card(&card, &cancel)
            });
            match job.await {
                Ok(outcome) => outcome,
                Err(e) => AskOutcome::Unavailable(format!("the terminal card failed: {e}")),
            }
        })
    }
}

/// Sets the flag when the future that owns it is dropped (the card is withdrawn).
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Wait until `fd` is readable, for at most `timeout_ms`. `Ok(false)`: not yet.
fn poll_readable(fd: RawFd, timeout_ms: i32) -> std::io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    #[allow(unsafe_code)]
    // SAFETY: `pfd` is a valid, initialised pollfd that outlives the call, and nfds is 1.
    let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(r > 0)
}

/// Text a model or a person wrote, as the terminal is given it: lines and tabs kept, every
/// character a terminal would act on (escape sequences, C1 controls, bidi overrides) escaped.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    agent_tier::display::escape_keeping_lines(text)
}

/// The blocking card loop: show, read lines until a valid reply, the deadline, or withdrawal.
/// Reads only when stdin is readable, so a timed-out card leaves no read behind that would
/// swallow the next line typed.
fn run_card(card: &Card, cancel: &AtomicBool) -> AskOutcome {
    let mut err = std::io::stderr();
    let _ = write!(err, "\n{}> ", shown(&card.render()));
    let _ = err.flush();
    let deadline = card.timeout.map(|t| Instant::now() + t);
    let stdin = std::io::stdin();
    let fd = stdin.as_raw_fd();
    loop {
        if cancel.load(Ordering::SeqCst) {
            let _ = writeln!(err, "\n  (the question was withdrawn)");
            return AskOutcome::Unavailable("the question was withdrawn".into());
        }
        let slice = match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    let t = card.timeout.map(duration).unwrap_or_default();
                    let _ = writeln!(err, "\n  no answer within {t}; the question timed out");
                    return AskOutcome::Timeout;
                }
                left.min(Duration::from_millis(100))
            }
            None => Duration::from_millis(100),
        };
        let ms = i32::try_from(slice.as_millis()).unwrap_or(100).max(1);
        match poll_readable(fd, ms) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(e) => return AskOutcome::Unavailable(format!("cannot read the terminal: {e}")),
        }
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) => {
                let _ = writeln!(err, "\n  (input closed)");
                return AskOutcome::Unavailable(
                    "the terminal closed its input before an answer".into(),
                );
            }
            Ok(_) => {}
            Err(e) => return AskOutcome::Unavailable(format!("cannot read the terminal: {e}")),
        }
        match card.parse_reply(&line) {
            Ok(None) => {
                let _ = writeln!(err, "  -> skipped");
                return AskOutcome::Skip;
            }
            Ok(Some(answer)) => {
                let mut echo = answer.selected.join(", ");
                if let Some(t) = &answer.text {
                    echo = format!("\"{t}\"");
                }
                let _ = writeln!(err, "  -> {}", shown(&echo));
                return AskOutcome::Answer(answer);
            }
            Err(e) => {
                let _ = write!(err, "  {}\n> ", shown(&e.to_string()));
                let _ = err.flush();
            }
        }
    }
}
