//! The card: what a port shows a person, what a person can answer, and how a typed reply is read.

use crate::error::{AnswerError, CardError, ReplyError};
use agent_tier::display::duration;
use agent_tier::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::time::Duration;

/// One choice on a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardOption {
    /// Short label; the answer reports it.
    pub label: String,
    /// What choosing it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl CardOption {
    /// An option with a label and an optional description.
    pub fn new(label: impl Into<String>, description: Option<&str>) -> Self {
        CardOption {
            label: label.into(),
            description: description.map(str::to_string),
        }
    }
}

/// Whether a card asks a question (`ask_user`) or asks permission for a call (approvals).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CardKind {
    /// A question from `ask_user`.
    Question,
    /// A permission prompt from the registry's approvals.
    Permission,
}

/// What a port renders: a numbered card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    /// Question or permission prompt.
    pub kind: CardKind,
    /// What is asked.
    pub question: String,
    /// Why it is asked, and what the answer decides.
    pub context: Option<String>,
    /// The numbered choices (may be empty when free text is allowed).
    pub options: Vec<CardOption>,
    /// Whether a typed answer is accepted.
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    pub multi_select: bool,
    /// How long the person has; the port reports a timeout after it.
    #[serde(serialize_with = "ser_secs")]
    pub timeout: Option<Duration>,
    /// The target space the card is shown in (a conversation, a terminal).
    pub space: Option<String>,
}

fn ser_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// A person's answer: the chosen option labels and/or typed text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The labels of the chosen options, in option order.
    pub selected: Vec<String>,
    /// The typed answer, when free text was allowed and given.
    pub text: Option<String>,
}

impl Answer {
    /// An answer choosing these option labels.
    pub fn options(labels: &[&str]) -> Self {
        Answer {
            selected: labels.iter().map(|s| s.to_string()).collect(),
            text: None,
        }
    }

    /// A typed answer.
    pub fn text(text: impl Into<String>) -> Self {
        Answer {
            selected: Vec::new(),
            text: Some(text.into()),
        }
    }
}

/// How a card ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskOutcome {
    /// Someone answered.
    Answer(Answer),
    /// Someone chose to skip the question.
    Skip,
    /// The person's client refused the card (MCP elicitation `decline`).
    Decline,
    /// Nobody answered in time.
    Timeout,
    /// Nobody can be reached through this port (no TTY, a client without elicitation, …); the
    /// card was not shown or could not be answered. The string says why.
    Unavailable(String),
}

/// The key a person types to skip on a terminal.
pub const SKIP_KEY: &str = "s";

impl Card {
    /// A question card.
    pub fn question(question: impl Into<String>) -> Self {
        Card {
            kind: CardKind::Question,
            question: question.into(),
            context: None,
            options: Vec::new(),
            allow_free_text: false,
            multi_select: false,
            timeout: None,
            space: None,
        }
    }

    /// Check that the card can be answered at all: a question, unique non-empty labels, options
    /// or free text, and `multi_select` only with options. The message names the argument.
    pub fn validate(&self) -> Result<(), CardError> {
        if self.question.trim().is_empty() {
            return Err(CardError::EmptyQuestion);
        }
        if self.options.is_empty() && !self.allow_free_text {
            return Err(CardError::NothingToAnswer);
        }
        if self.multi_select && self.options.is_empty() {
            return Err(CardError::MultiSelectWithoutOptions);
        }
        let mut seen = HashSet::new();
        for (index, o) in self.options.iter().enumerate() {
            if o.label.trim().is_empty() {
                return Err(CardError::EmptyLabel { index });
            }
            if !seen.insert(o.label.trim().to_lowercase()) {
                return Err(CardError::DuplicateLabel {
                    index,
                    label: o.label.clone(),
                });
            }
        }
        Ok(())
    }

    /// Check that an answer fits this card (labels exist, one option unless multi-select, text
    /// only when allowed, not empty).
    pub fn check_answer(&self, answer: &Answer) -> Result<(), AnswerError> {
        for label in &answer.selected {
            if !self.options.iter().any(|o| &o.label == label) {
                return Err(AnswerError::NotAnOption {
                    label: label.clone(),
                    options: self.labels(),
                });
            }
        }
        if !self.multi_select && answer.selected.len() > 1 {
            return Err(AnswerError::SeveralChosen);
        }
        let text = answer.text.as_deref().map(str::trim).unwrap_or("");
        if !text.is_empty() && !self.allow_free_text {
            return Err(AnswerError::TextNotAccepted);
        }
        if answer.selected.is_empty() && text.is_empty() {
            return Err(AnswerError::Empty);
        }
        Ok(())
    }

