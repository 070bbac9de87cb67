//! Who reads a hint. The same situation needs other words for an agent, which calls the hub's
//! tools (`search` with `namespace`, `execute` with `{ "resume": runId }`), and for a person at
//! the command line, who types flags (`--namespace`) and commands (`capabilities exec --resume
//! run_…`), with the `--config FILE` they used carried into each command so it acts on the same
//! config.

/// The reader of a hint, an error's next step or a notice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Reader {
    /// A model calling the hub's tools: tool and argument names.
    #[default]
    Agent,
    /// A person at a terminal: flags and whole commands.
    Cli {
        /// The `--config FILE` the command was given, repeated in every command suggested.
        config: Option<String>,
    },
}

impl Reader {
    /// A person at the command line, who gave `config` with `--config` (if they did).
    pub fn cli(config: Option<&std::path::Path>) -> Reader {
        Reader::Cli {
            config: config.map(|p| p.display().to_string()),
        }
    }

    pub fn is_agent(&self) -> bool {
        matches!(self, Reader::Agent)
    }

    /// `capabilities [--config FILE] ARGS`: a command to type, on the config this one used.
    pub fn command(&self, args: &str) -> String {
        match self {
            Reader::Cli {
                config: Some(config),
            } => format!("capabilities --config {} {args}", shell_word(config)),
            _ => format!("capabilities {args}"),
        }
    }

    /// How to narrow a search to one source: the `namespace` argument, or `--namespace NAME`.
    pub fn namespace_option(&self) -> &'static str {
        match self {
            Reader::Agent => "pass namespace",
            Reader::Cli { .. } => "pass --namespace NAME",
        }
    }

    /// How to see more results: the `limit` argument, or `--limit N`.
    pub fn limit_option(&self) -> &'static str {
        match self {
            Reader::Agent => "raise limit",
            Reader::Cli { .. } => "raise --limit",
        }
    }

    /// How to find tools: the `search` tool, or the `capabilities search` command.
    pub fn search(&self) -> String {
        match self {
            Reader::Agent => "search".to_string(),
            Reader::Cli { .. } => format!("`{}`", self.command("search WORDS")),
        }
    }

    /// How to read a tool's whole types: the `describe` tool, or `capabilities describe`.
    pub fn describe(&self, target: &str) -> String {
        match self {
            Reader::Agent => "describe".to_string(),
            Reader::Cli { .. } => format!("`{}`", self.command(&format!("describe {target}"))),
        }
    }

    /// How to continue a paused run: `execute({ "resume": … })`, or `exec --resume`.
    pub fn resume(&self, run_id: &str, profile: Option<&str>) -> String {
        match self {
            Reader::Agent => format!("execute with {{ \"resume\": \"{run_id}\" }}"),
            Reader::Cli { .. } => {
                let profile = profile
                    .map(|p| format!(" --profile {p}"))
                    .unwrap_or_default();
                format!(
                    "`{}`",
                    self.command(&format!("exec --resume {run_id}{profile}"))
                )
            }
        }
    }
}

/// `text` as one shell word: quoted when it holds anything a shell would split or expand.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,=@".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_carry_the_config_the_person_used() {
        let plain = Reader::cli(None);
        assert_eq!(plain.command("source list"), "capabilities source list");
        let other = Reader::cli(Some(std::path::Path::new("/tmp/my config.toml")));
        assert_eq!(
            other.command("source list"),
            "capabilities --config '/tmp/my config.toml' source list"
        );
        assert_eq!(
            other.resume("run_abc", Some("work")),
            "`capabilities --config '/tmp/my config.toml' exec --resume run_abc --profile work`"
        );
    }

    #[test]
    fn agents_get_tool_words_and_people_get_flags() {
        assert_eq!(Reader::Agent.namespace_option(), "pass namespace");
        assert_eq!(
            Reader::cli(None).namespace_option(),
            "pass --namespace NAME"
        );
        assert_eq!(
            Reader::Agent.resume("run_x", None),
            "execute with { \"resume\": \"run_x\" }"
        );
        assert_eq!(
            Reader::cli(None).resume("run_x", None),
            "`capabilities exec --resume run_x`"
        );
    }
}
