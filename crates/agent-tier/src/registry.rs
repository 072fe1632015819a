//! The run's [`Registry`]: the tools, the wrappers and the services the families provide, and
//! the one call path every call takes (surface check, argument validation, approval, the lock
//! of the call's resource, panic capture, wrappers), whoever makes it. Sealed by its first call
//! or listing: what a surface sees never changes under a running model.

use crate::resource::Held;
use crate::rooms::{RoomEnd, RoomId};
use crate::tool::{Tool, ToolInfo, ToolOutput};
use crate::{CallError, RegisterError, Surface};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

mod approval;
mod context;
mod erased;
mod progress;
mod requester;
pub use approval::{ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver};
use context::room_of;
pub use context::{CallContext, Origin, RunInfo};
use erased::{Erased, ErasedTool};
pub use progress::{PROGRESS_MAX, ProgressListener, ProgressSink, progress, progress_wanted};
pub use requester::{Caller, Requester};

/// A boxed, sendable future: what the object-safe traits here (and the families') return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Code outside a tool that post-processes the results of calls, on every call path. It sees
/// what a call did (its output and its typed effects), never which tool it was or its
/// arguments: a wrapper that selected by tool name would miss a harness's own tools.
pub trait Wrapper: Send + Sync + 'static {
    /// Whether this wrapper applies to this call: decided by what the call did (its output's
    /// typed effects, such as [`ToolOutput::changed_files`]).
    fn wraps(&self, output: &ToolOutput) -> bool;

    /// Transform the result of a call that has run.
    fn after<'a>(&'a self, output: ToolOutput, cx: &'a CallContext) -> BoxFuture<'a, ToolOutput>;
}

/// A family's wiring, run once at seal.
type SealHook = Box<dyn FnOnce(&Registry) + Send>;

struct Inner {
    run: RunInfo,
    tools: RwLock<BTreeMap<String, Arc<dyn ErasedTool>>>,
    wrappers: RwLock<Vec<Arc<dyn Wrapper>>>,
    locator: RwLock<Option<Arc<dyn crate::locate::SymbolLocator>>>,
    change_checker: RwLock<Option<Arc<dyn crate::outside::ChangeChecker>>>,
    person_asker: RwLock<Option<Arc<dyn crate::person::PersonAsker>>>,
    witness: RwLock<Option<Arc<dyn crate::witness::IdentifierWitness>>>,
    definitions: RwLock<Option<Arc<dyn crate::definitions::DefinitionFinder>>>,
    approver: RwLock<Option<Arc<dyn Approver>>>,
    policy: RwLock<ApprovalPolicy>,
    locks: Mutex<HashMap<Held, Arc<tokio::sync::Mutex<()>>>>,
    /// Set by the first call or listing: from then on the tools and wrappers are fixed.
    sealed: AtomicBool,
    /// Sealing happens once; a caller that arrives while it runs waits for the wiring.
    seal_once: std::sync::Once,
    /// What the families wire when the registry is sealed ([`Registry::on_seal`]); taken then.
    on_seal: Mutex<Vec<SealHook>>,
    /// How many questions to a person (ask_user cards, approval prompts) are pending.
    asking: Arc<tokio::sync::watch::Sender<usize>>,
    /// The tables of per-room state, ended together by [`Registry::end_room`].
    room_ends: Mutex<Vec<Weak<dyn RoomEnd>>>,
}

/// Marks a question to a person as pending while it lives; see [`Registry::asking`].
#[derive(Debug)]
pub struct AskingGuard(Arc<tokio::sync::watch::Sender<usize>>);

impl Drop for AskingGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The run's tools. Cheap to clone; every clone is the same registry.
///
/// A tool is registered by the code that attaches its resource, so the registry never lists a
/// tool whose resource is missing.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("root", &self.inner.run.root)
            .field("tools", &self.names())
            .finish()
    }
}

