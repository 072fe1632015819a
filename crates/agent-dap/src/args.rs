//! The arguments of `debug`: the flat object the model fills ([`DebugArgs`], whose schema it
//! sees), parsed once into a [`DebugCommand`] whose variants hold exactly what each operation
//! needs. Argument errors name the argument and what would be valid.

use crate::DapError;
use crate::adapters::AdapterId;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The operation, as the model names it; [`DebugCommand`] says what each one does.
// missing_docs is allowed: the schema's description is written once, elsewhere (the tool's
// description), and a variant's doc comment would be repeated in the schema.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
#[strum(serialize_all = "snake_case")]
pub enum Op {
    Adapters,
    Status,
    Breakpoints,
    Launch,
    Attach,
    Continue,
    Pause,
    StepOver,
    StepIn,
    StepOut,
    Threads,
    Stack,
    Scopes,
    Variables,
    Evaluate,
    Output,
    Terminate,
    Restart,
}

impl Op {
    /// The name the model writes.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// What every breakpoint of one `breakpoints` call carries besides its line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BreakpointOptions {
    /// Stop only when this expression is true.
    pub condition: Option<String>,
    /// Stop at the Nth hit (N ≥ 1).
    pub hit_count: Option<u32>,
    /// Log this message (`{expression}` interpolated) instead of stopping.
    pub log_message: Option<String>,
}

/// Which exceptions stop the debuggee, mapped onto the filters the adapter advertises.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
#[strum(serialize_all = "snake_case")]
pub enum Exceptions {
    /// Never stop on an exception.
    None,
    /// Stop on an exception nothing catches (a panic, for delve).
    #[default]
    Uncaught,
    /// Stop wherever an exception is raised or thrown, too.
    All,
}

impl Exceptions {
    /// The name the model writes.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The filters of `advertised` (an adapter's `exceptionBreakpointFilters` ids) that this
    /// setting turns on.
    pub fn filters<'a>(self, advertised: &[&'a str]) -> Vec<&'a str> {
        let uncaught = |f: &str| {
            let l = f.to_ascii_lowercase();
            l == "uncaught" || l == "unhandled" || l.contains("panic")
        };
        let raised = |f: &str| {
            let l = f.to_ascii_lowercase();
            l.contains("raised") || l.contains("throw") || l == "all"
        };
        advertised
            .iter()
            .copied()
            .filter(|f| match self {
                Exceptions::None => false,
                Exceptions::Uncaught => uncaught(f),
                Exceptions::All => uncaught(f) || raised(f),
            })
            .collect()
    }
}

/// Arguments of `debug`, flat as the model writes them. Each field's description starts with
/// the operations that use it; the others ignore it. Behaviour is said once, in the tool's
/// description.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// the operation (alias: `op`)
    #[serde(alias = "op")]
    pub operation: Op,
    /// breakpoints: source file (alias: `file`)
    #[serde(default, alias = "file")]
    pub path: Option<String>,
    /// breakpoints: 1-based lines; [] clears
    #[serde(default)]
    #[schemars(inner(range(min = 1)))]
    pub lines: Option<Vec<u32>>,
    /// breakpoints: function names; [] clears
    #[serde(default, deserialize_with = "one_or_many")]
    pub function: Option<Vec<String>>,
    /// breakpoints: stop only if true
    #[serde(default)]
    pub condition: Option<String>,
    /// breakpoints: stop at the Nth hit
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub hit_count: Option<u32>,
    /// breakpoints: log ({expr}), not stop
    #[serde(default)]
    pub log_message: Option<String>,
    /// launch: .py, executable, Go package or .dart
    #[serde(default)]
    pub program: Option<String>,
    /// launch: Python module (python -m)
    #[serde(default)]
    pub module: Option<String>,
    /// launch: test name; program = its file or package
    #[serde(default)]
    pub test: Option<String>,
    /// launch: program arguments
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// launch: default root
    #[serde(default)]
    pub cwd: Option<String>,
    /// launch: extra environment
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// launch/attach: default inferred
    #[serde(default)]
    pub adapter: Option<AdapterId>,
    /// attach: port on 127.0.0.1
    #[serde(default)]
    pub port: Option<u16>,
    /// launch/attach: default uncaught
    #[serde(default)]
    pub exceptions: Option<Exceptions>,
    /// continue/pause/step_*/stack: default last stopped
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// scopes/evaluate: from stack
    #[serde(default)]
    pub frame_id: Option<i64>,
    /// variables: a reference
    #[serde(default)]
    pub reference: Option<i64>,
    /// evaluate: expression
    #[serde(default)]
    pub expression: Option<String>,
    /// output: 0 = start
    #[serde(default)]
    pub cursor: Option<u64>,
    /// show values that look like secrets (masked by default)
    #[serde(default)]
    pub reveal: bool,
}

