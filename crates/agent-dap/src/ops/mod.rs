//! The operations of `debug` — one module each, but for the moves (`motion`: continue, pause,
//! the steps) and the five that read a stopped debuggee (`inspection`: threads, stack, scopes,
//! variables, evaluate) — and the one dispatch from a parsed [`DebugCommand`] to them (`restart`
//! is the last launch run again, here), where each operation's result (a value of its own type,
//! from `report`) is rendered with [`ToolOutput::report`]. `inspect`, `rows` and `stop` hold what
//! several operations share: finding threads and frames, building result rows from the
//! adapter's answers, and finding where the debuggee went.

mod adapters;
mod attach;
mod breakpoints;
mod inspect;
mod inspection;
mod launch;
mod launch_test;
mod motion;
mod output;
mod plan;
mod rows;
mod start;
mod status;
mod stop;
mod terminate;

use crate::DapError;
use crate::args::DebugCommand;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;
use motion::Moving;

/// Run one command against the conversation's supervisor; its result rendered from its report.
pub(crate) async fn run(sup: &Supervisor, command: DebugCommand) -> Result<ToolOutput, DapError> {
    let command = match command {
        DebugCommand::Launch { .. } => {
            *sup.last_launch.lock() = Some(command.clone());
            command
        }
        DebugCommand::Restart => {
            let Some(last) = sup.last_launch.lock().clone() else {
                return Err(DapError::NoSession {
                    ended: " and none was launched in this conversation to restart".into(),
                });
            };
            // The running session ends first; its breakpoints are the supervisor's and stay.
            let _ = terminate::run(sup).await;
            last
        }
        other => other,
    };
    Ok(match command {
        DebugCommand::Adapters => ToolOutput::report(&adapters::run(sup)),
        DebugCommand::Status => ToolOutput::report(&status::run(sup).await),
        DebugCommand::Breakpoints {
            file,
            lines,
            options,
        } => ToolOutput::report(&breakpoints::run(sup, &file, lines, options).await?),
        DebugCommand::FunctionBreakpoints { names, options } => {
            ToolOutput::report(&breakpoints::functions(sup, names, options).await?)
        }
        DebugCommand::Launch {
            target,
            args,
            cwd,
            env,
            adapter,
            exceptions,
        } => {
            let request = launch::Request {
                target: &target,
                args: &args,
                cwd: cwd.as_deref(),
                env: &env,
                adapter,
                exceptions,
            };
            ToolOutput::report(&launch::run(sup, request).await?)
        }
        DebugCommand::Attach {
            port,
            adapter,
            exceptions,
        } => ToolOutput::report(&attach::run(sup, port, adapter, exceptions).await?),
        DebugCommand::Move { motion, thread_id } => {
            match motion::run(sup, motion, thread_id).await? {
                Moving::Moved(moved) => ToolOutput::report(&moved),
                Moving::Nothing(why) => ToolOutput::text(why),
            }
        }
        DebugCommand::Threads => ToolOutput::report(&inspection::threads(sup).await?),
        DebugCommand::Stack { thread_id } => {
            ToolOutput::report(&inspection::stack(sup, thread_id).await?)
        }
        DebugCommand::Scopes { frame_id } => {
            ToolOutput::report(&inspection::scopes(sup, frame_id).await?)
        }
        DebugCommand::Variables { reference } => {
            ToolOutput::report(&inspection::variables(sup, reference).await?)
        }
        DebugCommand::Evaluate {
            expression,
            frame_id,
        } => ToolOutput::report(&inspection::evaluate(sup, &expression, frame_id).await?),
        DebugCommand::Output { cursor } => ToolOutput::report(&output::run(sup, cursor).await?),
        DebugCommand::Terminate => match terminate::run(sup).await {
            Some(t) => ToolOutput::report(&t),
            None => ToolOutput::text("no debug session is running; nothing to terminate"),
        },
        // Replaced by the last launch above.
        DebugCommand::Restart => unreachable_restart(),
    })
}

/// `Restart` never reaches the dispatch: [`run`] replaced it by the last launch.
fn unreachable_restart() -> ToolOutput {
    ToolOutput::error("restart: internal error: the last launch was not substituted")
}