impl Registry {
    /// An empty registry for one run.
    pub fn new(run: RunInfo) -> Self {
        // A host killed in the middle of a multi-file change on this root left a journal: put
        // the files back as they were before anything else reads them.
        if run.root.is_dir() {
            crate::workspace::recover(&run.root);
        }
        Registry {
            inner: Arc::new(Inner {
                run,
                tools: RwLock::new(BTreeMap::new()),
                wrappers: RwLock::new(Vec::new()),
                locator: RwLock::new(None),
                change_checker: RwLock::new(None),
                person_asker: RwLock::new(None),
                witness: RwLock::new(None),
                definitions: RwLock::new(None),
                approver: RwLock::new(None),
                policy: RwLock::new(ApprovalPolicy::none()),
                locks: Mutex::new(HashMap::new()),
                sealed: AtomicBool::new(false),
                seal_once: std::sync::Once::new(),
                on_seal: Mutex::new(Vec::new()),
                asking: Arc::new(tokio::sync::watch::channel(0).0),
                room_ends: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The run.
    pub fn run(&self) -> &RunInfo {
        &self.inner.run
    }

    /// Register a tool while composing the run. A later tool of the same name replaces the
    /// earlier one.
    ///
    /// # Panics
    ///
    /// When [`Registry::try_register`] refuses the tool: after the registry's first call or
    /// listing ([`Registry::seal`]), or when the tool's argument type has no valid input schema.
    /// Both are composition errors in the harness (or the family), found the first time the run
    /// is composed.
    pub fn register<T: Tool>(&self, tool: T) {
        if let Err(e) = self.try_register(tool) {
            panic!("{e}");
        }
    }

    /// Register a tool while composing the run, or say why it is refused: the registry is
    /// sealed (the tool set a surface sees never changes under a running model), or the input
    /// schema generated from the tool's argument type is not one a client can use
    /// ([`schema::input_schema`](crate::schema::input_schema)). A refused tool is not listed.
    pub fn try_register<T: Tool>(&self, tool: T) -> Result<(), RegisterError> {
        self.composing("register", tool.name())?;
        let schema = crate::schema::input_schema::<T::Args>().map_err(|problem| {
            RegisterError::InvalidSchema {
                tool: tool.name().to_string(),
                problem,
            }
        })?;
        let name = tool.name().to_string();
        self.inner
            .tools
            .write()
            .insert(name, Arc::new(Erased { tool, schema }));
        Ok(())
    }

    /// Keep only the tools whose names `keep` accepts, while composing the run (a host that
    /// serves a client only the tools it lacks). Wrappers, providers and rooms stay. The tools
    /// removed, by name.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn retain(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        self.composing_or_panic("retain", "the tool set");
        let mut tools = self.inner.tools.write();
        let removed: Vec<String> = tools.keys().filter(|n| !keep(n)).cloned().collect();
        for name in &removed {
            tools.remove(name);
        }
        removed
    }

    /// Add a wrapper while composing the run; it applies to every call whose output it wraps.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn add_wrapper(&self, wrapper: Arc<dyn Wrapper>) {
        self.composing_or_panic("add_wrapper", "a wrapper");
        self.inner.wrappers.write().push(wrapper);
    }

    /// Provide the run's symbol locator while composing the run (the family that knows
    /// definitions does); a later one replaces the earlier.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn provide_locator(&self, locator: Arc<dyn crate::locate::SymbolLocator>) {
        self.composing_or_panic("provide_locator", "a symbol locator");
        *self.inner.locator.write() = Some(locator);
    }

    /// The run's symbol locator, when a family provided one.
    pub fn locator(&self) -> Option<Arc<dyn crate::locate::SymbolLocator>> {
        self.inner.locator.read().clone()
    }

    /// Provide the run's checker of outside changes while composing the run (the family that
    /// checks writes does); a later one replaces the earlier.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn provide_change_checker(&self, checker: Arc<dyn crate::outside::ChangeChecker>) {
        self.composing_or_panic("provide_change_checker", "a change checker");
        *self.inner.change_checker.write() = Some(checker);
    }

    /// The run's checker of outside changes, when a family provided one.
    pub fn change_checker(&self) -> Option<Arc<dyn crate::outside::ChangeChecker>> {
        self.inner.change_checker.read().clone()
    }

