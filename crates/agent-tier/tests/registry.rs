//! The one call path: surfaces, approvals, bridge origin, wrappers, argument errors, panics,
//! per-resource serialisation.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use agent_tier::schemars::{self, JsonSchema};
use agent_tier::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, BoxError, CallContext, Effects,
    Origin, Registry, ResourceKey, RunInfo, Surface, Tier, Tool, ToolOutput, Wrapper,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// What to echo.
    text: String,
    /// How many times.
    #[serde(default)]
    times: Option<u32>,
}

struct Echo {
    name: &'static str,
    tier: Tier,
}

impl Tool for Echo {
    type Args = EchoArgs;
    fn name(&self) -> &str {
        self.name
    }
    fn tier(&self) -> Tier {
        self.tier
    }
    fn description(&self) -> String {
        format!("echo ({})", self.tier)
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, args: EchoArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        let out = ToolOutput::text(args.text.repeat(args.times.unwrap_or(1) as usize));
        // The write-tier echo reports a changed file: the effect wrappers select on.
        Ok(if self.tier == Tier::Write {
            out.with_changed_files([format!("{}.txt", args.text)])
        } else {
            out
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Calls another tool through the bridge path, as a kernel cell would.
struct Bridge;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BridgeArgs {
    tool: String,
    args: Value,
}

impl Tool for Bridge {
    type Args = BridgeArgs;
    fn name(&self) -> &str {
        "bridge"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "calls a tool from inside a tool".into()
    }
    async fn call(&self, args: BridgeArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let out = cx
            .nested_call(
                Origin::Bridge {
                    via: "bridge".into(),
                },
                &args.tool,
                args.args,
            )
            .await;
        // Like a kernel cell: the bridge reports what the nested call said; the nested call's
        // effects were wrapped on the nested path already.
        Ok(ToolOutput {
            changed_files: Vec::new(),
            ..out
        })
    }
}

struct Panics;

impl Tool for Panics {
    type Args = NoArgs;
    fn name(&self) -> &str {
        "panics"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "always panics".into()
    }
    async fn call(&self, _args: NoArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        panic!("boom inside the tool")
    }
}

/// Records how many calls run at once on one resource.
struct Serial {
    name: &'static str,
    running: Arc<AtomicUsize>,
    max_seen: Arc<AtomicUsize>,
}

impl Tool for Serial {
    type Args = NoArgs;
    fn name(&self) -> &str {
        self.name
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn description(&self) -> String {
        "not parallel-safe".into()
    }
    fn resource_key(&self) -> ResourceKey {
        ResourceKey::named("session")
    }
    async fn call(&self, _args: NoArgs, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_seen.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text("done"))
    }
}

fn registry() -> Registry {
    let r = Registry::new(RunInfo::default());
    r.register(Echo {
        name: "look",
        tier: Tier::Read,
    });
    r.register(Echo {
        name: "change",
        tier: Tier::Write,
    });
    r.register(Echo {
        name: "run",
        tier: Tier::Exec,
    });
    r.register(Bridge);
    r.register(Panics);
    r
}

#[test]
fn surfaces_see_only_their_tiers() {
    let r = registry();
    let names = |s| {
        r.list(s)
            .into_iter()
            .map(|t| format!("{} ({})", t.name, t.tier))
            .collect::<Vec<_>>()
    };
    insta::assert_debug_snapshot!(
        "surface_lists",
        (
            names(Surface::Full),
            names(Surface::Plan),
            names(Surface::ReadOnly)
        )
    );
}

#[tokio::test]
async fn hidden_tools_are_refused_at_call_time() {
    let r = registry();
    let mut lines = Vec::new();
    for surface in [Surface::Plan, Surface::ReadOnly] {
        for tool in ["change", "run"] {
            let out = r.call(tool, json!({"text": "x"}), surface).await;
            assert!(out.is_error);
            lines.push(out.text);
        }
    }
    insta::assert_snapshot!(lines.join("\n"));
    // Read-tier tools still run there.
    let ok = r.call("look", json!({"text": "x"}), Surface::Plan).await;
    assert!(!ok.is_error && ok.text == "x");
}

#[tokio::test]
async fn a_bridge_call_keeps_its_callers_surface() {
    let r = registry();
    let from_plan = r
        .call(
            "bridge",
            json!({"tool": "change", "args": {"text": "x"}}),
            Surface::Plan,
        )
        .await;
    assert!(from_plan.is_error, "{}", from_plan.text);
    assert!(
        from_plan.text.contains("not available on the plan surface"),
        "{}",
        from_plan.text
    );
    let from_full = r
        .call(
            "bridge",
            json!({"tool": "change", "args": {"text": "y"}}),
            Surface::Full,
        )
        .await;
    assert!(
        !from_full.is_error && from_full.text == "y",
        "{}",
        from_full.text
    );
}

#[tokio::test]
async fn argument_errors_name_the_argument_and_what_is_valid() {
    let r = registry();
    let cases = [
        json!({}),
        json!({"text": 3}),
        json!({"text": "a", "colour": "red"}),
        json!({"text": "a", "times": "twice"}),
        json!("just a string"),
    ];
    let mut out = Vec::new();
    for c in cases {
        let res = r.call("look", c.clone(), Surface::Full).await;
        assert!(res.is_error);
        out.push(format!("{c} -> {}", res.text));
    }
    out.push(r.call("nope", json!({}), Surface::Plan).await.text);
    insta::assert_snapshot!(out.join("\n"));
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_and_the_registry_keeps_serving() {
    let r = registry();
    let out = r.call("panics", json!({}), Surface::Full).await;
    assert!(out.is_error);
    insta::assert_snapshot!(out.text);
    let after = r
        .call("look", json!({"text": "still here"}), Surface::Full)
        .await;
    assert_eq!(after.text, "still here");
}

struct Script(ApprovalDecision, Arc<AtomicUsize>);

impl Approver for Script {
    fn approve(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + '_>> {
        assert_eq!(request.tier, Tier::Write);
        self.1.fetch_add(1, Ordering::SeqCst);
        let d = self.0.clone();
        Box::pin(async move { d })
    }
}

#[tokio::test]
async fn approvals_fail_closed_without_an_approver() {
    let r = registry();
    r.set_policy(ApprovalPolicy::tiers([Tier::Write]));
    let out = r.call("change", json!({"text": "x"}), Surface::Full).await;
    assert!(out.is_error);
    insta::assert_snapshot!("no_approver", out.text);
    // Read tier does not need approval under this policy.
    assert!(
        !r.call("look", json!({"text": "x"}), Surface::Full)
            .await
            .is_error
    );

    let asked = Arc::new(AtomicUsize::new(0));
    r.set_approver(Arc::new(Script(
        ApprovalDecision::Decline {
            reason: Some("not now".into()),
        },
        asked.clone(),
    )));
    let out = r.call("change", json!({"text": "x"}), Surface::Full).await;
    assert!(out.is_error);
    insta::assert_snapshot!("declined", out.text);

    r.set_approver(Arc::new(Script(ApprovalDecision::Approve, asked.clone())));
    let out = r.call("change", json!({"text": "ok"}), Surface::Full).await;
    assert!(!out.is_error && out.text == "ok");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn invalid_arguments_are_refused_before_asking_for_approval() {
    let r = registry();
    r.set_policy(ApprovalPolicy::tiers([Tier::Write]));
    let asked = Arc::new(AtomicUsize::new(0));
    r.set_approver(Arc::new(Script(ApprovalDecision::Approve, asked.clone())));
    let out = r.call("change", json!({"txt": "x"}), Surface::Full).await;
    assert!(
        out.is_error && out.text.contains("unknown field `txt`"),
        "{}",
        out.text
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

struct Suffix;

impl Wrapper for Suffix {
    fn wraps(&self, output: &ToolOutput) -> bool {
        !output.changed_files.is_empty()
    }
    /// Appends what the call did (the file it changed, `{text}.txt`) and where it came from.
    fn after<'a>(
        &'a self,
        mut output: ToolOutput,
        cx: &'a CallContext,
    ) -> Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>> {
        Box::pin(async move {
            let changed = output.changed_files.join(",");
            output.text.push_str(&format!(
                " [wrapped: {} via {:?}]",
                changed.trim_end_matches(".txt"),
                cx.origin
            ));
            output
        })
    }
}

#[tokio::test]
async fn wrappers_apply_on_every_path() {
    let r = registry();
    r.add_wrapper(Arc::new(Suffix));
    let direct = r.call("change", json!({"text": "a"}), Surface::Full).await;
    assert_eq!(direct.text, "a [wrapped: a via Model]");
    let bridged = r
        .call(
            "bridge",
            json!({"tool": "change", "args": {"text": "b"}}),
            Surface::Full,
        )
        .await;
    assert_eq!(
        bridged.text,
        "b [wrapped: b via Bridge { via: \"bridge\" }]"
    );
    let worker = r
        .call_with(
            "change",
            json!({"text": "c"}),
            Surface::Full,
            Origin::Worker {
                worker_id: "w1".into(),
            },
        )
        .await;
    assert_eq!(
        worker.text,
        "c [wrapped: c via Worker { worker_id: \"w1\" }]"
    );
    // Calls that changed no file are not wrapped.
    assert_eq!(
        r.call("look", json!({"text": "d"}), Surface::Full)
            .await
            .text,
        "d"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_parallel_safe_tools_are_serialised_per_resource() {
    let r = Registry::new(RunInfo::default());
    let running = Arc::new(AtomicUsize::new(0));
    let max_seen = Arc::new(AtomicUsize::new(0));
    for name in ["debug_a", "debug_b"] {
        r.register(Serial {
            name,
            running: running.clone(),
            max_seen: max_seen.clone(),
        });
    }
    let mut handles = Vec::new();
    for i in 0..8 {
        let r = r.clone();
        let name = if i % 2 == 0 { "debug_a" } else { "debug_b" };
        handles.push(tokio::spawn(async move {
            r.call(name, json!({}), Surface::Full).await
        }));
    }
    for h in handles {
        assert!(!h.await.unwrap().is_error);
    }
    assert_eq!(
        max_seen.load(Ordering::SeqCst),
        1,
        "two calls on one resource overlapped"
    );
}

#[test]
fn schemas_are_generated_from_the_argument_types() {
    let r = registry();
    let look = r
        .list(Surface::Full)
        .into_iter()
        .find(|t| t.name == "look")
        .unwrap();
    insta::assert_json_snapshot!(look.input_schema);
}

/// Sees how many questions are pending while it is asked.
struct Counting(tokio::sync::watch::Receiver<usize>, Arc<AtomicUsize>);

impl Approver for Counting {
    fn approve(
        &self,
        _request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + '_>> {
        self.1.store(*self.0.borrow(), Ordering::SeqCst);
        Box::pin(async { ApprovalDecision::Approve })
    }
}

#[tokio::test]
async fn an_approval_prompt_counts_as_a_pending_question() {
    let r = registry();
    r.set_policy(ApprovalPolicy::tiers([Tier::Write]));
    let seen = Arc::new(AtomicUsize::new(99));
    r.set_approver(Arc::new(Counting(r.asking_watch(), seen.clone())));
    assert_eq!(*r.asking_watch().borrow(), 0);
    assert!(
        !r.call("change", json!({"text": "x"}), Surface::Full)
            .await
            .is_error
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "the prompt was not marked as pending"
    );
    assert_eq!(
        *r.asking_watch().borrow(),
        0,
        "the mark outlived the prompt"
    );
    let outer = r.asking();
    let inner = r.asking();
    assert_eq!(*r.asking_watch().borrow(), 2);
    drop((outer, inner));
    assert_eq!(*r.asking_watch().borrow(), 0);
}

/// Holds its resource and calls a tool through the bridge, like a kernel cell calling `tool()`.
struct Holder;

impl Tool for Holder {
    type Args = BridgeArgs;
    fn name(&self) -> &str {
        "holder"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "holds the `kernel` resource while calling a tool".into()
    }
    fn resource_key(&self) -> ResourceKey {
        ResourceKey::named("kernel")
    }
    async fn call(&self, args: BridgeArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(cx
            .nested_call(
                Origin::Bridge {
                    via: "holder".into(),
                },
                &args.tool,
                args.args,
            )
            .await)
    }
}

/// A nested call that needs a resource its caller holds is refused through the call context
/// (no tool name is special-cased), and one that needs another resource runs.
#[tokio::test]
async fn reentrant_calls_are_refused_not_deadlocked() {
    let r = registry();
    r.register(Holder);
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        r.call(
            "holder",
            json!({"tool": "holder", "args": {"tool": "look", "args": {"text": "x"}}}),
            Surface::Full,
        ),
    )
    .await
    .expect("a re-entrant call waited for itself");
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("`holder` cannot run inside this call")
            && out.text.contains("`kernel` resource"),
        "{}",
        out.text
    );
    let ok = r
        .call(
            "holder",
            json!({"tool": "look", "args": {"text": "fine"}}),
            Surface::Full,
        )
        .await;
    assert_eq!(ok.text, "fine");
}

/// A read tool one of whose calls runs project code: `text: "*"` is an exec-tier call.
struct Mixed;

impl Tool for Mixed {
    type Args = EchoArgs;
    fn name(&self) -> &str {
        "mixed"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "read, except `*`".into()
    }
    fn effects(&self, args: &EchoArgs) -> Effects {
        let e = Effects::of(self);
        if args.text == "*" {
            e.running_project_code("`*` runs the project's build")
        } else {
            e
        }
    }
    async fn call(&self, args: EchoArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        // The call sees what it declared: the one place a family decides whether it may start
        // a project-supplied executable.
        let project = if cx.effects.runs_project_code {
            " (project code)"
        } else {
            ""
        };
        Ok(ToolOutput::text(format!("ran {}{project}", args.text)))
    }
}

#[tokio::test]
async fn a_call_that_does_more_than_its_tool_is_judged_by_what_it_does() {
    let r = registry();
    r.register(Mixed);
    // The tool is listed on every surface (its tier is read) ...
    assert!(r.list(Surface::Plan).iter().any(|t| t.name == "mixed"));
    for surface in [Surface::Plan, Surface::ReadOnly] {
        assert_eq!(
            r.call("mixed", json!({"text": "a"}), surface).await.text,
            "ran a"
        );
        // ... but its exec-tier call is refused there, with the reason, and never runs.
        let out = r.call("mixed", json!({"text": "*"}), surface).await;
        assert!(out.is_error, "{}", out.text);
        assert_eq!(
            out.text,
            format!(
                "this `mixed` call is exec-tier: `*` runs the project's build; it is not available on the {surface} surface (it allows read-tier calls only)"
            )
        );
    }
    assert_eq!(
        r.call("mixed", json!({"text": "*"}), Surface::Full)
            .await
            .text,
        "ran * (project code)"
    );
    // Approval follows the call's tier: an exec policy asks for `*` (and fails closed with
    // nobody to ask), not for the read calls.
    r.set_policy(ApprovalPolicy::tiers([Tier::Exec]));
    let out = r.call("mixed", json!({"text": "*"}), Surface::Full).await;
    assert!(
        out.is_error && out.text.contains("needs approval"),
        "{}",
        out.text
    );
    assert!(
        !r.call("mixed", json!({"text": "a"}), Surface::Full)
            .await
            .is_error
    );
}

#[tokio::test]
async fn the_registry_is_fixed_once_used() {
    let r = registry();
    r.register(Mixed);
    assert!(!r.is_sealed());
    let _ = r.call("mixed", json!({"text": "a"}), Surface::Full).await;
    assert!(r.is_sealed());
    // Registering after the first call is a composition error, refused loudly.
    let late = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| r.register(Mixed)));
    let msg = late.expect_err("register after the first call must be refused");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("Registry::register(mixed) after the registry was sealed"),
        "{msg}"
    );
    // A listing seals too.
    let r2 = registry();
    let _ = r2.list(Surface::Full);
    assert!(r2.is_sealed());
}

/// A tool that takes `A`, to see what the registry makes of `A`'s schema.
struct Takes<A>(&'static str, std::marker::PhantomData<fn() -> A>);

impl<A: serde::de::DeserializeOwned + JsonSchema + Send + 'static> Tool for Takes<A> {
    type Args = A;
    fn name(&self) -> &str {
        self.0
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "takes its argument type".into()
    }
    async fn call(&self, _args: A, _cx: CallContext) -> Result<ToolOutput, BoxError> {
        Ok(ToolOutput::text("ran"))
    }
}

fn takes<A>(name: &'static str) -> Takes<A> {
    Takes(name, std::marker::PhantomData)
}

/// A tree: recursive beyond what the schema's inlining follows.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // only its schema is looked at
struct TreeArgs {
    /// The root.
    root: Node,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only its schema is looked at
struct Node {
    children: Vec<Node>,
}

/// An argument type whose schema no client could use is refused when the tool is registered,
/// naming the tool and what is wrong, instead of being served as `{"type": "object"}`.
#[test]
fn a_tool_whose_schema_no_client_can_use_is_refused_at_registration() {
    let r = registry();
    let refusals = [
        r.try_register(takes::<String>("bare")),
        r.try_register(takes::<Vec<u32>>("list")),
        r.try_register(takes::<TreeArgs>("tree")),
    ]
    .map(|res| res.unwrap_err().to_string());
    insta::assert_snapshot!(refusals.join("\n"));
    for name in ["bare", "list", "tree"] {
        assert!(!r.contains(name), "{name} was registered");
    }
    assert!(r.try_register(takes::<EchoArgs>("fine")).is_ok());
    // `register` refuses it loudly: a composition error, found the first time the run is composed.
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        r.register(takes::<String>("bare"))
    }));
    let msg = refused.expect_err("an object schema is required");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("refuses tool `bare`") && msg.contains("not an object schema"),
        "{msg}"
    );
}

/// A requester named by a string, as the host's MCP sessions are.
struct Party(&'static str);

impl agent_tier::Requester for Party {
    fn id(&self) -> &str {
        self.0
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A room's own resource: the room's first call waits until released; every call records how
/// many calls of its room run at once.
struct RoomGate {
    release: Arc<tokio::sync::Notify>,
    running: Arc<std::sync::Mutex<Counts>>,
}

/// Per room: (running now, most at once, calls so far).
type Counts = std::collections::HashMap<String, (usize, usize, usize)>;

impl Tool for RoomGate {
    type Args = NoArgs;
    fn name(&self) -> &str {
        "kernel"
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn description(&self) -> String {
        "a room's own resource".into()
    }
    fn resource_per_room(&self) -> bool {
        true
    }
    async fn call(&self, _args: NoArgs, cx: CallContext) -> Result<ToolOutput, BoxError> {
        let room = cx.room().to_string();
        let first = {
            let mut map = self.running.lock().unwrap();
            let (now, max, calls) = map.entry(room.clone()).or_default();
            *now += 1;
            *max = (*max).max(*now);
            *calls += 1;
            *calls == 1
        };
        if first && room == "a" {
            self.release.notified().await;
        }
        tokio::task::yield_now().await;
        self.running.lock().unwrap().get_mut(&room).unwrap().0 -= 1;
        Ok(ToolOutput::text(room))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rooms_resource_is_locked_per_room_not_across_the_run() {
    let r = Registry::new(RunInfo::default());
    let release = Arc::new(tokio::sync::Notify::new());
    let running = Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
    r.register(RoomGate {
        release: release.clone(),
        running: running.clone(),
    });
    let call_as = |who: &'static str| {
        let r = r.clone();
        tokio::spawn(async move {
            let caller = agent_tier::Caller::requested_by(Arc::new(Party(who)));
            r.call_from("kernel", json!({}), Surface::Full, Origin::Model, caller)
                .await
        })
    };
    // A's first call holds A's lock until released; a second call of A waits behind it.
    let a1 = call_as("a");
    while running.lock().unwrap().get("a").is_none() {
        tokio::task::yield_now().await;
    }
    let a2 = call_as("a");
    // B's call is in another room: it runs and returns while A's lock is held.
    let b = tokio::time::timeout(std::time::Duration::from_secs(30), call_as("b"))
        .await
        .expect("B's call waited for A's room")
        .unwrap();
    assert_eq!(b.text, "b");
    release.notify_one();
    assert_eq!(a1.await.unwrap().text, "a");
    assert_eq!(a2.await.unwrap().text, "a");
    assert_eq!(
        running.lock().unwrap()["a"].1,
        1,
        "two calls of one room overlapped"
    );
}

/// A locator that finds nothing; what matters is which one a family was wired with.
struct NamedLocator(&'static str);

impl agent_tier::locate::SymbolLocator for NamedLocator {
    fn locate<'a>(
        &'a self,
        name: &'a str,
        _near: Option<&'a std::path::Path>,
    ) -> Pin<
        Box<
            dyn Future<
                    Output = Result<agent_tier::locate::Located, agent_tier::locate::LocateError>,
                > + Send
                + 'a,
        >,
    > {
        let why = format!("{} has no {name}", self.0);
        Box::pin(async move { Err(why.into()) })
    }
}

/// Services are wired once, when the registry is sealed (issue 43): a family that attaches
/// before the one that provides a service still gets it, its wiring runs exactly once however
/// many calls follow (and not before the first), and wiring asked after the seal runs at once.
#[tokio::test]
async fn services_are_wired_once_at_the_seal() {
    let r = registry();
    let wired = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    r.on_seal({
        let wired = wired.clone();
        move |reg| {
            let got = match reg.locator() {
                Some(_) => "a locator".to_string(),
                None => "none".to_string(),
            };
            wired.lock().push(got);
        }
    });
    // The provider attaches after the family that uses it.
    r.provide_locator(Arc::new(NamedLocator("the lsp family")));
    assert!(wired.lock().is_empty(), "wired before the seal");
    for _ in 0..3 {
        assert!(
            !r.call("look", json!({"text": "x"}), Surface::Full)
                .await
                .is_error
        );
    }
    assert_eq!(*wired.lock(), vec!["a locator".to_string()]);
    r.on_seal({
        let wired = wired.clone();
        move |_| wired.lock().push("late".into())
    });
    assert_eq!(
        *wired.lock(),
        vec!["a locator".to_string(), "late".to_string()]
    );
}
