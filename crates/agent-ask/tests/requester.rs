//! Every card goes to the requester of the call that caused it: `ask_user`'s question and the
//! approval of a call, made directly or nested in another call (a kernel cell's `tool()`
//! bridge), reach the port with that call's requester — never another party's (issue 23).

#![allow(clippy::unwrap_used)]

use agent_ask::{
    Answer, AskApprover, AskConfig, AskOutcome, ElicitOutcome, ElicitationPort, Elicitor,
    ScriptedPort, attach,
};
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{
    ApprovalPolicy, BoxError, BoxFuture, CallContext, Caller, Origin, Registry, Requester, RunInfo,
    Surface, Tier, Tool, ToolOutput,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A party that makes calls, known by its name.
#[derive(Debug)]
struct Party(&'static str);

impl Requester for Party {
    fn id(&self) -> &str {
        self.0
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// A write-tier tool (so the policy below asks before it runs).
struct Touch;

impl Tool for Touch {
    type Args = NoArgs;
    fn name(&self) -> &str {
        "touch"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "touch a file".into()
    }
    async fn call(&self, _args: NoArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::text("touched"))
    }
}

/// What a kernel cell does through its `tool()` bridge: ask a question, then make a write.
struct Cell;

impl Tool for Cell {
    type Args = NoArgs;
    fn name(&self) -> &str {
        "cell"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "a cell that asks and writes through the bridge".into()
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, _args: NoArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let via = Origin::Bridge { via: "cell".into() };
        let asked = cx
            .nested_call(via.clone(), "ask_user", json!({"question": "Which name?"}))
            .await;
        let touched = cx.nested_call(via, "touch", json!({})).await;
        Ok(ToolOutput::text(format!(
            "{}\n{}",
            asked.text, touched.text
        )))
    }
}

fn registry(port: Arc<ScriptedPort>) -> Registry {
    let registry = Registry::new(RunInfo::default());
    let config = AskConfig {
        port: Some(port),
        target_space: Some("conversation-1".into()),
        timeout: Some(Duration::from_secs(60)),
    };
    registry.set_approver(Arc::new(AskApprover::from_config(&config)));
    attach(&registry, config);
    registry.register(Touch);
    registry.register(Cell);
    registry.set_policy(ApprovalPolicy::tiers([Tier::Write]));
    registry
}

fn from(name: &'static str) -> Caller {
    Caller::requested_by(Arc::new(Party(name)))
}

#[tokio::test]
async fn a_nested_question_and_approval_go_to_the_outer_calls_requester() {
    let port = Arc::new(ScriptedPort::with([
        AskOutcome::Answer(Answer::text("alpha")),
        AskOutcome::Answer(Answer::options(&["approve"])),
        AskOutcome::Answer(Answer::text("beta")),
    ]));
    let registry = registry(port.clone());
    let out = registry
        .call_from("cell", json!({}), Surface::Full, Origin::Model, from("A"))
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("typed: alpha"), "{}", out.text);
    assert!(out.text.contains("touched"), "{}", out.text);
    let direct = registry
        .call_from(
            "ask_user",
            json!({"question": "Which colour?"}),
            Surface::Full,
            Origin::Model,
            from("B"),
        )
        .await;
    assert!(direct.text.contains("typed: beta"), "{}", direct.text);
    assert_eq!(
        port.shown_to(),
        vec![Some("A".into()), Some("A".into()), Some("B".into())]
    );
}

#[tokio::test]
async fn a_call_that_names_nobody_reaches_the_port_without_a_requester() {
    let port = Arc::new(ScriptedPort::with([AskOutcome::Answer(Answer::text("x"))]));
    let registry = registry(port.clone());
    let out = registry
        .call("ask_user", json!({"question": "Which?"}), Surface::Full)
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(port.shown_to(), vec![None]);
}

/// Records whom each elicitation was for; answers with the requester's own name.
#[derive(Default)]
struct Clients(Mutex<Vec<Option<String>>>);

impl Elicitor for Clients {
    fn elicit(
        &self,
        requester: Option<Arc<dyn Requester>>,
        _message: String,
        _requested_schema: Value,
    ) -> BoxFuture<'_, Result<ElicitOutcome, agent_tier::BoxError>> {
        let who = requester.map(|r| r.id().to_string());
        self.0.lock().unwrap().push(who.clone());
        Box::pin(async move {
            match who {
                Some(who) => Ok(ElicitOutcome::Accept(json!({"text": who}))),
                None => Err("no requester".into()),
            }
        })
    }
}

#[tokio::test]
async fn the_elicitation_port_hands_the_requester_to_the_elicitor() {
    let clients = Arc::new(Clients::default());
    let registry = Registry::new(RunInfo::default());
    attach(
        &registry,
        AskConfig {
            port: Some(Arc::new(ElicitationPort::new(clients.clone()))),
            target_space: Some("conversation-1".into()),
            timeout: Some(Duration::from_secs(60)),
        },
    );
    let question = json!({"question": "Who are you?"});
    let a = registry
        .call_from(
            "ask_user",
            question.clone(),
            Surface::Full,
            Origin::Model,
            from("A"),
        )
        .await;
    assert!(a.text.contains("typed: A"), "{}", a.text);
    let nobody = registry.call("ask_user", question, Surface::Full).await;
    assert!(nobody.is_error, "{}", nobody.text);
    assert_eq!(*clients.0.lock().unwrap(), vec![Some("A".into()), None]);
}
