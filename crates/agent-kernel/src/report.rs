//! The result of `eval` as a value: what the cell printed and displayed, its value or exception,
//! how it ended and the kernel it ran in; and the text a model reads of it, rendered from that
//! value in one place ([`Report::text`]).

use agent_tier::Report;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// At most this many images are returned per cell.
pub(crate) const MAX_IMAGES: usize = 20;
/// At most this many `display()` outputs are returned per cell (the drivers stop sending more).
pub(crate) const MAX_DISPLAYS: usize = 50;

/// How a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Ending {
    /// It ran through.
    Ok,
    /// It raised.
    Error,
    /// It went silent past the inactivity budget and was interrupted; the kernel lives.
    Interrupted,
    /// It ignored the interrupt and the kernel was killed.
    Killed,
    /// The kernel died during it.
    Died,
}

/// One piece of a cell's output, in the order it came.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Output {
    /// Text the cell printed: `stdout`, `stderr`, or `tail` (the last part after a cut).
    Stream {
        /// The stream.
        name: &'static str,
        /// What was printed.
        text: String,
    },
    /// Output cut here for the cap: the first three quarters before it, a `tail` after it.
    Cut {
        /// How many bytes were cut.
        bytes: usize,
    },
    /// A `display()` output.
    Display {
        /// Its data by MIME type.
        data: Shown,
        /// The line a model reads for it.
        #[serde(skip)]
        text: String,
    },
}

/// A value or a `display()` output as returned: its data by MIME type.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct Shown {
    /// The image, attached to the result (and saved).
    #[serde(rename = "image/png", skip_serializing_if = "Option::is_none")]
    pub(crate) image: Option<ImageRef>,
    /// The value as text, cut to the cap.
    #[serde(rename = "text/plain", skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    /// The other MIME types, as the driver sent them (whatever a `_repr_*_` returned).
    #[serde(flatten)]
    pub(crate) other: BTreeMap<String, serde_json::Value>,
    /// MIME types left out for being over the cap, and their sizes in bytes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) omitted_bytes: BTreeMap<String, usize>,
}

/// Where an image of the result is.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ImageRef {
    /// Its index among the result's images.
    pub(crate) image: usize,
    /// The file it was also written to, if it could be.
    pub(crate) path: Option<String>,
}

/// The exception that ended a cell, cut to the cap.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Exception {
    /// Its type's name.
    pub(crate) ename: String,
    /// Its message.
    pub(crate) evalue: String,
    /// The traceback, the cell's frames only.
    pub(crate) traceback: String,
}

/// The kernel the cell ran in.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct KernelInfo {
    /// Its process id.
    pub(crate) pid: Option<u32>,
    /// After a killed or crashed cell: the process id of the kernel started in its place.
    pub(crate) restarted_pid: Option<u32>,
    /// The interpreter's version.
    pub(crate) version: String,
    /// This call started the kernel.
    pub(crate) fresh: bool,
    /// Names from earlier cells are gone.
    pub(crate) state_lost: bool,
    /// How the kernel ended (`died`).
    pub(crate) exit: Option<String>,
    /// The end of its stderr (`died`).
    pub(crate) stderr_tail: Option<String>,
}

/// The result of `eval`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EvalReport {
    /// `python` or `javascript`.
    pub(crate) language: &'static str,
    /// How the cell ended.
    pub(crate) status: Ending,
    /// What the cell printed and displayed, in order.
    pub(crate) outputs: Vec<Output>,
    /// The last expression's value.
    pub(crate) result: Option<Shown>,
    /// The exception that ended the cell.
    pub(crate) error: Option<Exception>,
    /// Bytes of output cut for the cap.
    pub(crate) output_cut_bytes: usize,
    /// `display()` outputs not returned.
    pub(crate) displays_dropped: usize,
    /// Bytes printed between cells that were dropped.
    pub(crate) dropped_between_cells_bytes: usize,
    /// The tools the cell called through `tool()`, in order.
    pub(crate) bridge_calls: Vec<String>,
    /// The top-level names the cell bound or rebound (at most the drivers' cap).
    pub(crate) defined: Vec<String>,
    /// How many names it bound or rebound.
    pub(crate) defined_total: u64,
    /// The kernel.
    pub(crate) kernel: KernelInfo,
    /// Lines shown before the output (a fresh kernel, lost state, a note on the description).
    #[serde(skip)]
    pub(crate) notes: Vec<String>,
    /// The line a model reads for the value.
    #[serde(skip)]
    pub(crate) result_text: Option<String>,
    /// The cap on stream output, in bytes.
    #[serde(skip)]
    pub(crate) cap: usize,
    /// Bytes dropped while the host was behind the kernel.
    #[serde(skip)]
    pub(crate) dropped_live: usize,
    /// Images not returned (over [`MAX_IMAGES`]).
    #[serde(skip)]
    pub(crate) dropped_images: usize,
    /// The inactivity budget and the grace after the interrupt.
    #[serde(skip)]
    pub(crate) budget: Duration,
    #[serde(skip)]
    pub(crate) grace: Duration,
    /// Why the kernel could not be restarted after a killed or crashed cell.
    #[serde(skip)]
    pub(crate) restart_failed: Option<String>,
}

