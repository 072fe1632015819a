//! Collecting one cell's output (capped, images attached and saved) into the result of `eval`
//! ([`EvalReport`]).

use crate::KernelError;
use crate::protocol::{Bundle, CellError};
use crate::report::{
    Ending, EvalReport, Exception, ImageRef, KernelInfo, MAX_DISPLAYS, MAX_IMAGES, Output, Shown,
};
use crate::saved::ImageDir;
use agent_tier::display::clip_middle_bytes;
use agent_tier::{Image, ToolOutput};
use base64::Engine;
use std::sync::Arc;
use std::time::Duration;

/// How a cell ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    Error,
    Interrupted,
    Killed,
    Died { exit: String, stderr_tail: String },
}

impl Status {
    fn ending(&self) -> Ending {
        match self {
            Status::Ok => Ending::Ok,
            Status::Error => Ending::Error,
            Status::Interrupted => Ending::Interrupted,
            Status::Killed => Ending::Killed,
            Status::Died { .. } => Ending::Died,
        }
    }
}

enum Item {
    Stream { name: &'static str, text: String },
    Display { text: String, data: Shown },
    Cut,
}

/// `text` cut to about `cap` bytes, owned: the first three quarters and the last quarter, with
/// a line saying how much was cut between them.
fn clip(text: &str, cap: usize) -> String {
    clip_middle_bytes(text, cap).0.into_owned()
}

/// One cell's output, in order, with stream text capped at `cap` bytes: the first three quarters
/// and the last quarter are kept, and the result says how much was cut in between.
pub(crate) struct Collector {
    language: &'static str,
    cap: usize,
    head_used: usize,
    items: Vec<Item>,
    tail: String,
    overflowed: bool,
    cut: usize,
    images: Vec<Image>,
    /// Where returned images are also written, and this call's number in the run.
    saved: Option<(Arc<ImageDir>, u64)>,
    dropped_images: usize,
    result: Option<(String, Shown)>,
    error: Option<CellError>,
    bridge_calls: Vec<String>,
    notes: Vec<String>,
    /// The top-level names the cell bound or rebound (at most the drivers' cap) and how many.
    defined: Vec<String>,
    defined_total: u64,
    /// Bytes of `display()` output kept (text and data), the displays kept, and those left out.
    display_used: usize,
    displays_kept: usize,
    displays_dropped: usize,
    /// Output dropped because it waited too long: between cells, and while the host was behind.
    dropped_idle: usize,
    dropped_live: usize,
    /// How the cell ended.
    pub(crate) status: Status,
    /// Whether this call started a kernel, and whether earlier state was lost.
    pub(crate) fresh: bool,
    pub(crate) state_lost: bool,
    pub(crate) pid: Option<u32>,
    /// After a killed or crashed cell: the fresh kernel's pid, or why it could not start.
    pub(crate) restart: Option<Result<u32, KernelError>>,
    pub(crate) version: String,
    pub(crate) budget: Duration,
    pub(crate) grace: Duration,
}

impl Collector {
    pub(crate) fn new(language: &'static str, cap: usize) -> Self {
        Collector {
            language,
            cap: cap.max(64),
            head_used: 0,
            items: Vec::new(),
            tail: String::new(),
            overflowed: false,
            cut: 0,
            images: Vec::new(),
            saved: None,
            dropped_images: 0,
            result: None,
            error: None,
            bridge_calls: Vec::new(),
            notes: Vec::new(),
            defined: Vec::new(),
            defined_total: 0,
            display_used: 0,
            displays_kept: 0,
            displays_dropped: 0,
            dropped_idle: 0,
            dropped_live: 0,
            status: Status::Ok,
            fresh: false,
            state_lost: false,
            pid: None,
            restart: None,
            version: String::new(),
            budget: Duration::ZERO,
            grace: Duration::ZERO,
        }
    }

    /// Write every returned image to `dir` too, named by this eval call's number `cell`.
    pub(crate) fn images_to(&mut self, dir: Arc<ImageDir>, cell: u64) {
        self.saved = Some((dir, cell));
    }

    /// The cap on a cell's stream output and on any one value, in bytes.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Output printed between cells that was dropped (the queue keeps a bounded amount).
    pub(crate) fn dropped_between_cells(&mut self, bytes: usize) {
        self.dropped_idle += bytes;
    }

    /// Output dropped during the cell because the host fell behind the kernel.
    pub(crate) fn dropped_during_cell(&mut self, bytes: usize) {
        self.dropped_live += bytes;
        self.cut += bytes;
    }

    /// `display()` outputs the driver did not send (over its per-cell count).
    pub(crate) fn displays_dropped(&mut self, n: u64) {
        self.displays_dropped = self
            .displays_dropped
            .saturating_add(usize::try_from(n).unwrap_or(usize::MAX));
    }

