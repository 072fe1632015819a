//! `status` and `reload`: which servers run, for which roots, what is missing or ignored.

use super::*;

impl State {
    pub(super) async fn status(&self, file: Option<&str>) -> ToolOutput {
        let ws = self.ws();
        let slots = self.sup.status().await;
        let mut out = Vec::new();
        if slots.is_empty() {
            out.push("no language server has been started in this run (servers start at the first call on a file)".to_string());
        } else {
            out.push("language servers:".to_string());
            for s in &slots {
                let root = agent_tier::workspace::display_path(ws, &s.root);
                let root = if root.is_empty() {
                    ".".to_string()
                } else {
                    root
                };
                let pid = s.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                out.push(format!("- {} for {root}{pid}: {}", s.id, s.state));
                if let Some(t) = &s.stderr_tail {
                    out.push(format!("  stderr tail:\n    {}", t.replace('\n', "\n    ")));
                }
            }
        }
        let cap = self.sup.cap();
        if !slots.is_empty() {
            out.push(format!(
                "cap: {} running of at most {} (`max_servers`, {}); {} stopped so far to stay within it (the least recently used idle server goes first and starts again at its next use)",
                cap.running, cap.max_servers, cap.from, cap.evictions
            ));
        }
        let mut detected = Vec::new();
        // Folders the walk for roots could not list (the same walk for every server).
        let mut unreadable = crate::roots::Unreadable::default();
        // The project's own binaries that were not used because it is not trusted.
        let mut ignored_bins: Vec<String> = Vec::new();
        if let Some(f) = file {
            match confine(ws, "file", f) {
                Ok(path) => {
                    out.push(format!("servers for `{f}` (in order of preference):"));
                    for c in self.sup.candidates(&path) {
                        if !self.sup.cfg.trusted
                            && let Some(r) = &c.root
                        {
                            ignored_bins.extend(untrusted_note(&c.spec.id, r, ws));
                        }
                        if let Some(p) = &c.ignored {
                            ignored_bins.push(format!(
                                "{} for {}",
                                agent_tier::workspace::display_path(ws, p),
                                c.spec.id
                            ));
                        }
                        let line = if c.usable() {
                            format!(
                                "- {}: usable; root {}; binary {}",
                                c.spec.id,
                                c.root
                                    .as_deref()
                                    .map(|r| disp_root(ws, r))
                                    .unwrap_or_default(),
                                c.binary
                                    .as_ref()
                                    .map(|b| b.0.display().to_string())
                                    .unwrap_or_default()
                            )
                        } else {
                            let mut have = Vec::new();
                            if let Some(r) = &c.root {
                                have.push(format!("root {}", disp_root(ws, r)));
                            }
                            if let Some(b) = &c.binary {
                                have.push(format!("binary {}", b.0.display()));
                            }
                            let have = if have.is_empty() {
                                String::new()
                            } else {
                                format!(" (present: {})", have.join("; "))
                            };
                            format!("- {}: not usable; {}{have}", c.spec.id, c.missing(ws))
                        };
                        detected.push(json!({"id": c.spec.id, "usable": c.usable(),
                            "roots": c.root.iter().map(|r| disp_root(ws, r)).collect::<Vec<_>>(),
                            "binary": c.binary.as_ref().map(|b| b.0.display().to_string()),
                            "missing": if c.usable() { String::new() } else { c.missing(ws) }}));
                        out.push(line);
                    }
                }
                Err(e) => out.push(e.to_string()),
            }
        } else {
            out.push("servers for this workspace:".to_string());
            for spec in self.sup.cfg.servers.values() {
                let markers: Vec<&str> = spec.root_markers.iter().map(String::as_str).collect();
                let counted = crate::roots::roots_counted(ws, &markers);
                let (roots, total_roots) = (counted.roots, counted.total);
                if counted.unreadable.count > unreadable.count {
                    unreadable = counted.unreadable;
                }
                let base = roots.first().map(PathBuf::as_path).unwrap_or(ws);
                let binary = resolve_command(spec, base, ws, self.sup.cfg.trusted);
                if !self.sup.cfg.trusted
                    && let Some(r) = roots.first()
                {
                    ignored_bins.extend(untrusted_note(&spec.id, r, ws));
                }
                if !self.sup.cfg.trusted
                    && let Some(p) = project_binary(spec, base, ws)
                {
                    ignored_bins.push(format!(
                        "{} for {}",
                        agent_tier::workspace::display_path(ws, &p),
                        spec.id
                    ));
                }
                let usable = !roots.is_empty() && binary.is_some();
                let roots_s: Vec<String> = roots.iter().map(|r| disp_root(ws, r)).collect();
                // The list stops at 50 roots; the line says how many it left out.
                let more_roots = match total_roots.saturating_sub(roots.len()) {
                    0 => String::new(),
                    1 => " … and 1 more root".to_string(),
                    n => format!(" … and {n} more roots"),
                };
                let mut missing = Vec::new();
                if roots.is_empty() {
                    missing.push(format!(
                        "no root marker ({}) in the workspace",
                        spec.root_markers.join(", ")
                    ));
                }
                if binary.is_none() {
                    let progs: Vec<&str> = spec
                        .commands
                        .iter()
                        .filter_map(|c| c.first().map(String::as_str))
                        .collect();
                    missing.push(format!(
                        "binary not found ({}; install: {})",
                        progs.join(", "),
                        spec.install
                    ));
                }
                let line = if usable {
                    format!(
                        "- {} ({}): usable for {}{more_roots}; binary {}",
                        spec.id,
                        spec.language,
                        roots_s.join(", "),
                        binary
                            .as_ref()
                            .map(|b| b.0.display().to_string())
                            .unwrap_or_default()
                    )
                } else {
                    let mut have = Vec::new();
                    if !roots.is_empty() {
                        have.push(format!(
                            "root marker found in {}{more_roots}",
                            roots_s.join(", ")
                        ));
                    }
                    if let Some(b) = &binary {
                        have.push(format!("binary {}", b.0.display()));
                    }
                    let have = if have.is_empty() {
                        String::new()
                    } else {
                        format!(" (present: {})", have.join("; "))
                    };
                    format!(
                        "- {} ({}): not usable; {}{have}",
                        spec.id,
                        spec.language,
                        missing.join("; ")
                    )
                };
                out.push(line);
                detected.push(json!({"id": spec.id, "usable": usable, "roots": roots_s, "roots_total": total_roots,
                    "binary": binary.as_ref().map(|b| b.0.display().to_string()),
                    "missing": missing.join("; ")}));
            }
        }
        if let Some(note) = unreadable.note(ws, "roots") {
            out.push(format!(
                "note: {note}; a root inside {} is not listed",
                if unreadable.count == 1 { "it" } else { "them" }
            ));
        }
        for w in &self.sup.cfg.warnings {
            out.push(format!("config warning: {w}"));
        }
        let cfg = &self.sup.cfg;
        if !cfg.ignored.is_empty() || !ignored_bins.is_empty() {
            out.push("ignored because this project is not trusted:".to_string());
            for i in cfg.ignored.iter().chain(&ignored_bins) {
                out.push(format!("- {i}"));
            }
            out.push(cfg.how_to_trust());
        }
        // Only when something would start: working it out asks rustup where the host's
        // toolchain is.
        let contained = match (
            self.sup.containment(),
            slots.is_empty() && detected.is_empty(),
        ) {
            (None, _) | (_, true) => None,
            (Some(Ok(c)), _) => Some(c.summary.clone()),
            (Some(Err(e)), _) => Some(format!("none, so servers do not start: {}", e.0)),
        };
        if let Some(c) = &contained {
            out.push(format!(
                "servers of this untrusted project run contained: {c}"
            ));
        }
        ToolOutput::text(out.join("\n")).with_structured(json!({
            "servers": slots, "cap": cap, "detected": detected, "trusted": cfg.trusted, "contained": contained,
            "ignored": cfg.ignored.iter().chain(&ignored_bins).collect::<Vec<_>>(),
            "unreadable_folders": unreadable.json(ws),
        }))
    }

