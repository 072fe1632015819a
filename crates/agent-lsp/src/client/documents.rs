//! The server's copies of the documents it has open: opened, changed and saved as the files
//! are, closed when a file goes, and what a copy was before its last change (for a change made
//! outside the run's write tools, `crate::outside`).

use super::Server;
use crate::error::LspError;
use crate::protocol::{
    DidChange, DidChangeParams, DidClose, DidCloseParams, DidOpen, DidOpenParams, DidSave,
    DidSaveParams, TextDocumentIdentifier, TextDocumentItem, VersionedTextDocumentIdentifier,
    WholeText,
};
use crate::text::path_to_uri;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(super) struct Doc {
    pub(super) version: i64,
    pub(super) text: String,
}

/// What a sync did.
#[derive(Debug, Clone, Copy)]
pub struct Synced {
    /// The document version the server now has.
    pub version: i64,
    /// The diagnostics sequence number before the sync: a publish after it is for new content.
    pub seq_before: u64,
}

impl Server {
    /// Bring the server's copy of `path` up to `text`: didOpen the first time, didChange (full
    /// text) and didSave when it changed; `save` also sends didSave after a didOpen.
    pub async fn sync(&self, path: &Path, text: &str, save: bool) -> Result<Synced, LspError> {
        let mut docs = self.docs.lock().await;
        let uri = path_to_uri(path);
        let seq_before = self.shared.lock().seq;
        let (version, opened) = match docs.get_mut(path) {
            Some(d) if d.text == text => {
                // Unchanged: any publish for this version is fresh.
                return Ok(Synced {
                    version: d.version,
                    seq_before: 0,
                });
            }
            Some(d) => {
                self.superseded
                    .lock()
                    .entry(path.to_path_buf())
                    .or_insert_with(|| std::mem::take(&mut d.text));
                d.version += 1;
                d.text = text.to_string();
                let v = d.version;
                self.notify::<DidChange>(&DidChangeParams {
                    text_document: VersionedTextDocumentIdentifier {
                        uri: uri.clone(),
                        version: v,
                    },
                    content_changes: vec![WholeText {
                        text: text.to_string(),
                    }],
                })
                .await?;
                (v, false)
            }
            None => {
                let ext = path
                    .extension()
                    .map(|e| e.to_string_lossy().to_string())
                    .unwrap_or_default();
                let language_id = self
                    .spec
                    .extensions
                    .get(&ext)
                    .cloned()
                    .unwrap_or_else(|| self.spec.language.clone());
                self.notify::<DidOpen>(&DidOpenParams {
                    text_document: TextDocumentItem {
                        uri: uri.clone(),
                        language_id,
                        version: 1,
                        text: text.to_string(),
                    },
                })
                .await?;
                docs.insert(
                    path.to_path_buf(),
                    Doc {
                        version: 1,
                        text: text.to_string(),
                    },
                );
                (1, true)
            }
        };
        if !opened || save {
            let text = self.caps().save_includes_text().then(|| text.to_string());
            self.notify::<DidSave>(&DidSaveParams {
                text_document: TextDocumentIdentifier { uri },
                text,
            })
            .await?;
        }
        let now = Instant::now();
        {
            let mut sh = self.shared.lock();
            sh.last_activity = Some(now);
            sh.first_open.get_or_insert(now);
        }
        self.tick.send_modify(|t| *t += 1);
        Ok(Synced {
            version,
            seq_before,
        })
    }

    /// The open documents whose content, by `differs(path, text)`, is no longer the text the
    /// server had at the last look: the text it had then, per document. A document synced
    /// since (by any call) counts from the text it had before that sync; the look is over once
    /// this returns.
    pub async fn drifted(
        &self,
        mut differs: impl FnMut(&Path, &str) -> bool,
    ) -> Vec<(PathBuf, String)> {
        let docs = self.docs.lock().await;
        let before = std::mem::take(&mut *self.superseded.lock());
        docs.iter()
            .filter_map(|(path, doc)| {
                let old = before.get(path).unwrap_or(&doc.text);
                differs(path, old).then(|| (path.clone(), old.clone()))
            })
            .collect()
    }

    /// The text the server had for `path` at the last look ([`Server::drifted`]), if it has
    /// the document open.
    pub async fn last_seen(&self, path: &Path) -> Option<String> {
        let docs = self.docs.lock().await;
        let doc = docs.get(path)?;
        Some(
            self.superseded
                .lock()
                .get(path)
                .cloned()
                .unwrap_or_else(|| doc.text.clone()),
        )
    }

    /// Forget what `paths` had before their last sync: the check that just ran on them was
    /// that sync's reason (see [`Server::drifted`]).
    pub fn settled(&self, paths: &[PathBuf]) {
        let mut s = self.superseded.lock();
        for p in paths {
            s.remove(p);
        }
    }

    /// Close a document (after it was deleted or renamed away).
    pub async fn close(&self, path: &Path) {
        if self.docs.lock().await.remove(path).is_some() {
            let _ = self
                .notify::<DidClose>(&DidCloseParams {
                    text_document: TextDocumentIdentifier {
                        uri: path_to_uri(path),
                    },
                })
                .await;
        }
    }

    /// Whether the server has `path` open.
    pub async fn is_open(&self, path: &Path) -> bool {
        self.docs.lock().await.contains_key(path)
    }
}
