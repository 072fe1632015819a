//! The errors of this crate, each naming what failed and what to do next.

/// Why an `ask_user` call failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The arguments cannot make an answerable card.
    #[error("invalid arguments for `ask_user`: {0}")]
    InvalidArguments(#[from] CardError),
}

/// Why a card cannot be answered at all ([`Card::validate`](crate::Card::validate)). The
/// message names the argument to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// The question is empty or blank.
    #[error("`question` is empty; pass the question to ask")]
    EmptyQuestion,
    /// No options and no free text: nothing could be answered.
    #[error(
        "no `options` and `allow_free_text` is false, so nothing could be answered; pass at least one option or set `allow_free_text: true`"
    )]
    NothingToAnswer,
    /// `multi_select` without options.
    #[error(
        "`multi_select` is true but there are no `options` to select; pass options or set `multi_select: false`"
    )]
    MultiSelectWithoutOptions,
    /// Option `index` has an empty label.
    #[error("`options[{index}].label` is empty; every option needs a short label")]
    EmptyLabel {
        /// The option's index.
        index: usize,
    },
    /// Option `index`'s label repeats an earlier one (case and surrounding blanks aside).
    #[error(
        "`options[{index}].label` `{label}` is a duplicate; labels must be unique (they are what the answer reports)"
    )]
    DuplicateLabel {
        /// The option's index.
        index: usize,
        /// Its label.
        label: String,
    },
}

/// Why an answer does not fit its card ([`Card::check_answer`](crate::Card::check_answer)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// A chosen label is none of the card's options.
    #[error("the answer chose `{label}`, which is not an option; options: {}", options.join(", "))]
    NotAnOption {
        /// The label chosen.
        label: String,
        /// The card's labels, in order.
        options: Vec<String>,
    },
    /// Several options chosen on a card that allows one.
    #[error("the answer chose several options but the card allows only one")]
    SeveralChosen,
    /// Typed text on a card that takes none.
    #[error("the answer is typed text but the card does not accept free text")]
    TextNotAccepted,
    /// Nothing chosen, nothing typed.
    #[error("the answer chose nothing and typed nothing")]
    Empty,
}

/// Why a line typed at the terminal is not a reply ([`Card::parse_reply`](crate::Card::parse_reply)).
/// The message says what may be typed instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// A number that is no option's.
    #[error("there is no option {typed}; options are numbered 1-{count}")]
    NoSuchOption {
        /// The number as typed.
        typed: String,
        /// How many options the card has.
        count: usize,
    },
    /// Several numbers on a card that allows one option.
    #[error("choose only one option (1-{count})")]
    OnlyOne {
        /// How many options the card has.
        count: usize,
    },
    /// Nothing typed, or text the card cannot take: the card's instruction line.
    #[error("{instruction}")]
    Unreadable {
        /// What may be typed ([`Card::instruction`](crate::Card::instruction)).
        instruction: String,
    },
}

/// Why a client's accepted elicitation content is no answer to the card
/// ([`read_accepted`](crate::read_accepted)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContentError {
    /// The content is not an object.
    #[error("the client accepted with non-object content `{sent}`")]
    NotAnObject {
        /// The content as the client sent it (JSON).
        sent: String,
    },
    /// A property of another type than the schema asked for.
    #[error("the client sent `{sent}` for `{property}`; expected {expected}")]
    WrongType {
        /// The property.
        property: String,
        /// What its value was (JSON).
        sent: String,
        /// What the schema asked for (`a boolean`, `a label`, `a string`).
        expected: &'static str,
    },
    /// The content reads as an answer that does not fit the card.
    #[error(transparent)]
    Misfit(#[from] AnswerError),
}

/// Why nobody can be reached on this process's terminal
/// ([`TerminalPort::attached`](crate::TerminalPort::attached)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotAttached {
    /// Stdin is a pipe or a file.
    #[error("stdin is not a terminal, so nobody can answer here")]
    Stdin,
    /// Stderr is a pipe or a file.
    #[error("stderr is not a terminal, so the card cannot be shown")]
    Stderr,
}
