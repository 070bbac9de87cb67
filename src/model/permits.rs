//! What a caller may call as far as its bearer token goes. Search, describe, skills, scripts
//! and direct mode all filter by the same [`Permits`], so none shows what another hides.

/// A narrowing of what a caller may call: a bearer token's `--allow` patterns, or in tests any
/// predicate over addresses.
pub trait Narrowing {
    fn allows(&self, address: &str) -> bool;
}

impl<F: Fn(&str) -> bool> Narrowing for F {
    fn allows(&self, address: &str) -> bool {
        self(address)
    }
}

/// Everything, or only what one narrowing allows; cheap to copy down every surface, and free
/// to cross an `.await` in a handler that must be `Send`.
#[derive(Clone, Copy, Default)]
pub struct Permits<'a>(Option<&'a (dyn Narrowing + Sync)>);

impl<'a> Permits<'a> {
    /// A caller narrowed by nothing, who sees what the user sees.
    pub const ALL: Permits<'static> = Permits(None);

    pub fn only(narrowing: &'a (dyn Narrowing + Sync)) -> Self {
        Self(Some(narrowing))
    }

    /// Whether anything is narrowed: a narrowed caller is not even told of a source it may
    /// call nothing of, where everyone else sees every source of the config.
    pub fn narrows(self) -> bool {
        self.0.is_some()
    }

    pub fn allows(self, address: &str) -> bool {
        self.0.is_none_or(|narrowing| narrowing.allows(address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_allows_everything_and_only_what_its_narrowing_allows() {
        assert!(!Permits::ALL.narrows());
        assert!(Permits::ALL.allows("any.thing"));
        let chat = |address: &str| address.starts_with("chat.");
        let only_chat = Permits::only(&chat);
        assert!(only_chat.narrows());
        assert!(only_chat.allows("chat.post"));
        assert!(!only_chat.allows("mail.send"));
    }
}