/// A list of strings, or one string standing for a list of one (`"main.helper"`).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => None,
        Some(OneOrMany::One(s)) => Some(vec![s]),
        Some(OneOrMany::Many(v)) => Some(v),
    })
}

/// How a resumed (or paused) debuggee moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    /// Run to the next stop.
    Continue,
    /// Stop where it is.
    Pause,
    /// Step over one line.
    StepOver,
    /// Step into the call on this line.
    StepIn,
    /// Run until the current function returns.
    StepOut,
}

impl Motion {
    /// The operation that asks for it.
    pub fn op(self) -> Op {
        match self {
            Motion::Continue => Op::Continue,
            Motion::Pause => Op::Pause,
            Motion::StepOver => Op::StepOver,
            Motion::StepIn => Op::StepIn,
            Motion::StepOut => Op::StepOut,
        }
    }

    /// The operation's name.
    pub fn name(self) -> &'static str {
        self.op().name()
    }

    /// The DAP request that makes the move (its command, as `protocol` declares it).
    pub fn request(self) -> &'static str {
        use crate::protocol::{Continue, Next, Pause, StepIn, StepOut};
        use agent_rpc::Request;
        match self {
            Motion::Continue => Continue::METHOD,
            Motion::Pause => Pause::METHOD,
            Motion::StepOver => Next::METHOD,
            Motion::StepIn => StepIn::METHOD,
            Motion::StepOut => StepOut::METHOD,
        }
    }
}

/// One `debug` call, parsed: each variant holds exactly its operation's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum DebugCommand {
    /// Which adapters are usable here, and why not.
    Adapters,
    /// Whether a session is running, and where it is stopped.
    Status,
    /// Replace a file's breakpoints (an empty `lines` clears them); allowed before launch.
    Breakpoints {
        /// Relative to the workspace root.
        file: String,
        /// 1-based, none zero.
        lines: Vec<u32>,
        /// What every breakpoint of the call carries besides its line.
        options: BreakpointOptions,
    },
    /// Replace the function breakpoints (an empty `names` clears them); allowed before launch.
    FunctionBreakpoints {
        /// As the adapter knows functions (`add`, `main.helper`), none empty.
        names: Vec<String>,
        /// `log_message` is never set: DAP function breakpoints have none.
        options: BreakpointOptions,
    },
    /// Start a program, a Python module or one test, stopping at the breakpoints.
    Launch {
        /// What to start.
        target: LaunchTarget,
        /// The program's arguments.
        args: Vec<String>,
        /// Its working directory (default: the workspace root).
        cwd: Option<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// Default: inferred from the program.
        adapter: Option<AdapterId>,
        /// Which exceptions stop it.
        exceptions: Exceptions,
    },
    /// Attach to a debuggee listening on 127.0.0.1:`port`.
    Attach {
        /// Never 0.
        port: u16,
        /// Default: the first usable of debugpy, delve, lldb.
        adapter: Option<AdapterId>,
        /// Which exceptions stop it.
        exceptions: Exceptions,
    },
    /// Continue, pause or step a thread (default: the thread that last stopped).
    Move {
        /// Which move.
        motion: Motion,
        /// The thread (default: the thread that last stopped).
        thread_id: Option<i64>,
    },
    /// Thread ids and names.
    Threads,
    /// The stack frames of a thread (default: the thread that last stopped).
    Stack {
        /// The thread (default: the thread that last stopped).
        thread_id: Option<i64>,
    },
    /// The scopes of a frame, each with a reference.
    Scopes {
        /// The frame, from `stack`.
        frame_id: i64,
    },
    /// The children of a reference.
    Variables {
        /// A reference from `scopes`, `variables` or `evaluate`.
        reference: i64,
    },
    /// Evaluate an expression in a frame (default: the top frame).
    Evaluate {
        /// The expression.
        expression: String,
        /// The frame, from `stack` (default: the top frame).
        frame_id: Option<i64>,
    },
    /// The debuggee's output from `cursor` (default: where the last `output` stopped).
    Output {
        /// A byte offset into the output: 0, or an earlier result's `next_cursor`.
        cursor: Option<u64>,
    },
    /// End the session.
    Terminate,
    /// The conversation's last launch again, its breakpoints kept (the running session ends
    /// first).
    Restart,
}

