//! The second witness of `references` and `lsp_rename`: the run's identifier witness
//! ([`agent_tier::witness::IdentifierWitness`], from the grammars of the structural-search
//! family) says where the name occurs as an identifier; each occurrence the server's answer does
//! not account for is put back to the server as a `definition` question. An occurrence whose
//! definition is the asked declaration is a site the answer missed; one whose definition lies
//! elsewhere is another symbol with the same name. For `implementation` the witness only says
//! where else the name occurs (syntax cannot tell an implementation from another definition).
//! The witness decides what to ask next, never what to edit.

use crate::client::Server;
use crate::error::LspError;
use crate::protocol::{
    AnyLocation, Declaration, Definition, Implementation, Location, Position, Range,
    ReferenceParams, References,
};
use crate::protocol::{Locations, TextDocumentPositionParams};
use crate::render::locations;
use crate::state::State;
use crate::text::{lines, path_to_uri, units_of_byte};
use crate::tools::arg_err;
use crate::tools::asking;
use agent_tier::schemars::{self, JsonSchema};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most this many occurrences are put to the server as `definition` questions per answer.
pub(super) const MAX_ASKED: usize = 50;
/// At most this many questions are in flight at once.
const IN_FLIGHT: usize = 8;
/// The most occurrences the witness is asked for.
const MAX_SIGHTINGS: usize = 20_000;

/// A position as the server counts it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Site {
    pub path: PathBuf,
    pub line: u32,
    pub character: u32,
}

impl Site {
    /// The site as a position to ask the server about.
    fn params(&self) -> TextDocumentPositionParams {
        TextDocumentPositionParams::new(path_to_uri(&self.path), self.line, self.character)
    }
}

/// What the witness said about one answer.
#[derive(Debug, Default)]
pub(super) struct Witnessed {
    /// Occurrences of the name in the language's files.
    pub occurrences: usize,
    /// Occurrences the answer lists (or that were found missing and are now listed).
    pub confirmed: usize,
    /// Occurrences whose definition is another symbol.
    pub ruled_out: usize,
    /// Occurrences in files the server answered for but did not list there: the server read
    /// those files and took them for other symbols; not asked again.
    pub in_answered_files: usize,
    /// Occurrences whose definition is the asked declaration, missing from the answer.
    pub missing: Vec<Site>,
    /// Occurrences not settled: over the question bound, or the server gave no definition.
    pub unconfirmed: Vec<Site>,
    /// Files looked at and files the witness could not read.
    pub files: usize,
    pub skipped: usize,
    /// The first files it could not read (a symlink leading outside the root, unreadable, too
    /// large): an occurrence there is not known either way.
    pub unread: Vec<PathBuf>,
}

/// Where the witness sees a name, in the server's units, and what it could not look at.
pub(super) struct Seen {
    pub sites: Vec<Site>,
    pub files: usize,
    pub skipped: usize,
    pub unread: Vec<PathBuf>,
}

impl Witnessed {
    /// Whether every occurrence is accounted for.
    pub fn agrees(&self) -> bool {
        self.missing.is_empty() && self.unconfirmed.is_empty()
    }

    /// What it found, for the answer (paths relative to `ws`, lines 1-based).
    pub fn report(&self, ws: &Path) -> WitnessReport {
        let show = |s: &Site| SiteShown {
            path: agent_tier::workspace::display_path(ws, &s.path),
            line: s.line + 1,
            character: s.character,
        };
        WitnessReport {
            occurrences: self.occurrences,
            confirmed: self.confirmed,
            ruled_out: self.ruled_out,
            in_answered_files: self.in_answered_files,
            missing: self.missing.iter().map(show).collect(),
            unconfirmed: self.unconfirmed.iter().take(MAX_ASKED).map(show).collect(),
            unconfirmed_total: self.unconfirmed.len(),
            files: self.files,
            skipped_files: self.skipped,
        }
    }
}

