//! The approval page's one-time links. Each link carries a random 256-bit token bound to one run
//! and to the calls of it that were waiting when the link was made, each with the digest of its
//! arguments, so a stale page can never approve a call (or arguments) its reader did not see. Each token has its own CSRF value for the page's form,
//! is spent by the first decision made with it, and dies with the approvals it shows.
//! Tokens live only in the hub's memory: a restarted hub makes new links, and `hub approve`
//! still works from the store.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::runs::Seen;

/// What a token unlocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub run_id: String,
    /// The calls the link shows, with the arguments they had when it was made.
    pub calls: Vec<Seen>,
    pub csrf: String,
}

/// Why a token unlocks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Never issued (a typo, a guess) or forgotten after it expired.
    Unknown,
    /// A decision was already made with it.
    Used,
    Expired,
    /// The form's CSRF value is not the one this token's page carried.
    BadCsrf,
}

#[derive(Debug)]
enum State {
    Open,
    /// A decision with it is being written; a second request must not start another.
    Deciding,
    Used,
}

#[derive(Debug)]
struct Entry {
    grant: Grant,
    expires_at_ms: u64,
    state: State,
}

/// The tokens of one approval page.
#[derive(Debug, Default)]
pub struct Tokens {
    entries: Mutex<HashMap<String, Entry>>,
}

/// What asking for a link to a run's waiting calls gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Issued {
    /// A new link, to open.
    New(String),
    /// A link for exactly these calls is still open (unused, unexpired): its page is where the
    /// person decides, and a client asking again opens no second one.
    StillOpen,
    /// [`MOST_OPEN`] links wait already: no more pages are opened until one is used or expires.
    TooMany,
}

/// How many pages with an undecided link may be open at once: a client that pauses run after
/// run (a token's holder among them) cannot fill the person's screen with them.
pub const MOST_OPEN: usize = 5;

