//! Collecting one cell's output (capped) and rendering it as a tool result.

use crate::protocol::{Bundle, CellError};
use crate::saved::ImageDir;
use agent_tier::{Image, ToolOutput};
use base64::Engine;
use serde_json::{Map, Value, json};
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
    fn as_str(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Interrupted => "interrupted",
            Status::Killed => "killed",
            Status::Died { .. } => "died",
        }
    }
}

enum Item {
    Stream { name: &'static str, text: String },
    Display { text: String, data: Value },
    Cut,
}

const MAX_IMAGES: usize = 20;
/// At most this many `display()` outputs are returned per cell (the drivers stop sending more).
pub(crate) const MAX_DISPLAYS: usize = 50;

/// `text` cut to about `cap` bytes: the first three quarters and the last quarter, with a note of
/// how much was cut in between; the second value is how many bytes were cut.
pub(crate) fn clip(text: &str, cap: usize) -> (String, usize) {
    if text.len() <= cap {
        return (text.to_string(), 0);
    }
    let room = cap.saturating_sub(80).max(16);
    let head = floor_char(text, room * 3 / 4);
    let mut tail = text.len() - room / 4;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let cut = tail - head;
    (
        format!(
            "{}\n[… {cut} bytes cut here …]\n{}",
            &text[..head],
            &text[tail..]
        ),
        cut,
    )
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
    result: Option<(String, Value)>,
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
    pub(crate) restart: Option<Result<u32, String>>,
    pub(crate) version: String,
    pub(crate) budget: Duration,
    pub(crate) grace: Duration,
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
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
            let take = floor_char(text, (head_cap - self.head_used).min(text.len()));
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
            let drop = floor_char(&self.tail, self.tail.len() - tail_cap);
            self.cut += drop;
            self.tail.drain(..drop);
        }
    }

    fn finish_tail(&mut self) {
        let tail_cap = self.cap / 4;
        if self.tail.len() > tail_cap {
            let drop = floor_char(&self.tail, self.tail.len() - tail_cap);
            self.cut += drop;
            self.tail.drain(..drop);
        }
    }

    /// A MIME bundle: images become attached PNGs, the rest stays as data.
    fn bundle(&mut self, data: &Bundle) -> (String, Value) {
        let mut kept = Map::new();
        let mut omitted = Map::new();
        let mut text = data
            .get("text/plain")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        for (k, v) in data {
            if k == "image/png" {
                let bytes = v
                    .as_str()
                    .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
                match bytes {
                    Some(b) if self.images.len() < MAX_IMAGES => {
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
                        kept.insert(
                            k.clone(),
                            json!({ "image": n - 1, "path": path.map(|p| p.display().to_string()) }),
                        );
                    }
                    Some(_) => {
                        self.dropped_images += 1;
                        text =
                            format!("[image not returned: at most {MAX_IMAGES} images per cell]");
                    }
                    None => {}
                }
            } else if k == "text/plain" {
                let plain = v.as_str().unwrap_or("");
                kept.insert(k.clone(), Value::String(clip(plain, self.cap).0));
            } else {
                match v {
                    Value::String(s) if s.len() > self.cap => {
                        // a cut HTML table or markdown is no use; the text stands for it
                        omitted.insert(k.clone(), json!(s.len()));
                    }
                    _ => {
                        kept.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        if !omitted.is_empty() {
            kept.insert("omitted_bytes".into(), Value::Object(omitted));
        }
        (clip(&text, self.cap).0, Value::Object(kept))
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
        let cost = text.len() + data.to_string().len();
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
            ename: clip(&err.ename, 200).0,
            evalue: clip(&err.evalue, self.cap / 8).0,
            traceback: clip(&err.traceback, self.cap).0,
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

    /// What is left after the kernel was lost during the cell.
    fn after_loss(&self, restarted: &str) -> String {
        let gone = "every name (variables, imports) from this and earlier cells is gone";
        match &self.restart {
            Some(Ok(_)) => format!("{restarted} — {gone}"),
            Some(Err(e)) => format!(
                " — {gone}; restarting it failed ({}), the next call tries again",
                clip(e, 300).0
            ),
            None => format!(" — {gone}; the next call starts a fresh kernel"),
        }
    }

    /// The tool result.
    pub(crate) fn render(mut self) -> ToolOutput {
        self.finish_tail();
        if self.dropped_idle > 0 {
            self.notes.push(format!(
                "{} bytes of output printed between cells were dropped: at most {} bytes wait for the next cell",
                self.dropped_idle,
                crate::inflow::QUEUE_CAP
            ));
        }
        let mut text = String::new();
        for n in &self.notes {
            text.push_str(&format!("[{n}]\n"));
        }
        let mut outputs = Vec::new();
        let body_start = text.len();
        for item in &self.items {
            match item {
                Item::Stream { name, text: t } => {
                    text.push_str(t);
                    outputs.push(json!({"type": "stream", "name": name, "text": t}));
                }
                Item::Cut => {
                    if !text.ends_with('\n') && text.len() > body_start {
                        text.push('\n');
                    }
                    text.push_str(&format!(
                        "[… {} bytes of output cut here (the cap is {} bytes); the last part follows …]\n",
                        self.cut, self.cap
                    ));
                    text.push_str(&self.tail);
                    outputs.push(json!({"type": "cut", "bytes": self.cut}));
                    outputs.push(json!({"type": "stream", "name": "tail", "text": self.tail}));
                }
                Item::Display { text: t, data } => {
                    if !text.ends_with('\n') && text.len() > body_start {
                        text.push('\n');
                    }
                    text.push_str(t);
                    text.push('\n');
                    outputs.push(json!({"type": "display", "data": data}));
                }
            }
        }
        if let Some((t, _)) = &self.result {
            if !text.ends_with('\n') && text.len() > body_start {
                text.push('\n');
            }
            text.push_str(t);
            text.push('\n');
        }
        if let Some(e) = &self.error {
            if !text.ends_with('\n') && text.len() > body_start {
                text.push('\n');
            }
            text.push_str(&e.traceback);
            text.push('\n');
        }
        if self.displays_dropped > 0 {
            text.push_str(&format!(
                "[{} more display output(s) not shown: at most {MAX_DISPLAYS} and about {} bytes of display() output are returned per cell]\n",
                self.displays_dropped,
                self.cap.saturating_mul(2)
            ));
        }
        if self.dropped_live > 0 {
            text.push_str(&format!(
                "[{} bytes of output were dropped while the host was behind the kernel]\n",
                self.dropped_live
            ));
        }
        if self.dropped_images > 0 {
            text.push_str(&format!(
                "[{} more image(s) not returned: at most {MAX_IMAGES} per cell]\n",
                self.dropped_images
            ));
        }
        let lang = self.language;
        match &self.status {
            Status::Ok | Status::Error => {}
            Status::Interrupted => text.push_str(&format!(
                "[interrupted: the cell went {} without output (the inactivity budget; output resets it, a pending tool() call pauses it); the {lang} kernel is alive and keeps every name from earlier cells; {} — print progress from long loops to keep them running]\n",
                human(self.budget),
                defined_before_interrupt(&self.defined, self.defined_total)
            )),
            Status::Killed => text.push_str(&format!(
                "[killed: the cell went {} without output (the inactivity budget), then ignored the interrupt for {}, so the {lang} kernel was killed{}]\n",
                human(self.budget),
                human(self.grace),
                self.after_loss(" and restarted")
            )),
            Status::Died { exit, stderr_tail } => {
                text.push_str(&format!(
                    "[the {lang} kernel died during this cell: it {exit}{}]\n",
                    self.after_loss("; it was restarted")
                ));
                let tail = stderr_tail.trim_end();
                if !tail.is_empty() && !text.contains(tail) {
                    text.push_str("stderr tail:\n");
                    text.push_str(tail);
                    text.push('\n');
                }
            }
        }
        if text.len() == body_start && self.status == Status::Ok {
            text.push_str("(no output)\n");
        }
        while text.ends_with('\n') {
            text.pop();
        }
        let (exit, stderr_tail) = match &self.status {
            Status::Died { exit, stderr_tail } => (Some(exit.clone()), Some(stderr_tail.clone())),
            _ => (None, None),
        };
        let structured = json!({
            "language": lang,
            "status": self.status.as_str(),
            "outputs": outputs,
            "result": self.result.as_ref().map(|(_, d)| d.clone()),
            "error": self.error.as_ref().map(|e| json!({
                "ename": e.ename,
                "evalue": e.evalue,
                "traceback": e.traceback,
            })),
            "output_cut_bytes": self.cut,
            "displays_dropped": self.displays_dropped,
            "dropped_between_cells_bytes": self.dropped_idle,
            "bridge_calls": self.bridge_calls,
            "defined": self.defined,
            "defined_total": self.defined_total,
            "kernel": {
                "pid": self.pid,
                "restarted_pid": self.restart.as_ref().and_then(|r| r.as_ref().ok()),
                "version": self.version,
                "fresh": self.fresh,
                "state_lost": self.state_lost || matches!(self.status, Status::Killed | Status::Died { .. }),
                "exit": exit,
                "stderr_tail": stderr_tail,
            },
        });
        ToolOutput {
            text,
            structured: Some(structured),
            images: self.images,
            is_error: self.status != Status::Ok,
            ..Default::default()
        }
    }
}

/// What an interrupted cell left behind: the names it bound or rebound before the interrupt.
fn defined_before_interrupt(names: &[String], total: u64) -> String {
    if total == 0 {
        return "this cell bound no top-level name before the interrupt".into();
    }
    let more = total.saturating_sub(names.len() as u64);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "names this cell bound before the interrupt (kept): {}{more}",
        names.join(", ")
    )
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

/// A duration as a person would say it: `5 min`, `2 s`, `1.5 s`, `300 ms`.
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 60_000 && ms.is_multiple_of(60_000) {
        format!("{} min", ms / 60_000)
    } else if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations() {
        let cases = [
            (300_000, "5 min"),
            (2000, "2 s"),
            (1500, "1.5 s"),
            (300, "300 ms"),
        ];
        for (ms, want) in cases {
            assert_eq!(human(Duration::from_millis(ms)), want);
        }
    }

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
        assert_eq!(cut, Some(json!(900 - 75 - 25)));
    }
}