/// How the identifier witness checked an answer: where the name occurs as an identifier, and
/// what became of each occurrence.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WitnessReport {
    /// Occurrences of the name in the language's files.
    pub occurrences: usize,
    /// Occurrences the answer lists (or that were found missing and are now listed).
    pub confirmed: usize,
    /// Occurrences whose definition is another symbol.
    pub ruled_out: usize,
    /// Occurrences in files the server answered for but did not list there (taken as other
    /// symbols; not asked again).
    pub in_answered_files: usize,
    /// Occurrences whose definition is the asked declaration, missing from the server's answer.
    pub missing: Vec<SiteShown>,
    /// Occurrences settled neither way (the first 50).
    pub unconfirmed: Vec<SiteShown>,
    /// How many were settled neither way.
    pub unconfirmed_total: usize,
    /// Files looked at.
    pub files: usize,
    /// Files the witness could not read.
    pub skipped_files: usize,
}

/// An occurrence, as shown.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SiteShown {
    /// Relative to the workspace root.
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// In the server's units.
    pub character: u32,
}

impl WitnessReport {
    /// One line that says what was checked.
    pub fn summary(&self, name: &str) -> String {
        let mut s = format!(
            "witness: `{name}` occurs {} time(s) as an identifier in {} file(s); {} in the answer",
            self.occurrences, self.files, self.confirmed
        );
        if self.ruled_out > 0 {
            s.push_str(&format!(
                ", {} ruled out (their definition is another symbol)",
                self.ruled_out
            ));
        }
        if self.in_answered_files > 0 {
            s.push_str(&format!(
                ", {} in files the server answered for (taken as other symbols)",
                self.in_answered_files
            ));
        }
        if self.unconfirmed_total > 0 {
            let first: Vec<String> = self
                .unconfirmed
                .iter()
                .take(5)
                .map(|x| format!("{}:{}", x.path, x.line))
                .collect();
            s.push_str(&format!(
                ", {} not confirmed either way (first: {})",
                self.unconfirmed_total,
                first.join(", ")
            ));
        }
        if self.skipped_files > 0 {
            s.push_str(&format!(
                "; {} file(s) could not be read by the witness",
                self.skipped_files
            ));
        }
        s
    }
}

pub(super) fn site_text(ws: &Path, s: &Site) -> String {
    format!(
        "{}:{}",
        agent_tier::workspace::display_path(ws, &s.path),
        s.line + 1
    )
}

/// Why an answer has no second witness (the answer is then given as the server's alone, and
/// says so).
#[derive(Debug, thiserror::Error)]
pub(super) enum NoWitness {
    /// The run has no identifier witness.
    #[error("no identifier witness in this run (the structural-search family is not attached)")]
    Absent,
    /// The witness's task failed.
    #[error("the witness failed: {0}")]
    Failed(String),
    /// The witness refused (its own words).
    #[error("{0}")]
    Refused(String),
    /// The name occurs too often to be a witness for anything.
    #[error("`{name}` occurs more than {max} times; too common a name to witness")]
    TooCommon { name: String, max: usize },
    /// The symbol is not one identifier, so there is no name to look for.
    #[error("`{0}` is not one identifier")]
    NotIdentifier(String),
}

/// The identifier a `symbol` argument starts with (the name the witness looks for).
pub(super) fn identifier_of(symbol: &str) -> Option<&str> {
    let end = symbol
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
        .map_or(symbol.len(), |(i, _)| i);
    Some(&symbol[..end]).filter(|s| !s.is_empty())
}

/// The definitions of the symbol at `site`, as `(path, line, character)`; `None` when the
/// server gave none or failed.
async fn definition_at(srv: Arc<Server>, site: Site) -> Option<Vec<Site>> {
    let v = srv.call::<Definition>(&site.params()).await.ok()?;
    let locs: Vec<Site> = listed(&v).into_iter().collect();
    (!locs.is_empty()).then_some(locs)
}

