//! A cap on the MCP sessions one host keeps. Each session owns a room (its kernels, debug
//! session, staged edits, workers) for up to [`super::SESSION_IDLE`]; without a cap one token
//! holder opening sessions in a loop grew the host by 80 KiB a session (4,000 sessions: 20 →
//! 328 MiB, kept an hour). At the cap, a new session ends the one whose last message is the
//! oldest first, with its room; everything else is rmcp's [`LocalSessionManager`].

use super::limits::MAX_SESSIONS_ENV;
use futures_core::Stream;
use parking_lot::Mutex;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// rmcp's session manager with at most `cap` sessions.
pub struct Capped {
    inner: LocalSessionManager,
    cap: usize,
    /// When each session last sent a message.
    last: Mutex<HashMap<SessionId, Instant>>,
}

impl Capped {
    pub fn new(inner: LocalSessionManager, cap: usize) -> Self {
        Self {
            inner,
            cap: cap.max(1),
            last: Mutex::default(),
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(t) = self.last.lock().get_mut(id) {
            *t = Instant::now();
        }
    }

    /// End the least recently active sessions until one more fits.
    async fn make_room(&self) {
        loop {
            let live: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
            if live.len() < self.cap {
                return;
            }
            let oldest = {
                let mut last = self.last.lock();
                last.retain(|id, _| live.contains(id));
                live.iter().min_by_key(|id| last.get(*id).copied()).cloned()
            };
            let Some(oldest) = oldest else { return };
            tracing::warn!(
                session = %oldest,
                cap = self.cap,
                "{} sessions are open, the cap ({MAX_SESSIONS_ENV}): the least recently active one ends, with its room",
                live.len()
            );
            self.last.lock().remove(&oldest);
            if self.inner.close_session(&oldest).await.is_err() {
                // Already gone from under us: drop it from the table so the loop moves on.
                self.inner.sessions.write().await.remove(&oldest);
            }
        }
    }
}

impl SessionManager for Capped {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        self.last.lock().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.last.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}
