//! The ask family's [`PersonAsker`]: a family's own question (the language servers asking
//! whether to trust a folder) shown as the same card `ask_user` shows, through the same port, to
//! the caller's operator.

use crate::card::{AskOutcome, Card, CardKind, CardOption};
use crate::port::{AskPort, GRACE, within};
use agent_tier::person::{PersonAsker, Question, Reply};
use agent_tier::{BoxFuture, CallContext};
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct PortAsker {
    pub(crate) port: Arc<dyn AskPort>,
    pub(crate) space: String,
    pub(crate) timeout: Option<Duration>,
}

impl PersonAsker for PortAsker {
    fn ask<'a>(&'a self, cx: &'a CallContext, question: Question) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let card = Card {
                kind: CardKind::Question,
                question: question.question,
                context: question.context,
                allow_free_text: false,
                options: question
                    .options
                    .iter()
                    .map(|(label, what)| CardOption::new(label.clone(), Some(what)))
                    .collect(),
                multi_select: false,
                timeout: self.timeout,
                space: Some(self.space.clone()),
            };
            if let Err(e) = card.validate() {
                return Reply::Unanswered(format!("the question could not be shown: {e}"));
            }
            // Other inactivity budgets of the run pause while a person is asked.
            let _asking = cx.registry().asking();
            let outcome = within(
                self.timeout.map(|t| t.saturating_add(GRACE)),
                self.port.ask(card, cx.requester().cloned()),
            )
            .await;
            match outcome {
                AskOutcome::Answer(a) => match a.selected.into_iter().next() {
                    Some(label) => Reply::Chose(label),
                    None => Reply::Unanswered("the answer chose nothing".into()),
                },
                AskOutcome::Decline => Reply::Declined,
                AskOutcome::Skip => Reply::Unanswered("the person skipped the question".into()),
                AskOutcome::Timeout => Reply::Unanswered("nobody answered in time".into()),
                AskOutcome::Unavailable(why) => Reply::Unanswered(why),
            }
        })
    }
}