/// Whether one of `defs` is the declaration `decl` (compared by file and line), directly or
/// one definition further (a C definition whose own definition is its header declaration).
async fn reaches(srv: &Arc<Server>, defs: &[Site], decl: &[(PathBuf, u32)]) -> bool {
    let hit = |d: &Site| decl.iter().any(|(p, l)| *p == d.path && *l == d.line);
    if defs.iter().any(hit) {
        return true;
    }
    for d in defs.iter().take(3) {
        if let Some(next) = definition_at(srv.clone(), d.clone()).await
            && next.iter().any(hit)
        {
            return true;
        }
    }
    false
}

/// Where the witness sees `name` in `near`'s language, as positions in the server's units.
/// `Err` says why there is no witness for this answer.
pub(super) async fn sightings(
    st: &State,
    srv: &Server,
    near: &Path,
    name: &str,
) -> Result<Seen, NoWitness> {
    let Some(w) = st.witness() else {
        return Err(NoWitness::Absent);
    };
    let (near, name_s) = (near.to_path_buf(), name.to_string());
    let seen = tokio::task::spawn_blocking(move || w.occurrences(&near, &name_s, MAX_SIGHTINGS))
        .await
        .map_err(|e| NoWitness::Failed(e.to_string()))?
        .map_err(|e| NoWitness::Refused(e.to_string()))?;
    if seen.truncated {
        return Err(NoWitness::TooCommon {
            name: name.to_string(),
            max: MAX_SIGHTINGS,
        });
    }
    let enc = srv.encoding();
    let mut texts: HashMap<PathBuf, Option<String>> = HashMap::new();
    let mut sites = Vec::new();
    for o in seen.occurrences {
        let text = texts
            .entry(o.path.clone())
            .or_insert_with(|| crate::text::read_text(st.ws(), &o.path).ok());
        let Some(line) = text
            .as_deref()
            .and_then(|t| lines(t).get(o.line as usize).copied())
        else {
            continue;
        };
        let byte = (o.byte as usize).min(line.len());
        if !line.is_char_boundary(byte) {
            continue;
        }
        sites.push(Site {
            path: o.path,
            line: o.line,
            character: units_of_byte(line, byte, enc),
        });
    }
    Ok(Seen {
        sites,
        files: seen.files,
        skipped: seen.skipped,
        unread: seen.unread,
    })
}

/// Ask the server for the definition at each of `sites` (at most [`MAX_ASKED`], a few at
/// a time, each file opened with its disk content first) and sort them: the asked
/// declaration (`decl`), another symbol, or unknown.
pub(super) async fn classify(
    st: &State,
    srv: &Arc<Server>,
    decl: &[(PathBuf, u32)],
    sites: Vec<Site>,
    w: &mut Witnessed,
) {
    let (asked, rest): (Vec<Site>, Vec<Site>) = {
        let mut s = sites;
        let rest = s.split_off(s.len().min(MAX_ASKED));
        (s, rest)
    };
    w.unconfirmed.extend(rest);
    let mut files: Vec<&PathBuf> = asked.iter().map(|s| &s.path).collect();
    files.sort();
    files.dedup();
    for f in files {
        if !srv.is_open(f).await
            && let Ok(text) = crate::text::read_text(st.ws(), f)
        {
            let _ = srv.sync(f, &text, false).await;
        }
    }
    let sem = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let mut set = tokio::task::JoinSet::new();
    for site in asked {
        let (srv, sem) = (srv.clone(), sem.clone());
        let decl = decl.to_vec();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await.ok();
            let d = match definition_at(srv.clone(), site.clone()).await {
                None => None,
                Some(defs) => Some(reaches(&srv, &defs, &decl).await),
            };
            (site, d)
        });
    }
    while let Some(done) = set.join_next().await {
        let Ok((site, d)) = done else { continue };
        match d {
            None => w.unconfirmed.push(site),
            Some(true) => w.missing.push(site),
            Some(false) => w.ruled_out += 1,
        }
    }
    w.missing.sort();
    w.unconfirmed.sort();
}

