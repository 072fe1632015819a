//! A call's progress messages reach the sink its caller gave, from the tool's context, from code
//! without one (the task-local `progress`) and from a nested call; without a sink nothing fails.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{
    BoxError, CallContext, Origin, ProgressSink, Registry, RunInfo, Surface, Tier, Tool, ToolOutput,
};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Reports "one", waits for the test to have seen it, reports "two" without its context, then
/// calls `inner`, which reports "three".
struct Outer {
    seen: Arc<Notify>,
}

impl Tool for Outer {
    type Args = NoArgs;
    fn name(&self) -> &str {
        "outer"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "reports progress".into()
    }
    async fn call(&self, _: NoArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let wanted = cx.progress_wanted();
        cx.progress("one");
        if wanted {
            self.seen.notified().await;
        }
        assert_eq!(agent_tier::progress_wanted(), wanted);
        agent_tier::progress("two");
        if wanted {
            self.seen.notified().await;
        }
        let inner = cx
            .nested_call(
                Origin::Bridge {
                    via: "outer".into(),
                },
                "inner",
                json!({}),
            )
            .await;
        Ok(ToolOutput::text(format!("done; {}", inner.text)))
    }
}

struct Inner;

impl Tool for Inner {
    type Args = NoArgs;
    fn name(&self) -> &str {
        "inner"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "reports progress when nested".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, _: NoArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        cx.progress("three");
        Ok(ToolOutput::text("inner ran"))
    }
}

fn registry(seen: Arc<Notify>) -> Registry {
    let r = Registry::new(RunInfo::default());
    r.register(Outer { seen });
    r.register(Inner);
    r
}

#[tokio::test]
async fn progress_messages_reach_the_sink() {
    let seen = Arc::new(Notify::new());
    let r = registry(seen.clone());
    let (sink, mut rx) = ProgressSink::channel();
    let listener = tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some(m) = rx.next().await {
            got.push(m.clone());
            if m != "three" {
                seen.notify_one();
            }
        }
        got
    });
    let out = r
        .call_with_progress("outer", json!({}), Surface::Plan, Origin::Model, sink)
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "done; inner ran");
    // The registry keeps no clone of the sink once the call is done, so the listener ends.
    let got = tokio::time::timeout(std::time::Duration::from_secs(10), listener)
        .await
        .expect("the listener ends with the call")
        .unwrap();
    assert_eq!(got, ["one", "two", "three"]);
}

#[tokio::test]
async fn no_sink_is_fine() {
    let r = registry(Arc::new(Notify::new()));
    let out = r.call("outer", json!({}), Surface::Plan).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "done; inner ran");
}
