//! Moving the debuggee: `continue`, `next`, `stepIn`, `stepOut` and `pause`, each of one thread.
//! Their answers carry nothing this family reads: where the debuggee went comes as events.

use super::ThreadArguments;
use agent_rpc::Request;
use serde::de::IgnoredAny;

macro_rules! motion {
    ($($ty:ident = $command:literal: $doc:literal;)*) => {$(
        #[doc = $doc]
        pub(crate) enum $ty {}

        impl Request for $ty {
            const METHOD: &'static str = $command;
            type Params = ThreadArguments;
            type Result = IgnoredAny;
        }
    )*};
}

motion! {
    Continue = "continue": "`continue`: run until the next stop.";
    Next = "next": "`next`: step over one line.";
    StepIn = "stepIn": "`stepIn`: step into the call on the line.";
    StepOut = "stepOut": "`stepOut`: run until the function returns.";
    Pause = "pause": "`pause`: stop the running debuggee.";
}