/// The declaration(s) the symbol at the asked position resolves to, as `(path, line)`:
/// its definitions, its declarations where the server tells them apart, and the
/// definitions of those (so that a C definition and its header declaration are one).
pub(super) async fn declaration(
    srv: &Arc<Server>,
    path: &Path,
    line: u32,
    character: u32,
) -> Option<Vec<(PathBuf, u32)>> {
    let site = Site {
        path: path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        line,
        character,
    };
    let mut found: Vec<Site> = vec![site.clone()];
    found.extend(
        definition_at(srv.clone(), site.clone())
            .await
            .unwrap_or_default(),
    );
    if srv.supports::<Declaration>()
        && let Ok(v) = srv.call::<Declaration>(&site.params()).await
    {
        found.extend(listed(&v));
    }
    let first: Vec<Site> = found.iter().skip(1).cloned().collect();
    for d in first.into_iter().take(3) {
        found.extend(definition_at(srv.clone(), d).await.unwrap_or_default());
    }
    let mut decl: Vec<(PathBuf, u32)> = found.into_iter().map(|s| (s.path, s.line)).collect();
    decl.sort();
    decl.dedup();
    Some(decl)
}

/// `(path, line, character)` of every location in a server's answer.
pub(super) fn listed(v: &Locations) -> HashSet<Site> {
    locations(v)
        .into_iter()
        .map(|(p, line, character)| Site {
            path: p.canonicalize().unwrap_or(p),
            line,
            character,
        })
        .collect()
}

/// A server's answer the witness checked.
pub(crate) struct Checked {
    /// The server's locations, with the sites it left out added (then `partial`).
    pub locations: Locations,
    /// Whether the answer is partial.
    pub partial: bool,
    /// What the witness saw, site by site (`references`; an implementation cannot be told from
    /// another definition of the name by syntax, so `implementation` has none).
    pub witness: Option<Witnessed>,
    /// What was checked and what it found, for the answer's notes.
    pub note: Option<String>,
}

/// Whether the witness could check an answer: checked, or why not (the caller then asks as it
/// would without a witness).
pub(crate) enum WitnessCheck {
    Checked(Checked),
    NotChecked(NoWitness),
}