    /// A line shown before the output (a fresh kernel, lost state).
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    pub(crate) fn stream(&mut self, name: &'static str, text: &str) {
        if text.is_empty() {
            return;
        }
        let head_cap = self.cap * 3 / 4;
        let mut text = text;
        if self.head_used < head_cap {
            let take = text.floor_char_boundary(head_cap - self.head_used);
            let (keep, rest) = text.split_at(take);
            self.head_used += keep.len();
            match self.items.last_mut() {
                Some(Item::Stream { name: n, text: t }) if *n == name => t.push_str(keep),
                _ => self.items.push(Item::Stream {
                    name,
                    text: keep.to_string(),
                }),
            }
            text = rest;
            if text.is_empty() {
                return;
            }
        }
        if !self.overflowed {
            self.overflowed = true;
            self.items.push(Item::Cut);
        }
        self.tail.push_str(text);
        let tail_cap = self.cap / 4;
        if self.tail.len() > tail_cap * 2 {
            let drop = self.tail.floor_char_boundary(self.tail.len() - tail_cap);
            self.cut += drop;
            self.tail.drain(..drop);
        }
    }

    fn finish_tail(&mut self) {
        let tail_cap = self.cap / 4;
        if self.tail.len() > tail_cap {
            let drop = self.tail.floor_char_boundary(self.tail.len() - tail_cap);
            self.cut += drop;
            self.tail.drain(..drop);
        }
    }

    /// A MIME bundle as returned: the image attached (and saved), the text and every other
    /// type cut to the cap (a type over it is left out and its size given), and the line a
    /// model reads for it.
    fn bundle(&mut self, data: &Bundle) -> (String, Shown) {
        let mut shown = Shown::default();
        let mut text = data.text.clone().unwrap_or_default();
        if let Some(png) = &data.png
            && let Ok(b) = base64::engine::general_purpose::STANDARD.decode(png)
        {
            if self.images.len() < MAX_IMAGES {
                let (w, h) = png_size(&b);
                let n = self.images.len() + 1;
                let path = self.saved.as_ref().and_then(|(d, c)| d.save(*c, n, &b));
                self.images.push(Image::png(b));
                text = match &path {
                    Some(p) => format!(
                        "[image {n}: PNG {w}×{h}, attached; saved as {}]",
                        p.display()
                    ),
                    None => format!("[image {n}: PNG {w}×{h}, attached]"),
                };
                shown.image = Some(ImageRef {
                    image: n - 1,
                    path: path.map(|p| p.display().to_string()),
                });
            } else {
                self.dropped_images += 1;
                text = format!("[image not returned: at most {MAX_IMAGES} images per cell]");
            }
        }
        if let Some(plain) = &data.text {
            shown.text = Some(clip(plain, self.cap));
        }
        for (mime, v) in &data.other {
            match v.as_str() {
                // a cut HTML table or markdown is no use; the text stands for it
                Some(s) if s.len() > self.cap => {
                    shown.omitted_bytes.insert(mime.clone(), s.len());
                }
                _ => {
                    shown.other.insert(mime.clone(), v.clone());
                }
            }
        }
        (clip(&text, self.cap), shown)
    }

    /// A `display()` output. At most [`MAX_DISPLAYS`] per cell and about twice the cap in bytes
    /// (text and data) are kept; the rest are counted and a note says so.
    pub(crate) fn display(&mut self, data: &Bundle) {
        let budget = self.cap.saturating_mul(2);
        if self.displays_dropped > 0 || self.displays_kept >= MAX_DISPLAYS {
            self.displays_dropped += 1;
            return;
        }
        let (text, data) = self.bundle(data);
        // The size of its data as a client reads it (JSON).
        let cost = text.len() + serde_json::to_string(&data).map_or(0, |d| d.len());
        if self.displays_kept > 0 && self.display_used + cost > budget {
            self.displays_dropped += 1;
            return;
        }
        self.display_used += cost;
        self.displays_kept += 1;
        self.items.push(Item::Display { text, data });
    }

    pub(crate) fn result(&mut self, data: &Bundle) {
        let b = self.bundle(data);
        self.result = Some(b);
    }

    /// The cell's exception; its traceback is cut to the cap and its message to an eighth of it
    /// (the drivers cut them first; this holds whatever a driver sends).
    pub(crate) fn error(&mut self, err: &CellError) {
        self.error = Some(CellError {
            ename: clip(&err.ename, 200),
            evalue: clip(&err.evalue, self.cap / 8),
            traceback: clip(&err.traceback, self.cap),
        });
    }

    /// The names the cell bound or rebound, as the driver reports them in its `done` frame.
    pub(crate) fn defined(&mut self, names: Vec<String>, total: u64) {
        self.defined = names;
        self.defined_total = total.max(self.defined.len() as u64);
    }

