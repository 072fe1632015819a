//! Diagnostics on write: the problems a change introduced, told apart from those already there.
//!
//! For every changed file the servers covering it are asked twice: about the content the file
//! had before the call (its baseline: a pull, the cached publish of that version, or an open and
//! a wait) and about the content written (the publish or pull of exactly that version, bounded —
//! never a fixed sleep). "New" is in the second and not in the first, keyed by severity, code and
//! message, and not already reported in this run. When the baseline cannot be had, the problems
//! are shown under a heading that says they could not be checked for newness. Errors come before
//! warnings; at most [`PER_FILE`] per file and [`IN_ALL`] in all, with the count left out and the
//! call that shows everything.

use crate::client::Server;
use crate::on_write_scope;
use crate::protocol::Diagnostic;
use crate::render::{Diag, Renderer};
use crate::state::State;
use agent_tier::schemars::{self, JsonSchema};
use agent_tier::workspace::confine;
use agent_tier::{BoxFuture, CallContext, Report, RoomId, ToolOutput, Wrapper};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Most problems shown for one file.
pub const PER_FILE: usize = 10;
/// Most problems shown for one write.
pub const IN_ALL: usize = 30;

/// What a write's diagnostics came to: the part the wrapper adds to the write's result (its
/// text appended, its fields added to the structured result).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct WriteReport {
    /// Introduced by the write (not in the baseline, not reported before in this run).
    #[serde(rename = "diagnostics")]
    pub new: Vec<Diag>,
    /// In the written content, with no baseline to compare against.
    #[serde(
        rename = "diagnostics_unchecked",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub unchecked: Vec<Diag>,
    /// New in files the call did not change, published after it (may be related).
    #[serde(
        rename = "diagnostics_elsewhere",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub elsewhere: Vec<Diag>,
    /// Left out by the budget: (file, how many).
    #[serde(skip)]
    pub left_out: BTreeMap<String, usize>,
    /// What could not be had in time, and what that means for the list.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// Per server and file that answered, the state of that answer: fresh for the written
    /// content, or partial (the server was still busy).
    #[serde(rename = "diagnostics_state", skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// Introduced in other files that use the names the write changed (per the witness).
    #[serde(rename = "diagnostics_related", skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Diag>,
    /// In those files after the write, with no baseline to compare against.
    #[serde(
        rename = "diagnostics_related_unchecked",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub related_unchecked: Vec<Diag>,
    /// What the check covered: the written files and which other files.
    #[serde(rename = "diagnostics_scope", skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// A dry run: nothing was written; the problems are those the change would bring.
    #[serde(skip)]
    pub dry_run: bool,
    /// The files were changed outside our write tools (a client's own edit tool, a cell, a
    /// person), found at a later call: these, relative to the root. Empty for a write.
    #[serde(rename = "changed_outside", skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<String>,
}

/// What a report is about: files a call wrote (read from disk), or a dry run's content, which
/// the servers are shown and then put back from disk.
#[derive(Clone, Copy)]
pub enum Change<'a> {
    Written,
    DryRun(&'a BTreeMap<String, Option<Vec<u8>>>),
}

impl Change<'_> {
    /// The content of the changed file `f` (at `path`) after the change; `None`: deleted or
    /// unreadable.
    fn content(&self, ws: &Path, f: &str, path: &Path) -> Option<String> {
        match self {
            Change::Written => crate::text::read_text(ws, path).ok(),
            Change::DryRun(p) => p
                .get(f)?
                .as_ref()
                .and_then(|b| String::from_utf8(b.clone()).ok()),
        }
    }
}

type Key = (String, String, String);
/// What each running server had published, per document, before a change.
type Published = Vec<(Arc<Server>, HashMap<PathBuf, Vec<Diagnostic>>)>;

fn keep(d: &Diag) -> bool {
    d.severity == "error" || d.severity == "warning"
}