/// `references` checked by the witness: the server's first answer, compared with where the
/// name occurs; sites it missed make the server be asked again after it settles (bounded
/// by the ready timeout), and sites still missing are added to the answer, which is then
/// partial. `Err` (no witness for this answer) says why, and the caller asks as before.
pub(super) async fn references_witnessed(
    st: &State,
    srv: &Arc<Server>,
    at: (&Path, u32, u32),
    name: &str,
    params: &ReferenceParams,
) -> Result<WitnessCheck, LspError> {
    let (mut result, mut partial) = asking::ask::<References>(st, srv, params).await?;
    let Seen {
        sites,
        files,
        skipped,
        unread,
    } = match sightings(st, srv, at.0, name).await {
        Ok(s) => s,
        Err(why) => return Ok(WitnessCheck::NotChecked(why)),
    };
    // Asked only when some occurrence needs classifying (a warm, complete answer needs
    // no more requests).
    let mut decl: Option<Vec<(PathBuf, u32)>> = None;
    let started = Instant::now();
    let deadline = started + st.sup.cfg.ready_timeout;
    let mut round = 0u32;
    loop {
        let listed = listed(&result);
        let answered: HashSet<&PathBuf> = listed.iter().map(|s| &s.path).collect();
        let mut w = Witnessed {
            occurrences: sites.len(),
            files,
            skipped,
            unread: unread.clone(),
            ..Default::default()
        };
        let mut to_ask = Vec::new();
        for s in &sites {
            if listed.contains(s) {
                w.confirmed += 1;
            } else if answered.contains(&s.path) {
                w.in_answered_files += 1;
            } else {
                to_ask.push(s.clone());
            }
        }
        if !to_ask.is_empty() {
            if decl.is_none() {
                decl = Some(declaration(srv, at.0, at.1, at.2).await.unwrap_or_default());
            }
            let d = decl.as_deref().unwrap_or_default();
            classify(st, srv, d, to_ask, &mut w).await;
        }
        if w.missing.is_empty() {
            let note = (round > 0).then(|| {
                format!(
                    "{}'s first answer left out sites the witness found; asked again after it settled ({round} time(s), {} s), its answer now covers them",
                    srv.spec.id,
                    started.elapsed().as_secs()
                )
            });
            return Ok(WitnessCheck::Checked(Checked {
                locations: result,
                partial,
                witness: Some(w),
                note,
            }));
        }
        if Instant::now() >= deadline || round >= 6 {
            // Still missing: the server's answer plus the sites it left out, flagged.
            let state = if srv.is_idle() {
                "ready"
            } else {
                "still indexing"
            };
            result.0.extend(w.missing.iter().map(|s| {
                let at = Position {
                    line: s.line,
                    character: s.character,
                };
                AnyLocation::Location(Location {
                    uri: path_to_uri(&s.path),
                    range: Range { start: at, end: at },
                })
            }));
            let missing: Vec<String> = w.missing.iter().map(|s| site_text(st.ws(), s)).collect();
            w.confirmed += w.missing.len();
            partial = true;
            let note = format!(
                "partial: {}'s references left out {} site(s) whose definition is this declaration, after asking {} more time(s) over {} s (server {state}); they are added above: {}",
                srv.spec.id,
                w.missing.len(),
                round,
                started.elapsed().as_secs(),
                missing.join(", ")
            );
            return Ok(WitnessCheck::Checked(Checked {
                locations: result,
                partial,
                witness: Some(w),
                note: Some(note),
            }));
        }
        round += 1;
        agent_tier::progress(format!(
            "{} left out {} site(s) of `{name}` the witness found; waiting for it to settle, then asking again ({round})",
            srv.spec.id,
            w.missing.len()
        ));
        tokio::time::sleep(Duration::from_millis(400 * u64::from(round))).await;
        srv.wait_ready(deadline.saturating_duration_since(Instant::now()))
            .await;
        (result, partial) = asking::ask::<References>(st, srv, params).await?;
    }
}

/// Before a rename is written: the occurrences of the old name the plan does not edit,
/// put to the server (see [`classify`]). `Err` says why there is no witness.
pub(super) async fn rename_coverage(
    st: &State,
    srv: &Arc<Server>,
    name: &str,
    near: &Path,
    decl: &[(PathBuf, u32)],
    plan: &crate::rename::Plan,
    synced: &HashMap<PathBuf, Vec<u8>>,
) -> Result<Witnessed, NoWitness> {
    let Seen {
        sites,
        files,
        skipped,
        unread,
    } = sightings(st, srv, near, name).await?;
    let enc = srv.encoding();
    let mut edited: HashSet<Site> = HashSet::new();
    let mut disk: HashMap<PathBuf, Option<Vec<u8>>> = HashMap::new();
    for s in &plan.sites {
        let bytes = match synced.get(&s.path) {
            Some(b) => Some(b.clone()),
            None => disk
                .entry(s.path.clone())
                .or_insert_with(|| crate::rename::read_bytes(st.ws(), &s.path).ok().flatten())
                .clone(),
        };
        if let Some((line, character)) = bytes
            .as_deref()
            .and_then(|b| super::rename_check::line_col(b, s.before.0, enc))
        {
            edited.insert(Site {
                path: s.path.canonicalize().unwrap_or_else(|_| s.path.clone()),
                line,
                character,
            });
        }
    }
    let mut w = Witnessed {
        occurrences: sites.len(),
        files,
        skipped,
        unread,
        ..Default::default()
    };
    let planned: HashSet<&PathBuf> = edited.iter().map(|s| &s.path).collect();
    // Files the plan does not touch first: that is where a cold server's plan falls short.
    let (mut elsewhere, mut inside) = (Vec::new(), Vec::new());
    for s in sites {
        if edited.contains(&s) {
            w.confirmed += 1;
        } else if planned.contains(&s.path) {
            inside.push(s);
        } else {
            elsewhere.push(s);
        }
    }
    elsewhere.extend(inside);
    if decl.is_empty() {
        w.unconfirmed = elsewhere;
    } else {
        classify(st, srv, decl, elsewhere, &mut w).await;
    }
    Ok(w)
}