/// 32 random bytes as hex, or `None` when the OS has no randomness to give: a guessable token
/// would be worse than no page.
pub fn random_hex() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equal strings, compared without stopping at the first difference, so response time says
/// nothing about how much of a guessed CSRF value was right.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Tokens {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes a token for `calls` of `run_id`, valid until `expires_at_ms`, unless a token for
    /// exactly these calls is still open, or `most` are; checked and made under one lock, so two
    /// clients asking at once open one page. `None` without randomness. Forgets tokens that
    /// expired, so a long-lived hub does not grow.
    pub fn issue_unless_open(
        &self,
        run_id: &str,
        calls: Vec<Seen>,
        expires_at_ms: u64,
        now_ms: u64,
        most: usize,
    ) -> Option<Issued> {
        let mut entries = self.lock();
        entries.retain(|_, entry| entry.expires_at_ms > now_ms);
        let open = || entries.values().filter(|e| matches!(e.state, State::Open));
        if open().any(|e| e.grant.run_id == run_id && e.grant.calls == calls) {
            return Some(Issued::StillOpen);
        }
        if open().count() >= most {
            return Some(Issued::TooMany);
        }
        let token = random_hex()?;
        let csrf = random_hex()?;
        entries.insert(
            token.clone(),
            Entry {
                grant: Grant {
                    run_id: run_id.to_string(),
                    calls,
                    csrf,
                },
                expires_at_ms,
                state: State::Open,
            },
        );
        Some(Issued::New(token))
    }

    /// What `token` unlocks for showing the page; `csrf` is checked too when given (a form post).
    pub fn check(&self, token: &str, csrf: Option<&str>, now_ms: u64) -> Result<Grant, Refusal> {
        let entries = self.lock();
        let entry = entries.get(token).ok_or(Refusal::Unknown)?;
        Self::usable(entry, csrf, now_ms)?;
        Ok(entry.grant.clone())
    }

    fn usable(entry: &Entry, csrf: Option<&str>, now_ms: u64) -> Result<(), Refusal> {
        match entry.state {
            State::Used | State::Deciding => return Err(Refusal::Used),
            State::Open if now_ms >= entry.expires_at_ms => return Err(Refusal::Expired),
            State::Open => {}
        }
        match csrf {
            Some(csrf) if !same(csrf, &entry.grant.csrf) => Err(Refusal::BadCsrf),
            _ => Ok(()),
        }
    }

    /// Claims `token` for a decision: from here on nobody else can decide with it. Follow with
    /// [`Tokens::spend`] once the decision is recorded, or [`Tokens::release`] if none was.
    pub fn claim(&self, token: &str, csrf: &str, now_ms: u64) -> Result<Grant, Refusal> {
        let mut entries = self.lock();
        let entry = entries.get_mut(token).ok_or(Refusal::Unknown)?;
        Self::usable(entry, Some(csrf), now_ms)?;
        entry.state = State::Deciding;
        Ok(entry.grant.clone())
    }

    /// Forgets `token`, whose page was never shown.
    pub fn forget(&self, token: &str) {
        self.lock().remove(token);
    }

    pub fn spend(&self, token: &str) {
        if let Some(entry) = self.lock().get_mut(token) {
            entry.state = State::Used;
        }
    }

    /// Gives a claimed token back, when nothing was decided (the config could not take an
    /// "always" rule), so the person can choose again.
    pub fn release(&self, token: &str) {
        if let Some(entry) = self.lock().get_mut(token)
            && matches!(entry.state, State::Deciding)
        {
            entry.state = State::Open;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new token, however many are open.
    fn issue(tokens: &Tokens, run_id: &str, calls: Vec<Seen>, expires: u64, now: u64) -> String {
        match tokens.issue_unless_open(run_id, calls, expires, now, usize::MAX) {
            Some(Issued::New(token)) => token,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_token_is_spent_by_one_decision() {
        let tokens = Tokens::default();
        let seen = Seen {
            seq: 2,
            call_digest: "d".into(),
            tool_version: None,
        };
        let token = issue(&tokens, "run_a", vec![seen.clone()], 1_000, 0);
        let grant = tokens.check(&token, None, 10).unwrap();
        assert_eq!(
            (grant.run_id.as_str(), grant.calls.as_slice()),
            ("run_a", &[seen][..])
        );
        assert_eq!(tokens.claim(&token, "wrong", 10), Err(Refusal::BadCsrf));
        let claimed = tokens.claim(&token, &grant.csrf, 10).unwrap();
        assert_eq!(claimed, grant);
        assert_eq!(
            tokens.claim(&token, &grant.csrf, 10),
            Err(Refusal::Used),
            "a claimed token cannot be claimed twice"
        );
        tokens.release(&token);
        tokens.claim(&token, &grant.csrf, 10).unwrap();
        tokens.spend(&token);
        tokens.release(&token);
        assert_eq!(
            tokens.check(&token, None, 10),
            Err(Refusal::Used),
            "a spent token is not given back"
        );
    }

    #[test]
    fn a_second_link_for_the_same_waiting_calls_is_not_made_while_the_first_is_open() {
        let tokens = Tokens::default();
        let seen = |seq| Seen {
            seq,
            call_digest: "d".into(),
            tool_version: None,
        };
        let first = tokens.issue_unless_open("run_a", vec![seen(1)], 1_000, 0, MOST_OPEN);
        let Some(Issued::New(first)) = first else {
            panic!("{first:?}")
        };
        let again = tokens.issue_unless_open("run_a", vec![seen(1)], 1_000, 10, MOST_OPEN);
        assert_eq!(again, Some(Issued::StillOpen));
        // Another call of the run waits now: a page for it.
        let other = tokens.issue_unless_open("run_a", vec![seen(2)], 1_000, 10, MOST_OPEN);
        assert!(matches!(other, Some(Issued::New(_))), "{other:?}");
        // Once the first is used, the same calls (asked again) get a page again.
        let csrf = tokens.check(&first, None, 10).unwrap().csrf;
        tokens.claim(&first, &csrf, 10).unwrap();
        tokens.spend(&first);
        let after = tokens.issue_unless_open("run_a", vec![seen(1)], 1_000, 10, MOST_OPEN);
        assert!(matches!(after, Some(Issued::New(_))), "{after:?}");
        // Pages of other runs, up to the most that may wait at once.
        for run in ["run_b", "run_c", "run_d"] {
            let made = tokens.issue_unless_open(run, vec![seen(1)], 1_000, 10, MOST_OPEN);
            assert!(matches!(made, Some(Issued::New(_))), "{made:?}");
        }
        let more = tokens.issue_unless_open("run_e", vec![seen(1)], 1_000, 10, MOST_OPEN);
        assert_eq!(more, Some(Issued::TooMany));
        // A link no browser opened is forgotten, and makes room.
        let Some(Issued::New(unseen)) =
            tokens.issue_unless_open("run_f", vec![seen(1)], 900, 10, usize::MAX)
        else {
            panic!("a link for run_f")
        };
        tokens.forget(&unseen);
        assert_eq!(tokens.check(&unseen, None, 10), Err(Refusal::Unknown));
        // Expired ones make room.
        let later = tokens.issue_unless_open("run_e", vec![seen(1)], 5_000, 1_000, MOST_OPEN);
        assert!(matches!(later, Some(Issued::New(_))), "{later:?}");
    }

    #[test]
    fn unknown_and_expired_tokens_unlock_nothing() {
        let tokens = Tokens::default();
        let token = issue(&tokens, "run_a", Vec::new(), 1_000, 0);
        assert_eq!(tokens.check("nope", None, 10), Err(Refusal::Unknown));
        assert_eq!(tokens.check(&token, None, 1_000), Err(Refusal::Expired));
        let other = issue(&tokens, "run_b", Vec::new(), 5_000, 2_000);
        assert_eq!(
            tokens.check(&token, None, 2_000),
            Err(Refusal::Unknown),
            "expired tokens are forgotten"
        );
        assert_ne!(token, other);
        assert_eq!(other.len(), 64);
    }
}
