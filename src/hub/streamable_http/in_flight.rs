//! Request ids in flight in each session. rmcp answers a session's requests by id, so a second
//! request sent with the id of one still running would run too, and one of the two would never
//! be answered (its stream pinged on for good while the other took its answer). A request whose
//! id is in flight in its session is refused before it runs; the id is free again once the
//! first one's response has ended (or its client went away).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body;
use futures::StreamExt;
use http::Response;
use serde_json::Value;

/// The `(session, id)` pairs whose responses are still being sent.
#[derive(Clone, Default)]
pub struct InFlight(Arc<Mutex<HashSet<(String, String)>>>);

/// One request's id, held until this is dropped.
pub struct Claim {
    in_flight: InFlight,
    key: (String, String),
}

impl InFlight {
    /// Holds `id` in `session`; `None` when a request with that id is still in flight there.
    pub fn claim(&self, session: &str, id: &Value) -> Option<Claim> {
        let key = (session.to_string(), id.to_string());
        self.lock().insert(key.clone()).then(|| Claim {
            in_flight: self.clone(),
            key,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashSet<(String, String)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.in_flight.lock().remove(&self.key);
    }
}

/// `response`, whose body keeps `claims` until it has been sent whole or dropped.
pub fn held(response: Response<Body>, claims: Vec<Claim>) -> Response<Body> {
    if claims.is_empty() {
        return response;
    }
    response.map(|body| {
        Body::from_stream(body.into_data_stream().map(move |chunk| {
            // Owned by the stream: dropped, and the ids let go, when the stream is.
            let _held = &claims;
            chunk
        }))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_id_is_held_per_session_until_its_claim_is_dropped() {
        let in_flight = InFlight::default();
        let first = in_flight.claim("s1", &json!(5));
        assert!(first.is_some());
        assert!(in_flight.claim("s1", &json!(5)).is_none());
        // Another session, or the same number as a string, is another id.
        assert!(in_flight.claim("s2", &json!(5)).is_some());
        assert!(in_flight.claim("s1", &json!("5")).is_some());
        drop(first);
        assert!(in_flight.claim("s1", &json!(5)).is_some());
    }
}