/// Whether `name` is one identifier in the language of `path` (the new name of a rename):
/// letters, digits and `_` (and `$` in JavaScript and TypeScript), not starting with a digit;
/// `r#` before a Rust keyword. `Err` says what would be valid.
pub(super) fn check_identifier(name: &str, path: &Path) -> Result<(), LspError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let dollar = matches!(
        ext,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts"
    );
    let body = match ext {
        "rs" => name.strip_prefix("r#").unwrap_or(name),
        _ => name,
    };
    let ok_start = |c: char| c.is_alphabetic() || c == '_' || (dollar && c == '$');
    let ok_rest = |c: char| c.is_alphanumeric() || c == '_' || (dollar && c == '$');
    let mut chars = body.chars();
    let valid = chars.next().is_some_and(ok_start) && chars.all(ok_rest);
    if valid {
        return Ok(());
    }
    let shown = name.escape_debug().to_string();
    let shown = agent_tier::display::clip_chars(&shown, 80);
    Err(arg_err(format!(
        "`new_name` \"{shown}\" is not one identifier; give a name of letters, digits and `_`{} that does not start with a digit (a rename changes one name: no dots, dashes, spaces or line breaks)",
        if dollar { " or `$`" } else { "" }
    )))
}

/// `implementation` with the witness: an implementation is another definition with the
/// same name, which syntax cannot tell from an unrelated one, so the witness only says
/// where else the name occurs. When it occurs in files the answer does not list and the
/// server is still at work, the server is asked again once it settles (bounded); the note
/// says how many occurrences were left unexplained.
pub(super) async fn implementations_witnessed(
    st: &State,
    srv: &Arc<Server>,
    near: &Path,
    name: &str,
    params: &TextDocumentPositionParams,
) -> Result<WitnessCheck, LspError> {
    let (mut result, mut partial) = asking::ask::<Implementation>(st, srv, params).await?;
    let Seen { sites, files, .. } = match sightings(st, srv, near, name).await {
        Ok(s) => s,
        Err(why) => return Ok(WitnessCheck::NotChecked(why)),
    };
    let outside = |v: &Locations| {
        let answered: HashSet<PathBuf> = listed(v).into_iter().map(|s| s.path).collect();
        sites
            .iter()
            .filter(|s| !answered.contains(&s.path) && s.path != near)
            .count()
    };
    let mut elsewhere = outside(&result);
    if elsewhere > 0 && !srv.is_idle() {
        srv.wait_ready(st.sup.cfg.ready_timeout).await;
        (result, partial) = asking::ask::<Implementation>(st, srv, params).await?;
        elsewhere = outside(&result);
        partial = partial || !srv.is_idle();
    }
    let note = format!(
        "witness: `{name}` occurs {} time(s) as an identifier in {files} file(s); {elsewhere} in files this answer does not list (other symbols or uses with the same name: syntax cannot tell an implementation from them, so they were not checked)",
        sites.len()
    );
    Ok(WitnessCheck::Checked(Checked {
        locations: result,
        partial,
        witness: None,
        note: Some(note),
    }))
}
