//! # agent-kernel — the `eval` tool: persistent Python and JavaScript cells
//!
//! Owns the run's kernel factory: a child process of the project's own Python, or of `node`,
//! running a driver shipped in this crate, talking over dedicated pipes.
//!
//! - Python runs in the project's interpreter (`.venv/bin/python`, else `venv/bin/python`, else
//!   `python3` on `$PATH`), so the project's packages import and a crashing cell cannot take the
//!   host down; `reset` is a fresh process.
//! - JavaScript runs in a child `node`; top-level `let`/`const`/`function`/`class` persist across
//!   cells (rewritten to global bindings, so redeclaring is fine) and top-level `await` works.
//! - The wire is JSON lines on the child's own stdin and stdout, each frame carrying a nonce; the
//!   driver moves the cell off the real stdin and stdout before any cell runs (Python: to
//!   private descriptors; JavaScript: `sh` moves stdin to fd 3 before exec'ing node, and every
//!   stream object is replaced), so nothing a cell prints or reads can corrupt it, and the wire
//!   passes unchanged through a launcher such as `docker exec -i`. No port, no socket, no secret.
//!   The frames are typed at both ends (`protocol.rs`): one enum of what a driver sends, one of
//!   what the host sends, tagged by `"t"`; a frame that fits neither is a typed error that is
//!   shown, never a default. The drivers check each frame the host sends the same way (its
//!   kind, and each field's type) and say on stderr what they ignored.
//! - The drivers are real modules: each is a package, one module per job (Python's in
//!   `src/driver/agent_kernel_driver/`, node's CommonJS modules in `src/driver/node/`), loaded
//!   from a per-user cache directory named by its hash (so Python's bytecode is cached); behind a
//!   sandbox launcher, where that directory may not be visible, each module's source is passed on
//!   the command line and executed into the same package layout (not concatenated: each file
//!   stays a module on its own). `driver.rs` says how each is booted.
//! - The sandbox launcher (`RunInfo::sandbox_prefix`) is put in front of the interpreter when the
//!   run has one; this crate never starts a sandbox.
//! - A cell's `tool(name, args)` re-enters the registry through
//!   [`CallContext::nested_call`](agent_tier::CallContext::nested_call) with
//!   [`Origin::Bridge`](agent_tier::Origin), so the caller's surface, approvals and wrappers apply.
//! - Every image a cell returns is attached and also written to the run's image folder (in the
//!   temp directory, never the workspace; removed when the run ends) as `cell-<call>-<n>.png`,
//!   with its path in the result, so it can be reopened without re-running the cell.
//! - After an interrupted cell the result names the top-level names the cell bound before the
//!   interrupt (the kernel is alive); after a killed or crashed one, that every name is gone.
//! - The timeout is an inactivity budget: output resets it, a pending bridge call pauses it; on
//!   expiry the process group gets SIGINT, then SIGKILL after a grace period.
//!
//! Never: links an interpreter into the host, opens a port, or starts a sandbox.

mod driver;
mod error;
mod frames;
mod inflow;
mod kernel;
mod protocol;
mod render;
mod report;
mod saved;

pub use error::KernelError;

use agent_tier::doctor::DoctorEntry;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{BoxError, CallContext, Registry, ResourceKey, Rooms, Tier, Tool, ToolOutput};
use kernel::{Alive, Kernel, Lang};
use render::Collector;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How the run's kernels behave. Plain data; `Default` is what a host wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelConfig {
    /// A cell is interrupted after this long without output (default 5 minutes). Output resets
    /// it; a pending `tool()` bridge call pauses it.
    pub inactivity_budget: Duration,
    /// After the interrupt, how long the cell gets to stop before the kernel is killed
    /// (default 5 s).
    pub interrupt_grace: Duration,
    /// At most this many bytes of a cell's stdout/stderr are returned (default 20 000): the first
    /// three quarters and the last quarter, with a note of how much was cut.
    pub output_cap: usize,
    /// The Python interpreter to use instead of the project's (`.venv/bin/python`,
    /// `venv/bin/python`, `python3` on `$PATH`).
    pub python: Option<PathBuf>,
    /// The `node` to use instead of the one on `$PATH`.
    pub node: Option<PathBuf>,
    /// How long a new kernel may take to report ready (default 60 s).
    pub startup_timeout: Duration,
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig {
            inactivity_budget: Duration::from_secs(300),
            interrupt_grace: Duration::from_secs(5),
            output_cap: 20_000,
            python: None,
            node: None,
            startup_timeout: Duration::from_secs(60),
        }
    }
}