/// What `launch` starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchTarget {
    /// A script, an executable, a Go package directory or a `.dart` file, relative to the
    /// workspace root.
    Program(String),
    /// A Python module, run as `python -m MODULE` under debugpy.
    Module(String),
    /// One test: pytest's `path::name`, `go test -run` of the package, or a Rust test binary
    /// built by `cargo test --no-run`.
    Test {
        /// The test's file or package directory, relative to the workspace root.
        path: String,
        /// As the model named it (`test_y`, `TestY`, `tests::adds`, `Class::test_y`).
        name: String,
    },
}

/// An argument error of `op`.
fn invalid(op: Op, arg: &'static str, detail: impl Into<String>) -> DapError {
    DapError::Argument {
        op: op.name(),
        arg,
        detail: detail.into(),
    }
}

/// Arguments of `op` that cannot go together; `detail` names the one fix.
fn mix(op: Op, detail: &str) -> DapError {
    DapError::Combination {
        op: op.name(),
        detail: detail.into(),
    }
}

/// A required argument, or an error saying what it should be.
fn need<T>(op: Op, arg: &'static str, v: Option<T>, what: &str) -> Result<T, DapError> {
    v.ok_or_else(|| invalid(op, arg, what))
}

impl DebugCommand {
    /// Parse the flat arguments: required ones present, values in range. Arguments another
    /// operation uses are ignored.
    pub fn parse(a: DebugArgs) -> Result<DebugCommand, DapError> {
        let op = a.operation;
        let moving = |motion| DebugCommand::Move {
            motion,
            thread_id: a.thread_id,
        };
        Ok(match op {
            Op::Adapters => DebugCommand::Adapters,
            Op::Status => DebugCommand::Status,
            Op::Breakpoints if a.function.is_some() => {
                if a.path.is_some() || a.lines.is_some() {
                    return Err(invalid(
                        op,
                        "function",
                        "pass either `function` (function names) or `path` and `lines`, not both",
                    ));
                }
                if a.log_message.is_some() {
                    return Err(invalid(
                        op,
                        "log_message",
                        "a function breakpoint cannot log; set a log_message on `path` and `lines`",
                    ));
                }
                if a.hit_count == Some(0) {
                    return Err(invalid(
                        op,
                        "hit_count",
                        "hit 0 never happens; hit_count counts from 1",
                    ));
                }
                let mut names: Vec<String> = a
                    .function
                    .unwrap_or_default()
                    .into_iter()
                    .map(|n| n.trim().to_string())
                    .collect();
                if names.iter().any(String::is_empty) {
                    return Err(invalid(
                        op,
                        "function",
                        "a function name is empty; pass names such as `add` or `main.helper` ([] clears)",
                    ));
                }
                names.dedup();
                DebugCommand::FunctionBreakpoints {
                    names,
                    options: BreakpointOptions {
                        condition: a.condition.filter(|c| !c.trim().is_empty()),
                        hit_count: a.hit_count,
                        log_message: None,
                    },
                }
            }
            Op::Breakpoints => {
                let file = need(
                    op,
                    "path",
                    a.path,
                    "the source file, relative to the workspace root (or `function`: function names)",
                )?;
                let lines = need(
                    op,
                    "lines",
                    a.lines,
                    "a list of 1-based line numbers ([] clears the file)",
                )?;
                if let Some(bad) = lines.iter().find(|l| **l == 0) {
                    return Err(invalid(
                        op,
                        "lines",
                        format!("line {bad} is invalid; lines are 1-based"),
                    ));
                }
                if a.hit_count == Some(0) {
                    return Err(invalid(
                        op,
                        "hit_count",
                        "hit 0 never happens; hit_count counts from 1",
                    ));
                }
                let options = BreakpointOptions {
                    condition: a.condition.filter(|c| !c.trim().is_empty()),
                    hit_count: a.hit_count,
                    log_message: a.log_message.filter(|m| !m.is_empty()),
                };
                DebugCommand::Breakpoints {
                    file,
                    lines,
                    options,
                }
            }
            Op::Launch => DebugCommand::Launch {
                target: launch_target(op, &a)?,
                args: a.args.unwrap_or_default(),
                cwd: a.cwd,
                env: a.env.unwrap_or_default(),
                adapter: a.adapter,
                exceptions: a.exceptions.unwrap_or_default(),
            },
            Op::Attach => {
                let port = need(op, "port", a.port, "the port on 127.0.0.1 to attach to")?;
                if port == 0 {
                    return Err(invalid(
                        op,
                        "port",
                        "port 0 is not a port anything listens on; pass the debuggee's port, from 1 to 65535",
                    ));
                }
                DebugCommand::Attach {
                    port,
                    adapter: a.adapter,
                    exceptions: a.exceptions.unwrap_or_default(),
                }
            }
            Op::Continue => moving(Motion::Continue),
            Op::Pause => moving(Motion::Pause),
            Op::StepOver => moving(Motion::StepOver),
            Op::StepIn => moving(Motion::StepIn),
            Op::StepOut => moving(Motion::StepOut),
            Op::Threads => DebugCommand::Threads,
            Op::Stack => DebugCommand::Stack {
                thread_id: a.thread_id,
            },
            Op::Scopes => DebugCommand::Scopes {
                frame_id: need(op, "frame_id", a.frame_id, "a frame id from `stack`")?,
            },
            Op::Variables => DebugCommand::Variables {
                reference: need(
                    op,
                    "reference",
                    a.reference,
                    "a reference from `scopes`, `variables` or `evaluate`",
                )?,
            },
            Op::Evaluate => DebugCommand::Evaluate {
                expression: need(op, "expression", a.expression, "the expression to evaluate")?,
                frame_id: a.frame_id,
            },
            Op::Output => DebugCommand::Output { cursor: a.cursor },
            Op::Terminate => DebugCommand::Terminate,
            Op::Restart => DebugCommand::Restart,
        })
    }
}

