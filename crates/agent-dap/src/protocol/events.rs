//! What an adapter tells on its own, of what this family reads: `initialized`, `stopped`,
//! `continued`, `exited`, `terminated`, `output` and `process`. Every other event is
//! [`Event::Other`].

use agent_rpc::{Malformed, Notification};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// `initialized`: the adapter is ready for the breakpoints.
pub(crate) enum Initialized {}

impl Notification for Initialized {
    const METHOD: &'static str = "initialized";
    type Params = IgnoredAny;
}

/// `stopped`: a thread (or the whole debuggee) stopped.
pub(crate) enum Stopped {}

impl Notification for Stopped {
    const METHOD: &'static str = "stopped";
    type Params = StoppedBody;
}

/// Why it stopped (`breakpoint`, `step`, `exception`, `pause`…), which thread, and what the
/// adapter adds in words (`description`, else `text`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoppedBody {
    pub reason: String,
    pub description: Option<String>,
    pub text: Option<String>,
    pub thread_id: Option<i64>,
}

/// `continued`: a thread (or every thread) runs again.
pub(crate) enum Continued {}

impl Notification for Continued {
    const METHOD: &'static str = "continued";
    type Params = ContinuedBody;
}

/// Which thread continued, and whether all did (left out: that thread only). An adapter that
/// names no thread means all of them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContinuedBody {
    pub thread_id: Option<i64>,
    #[serde(default)]
    pub all_threads_continued: bool,
}

/// `exited`: the debuggee exited, with its code.
pub(crate) enum Exited {}

impl Notification for Exited {
    const METHOD: &'static str = "exited";
    type Params = ExitedBody;
}

/// The exit code.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExitedBody {
    pub exit_code: i64,
}

/// `terminated`: debugging is over (delve sends it twice, and no `exited`).
pub(crate) enum Terminated {}

impl Notification for Terminated {
    const METHOD: &'static str = "terminated";
    type Params = IgnoredAny;
}

/// `output`: text from the debuggee or the adapter.
pub(crate) enum Output {}

impl Notification for Output {
    const METHOD: &'static str = "output";
    type Params = OutputBody;
}

/// The text and where it comes from (`stdout`, `stderr`; left out: `console`, the adapter's own).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct OutputBody {
    pub category: Option<String>,
    pub output: String,
}

impl OutputBody {
    /// Whether it is the debuggee's own output (stdout or stderr).
    pub fn is_program_output(&self) -> bool {
        matches!(self.category.as_deref(), Some("stdout" | "stderr"))
    }
}

/// `process`: the debuggee's process, with its pid when the adapter knows it.
pub(crate) enum Process {}

impl Notification for Process {
    const METHOD: &'static str = "process";
    type Params = ProcessBody;
}

/// The debuggee's pid, in the adapter's pid namespace.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProcessBody {
    pub system_process_id: Option<u32>,
}

/// One event read, by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    Initialized,
    Stopped(StoppedBody),
    Continued(ContinuedBody),
    Exited(ExitedBody),
    Terminated,
    Output(OutputBody),
    Process(ProcessBody),
    /// An event this family does not read (`thread`, `breakpoint`, `module`…).
    Other,
}

impl Event {
    /// The event `name` with `body` (`null` when it has none), read as its declared type.
    pub fn read(name: &str, body: Value) -> Result<Event, Malformed> {
        use agent_rpc::request::notification as read;
        Ok(match name {
            Initialized::METHOD => {
                read::<Initialized>(body)?;
                Event::Initialized
            }
            Stopped::METHOD => Event::Stopped(read::<Stopped>(body)?),
            Continued::METHOD => Event::Continued(read::<Continued>(body)?),
            Exited::METHOD => Event::Exited(read::<Exited>(body)?),
            Terminated::METHOD => {
                read::<Terminated>(body)?;
                Event::Terminated
            }
            Output::METHOD => Event::Output(read::<Output>(body)?),
            Process::METHOD => Event::Process(read::<Process>(body)?),
            _ => Event::Other,
        })
    }
}
