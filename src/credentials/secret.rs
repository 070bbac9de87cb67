//! [`Secret`]: a credential's value in memory. It is wiped when dropped and never prints itself,
//! so a stray `{:?}` or `{}` in a log line or an error shows `•••`, not the value.

use std::fmt;

use zeroize::Zeroizing;

/// A secret value. Read it with [`Secret::expose`] only where it leaves for its one destination
/// (a store, a header, a child's environment).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(Zeroizing::new(value))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret::new(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("•••")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("•••")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_its_value() {
        let secret = Secret::new("hunter2-canary".into());
        assert_eq!(format!("{secret}"), "•••");
        assert_eq!(format!("{secret:?}"), "•••");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(•••)");
        assert_eq!(secret.expose(), "hunter2-canary");
    }
}