/// What `launch` starts: `program` (or `path`, the file argument of every tool), a `module`,
/// or a `test` in `program`; a combination that cannot be meant names the one fix.
fn launch_target(op: Op, a: &DebugArgs) -> Result<LaunchTarget, DapError> {
    let program = a.program.clone().or_else(|| a.path.clone());
    let nonempty = |arg: &'static str, v: &str, what: &str| {
        let v = v.trim();
        if v.is_empty() {
            Err(invalid(op, arg, format!("it is empty; pass {what}")))
        } else {
            Ok(v.to_string())
        }
    };
    Ok(match (program, &a.module, &a.test) {
        (_, Some(_), Some(_)) => {
            return Err(mix(
                op,
                "drop `module`; `test` runs pytest, go test or cargo test itself, on `program` (the test's file or package)",
            ));
        }
        (Some(_), Some(_), None) => {
            return Err(mix(
                op,
                "pass `module` (run as python -m MODULE, `args` after it) or `program`, not both",
            ));
        }
        (None, Some(m), None) => {
            if a.adapter.is_some_and(|id| id != AdapterId::Debugpy) {
                return Err(mix(
                    op,
                    "drop `adapter`; `module` runs as python -m under debugpy",
                ));
            }
            LaunchTarget::Module(nonempty("module", m, "a Python module such as `pytest`")?)
        }
        // pytest's own node id: `tests/test_x.py::test_y`.
        (None, None, Some(t)) if t.contains(".py::") => {
            let (path, name) = t.split_once(".py::").unwrap_or_default();
            LaunchTarget::Test {
                path: format!("{}.py", path.trim()),
                name: nonempty("test", name, "the test's name after `::`")?,
            }
        }
        (None, None, Some(_)) => {
            return Err(invalid(
                op,
                "program",
                "with `test`, the test's file (.py, .go, .rs) or package directory, relative to the workspace root",
            ));
        }
        (Some(p), None, Some(t)) => LaunchTarget::Test {
            path: p,
            name: nonempty(
                "test",
                t,
                "the test's name, such as `test_parse` or `TestParse`",
            )?,
        },
        (Some(p), None, None) => LaunchTarget::Program(p),
        (None, None, None) => {
            return Err(invalid(
                op,
                "program",
                "a .py script, an executable, a Go package directory or a .dart file, relative to the workspace root (or `module`; or `test` with its file as `program`)",
            ));
        }
    })
}

#[cfg(test)]
mod tests;