/// Attach the kernel factory to this run and register `eval`.
pub fn attach(registry: &Registry, config: KernelConfig) {
    let run = registry.run();
    registry.register(EvalTool {
        state: Arc::new(State {
            config,
            root: run.root.clone(),
            prefix: run.sandbox_prefix.clone(),
            rooms: Rooms::attach(registry),
            images: Arc::new(saved::ImageDir::new(&run.root)),
            calls: AtomicU64::new(0),
        }),
    });
}

/// Which kernel runtimes are usable for the checkout at `root`.
pub fn doctor(root: &Path) -> Vec<DoctorEntry> {
    let config = KernelConfig::default();
    [
        (
            Lang::Python,
            "python",
            "python3 -m venv .venv (or install python3, e.g. apt-get install python3)",
        ),
        (Lang::Javascript, "node", "apt-get install nodejs"),
    ]
    .into_iter()
    .map(|(lang, id, install)| DoctorEntry {
        family: "kernel".into(),
        id: id.into(),
        marker: None,
        markers: Vec::new(),
        binary: kernel::program_for(lang, root, &config, false)
            .ok()
            .map(PathBuf::from),
        install: install.into(),
    })
    .collect()
}

/// The cell's language: Python in the project's own interpreter, JavaScript in `node`. (The
/// variants carry no doc comments: the field's description says it, once, in the schema.)
// missing_docs is allowed for that reason: the schema's description is written once, elsewhere.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Language {
    #[default]
    Python,
    #[serde(alias = "js", alias = "node")]
    Javascript,
}

/// Arguments of `eval`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    /// Python or JavaScript source.
    pub code: String,
    /// 5–10 words: what the cell does.
    #[serde(alias = "label")]
    pub description: String,
    /// `python` (default) or `javascript`.
    #[serde(default)]
    pub language: Language,
    /// Restart this language's interpreter first.
    #[serde(default)]
    pub reset: bool,
}

enum Slot {
    Live(Box<Kernel>),
    /// A kernel started at once after the previous one was killed or died during a cell (why);
    /// the next call says so.
    Restarted(Box<Kernel>, String),
    Lost(String),
}

/// One room's kernels.
type Slots = tokio::sync::Mutex<HashMap<Lang, Slot>>;

struct State {
    config: KernelConfig,
    root: PathBuf,
    prefix: Vec<String>,
    /// Each room's kernels, one per language: a conversation never sees another's variables;
    /// its kernels end when its room does.
    rooms: Arc<Rooms<Slots>>,
    /// The run's image folder (removed when the run ends), and how many eval calls there were.
    images: Arc<saved::ImageDir>,
    calls: AtomicU64,
}

struct EvalTool {
    state: Arc<State>,
}

/// The description; `{budget}` is the inactivity budget.
const DESCRIPTION: &str = "Run Python (the project's .venv or venv, else python3) or JavaScript (node) in a persistent interpreter; shell commands too (`!cmd`). State persists across calls (JavaScript: top-level declarations too, and await works); `reset` starts clean.

- The last expression is echoed; stdout and stderr in order, long output capped.
- display(x): DataFrames as tables, matplotlib figures as PNG.
- %pip install, %cd, %env, %time(it), %%bash, !cmd, x = !cmd.
- tool(name, args) calls your other tools and returns the text; errors raise (JavaScript: await it).
- stdin fails at once.
- Silent for {budget}: interrupted, then killed; print progress in long loops (a pending tool() pauses the clock).";

/// An empty description is an error (the cell needs a label); one outside 5–10 words runs, with
/// a note that says the rule.
fn check_description(d: &str) -> Result<Option<String>, KernelError> {
    let count = d.split_whitespace().count();
    if count == 0 {
        return Err(KernelError::Description {
            count,
            given: d.to_string(),
        });
    }
    Ok((!(5..=10).contains(&count)).then(|| {
        format!(
            "note: `description` has {count} word(s); 5–10 make a good transcript label, such as \"load the sales csv and plot revenue\""
        )
    }))
}

impl Tool for EvalTool {
    type Args = EvalArgs;