    /// Provide the run's asker of people while composing the run (the family that reaches
    /// them does); a later one replaces the earlier.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn provide_person_asker(&self, asker: Arc<dyn crate::person::PersonAsker>) {
        self.composing_or_panic("provide_person_asker", "a person asker");
        *self.inner.person_asker.write() = Some(asker);
    }

    /// The run's asker of people, when a family provided one.
    pub fn person_asker(&self) -> Option<Arc<dyn crate::person::PersonAsker>> {
        self.inner.person_asker.read().clone()
    }

    /// Provide the run's identifier witness while composing the run (the family that parses
    /// code does); a later one replaces the earlier.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn provide_witness(&self, witness: Arc<dyn crate::witness::IdentifierWitness>) {
        self.composing_or_panic("provide_witness", "an identifier witness");
        *self.inner.witness.write() = Some(witness);
    }

    /// The run's identifier witness, when a family provided one.
    pub fn witness(&self) -> Option<Arc<dyn crate::witness::IdentifierWitness>> {
        self.inner.witness.read().clone()
    }

    /// Provide the run's definition finder while composing the run (the family that parses
    /// code does); a later one replaces the earlier.
    ///
    /// # Panics
    ///
    /// After the registry is sealed, like [`Registry::register`].
    pub fn provide_definitions(&self, finder: Arc<dyn crate::definitions::DefinitionFinder>) {
        self.composing_or_panic("provide_definitions", "a definition finder");
        *self.inner.definitions.write() = Some(finder);
    }

    /// The run's definition finder, when a family provided one.
    pub fn definitions(&self) -> Option<Arc<dyn crate::definitions::DefinitionFinder>> {
        self.inner.definitions.read().clone()
    }

    /// End composition: from now on tools and wrappers are fixed, and the families' services are
    /// wired ([`Registry::on_seal`]). The first call or listing seals the registry by itself; a
    /// harness may seal it earlier. A caller that arrives while the wiring runs waits for it.
    pub fn seal(&self) {
        self.inner.seal_once.call_once(|| {
            let hooks = {
                let mut pending = self.inner.on_seal.lock();
                self.inner.sealed.store(true, Ordering::Release);
                std::mem::take(&mut *pending)
            };
            for hook in hooks {
                hook(self);
            }
        });
    }

    /// Run `wire` once, when the registry is sealed (at once if it already is): where a family
    /// takes the services other families provide (the identifier witness, the symbol locator),
    /// after every family has attached and before the first call, instead of on every call.
    /// `wire` must not call `on_seal` itself.
    pub fn on_seal(&self, wire: impl FnOnce(&Registry) + Send + 'static) {
        {
            let mut pending = self.inner.on_seal.lock();
            if !self.is_sealed() {
                pending.push(Box::new(wire));
                return;
            }
        }
        wire(self);
    }

    /// Whether the registry is sealed.
    pub fn is_sealed(&self) -> bool {
        self.inner.sealed.load(Ordering::Acquire)
    }

    fn composing(&self, what: &'static str, name: &str) -> Result<(), RegisterError> {
        if self.is_sealed() {
            return Err(RegisterError::Sealed {
                what,
                name: name.to_string(),
            });
        }
        Ok(())
    }

    fn composing_or_panic(&self, what: &'static str, name: &str) {
        if let Err(e) = self.composing(what, name) {
            panic!("{e}");
        }
    }

    /// Have `table` end its state of a room when [`Registry::end_room`] ends that room. Held
    /// weakly: a table its family has dropped is skipped. [`Rooms::attach`](crate::Rooms::attach)
    /// calls this.
    pub fn on_room_end(&self, table: Weak<dyn RoomEnd>) {
        let mut ends = self.inner.room_ends.lock();
        ends.retain(|t| t.strong_count() > 0);
        ends.push(table);
    }

    /// End one room: every family's state kept for it (kernels, a debug session, staged edits,
    /// ledgers, workers) is dropped, and ends when the calls still using it return. What the
    /// edge calls when a conversation ends (an MCP session closed or expired). Returns how many
    /// entries were ended.
    pub fn end_room(&self, room: &RoomId) -> usize {
        let tables: Vec<Arc<dyn RoomEnd>> = self
            .inner
            .room_ends
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let ended: usize = tables.iter().map(|t| t.end(room)).sum();
        tracing::debug!(%room, ended, "room ended");
        ended
    }

    /// Connect (or replace) the approver.
    pub fn set_approver(&self, approver: Arc<dyn Approver>) {
        *self.inner.approver.write() = Some(approver);
    }

    /// Set which tiers need approval.
    pub fn set_policy(&self, policy: ApprovalPolicy) {
        *self.inner.policy.write() = policy;
    }

    /// Mark a question to a person as pending until the guard is dropped. Inactivity budgets
    /// elsewhere in the run (a kernel cell's) pause while any question is pending: a person
    /// thinking is not a stuck program.
    pub fn asking(&self) -> AskingGuard {
        self.inner.asking.send_modify(|n| *n += 1);
        AskingGuard(self.inner.asking.clone())
    }

    /// How many questions to a person are pending, as a watch that changes when it does.
    pub fn asking_watch(&self) -> tokio::sync::watch::Receiver<usize> {
        self.inner.asking.subscribe()
    }

    /// Every registered tool name.
    pub fn names(&self) -> Vec<String> {
        self.inner.tools.read().keys().cloned().collect()
    }

    /// Whether the tool of that name puts questions to a person ([`Tool::asks_a_person`]); read
    /// on every call by a host, so it builds no [`ToolInfo`].
    pub fn asks_a_person(&self, name: &str) -> bool {
        self.inner
            .tools
            .read()
            .get(name)
            .is_some_and(|t| t.asks_a_person())
    }

    /// Whether a tool of that name is registered (on any surface).
    pub fn contains(&self, name: &str) -> bool {
        self.inner.tools.read().contains_key(name)
    }

    /// The tools a surface sees, sorted by name. Seals the registry.
    pub fn list(&self, surface: Surface) -> Vec<ToolInfo> {
        self.seal();
        self.inner
            .tools
            .read()
            .values()
            .map(|t| t.info())
            .filter(|i| surface.allows(i.tier))
            .collect()
    }

    /// Call a tool as the model would, on `surface`.
    pub async fn call(&self, name: &str, args: Value, surface: Surface) -> ToolOutput {
        self.call_with(name, args, surface, Origin::Model).await
    }

    /// The one call path: surface check, argument validation, approval, serialisation of
    /// non-parallel-safe tools per resource, panic capture, wrappers.
    pub async fn call_with(
        &self,
        name: &str,
        args: Value,
        surface: Surface,
        origin: Origin,
    ) -> ToolOutput {
        self.call_with_progress(name, args, surface, origin, ProgressSink::none())
            .await
    }

    /// [`Registry::call_with`], with the tool's progress messages (and those of calls nested
    /// in it) going to `progress`.
    pub async fn call_with_progress(
        &self,
        name: &str,
        args: Value,
        surface: Surface,
        origin: Origin,
        progress: ProgressSink,
    ) -> ToolOutput {
        let caller = Caller {
            progress,
            requester: None,
        };
        self.call_from(name, args, surface, origin, caller).await
    }

    /// [`Registry::call_with`] on behalf of `caller`: its progress goes to the caller's sink, and
    /// every prompt it causes (an approval, `ask_user`, and those of the calls nested in it) goes
    /// to the caller's requester. What an edge serving several parties (the host's MCP sessions)
    /// calls.
    pub async fn call_from(
        &self,
        name: &str,
        args: Value,
        surface: Surface,
        origin: Origin,
        caller: Caller,
    ) -> ToolOutput {
        use tracing::Instrument;
        let requester = caller.requester.as_deref().map(Requester::id);
        let span =
            tracing::info_span!("tool_call", tool = name, %surface, origin = ?origin, requester);
        let started = std::time::Instant::now();
        let out = match self
            .try_call(name, args, surface, origin, Arc::default(), caller)
            .instrument(span.clone())
            .await
        {
            Ok(out) => out,
            Err(e) => {
                span.in_scope(|| tracing::info!(error = %e, "call refused or failed"));
                ToolOutput::error(e.to_string())
            }
        };
        span.in_scope(|| {
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                is_error = out.is_error,
                "call done"
            )
        });
        out
    }

    async fn try_call(
        &self,
        name: &str,
        args: Value,
        surface: Surface,
        origin: Origin,
        held: Arc<Vec<Held>>,
        caller: Caller,
    ) -> Result<ToolOutput, CallError> {
        self.seal();
        let tool = self.inner.tools.read().get(name).cloned();
        let Some(tool) = tool else {
            let available = self
                .list(surface)
                .into_iter()
                .map(|i| i.name)
                .collect::<Vec<_>>()
                .join(", ");
            return Err(CallError::UnknownTool {
                name: name.to_string(),
                surface,
                available: if available.is_empty() {
                    "none".into()
                } else {
                    available
                },
            });
        };
        // The call path reads the tier and parallel-safety only; the schema is not cloned per call.
        let tier = tool.tier();
        if !surface.allows(tier) {
            return Err(CallError::Hidden {
                name: name.to_string(),
                tier,
                surface,
            });
        }
        let call = tool.clone().prepare(args.clone())?;
        // What this very call does, declared by the tool from its arguments: its tier may be
        // more than the tool's (an operation that runs the project's code); the surface, the
        // approval policy and the lock judge that.
        let effects = call.effects();
        let tier = effects.tier;
        if tier > tool.tier() && !surface.allows(tier) {
            return Err(CallError::HiddenCall {
                name: name.to_string(),
                tier,
                surface,
                reason: effects
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("this call is {tier} tier")),
            });
        }

        if self.inner.policy.read().requires(tier) {
            let approver = self.inner.approver.read().clone();
            let Some(approver) = approver else {
                return Err(CallError::NoApprover {
                    name: name.to_string(),
                    tier,
                });
            };
            let _asking = self.asking();
            let decision = approver
                .approve(ApprovalRequest {
                    tool: name.to_string(),
                    tier,
                    arguments: args.clone(),
                    surface,
                    origin: origin.clone(),
                    requester: caller.requester.clone(),
                })
                .await;
            if let ApprovalDecision::Decline { reason } = decision {
                return Err(CallError::Declined {
                    name: name.to_string(),
                    reason: reason.map(|r| format!(" ({r})")).unwrap_or_default(),
                });
            }
        }

        // A resource of the room's own (its kernel, its debug session) is locked per room: calls
        // from two conversations never wait for each other's.
        let key = effects.resource.clone().map(|resource| {
            let room = effects.per_room.then(|| room_of(caller.requester.as_ref()));
            Held::new(resource, room)
        });
        if let Some(key) = &key
            && held.contains(key)
        {
            return Err(CallError::Reentrant {
                name: name.to_string(),
                resource: key.to_string(),
            });
        }
        let cx = CallContext {
            surface,
            origin,
            effects,
            registry: self.clone(),
            held: match &key {
                Some(k) => Arc::new(held.iter().cloned().chain([k.clone()]).collect()),
                None => held,
            },
            progress: caller.progress,
            requester: caller.requester,
        };

        let lock = key.map(|key| self.inner.locks.lock().entry(key).or_default().clone());
        let _guard = match &lock {
            Some(l) => Some(l.lock().await),
            None => None,
        };

        // Aborted when the caller stops waiting (cancellation).
        let joined = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(
            progress::CURRENT.scope(cx.progress.clone(), call.run(cx.clone())),
        ))
        .await;
        let mut output = match joined {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => ToolOutput::error(e.to_string()),
            Err(join) if join.is_panic() => {
                let payload = join.into_panic();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".to_string());
                return Err(CallError::Panicked {
                    name: name.to_string(),
                    message,
                });
            }
            Err(_) => {
                return Err(CallError::Cancelled {
                    name: name.to_string(),
                });
            }
        };

        let wrappers: Vec<_> = self
            .inner
            .wrappers
            .read()
            .iter()
            .filter(|w| w.wraps(&output))
            .cloned()
            .collect();
        for w in wrappers {
            output = progress::CURRENT
                .scope(cx.progress.clone(), w.after(output, &cx))
                .await;
        }
        Ok(output)
    }
}