    pub(super) async fn reload(&self, file: Option<&str>) -> Result<ToolOutput, LspError> {
        let path = match file {
            Some(f) => Some(confine_existing(self.ws(), "file", f)?),
            None => None,
        };
        let stopped = self.sup.reload(path.as_deref()).await;
        let mut out = Vec::new();
        if stopped.is_empty() {
            out.push("no running server to restart".to_string());
        }
        for (id, root) in &stopped {
            out.push(format!("stopped {id} for {}", disp_root(self.ws(), root)));
        }
        if let Some(p) = &path {
            let srv = self.sup.server_for(p).await?;
            out.push(format!(
                "started {} for {} (pid {})",
                srv.spec.id,
                disp_root(self.ws(), &srv.root),
                srv.pid.unwrap_or(0)
            ));
        } else if !stopped.is_empty() {
            out.push("each starts again at the next call on one of its files".to_string());
        }
        Ok(ToolOutput::text(out.join("\n")))
    }
}

/// What a server is not allowed to do for a project that is not trusted, when it is something.
pub(super) fn untrusted_note(id: &str, root: &Path, ws: &Path) -> Option<String> {
    match id {
        "rust-analyzer" => Some(
            "rust-analyzer's build scripts, proc macros and check on save (they run the project's code)"
                .to_string(),
        ),
        "typescript-language-server" => [root, ws]
            .into_iter()
            .map(|d| d.join("node_modules/typescript"))
            .find(|d| d.is_dir())
            .map(|d| {
                format!(
                    "{} for typescript-language-server (it loads the TypeScript installed beside it)",
                    agent_tier::workspace::display_path(ws, &d)
                )
            }),
        _ => None,
    }
}

pub(super) fn disp_root(ws: &Path, root: &Path) -> String {
    let d = agent_tier::workspace::display_path(ws, root);
    if d.is_empty() { ".".into() } else { d }
}
