//! Where the config file and the data directory live: the platform's directories (via
//! `directories`), or both under `$CAPABILITIES_HOME` when it is set.

use std::path::{Path, PathBuf};

use crate::env_vars;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub config_file: PathBuf,
    pub data_dir: PathBuf,
}

impl Paths {
    /// `explicit_config` is the `--config` flag; it only moves the config file, not the data.
    pub fn discover(explicit_config: Option<&Path>) -> anyhow::Result<Paths> {
        let (default_config, data_dir) = match std::env::var_os(env_vars::CAPABILITIES_HOME) {
            Some(home) if !home.is_empty() => {
                let home = PathBuf::from(home);
                (home.join("config.toml"), home.join("data"))
            }
            _ => {
                let dirs =
                    directories::ProjectDirs::from("", "", "capabilities").ok_or_else(|| {
                        anyhow::anyhow!(
                            "cannot find a home directory for the config; set {} to a directory",
                            env_vars::CAPABILITIES_HOME
                        )
                    })?;
                (
                    dirs.config_dir().join("config.toml"),
                    dirs.data_dir().to_path_buf(),
                )
            }
        };
        let config_file = match explicit_config {
            Some(path) => path.to_path_buf(),
            None => match std::env::var_os(env_vars::CAPABILITIES_CONFIG) {
                Some(path) if !path.is_empty() => PathBuf::from(path),
                _ => default_config,
            },
        };
        Ok(Paths {
            config_file,
            data_dir,
        })
    }

    /// The SQLite state store: runs and their call journals.
    pub fn state_database(&self) -> PathBuf {
        self.data_dir.join("state.sqlite")
    }

    /// Where cached tool listings are kept, one JSON file per source.
    pub fn catalog_cache_dir(&self) -> PathBuf {
        self.data_dir.join("catalog")
    }
}