    fn name(&self) -> &str {
        "eval"
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn description(&self) -> String {
        DESCRIPTION.replace(
            "{budget}",
            &agent_tier::display::duration(self.state.config.inactivity_budget),
        )
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn resource_key(&self) -> ResourceKey {
        ResourceKey::named("eval")
    }

    fn resource_per_room(&self) -> bool {
        true
    }

    async fn call(&self, args: EvalArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let label_note = check_description(&args.description)?;
        let state = &self.state;
        let slots = state.rooms.get_or_init(&cx.room(), Slots::default);
        let lang = match args.language {
            Language::Python => Lang::Python,
            Language::Javascript => Lang::Javascript,
        };
        let name = lang.as_str();
        let mut out = Collector::new(name, state.config.output_cap);
        if let Some(n) = label_note {
            out.note(n);
        }
        out.images_to(
            state.images.clone(),
            state.calls.fetch_add(1, Ordering::Relaxed) + 1,
        );
        out.budget = state.config.inactivity_budget;
        out.grace = state.config.interrupt_grace;

        // Take the kernel out of its slot for the length of the call; if the call is cancelled
        // the kernel is dropped (its process group killed) and the placeholder says why.
        let previous = slots.lock().await.insert(
            lang,
            Slot::Lost(
                "was discarded because an earlier eval call was cancelled while its cell ran"
                    .into(),
            ),
        );
        // a live kernel (and why it was restarted, if it was), or why there is none
        let (previous, restarted) = match previous {
            Some(Slot::Live(k)) => (Some(Ok(k)), None),
            Some(Slot::Restarted(k, why)) => (Some(Ok(k)), Some(why)),
            Some(Slot::Lost(reason)) => (Some(Err(reason)), None),
            None => (None, None),
        };
        let mut kernel = match previous {
            Some(Ok(mut k)) => {
                if args.reset {
                    k.kill().await;
                    out.note(format!(
                        "reset: the previous {name} kernel was discarded; a fresh one was started"
                    ));
                    None
                } else if k.drain_idle(&mut out).await {
                    if let Some(reason) = restarted {
                        out.fresh = true;
                        out.state_lost = true;
                        out.note(format!("a fresh {name} kernel was started: the previous one {reason}, so variables and imports from earlier cells are gone"));
                    }
                    Some(*k)
                } else {
                    let (status, _) = k.death().await;
                    k.kill().await;
                    out.state_lost = true;
                    out.note(format!("a fresh {name} kernel was started: the previous one died between calls ({status}), so variables and imports from earlier cells are gone"));
                    None
                }
            }
            Some(Err(reason)) => {
                if args.reset {
                    out.note(format!("reset: a fresh {name} kernel was started"));
                } else {
                    out.state_lost = true;
                    out.note(format!("a fresh {name} kernel was started: the previous one {reason}, so variables and imports from earlier cells are gone"));
                }
                None
            }
            None => None,
        };
        if kernel.is_none() {
            out.fresh = true;
            match Kernel::start(lang, &state.root, &state.prefix, &state.config).await {
                Ok(k) => kernel = Some(k),
                Err(e) => {
                    slots.lock().await.remove(&lang);
                    return Err(e.into());
                }
            }
        }
        let Some(mut kernel) = kernel else {
            // Invariant: the branch above either started a kernel or returned.
            return Err("internal error: no kernel".into());
        };
        out.pid = Some(kernel.pid);
        out.version = kernel.version.clone();
        debug_assert_eq!(kernel.lang, lang);

        let alive = if args.code.trim().is_empty() {
            Alive::Yes
        } else {
            kernel.run(&args.code, &cx, &state.config, &mut out).await
        };
        let slot = match alive {
            Alive::Yes => Slot::Live(Box::new(kernel)),
            Alive::No(reason) => {
                kernel.kill().await;
                // a fresh kernel at once: the result can say it was restarted, and the next
                // call does not wait for it
                match Kernel::start(lang, &state.root, &state.prefix, &state.config).await {
                    Ok(k) => {
                        out.restart = Some(Ok(k.pid));
                        Slot::Restarted(Box::new(k), reason)
                    }
                    Err(e) => {
                        out.restart = Some(Err(e));
                        Slot::Lost(reason)
                    }
                }
            }
        };
        slots.lock().await.insert(lang, slot);
        Ok(out.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_word_counts() {
        // (description, accepted, with a note)
        let cases = [
            ("", false, false),
            ("plot it", true, true),
            ("load the data and plot", true, false),
            (
                "one two three four five six seven eight nine ten",
                true,
                false,
            ),
            (
                "one two three four five six seven eight nine ten eleven",
                true,
                true,
            ),
        ];
        for (d, ok, noted) in cases {
            let got = check_description(d);
            assert_eq!(got.is_ok(), ok, "{d:?}");
            if let Ok(note) = got {
                assert_eq!(note.is_some(), noted, "{d:?}");
            }
        }
    }
}