    /// The option labels in order.
    pub fn labels(&self) -> Vec<String> {
        self.options.iter().map(|o| o.label.clone()).collect()
    }

    /// The instruction line under the options: what may be typed.
    pub fn instruction(&self) -> String {
        let n = self.options.len();
        let mut parts = Vec::new();
        match (n, self.multi_select) {
            (0, _) => {}
            (1, false) => parts.push("type 1 to choose the option".to_string()),
            (_, false) => parts.push(format!("type the number of one option (1-{n})")),
            (_, true) => parts.push(format!(
                "type the numbers of one or more options (1-{n}), separated by spaces or commas"
            )),
        }
        if self.allow_free_text {
            if self.kind == CardKind::Permission {
                parts.push("type a reason to decline".into());
            } else if n == 0 {
                parts.push("type your answer".into());
            } else {
                parts.push("type your own answer".into());
            }
        }
        parts.push(format!("type `{SKIP_KEY}` to skip"));
        let mut line = join_or(&parts);
        if let Some(first) = line.get(..1) {
            line = format!("{}{}", first.to_uppercase(), &line[1..]);
        }
        line.push('.');
        if let Some(t) = self.timeout {
            let _ = write!(line, " Times out in {}.", duration(t));
        }
        line
    }

    /// The card as text, the way a terminal shows it (without the `> ` prompt).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let title = match self.kind {
            CardKind::Question => "question",
            CardKind::Permission => "permission",
        };
        let _ = writeln!(out, "+-- {title} {}", "-".repeat(60 - title.len()));
        for line in self.question.trim().lines() {
            let _ = writeln!(out, "| {line}");
        }
        if let Some(ctx) = self
            .context
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            let _ = writeln!(out, "|");
            for line in ctx.lines() {
                let _ = writeln!(out, "|   {line}");
            }
        }
        if !self.options.is_empty() {
            let _ = writeln!(out, "|");
            let width = self.options.len().to_string().len();
            for (i, o) in self.options.iter().enumerate() {
                let _ = write!(out, "|   {:>width$}) {}", i + 1, o.label.trim());
                match o.description.as_deref().map(str::trim) {
                    Some(d) if !d.is_empty() => {
                        let _ = writeln!(out, " - {d}");
                    }
                    _ => out.push('\n'),
                }
            }
        }
        let _ = writeln!(out, "|");
        let _ = writeln!(out, "| {}", self.instruction());
        let _ = writeln!(out, "+{}", "-".repeat(64));
        out
    }

    /// Read one typed line as a reply: the skip key, option numbers (or an exact label), or free
    /// text when allowed. An error says what may be typed instead.
    pub fn parse_reply(&self, line: &str) -> Result<Option<Answer>, ReplyError> {
        let line = line.trim();
        if line.eq_ignore_ascii_case(SKIP_KEY) {
            return Ok(None);
        }
        if line.is_empty() {
            return Err(self.unreadable());
        }
        let n = self.options.len();
        if n > 0 {
            let tokens: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            if tokens.iter().all(|t| t.chars().all(|c| c.is_ascii_digit())) {
                let mut chosen = Vec::new();
                for t in tokens {
                    let k: usize = t.parse().unwrap_or(0);
                    if k == 0 || k > n {
                        return Err(ReplyError::NoSuchOption {
                            typed: t.to_string(),
                            count: n,
                        });
                    }
                    if !chosen.contains(&(k - 1)) {
                        chosen.push(k - 1);
                    }
                }
                if chosen.len() > 1 && !self.multi_select {
                    return Err(ReplyError::OnlyOne { count: n });
                }
                chosen.sort_unstable();
                return Ok(Some(Answer {
                    selected: chosen
                        .into_iter()
                        .map(|i| self.options[i].label.clone())
                        .collect(),
                    text: None,
                }));
            }
            if let Some(o) = self
                .options
                .iter()
                .find(|o| o.label.trim().eq_ignore_ascii_case(line))
            {
                return Ok(Some(Answer::options(&[o.label.as_str()])));
            }
        }
        if self.allow_free_text {
            return Ok(Some(Answer::text(line)));
        }
        Err(self.unreadable())
    }

    /// A reply that could not be read: what may be typed instead.
    fn unreadable(&self) -> ReplyError {
        ReplyError::Unreadable {
            instruction: self.instruction(),
        }
    }
}

fn join_or(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{}, or {last}", init.join(", ")),
    }
}
