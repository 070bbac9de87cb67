//! Who a run belongs to, as recorded with it: the MCP client's name (which the client chooses),
//! and over HTTP the bearer token's (which it cannot). A run started under a token goes on only
//! for that token — or for the user on the hub's own machine, who has no token — so a run id
//! seen elsewhere (a shared dashboard, a log) does not let another token run, finish or spend
//! the person's approval of someone else's call.

use crate::runs::TokenRecord;

/// What separates a client's name from the token it called with.
const TOKEN_MARK: &str = " · token ";

/// The caller recorded with a run: `client · token NAME` over HTTP with a token, the client's
/// name alone otherwise (never one that reads as if it had a token).
pub fn caller(client: Option<&str>, token: Option<&TokenRecord>) -> Option<String> {
    match (client, token) {
        (client, Some(token)) => Some(format!(
            "{}{TOKEN_MARK}{}",
            unmarked(client.unwrap_or("?")),
            token.name
        )),
        (client, None) => client.map(unmarked),
    }
}

/// Whether `token` (none: the local user) may go on with a run recorded as started by
/// `recorded` at `started_at_ms`: a run started under a token only by that token or locally; a
/// run started without one only locally. A token is known by its name, which a revoked token
/// gives up: one created after the run started is another token of that name, not its own.
pub fn may_go_on(recorded: Option<&str>, started_at_ms: u64, token: Option<&TokenRecord>) -> bool {
    let Some(token) = token else {
        return true;
    };
    token.created_at_ms <= started_at_ms && token_of(recorded) == Some(token.name.as_str())
}

/// The name of the token a run recorded as started by `recorded` was started under, if any.
pub fn token_of(recorded: Option<&str>) -> Option<&str> {
    recorded
        .and_then(|r| r.rsplit_once(TOKEN_MARK))
        .map(|(_, name)| name)
}

/// A client's name with the mark a token adds written another way: the client chooses its
/// name, and must not choose whose run it is.
fn unmarked(client: &str) -> String {
    client.replace(TOKEN_MARK, " - token ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str) -> TokenRecord {
        TokenRecord {
            name: name.into(),
            profile: None,
            allow: Vec::new(),
            created_at_ms: 0,
            expires_at_ms: None,
            revoked_at_ms: None,
        }
    }

    #[test]
    fn a_run_goes_on_only_for_its_token_or_the_local_user() {
        let full = token("full");
        let other = token("other");
        let started = caller(Some("agent"), Some(&full));
        assert_eq!(started.as_deref(), Some("agent · token full"));
        assert!(may_go_on(started.as_deref(), 10, Some(&full)));
        assert!(may_go_on(started.as_deref(), 10, None));
        assert!(!may_go_on(started.as_deref(), 10, Some(&other)));
        // A run started without a token is the local user's.
        let local = caller(Some("exec"), None);
        assert!(may_go_on(local.as_deref(), 10, None));
        assert!(!may_go_on(local.as_deref(), 10, Some(&full)));
        assert!(!may_go_on(None, 10, Some(&full)));
        // The name of a revoked token, given to a new one, does not bring its runs along.
        let successor = TokenRecord {
            created_at_ms: 11,
            ..full.clone()
        };
        assert!(!may_go_on(started.as_deref(), 10, Some(&successor)));
    }

    #[test]
    fn a_client_cannot_name_itself_into_another_tokens_run() {
        let full = token("full");
        let forged = caller(Some("x · token full"), None);
        assert_eq!(forged.as_deref(), Some("x - token full"));
        assert!(!may_go_on(forged.as_deref(), 10, Some(&full)));
        let narrow = token("narrow");
        let stacked = caller(Some("x · token full"), Some(&narrow));
        assert!(!may_go_on(stacked.as_deref(), 10, Some(&full)));
        assert!(may_go_on(stacked.as_deref(), 10, Some(&narrow)));
    }
}