/// Sync the changed files to the servers covering them and report what the change
/// introduced. `previous` holds what each file had before (absent: a new file).
pub async fn after_write(
    st: &State,
    files: &[String],
    previous: &BTreeMap<String, Vec<u8>>,
    change: Change<'_>,
    room: &RoomId,
) -> WriteReport {
    let deadline = Instant::now() + st.sup.cfg.write_timeout;
    let mut report = WriteReport {
        dry_run: matches!(change, Change::DryRun(_)),
        ..Default::default()
    };
    // What every running server had published before it heard of this change.
    let before_all: Published = st
        .sup
        .running()
        .into_iter()
        .map(|s| {
            let p = s.published();
            (s, p)
        })
        .collect();
    // The other files that use the names the write changed: their baseline is taken while
    // the servers still hold the old content (the main loop then syncs the new).
    let changed: Vec<(PathBuf, Option<String>, String)> = files
        .iter()
        .filter_map(|f| {
            let path = confine(st.ws(), "changed_files", f).ok()?;
            let text = change.content(st.ws(), f, &path)?;
            let old = previous
                .get(f)
                .map(|b| String::from_utf8_lossy(b).into_owned());
            (old.as_deref() != Some(text.as_str())).then_some((path, old, text))
        })
        .collect();
    if let (Some(w), Change::Written) = (st.witness(), change) {
        w.changed(&changed.iter().map(|c| c.0.clone()).collect::<Vec<_>>());
    }
    let scope = on_write_scope::write_scope(st, &changed).await;
    let mut other_base: HashMap<(usize, PathBuf), HashSet<Key>> = HashMap::new();
    if !scope.files.is_empty() {
        // Half of the write's budget (a server may have to start first), the rest for the
        // written files and the check after.
        let base_deadline = Instant::now() + st.sup.cfg.write_timeout / 2;
        for (path, old, _) in &changed {
            if let Some(old) = old {
                for srv in servers_for(st, path, base_deadline).await {
                    let _ = srv.sync(path, old, false).await;
                }
            }
        }
        for o in &scope.files {
            let Ok(text) = crate::text::read_text(st.ws(), o) else {
                continue;
            };
            for srv in servers_for(st, o, base_deadline).await {
                if let Some((ds, _)) = diags_of(st, &srv, o, &text, base_deadline, true).await {
                    other_base.insert(
                        (Arc::as_ptr(&srv) as usize, o.clone()),
                        ds.iter().map(Diag::key).collect(),
                    );
                }
            }
        }
    }
    for f in files {
        let Ok(path) = confine(st.ws(), "changed_files", f) else {
            continue;
        };
        let Some(text) = change.content(st.ws(), f, &path) else {
            for s in st.sup.running() {
                s.close(&path).await;
            }
            continue;
        };
        let before = previous.get(f).map(|b| String::from_utf8(b.clone()));
        if matches!(&before, Some(Ok(old)) if *old == text) {
            continue; // Nothing changed in this file.
        }
        for srv in servers_for(st, &path, deadline).await {
            let baseline: Option<HashSet<Key>> = match &before {
                None => Some(HashSet::new()),
                Some(Err(_)) => None,
                Some(Ok(old)) => diags_of(st, &srv, &path, old, deadline, true)
                    .await
                    .map(|(ds, _)| ds.iter().map(Diag::key).collect()),
            };
            let asked = Instant::now();
            let Some((now, busy)) = diags_of(st, &srv, &path, &text, deadline, false).await else {
                report.notes.push(format!(
                    "{} did not report diagnostics for the new content of `{f}`: timed out after {} ms; none are shown",
                    srv.spec.id,
                    asked.elapsed().as_millis()
                ));
                continue;
            };
            report.states.push(if busy {
                format!(
                    "{} on `{f}`: partial, the server was still indexing or checking",
                    srv.spec.id
                )
            } else {
                format!(
                    "{} on `{f}`: fresh for the {} content",
                    srv.spec.id,
                    if report.dry_run {
                        "proposed"
                    } else {
                        "written"
                    }
                )
            });
            match baseline {
                Some(old) => report
                    .new
                    .extend(now.into_iter().filter(|d| !old.contains(&d.key()))),
                None => {
                    report.notes.push(format!(
                        "{} gave no diagnostics for the previous content of `{f}` in time, so whether the problems below are new could not be checked",
                        srv.spec.id
                    ));
                    report.unchecked.extend(now);
                }
            }
        }
    }
    // The other files, now that the servers hold the new content: synced again (a new
    // version, so the answer is about the new state), compared with their baseline.
    let (mut unbased, mut late) = (Vec::new(), Vec::new());
    for o in &scope.files {
        let Ok(text) = crate::text::read_text(st.ws(), o) else {
            continue;
        };
        let shown = agent_tier::workspace::display_path(st.ws(), o);
        for srv in servers_for(st, o, deadline).await {
            let Some((now, _)) = diags_of(st, &srv, o, &text, deadline, false).await else {
                late.push(format!("{} ({})", shown, srv.spec.id));
                continue;
            };
            let key = (Arc::as_ptr(&srv) as usize, o.clone());
            match other_base.get(&key) {
                Some(old) => report
                    .related
                    .extend(now.into_iter().filter(|d| !old.contains(&d.key()))),
                None => {
                    unbased.push(shown.clone());
                    report.related_unchecked.extend(now);
                }
            }
        }
    }
    if !late.is_empty() {
        report.notes.push(format!(
            "no diagnostics came in time after the write for {} of the other files, so their problems are not known: {}",
            late.len(),
            late.join(", ")
        ));
    }
    if !unbased.is_empty() {
        report.notes.push(format!(
            "no baseline for {} (the server gave none before the write in time), so their problems are shown without telling which are new",
            unbased.join(", ")
        ));
    }
    let shown_changed: Vec<String> = changed
        .iter()
        .map(|c| agent_tier::workspace::display_path(st.ws(), &c.0))
        .collect();
    if !shown_changed.is_empty() {
        report.scope = Some(crate::on_write_scope::scope_line(
            st.ws(),
            &shown_changed,
            &scope,
        ));
    }
    let others: HashSet<String> = scope
        .files
        .iter()
        .map(|p| agent_tier::workspace::display_path(st.ws(), p))
        .collect();
    report.elsewhere = elsewhere(st, files, &before_all);
    report.elsewhere.retain(|d| !others.contains(&d.loc.path));
    // What this conversation was shown is not shown again; a dry run records nothing, so
    // the write after it reports the same problems.
    let record = !report.dry_run;
    st.unseen_all(
        room,
        &mut [
            &mut report.related,
            &mut report.related_unchecked,
            &mut report.new,
            &mut report.elsewhere,
            &mut report.unchecked,
        ],
        record,
    );
    if let Change::DryRun(_) = change {
        put_back(st, files).await;
    }
    let mut budget = IN_ALL;
    report.new = cap(
        std::mem::take(&mut report.new),
        &mut budget,
        &mut report.left_out,
    );
    report.unchecked = cap(
        std::mem::take(&mut report.unchecked),
        &mut budget,
        &mut report.left_out,
    );
    report.related = cap(
        std::mem::take(&mut report.related),
        &mut budget,
        &mut report.left_out,
    );
    report.related_unchecked = cap(
        std::mem::take(&mut report.related_unchecked),
        &mut budget,
        &mut report.left_out,
    );
    report.elsewhere = cap(
        std::mem::take(&mut report.elsewhere),
        &mut budget,
        &mut report.left_out,
    );
    report
}

