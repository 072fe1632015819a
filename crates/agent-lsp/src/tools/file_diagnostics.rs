//! `diagnostics` of one file: synced, fresh for that content, rendered.

use super::*;

impl State {
    pub(super) async fn diagnostics(
        &self,
        file: &str,
        room: &RoomId,
    ) -> Result<ToolOutput, LspError> {
        let (path, display, text) = self.read_file(file)?;
        let srv = self.sup.server_for(&path).await?;
        let synced = srv.sync(&path, &text, false).await?;
        let got = srv
            .fresh_diagnostics(&path, synced, self.sup.cfg.ready_timeout)
            .await;
        let (items, fresh) = (got.items, got.complete);
        let mut r = Renderer::new(self.ws(), srv.encoding());
        r.preload(&path, &text);
        let all: Vec<Diag> = items.iter().map(|d| r.diag(&path, d)).collect();
        let minor = all
            .iter()
            .filter(|d| d.severity == "info" || d.severity == "hint")
            .count();
        let shown: Vec<Diag> = all
            .into_iter()
            .filter(|d| d.severity == "error" || d.severity == "warning")
            .collect();
        // What the agent has been shown is "already reported" for the write wrapper.
        let _ = self.unseen(room, shown.clone());
        let mut out = Vec::new();
        if !fresh {
            out.push(format!(
                "{} did not report diagnostics for the current content of `{display}`: timed out after {} s; try again",
                srv.spec.id,
                self.sup.cfg.ready_timeout.as_secs()
            ));
        } else if shown.is_empty() {
            out.push(format!(
                "no errors or warnings in `{display}` ({})",
                srv.spec.id
            ));
        } else {
            out.push(format!(
                "{} problem(s) in `{display}` ({}):",
                shown.len(),
                srv.spec.id
            ));
            out.extend(shown.iter().map(Diag::render));
        }
        if minor > 0 {
            out.push(format!("({minor} info/hint diagnostic(s) not shown)"));
        }
        if fresh && got.busy {
            out.push(format!(
                "(partial: {} was still indexing or checking; ask again for a complete answer)",
                srv.spec.id
            ));
        }
        Ok(ToolOutput::text(out.join("\n")).with_structured(json!({
            "operation": "diagnostics", "server": srv.spec.id, "file": display,
            "complete": fresh && !got.busy, "mode": if got.pulled { "pull" } else { "push" }, "diagnostics": shown,
        })))
    }
}
