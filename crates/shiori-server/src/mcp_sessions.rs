//! MCP sessions over HTTP and who owns them: a session belongs to the key that opened it, ends
//! after [`SESSION_IDLE`] without a request, and one owner keeps at most
//! [`SESSIONS_PER_OWNER`] — opening one more closes its least recently used — so no client
//! can fill the server's memory with sessions.

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::SessionId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a session lives without a request (as long as MCP's own default).
pub const SESSION_IDLE: Duration = Duration::from_secs(300);
/// Sessions one owner (key) keeps open at once.
pub const SESSIONS_PER_OWNER: usize = 32;

struct Session {
    /// `None`: the machine's owner, when no keys are set.
    owner: Option<String>,
    last_used: Instant,
}

/// The open sessions, shared with the MCP transport that keeps their state.
pub struct McpSessions {
    sessions: Mutex<HashMap<String, Session>>,
    transport: Arc<LocalSessionManager>,
}

impl Default for McpSessions {
    fn default() -> Self {
        let mut transport = LocalSessionManager::default();
        transport.session_config.keep_alive = Some(SESSION_IDLE);
        McpSessions {
            sessions: Mutex::default(),
            transport: Arc::new(transport),
        }
    }
}

impl McpSessions {
    /// The session manager of the MCP transport.
    pub fn transport(&self) -> Arc<LocalSessionManager> {
        Arc::clone(&self.transport)
    }

    /// Records a session `owner` opened; forgets idle sessions and closes `owner`'s least
    /// recently used ones past [`SESSIONS_PER_OWNER`].
    pub async fn open(&self, session: &str, owner: Option<String>) {
        let closing = self.admit(session, owner, Instant::now());
        for session in closing {
            // A session the transport already ended (idle) is not an error here.
            let _ = self
                .transport
                .close_session(&SessionId::from(session.as_str()))
                .await;
        }
    }

    /// Records the session; the ids to close in the transport.
    fn admit(&self, session: &str, owner: Option<String>, now: Instant) -> Vec<String> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let mut closing: Vec<String> = sessions
            .iter()
            .filter(|(_, open)| now.duration_since(open.last_used) >= SESSION_IDLE)
            .map(|(id, _)| id.clone())
            .collect();
        let mut owned: Vec<(&String, Instant)> = sessions
            .iter()
            .filter(|(id, open)| open.owner == owner && !closing.contains(id))
            .map(|(id, open)| (id, open.last_used))
            .collect();
        owned.sort_by_key(|(_, last_used)| *last_used);
        let excess = (owned.len() + 1).saturating_sub(SESSIONS_PER_OWNER);
        closing.extend(owned.into_iter().take(excess).map(|(id, _)| id.clone()));
        for id in &closing {
            sessions.remove(id);
        }
        let last_used = now;
        sessions.insert(session.to_string(), Session { owner, last_used });
        closing
    }

    pub fn close(&self, session: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.remove(session);
    }

    /// Whether `session` is open and was opened by `owner` (and marks it used); an unknown
    /// session belongs to nobody.
    pub fn belongs_to(&self, session: &str, owner: Option<&str>) -> bool {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        match sessions.get_mut(session) {
            Some(open) if open.owner.as_deref() == owner => {
                open.last_used = Instant::now();
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_belongs_to_the_key_that_opened_it() {
        let sessions = McpSessions::default();
        let now = Instant::now();
        sessions.admit("s1", Some("hr".into()), now);
        sessions.admit("s2", None, now);
        assert!(sessions.belongs_to("s1", Some("hr")));
        assert!(!sessions.belongs_to("s1", Some("sales")));
        assert!(!sessions.belongs_to("s1", None));
        assert!(sessions.belongs_to("s2", None));
        assert!(!sessions.belongs_to("unknown", None));
        sessions.close("s1");
        assert!(!sessions.belongs_to("s1", Some("hr")));
    }

    #[test]
    fn an_owner_past_its_cap_loses_its_least_recently_used_session_and_others_keep_theirs() {
        let sessions = McpSessions::default();
        let start = Instant::now();
        sessions.admit("other", Some("sales".into()), start);
        for n in 0..SESSIONS_PER_OWNER {
            let at = start + Duration::from_secs(n as u64);
            assert!(sessions
                .admit(&format!("hr-{n}"), Some("hr".into()), at)
                .is_empty());
        }
        let later = start + Duration::from_secs(SESSIONS_PER_OWNER as u64);
        let closed = sessions.admit("hr-new", Some("hr".into()), later);
        assert_eq!(closed, ["hr-0"]);
        assert!(!sessions.belongs_to("hr-0", Some("hr")));
        assert!(sessions.belongs_to("hr-new", Some("hr")));
        assert!(sessions.belongs_to("other", Some("sales")));
    }

    #[test]
    fn idle_sessions_are_forgotten_when_another_opens() {
        let sessions = McpSessions::default();
        let start = Instant::now();
        sessions.admit("idle", Some("hr".into()), start);
        let closed = sessions.admit("new", Some("sales".into()), start + SESSION_IDLE);
        assert_eq!(closed, ["idle"]);
        assert!(!sessions.belongs_to("idle", Some("hr")));
    }
}