/// After a dry run: every server's copy of the files it showed them is put back to what
/// the disk holds (closed where the disk has no such file).
async fn put_back(st: &State, files: &[String]) {
    for f in files {
        let Ok(path) = confine(st.ws(), "changed_files", f) else {
            continue;
        };
        let disk = crate::text::read_text(st.ws(), &path).ok();
        for srv in st.sup.running() {
            match &disk {
                Some(text) if srv.is_open(&path).await => {
                    let _ = srv.sync(&path, text, false).await;
                }
                Some(_) => {}
                None => srv.close(&path).await,
            }
        }
    }
}

/// Errors and warnings published, since `before`, for files the call did not change.
fn elsewhere(st: &State, changed: &[String], before: &Published) -> Vec<Diag> {
    let changed: HashSet<PathBuf> = changed
        .iter()
        .filter_map(|f| confine(st.ws(), "changed_files", f).ok())
        .collect();
    let mut out = Vec::new();
    for (srv, old) in before {
        let mut r = Renderer::new(st.ws(), srv.encoding());
        for (path, items) in srv.published() {
            if changed.contains(&path) || !path.starts_with(st.ws()) {
                continue;
            }
            // Only files whose state before the write is known: a first publish for a file
            // cannot tell what is new in it.
            let Some(prev) = old.get(&path) else {
                continue;
            };
            let was: HashSet<Key> = prev.iter().map(|d| r.diag(&path, d).key()).collect();
            out.extend(
                items
                    .iter()
                    .map(|d| r.diag(&path, d))
                    .filter(|d| keep(d) && !was.contains(&d.key())),
            );
        }
    }
    out
}

