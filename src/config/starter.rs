//! The commented files `capabilities init` writes and prints: a starter config, and the full
//! reference kept in `config-examples/` (a test validates both).

/// What `capabilities init` writes: short, commented, valid.
pub const STARTER: &str = include_str!("../../config-examples/starter.toml");

/// Every key with a comment; `capabilities init --reference` prints it.
pub const REFERENCE: &str = include_str!("../../config-examples/reference.toml");

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn starter_and_reference_are_valid() {
        let starter = super::super::parse(Path::new("starter.toml"), super::STARTER).unwrap();
        assert!(starter.sources.is_empty());
        let reference = super::super::parse(Path::new("reference.toml"), super::REFERENCE).unwrap();
        assert_eq!(reference.sources.len(), 4);
        let shop = reference.source("shop").unwrap();
        assert!(matches!(
            shop.transport,
            crate::config::Transport::OpenApi { .. }
        ));
        assert_eq!(shop.default_connection().auth.len(), 1);
        let github = reference.source("github").unwrap();
        assert_eq!(github.default_connection().name, "personal");
        assert_eq!(github.connections.len(), 2);
        assert!(!reference.source("time").unwrap().enabled);
        assert_eq!(
            reference.profiles["work"].sources,
            vec!["github", "everything"]
        );
    }
}
