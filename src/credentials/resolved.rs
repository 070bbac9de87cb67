//! The values a process resolved from the secret store and the redaction of them, read again
//! when the store says a value may have changed (`credential set` in another process while a
//! hub runs). Values read before stay blanked: a connection opened before the change still
//! sends the old one, and its upstream may still echo it.

use std::sync::{Arc, Mutex};

use super::{Redaction, Secret};

/// What was resolved at one generation of the store (see
/// [`SecretLookup::generation`](super::SecretLookup::generation)).
#[derive(Clone)]
pub struct Snapshot {
    pub secrets: Arc<[Secret]>,
    pub redaction: Arc<Redaction>,
}

/// Resolved values kept until the store's generation moves on.
#[derive(Default)]
pub struct Resolved {
    kept: Mutex<Option<(u64, Snapshot)>>,
}

impl Resolved {
    /// The values as of `generation`: those kept when it has not changed, else what `resolve`
    /// reads now together with every value read before.
    pub fn at(&self, generation: u64, resolve: impl FnOnce() -> Vec<Secret>) -> Snapshot {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, snapshot)) = kept.as_ref()
            && *at == generation
        {
            return snapshot.clone();
        }
        let mut secrets = resolve();
        if let Some((_, before)) = kept.as_ref() {
            for old in before.secrets.iter() {
                if !secrets.contains(old) {
                    secrets.push(old.clone());
                }
            }
        }
        let snapshot = Snapshot {
            redaction: Arc::new(Redaction::new(secrets.iter().cloned())),
            secrets: secrets.into(),
        };
        *kept = Some((generation, snapshot.clone()));
        snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_generation_reads_again_and_keeps_what_was_read_before() {
        let resolved = Resolved::default();
        let first = resolved.at(1, || vec![Secret::new("old-value-1".into())]);
        assert!(first.redaction.found_in_text("x old-value-1 y"));
        // The same generation reads nothing.
        let same = resolved.at(1, || panic!("read again at the same generation"));
        assert_eq!(same.secrets.len(), 1);
        let rotated = resolved.at(2, || vec![Secret::new("new-value-2".into())]);
        assert!(rotated.redaction.found_in_text("new-value-2"));
        assert!(rotated.redaction.found_in_text("old-value-1"));
        assert_eq!(rotated.secrets.len(), 2);
    }
}