/// The servers covering `path`: its preferred server (started if needed, bounded) and every
/// running one of its root that serves the extension.
async fn servers_for(st: &State, path: &Path, deadline: Instant) -> Vec<Arc<Server>> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut servers: Vec<Arc<Server>> = Vec::new();
    let remaining = deadline.saturating_duration_since(Instant::now());
    if let Ok(Ok(s)) = tokio::time::timeout(remaining, st.sup.server_for(path)).await {
        servers.push(s);
    }
    for s in st.sup.running() {
        if path.starts_with(&s.root)
            && s.spec.extensions.contains_key(&ext)
            && !servers.iter().any(|x| Arc::ptr_eq(x, &s))
        {
            servers.push(s);
        }
    }
    servers
}

/// The errors and warnings `srv` reports for `text` as the content of `path` (synced first;
/// a baseline is not saved), and whether the server was still busy; `None` when they did
/// not come in time.
async fn diags_of(
    st: &State,
    srv: &Server,
    path: &Path,
    text: &str,
    deadline: Instant,
    baseline: bool,
) -> Option<(Vec<Diag>, bool)> {
    let synced = srv.sync(path, text, !baseline).await.ok()?;
    // A baseline may use at most half of what is left, so the answer about the written
    // content keeps time of its own.
    let remaining = deadline.saturating_duration_since(Instant::now());
    let budget = if baseline { remaining / 2 } else { remaining };
    let got = srv.fresh_diagnostics(path, synced, budget).await;
    if !got.complete {
        return None;
    }
    let mut r = Renderer::new(st.ws(), srv.encoding());
    r.preload(path, text);
    Some((
        got.items
            .iter()
            .map(|d| r.diag(path, d))
            .filter(keep)
            .collect(),
        got.busy,
    ))
}

/// Errors before warnings, at most [`PER_FILE`] per file and `budget` in all; what is left out is
/// counted per file.
fn cap(mut diags: Vec<Diag>, budget: &mut usize, left: &mut BTreeMap<String, usize>) -> Vec<Diag> {
    diags.sort_by_key(|d| (d.severity != "error", d.loc.path.clone(), d.loc.line));
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for d in diags {
        let n = per_file.entry(d.loc.path.clone()).or_default();
        if *n < PER_FILE && *budget > 0 {
            *n += 1;
            *budget -= 1;
            out.push(d);
        } else {
            *left.entry(d.loc.path.clone()).or_default() += 1;
        }
    }
    out
}

/// Appends the diagnostics a change introduced to every call that reports changed files
/// (`write`, `edit`, `apply_patch`, `resolve`, `lsp_rename`, a harness's own write tool).
pub struct WriteDiagnostics(pub Arc<State>);

impl Wrapper for WriteDiagnostics {
    fn wraps(&self, output: &ToolOutput) -> bool {
        let changes = !output.changed_files.is_empty() || !output.proposed.is_empty();
        !output.is_error && changes
    }

