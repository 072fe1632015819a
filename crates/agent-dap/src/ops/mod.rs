//! The operations of `debug`, one module each, and the one dispatch from a parsed
//! [`DebugCommand`] to them. `inspect` and `render` hold what several operations share: finding
//! threads and frames, and saying where the debuggee went.

mod adapters;
mod attach;
mod breakpoints;
mod evaluate;
mod inspect;
mod launch;
mod launch_test;
pub(crate) mod limits;
mod motion;
mod output;
mod plan;
mod render;
mod scopes;
mod stack;
mod start;
mod status;
mod stop;
mod terminate;
mod threads;
mod variables;

use crate::DapError;
use crate::args::DebugCommand;
use crate::supervisor::Supervisor;
use agent_tier::ToolOutput;

/// Run one command against the conversation's supervisor.
pub(crate) async fn run(sup: &Supervisor, command: DebugCommand) -> Result<ToolOutput, DapError> {
    match command {
        DebugCommand::Adapters => Ok(adapters::run(sup)),
        DebugCommand::Status => status::run(sup).await,
        DebugCommand::Breakpoints {
            file,
            lines,
            options,
        } => breakpoints::run(sup, &file, lines, options).await,
        DebugCommand::FunctionBreakpoints { names, options } => {
            breakpoints::functions(sup, names, options).await
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
            launch::run(sup, request).await
        }
        DebugCommand::Attach {
            port,
            adapter,
            exceptions,
        } => attach::run(sup, port, adapter, exceptions).await,
        DebugCommand::Move { motion, thread_id } => motion::run(sup, motion, thread_id).await,
        DebugCommand::Threads => threads::run(sup).await,
        DebugCommand::Stack { thread_id } => stack::run(sup, thread_id).await,
        DebugCommand::Scopes { frame_id } => scopes::run(sup, frame_id).await,
        DebugCommand::Variables { reference } => variables::run(sup, reference).await,
        DebugCommand::Evaluate {
            expression,
            frame_id,
        } => evaluate::run(sup, &expression, frame_id).await,
        DebugCommand::Output { cursor } => output::run(sup, cursor).await,
        DebugCommand::Terminate => terminate::run(sup).await,
    }
}