    pub(crate) fn bridge_call(&mut self, name: &str) {
        self.bridge_calls.push(name.to_string());
    }

    /// The tool result: the report, with the images attached.
    pub(crate) fn render(self) -> ToolOutput {
        let (report, images) = self.report();
        let mut out = ToolOutput::report(&report);
        out.images = images;
        out
    }

    /// The result of the cell, and its images.
    fn report(mut self) -> (EvalReport, Vec<Image>) {
        self.finish_tail();
        if self.dropped_idle > 0 {
            self.notes.push(format!(
                "{} bytes of output printed between cells were dropped: at most {} bytes wait for the next cell",
                self.dropped_idle,
                crate::inflow::QUEUE_CAP
            ));
        }
        let tail = std::mem::take(&mut self.tail);
        let mut outputs = Vec::new();
        for item in std::mem::take(&mut self.items) {
            match item {
                Item::Stream { name, text } => outputs.push(Output::Stream { name, text }),
                Item::Cut => {
                    outputs.push(Output::Cut { bytes: self.cut });
                    outputs.push(Output::Stream {
                        name: "tail",
                        text: tail.clone(),
                    });
                }
                Item::Display { text, data } => outputs.push(Output::Display { data, text }),
            }
        }
        let (result_text, result) = self.result.take().unzip();
        let (exit, stderr_tail) = match &self.status {
            Status::Died { exit, stderr_tail } => (Some(exit.clone()), Some(stderr_tail.clone())),
            _ => (None, None),
        };
        let (restarted_pid, restart_failed) = match self.restart.take() {
            Some(Ok(pid)) => (Some(pid), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        let status = self.status.ending();
        let report = EvalReport {
            language: self.language,
            status,
            outputs,
            result,
            error: self.error.take().map(|e| Exception {
                ename: e.ename,
                evalue: e.evalue,
                traceback: e.traceback,
            }),
            output_cut_bytes: self.cut,
            displays_dropped: self.displays_dropped,
            dropped_between_cells_bytes: self.dropped_idle,
            bridge_calls: std::mem::take(&mut self.bridge_calls),
            defined: std::mem::take(&mut self.defined),
            defined_total: self.defined_total,
            kernel: KernelInfo {
                pid: self.pid,
                restarted_pid,
                version: std::mem::take(&mut self.version),
                fresh: self.fresh,
                state_lost: self.state_lost || matches!(status, Ending::Killed | Ending::Died),
                exit,
                stderr_tail,
            },
            notes: std::mem::take(&mut self.notes),
            result_text,
            cap: self.cap,
            dropped_live: self.dropped_live,
            dropped_images: self.dropped_images,
            budget: self.budget,
            grace: self.grace,
            restart_failed,
        };
        (report, self.images)
    }
}

/// A PNG's width and height from its IHDR chunk (0×0 when it is not a PNG).
pub(crate) fn png_size(b: &[u8]) -> (u32, u32) {
    if b.len() < 24 || &b[..8] != b"\x89PNG\r\n\x1a\n" {
        return (0, 0);
    }
    let w = u32::from_be_bytes([b[16], b[17], b[18], b[19]]);
    let h = u32::from_be_bytes([b[20], b[21], b[22], b[23]]);
    (w, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_capped_head_and_tail() {
        let mut c = Collector::new("python", 100);
        for i in 0..100 {
            c.stream("stdout", &format!("line {i:03}\n"));
        }
        let out = c.render();
        assert!(out.text.starts_with("line 000\n"), "{}", out.text);
        assert!(
            out.text.contains("bytes of output cut here"),
            "{}",
            out.text
        );
        assert!(out.text.ends_with("line 099"), "{}", out.text);
        assert!(out.text.len() < 400, "{}", out.text);
        let cut = out
            .structured
            .as_ref()
            .map(|s| s["output_cut_bytes"].clone());
        assert_eq!(cut, Some(serde_json::json!(900 - 75 - 25)));
    }

    #[test]
    fn a_bundle_keeps_what_fits_and_names_what_it_left_out() {
        use serde_json::json;
        let mut c = Collector::new("python", 100);
        let bundle: Bundle = serde_json::from_value(json!({
            "text/plain": "x",
            "text/html": "h".repeat(200),
            "application/json": {"a": 1},
        }))
        .unwrap();
        c.display(&bundle);
        let out = c.render();
        assert_eq!(out.text, "x");
        assert_eq!(
            out.structured.unwrap()["outputs"],
            json!([{"type": "display", "data": {
                "text/plain": "x",
                "application/json": {"a": 1},
                "omitted_bytes": {"text/html": 200},
            }}])
        );
    }
}