impl EvalReport {
    /// What is left after the kernel was lost during the cell.
    fn after_loss(&self, restarted: &str) -> String {
        let gone = "every name (variables, imports) from this and earlier cells is gone";
        match (&self.kernel.restarted_pid, &self.restart_failed) {
            (Some(_), _) => format!("{restarted} — {gone}"),
            (None, Some(e)) => format!(
                " — {gone}; restarting it failed ({}), the next call tries again",
                agent_tier::display::clip_middle_bytes(e, 300).0
            ),
            (None, None) => format!(" — {gone}; the next call starts a fresh kernel"),
        }
    }
}

impl Report for EvalReport {
    fn text(&self) -> String {
        let mut text = String::new();
        for n in &self.notes {
            text.push_str(&format!("[{n}]\n"));
        }
        let body_start = text.len();
        // A block starts on a line of its own.
        let new_line = |text: &mut String| {
            if !text.ends_with('\n') && text.len() > body_start {
                text.push('\n');
            }
        };
        for output in &self.outputs {
            match output {
                Output::Stream { text: t, .. } => text.push_str(t),
                Output::Cut { bytes } => {
                    new_line(&mut text);
                    text.push_str(&format!(
                        "[… {bytes} bytes of output cut here (the cap is {} bytes); the last part follows …]\n",
                        self.cap
                    ));
                }
                Output::Display { text: t, .. } => {
                    new_line(&mut text);
                    text.push_str(t);
                    text.push('\n');
                }
            }
        }
        if let Some(t) = &self.result_text {
            new_line(&mut text);
            text.push_str(t);
            text.push('\n');
        }
        if let Some(e) = &self.error {
            new_line(&mut text);
            text.push_str(&e.traceback);
            text.push('\n');
        }
        if self.displays_dropped > 0 {
            text.push_str(&format!(
                "[{} more display output(s) not shown: at most {MAX_DISPLAYS} and about {} bytes of display() output are returned per cell]\n",
                self.displays_dropped,
                self.cap.saturating_mul(2)
            ));
        }
        if self.dropped_live > 0 {
            text.push_str(&format!(
                "[{} bytes of output were dropped while the host was behind the kernel]\n",
                self.dropped_live
            ));
        }
        if self.dropped_images > 0 {
            text.push_str(&format!(
                "[{} more image(s) not returned: at most {MAX_IMAGES} per cell]\n",
                self.dropped_images
            ));
        }
        let lang = self.language;
        match self.status {
            Ending::Ok | Ending::Error => {}
            Ending::Interrupted => text.push_str(&format!(
                "[interrupted: the cell went {} without output (the inactivity budget; output resets it, a pending tool() call pauses it); the {lang} kernel is alive and keeps every name from earlier cells; {} — print progress from long loops to keep them running]\n",
                agent_tier::display::duration(self.budget),
                defined_before_interrupt(&self.defined, self.defined_total)
            )),
            Ending::Killed => text.push_str(&format!(
                "[killed: the cell went {} without output (the inactivity budget), then ignored the interrupt for {}, so the {lang} kernel was killed{}]\n",
                agent_tier::display::duration(self.budget),
                agent_tier::display::duration(self.grace),
                self.after_loss(" and restarted")
            )),
            Ending::Died => {
                text.push_str(&format!(
                    "[the {lang} kernel died during this cell: it {}{}]\n",
                    self.kernel.exit.as_deref().unwrap_or("ended"),
                    self.after_loss("; it was restarted")
                ));
                let tail = self.kernel.stderr_tail.as_deref().unwrap_or("").trim_end();
                if !tail.is_empty() && !text.contains(tail) {
                    text.push_str("stderr tail:\n");
                    text.push_str(tail);
                    text.push('\n');
                }
            }
        }
        if text.len() == body_start && self.status == Ending::Ok {
            text.push_str("(no output)\n");
        }
        while text.ends_with('\n') {
            text.pop();
        }
        text
    }

    fn is_error(&self) -> bool {
        self.status != Ending::Ok
    }
}

/// What an interrupted cell left behind: the names it bound or rebound before the interrupt.
fn defined_before_interrupt(names: &[String], total: u64) -> String {
    if total == 0 {
        return "this cell bound no top-level name before the interrupt".into();
    }
    let more = total.saturating_sub(names.len() as u64);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "names this cell bound before the interrupt (kept): {}{more}",
        names.join(", ")
    )
}