    fn after<'a>(
        &'a self,
        mut output: ToolOutput,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let report = if output.proposed.is_empty() {
                let files = &output.changed_files;
                after_write(
                    &self.0,
                    files,
                    &output.previous,
                    Change::Written,
                    &cx.room(),
                )
                .await
            } else {
                let files: Vec<String> = output.proposed.keys().cloned().collect();
                let change = Change::DryRun(&output.proposed);
                after_write(&self.0, &files, &output.previous, change, &cx.room()).await
            };
            let part = ToolOutput::report(&report);
            if part.text.is_empty() {
                return output;
            }
            output.text.push_str(&part.text);
            if let (Some(Value::Object(o)), Some(Value::Object(add))) =
                (&mut output.structured, part.structured)
            {
                o.extend(add);
            }
            output
        })
    }
}

impl Report for WriteReport {
    /// Empty when there is nothing to say (no server answered for a changed file).
    fn text(&self) -> String {
        render(self)
    }
}

fn render(report: &WriteReport) -> String {
    let mut text = String::new();
    let lines = |ds: &[Diag]| ds.iter().map(Diag::render).collect::<Vec<_>>().join("\n");
    // A write reports on itself; an outside change is named first, since the answer it rides
    // on is another tool's.
    let (lead, change) = if report.dry_run {
        ("Not written (dry run). ".to_string(), "the change")
    } else if report.outside.is_empty() {
        ("The write succeeded. ".to_string(), "the write")
    } else {
        (
            format!(
                "Changed outside agent-tools' write tools: {}. ",
                report
                    .outside
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "the change",
        )
    };
    if !report.new.is_empty() {
        text.push_str(&format!(
            "\n\n{lead}The language server reports these new problems, for information (each is shown once per run; checked against the file's previous content):\n"
        ));
        text.push_str(&lines(&report.new));
    }
    if !report.related.is_empty() {
        text.push_str(&format!(
            "\n\nNew problems in other files that use the names {change} changed (checked against their state before {change}):\n"
        ));
        text.push_str(&lines(&report.related));
    }
    if !report.related_unchecked.is_empty() {
        text.push_str(&format!(
            "\n\nProblems in other files that use the names {change} changed (their state before {change} could not be had in time, so these are not checked for newness):\n"
        ));
        text.push_str(&lines(&report.related_unchecked));
    }
    if !report.elsewhere.is_empty() {
        text.push_str(&format!(
            "\n\nProblems that appeared in other files since {change} (they may be related; {change} did not change these files):\n"
        ));
        text.push_str(&lines(&report.elsewhere));
    }
    if !report.unchecked.is_empty() {
        let lead = if report.new.is_empty() {
            lead.as_str()
        } else {
            ""
        };
        text.push_str(&format!(
            "\n\n{lead}The language server reports these problems in the {} content (for information; not checked for newness):\n",
            if report.outside.is_empty() { "written" } else { "changed" }
        ));
        text.push_str(&lines(&report.unchecked));
    }
    for (file, n) in &report.left_out {
        text.push_str(&format!(
            "\n({n} more in `{file}` not shown: lsp {{\"operation\": \"diagnostics\", \"file\": \"{file}\"}} lists all)"
        ));
    }
    for n in &report.notes {
        text.push_str("\n\n");
        text.push_str(n);
    }
    // Which answer this is: never silence that could be read as "no problems" when no server
    // answered, never "fresh" for a busy server.
    if !report.states.is_empty() {
        let states = report.states.join("; ");
        let scope = report
            .scope
            .as_deref()
            .map(|s| format!("; {s}"))
            .unwrap_or_default();
        if report.new.is_empty()
            && report.unchecked.is_empty()
            && report.elsewhere.is_empty()
            && report.related.is_empty()
            && report.related_unchecked.is_empty()
        {
            let lead = if report.outside.is_empty() {
                String::new()
            } else {
                lead.clone()
            };
            text.push_str(&format!("\n\n{lead}No new problems ({states}{scope})."));
        } else {
            text.push_str(&format!("\n(Diagnostics: {states}{scope}.)"));
        }
    }
    text
}
