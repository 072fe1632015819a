//! The ask port trait and the scripted port.

use crate::card::{AskOutcome, Card};
use agent_tier::Requester;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// A boxed, sendable future (the object-safe async of the port traits).
pub use agent_tier::BoxFuture;

/// Where a card is rendered and answered: a terminal, an MCP client's elicitation, a script.
///
/// A port must never block when nobody is attached (it resolves to
/// [`AskOutcome::Unavailable`] at once), must never invent an answer, and honours
/// [`Card::timeout`] by resolving to [`AskOutcome::Timeout`]. Dropping the future withdraws the
/// card.
///
/// A card goes to the requester of the call that caused it (`ask_user`'s call, or the call an
/// approval is for), never to whoever else is connected: a port that serves several parties
/// (MCP elicitation) routes by it and fails closed without one; a port with one person behind
/// it (a terminal) may ignore it.
pub trait AskPort: Send + Sync + 'static {
    /// A short name for messages (`terminal`, `elicitation`, `scripted`).
    fn name(&self) -> &str;

    /// Show the card to `requester` and resolve once it is answered, skipped, timed out, or
    /// cannot be shown.
    fn ask(&self, card: Card, requester: Option<Arc<dyn Requester>>) -> BoxFuture<'_, AskOutcome>;
}

/// What the tool and the approver add to a card's timeout before giving up on a port that does
/// not honour it.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// Run `fut` under the card's timeout (if any).
pub(crate) async fn within(
    timeout: Option<Duration>,
    fut: impl Future<Output = AskOutcome>,
) -> AskOutcome {
    match timeout {
        Some(t) => tokio::time::timeout(t, fut)
            .await
            .unwrap_or(AskOutcome::Timeout),
        None => fut.await,
    }
}

/// A port that answers from a queue, for tests and embedding. Every card it is shown is recorded.
///
/// An answer that does not fit the card (an unknown label, say) resolves to
/// [`AskOutcome::Unavailable`] naming the mismatch; an empty queue also resolves to
/// `Unavailable` — the port never invents an answer.
#[derive(Debug, Default)]
pub struct ScriptedPort {
    queue: Mutex<VecDeque<AskOutcome>>,
    shown: Mutex<Vec<Card>>,
    /// The requester's id each card was shown to (`None`: the call named nobody).
    shown_to: Mutex<Vec<Option<String>>>,
    silent: bool,
}

impl ScriptedPort {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// A script that replies with these outcomes, in order.
    pub fn with(outcomes: impl IntoIterator<Item = AskOutcome>) -> Self {
        ScriptedPort {
            queue: Mutex::new(outcomes.into_iter().collect()),
            shown: Mutex::new(Vec::new()),
            shown_to: Mutex::new(Vec::new()),
            silent: false,
        }
    }

    /// A port where nobody ever answers: each card resolves to [`AskOutcome::Timeout`] when its
    /// timeout passes (never, without one).
    pub fn silent() -> Self {
        ScriptedPort {
            silent: true,
            ..Self::default()
        }
    }

    /// Queue one more outcome.
    pub fn push(&self, outcome: AskOutcome) {
        self.queue.lock().push_back(outcome);
    }

    /// The cards shown so far.
    pub fn shown(&self) -> Vec<Card> {
        self.shown.lock().clone()
    }

    /// Whom each card so far was shown to: its requester's [`Requester::id`], in the order of
    /// [`ScriptedPort::shown`].
    pub fn shown_to(&self) -> Vec<Option<String>> {
        self.shown_to.lock().clone()
    }

    /// How many outcomes are still queued.
    pub fn remaining(&self) -> usize {
        self.queue.lock().len()
    }
}

impl AskPort for ScriptedPort {
    fn name(&self) -> &str {
        "scripted"
    }

    fn ask(&self, card: Card, requester: Option<Arc<dyn Requester>>) -> BoxFuture<'_, AskOutcome> {
        self.shown.lock().push(card.clone());
        self.shown_to
            .lock()
            .push(requester.map(|r| r.id().to_string()));
        if self.silent {
            return Box::pin(within(card.timeout, std::future::pending()));
        }
        let next = self.queue.lock().pop_front();
        Box::pin(async move {
            match next {
                None => AskOutcome::Unavailable(
                    "the scripted port has no answer queued for this card".into(),
                ),
                Some(AskOutcome::Answer(a)) => match card.check_answer(&a) {
                    Ok(()) => AskOutcome::Answer(a),
                    Err(e) => {
                        AskOutcome::Unavailable(format!("the scripted answer is invalid: {e}"))
                    }
                },
                Some(other) => other,
            }
        })
    }
}
