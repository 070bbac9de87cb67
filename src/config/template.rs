//! `${secret:NAME}` and `${env:VAR}` references inside `env` and `headers` values: parsing them
//! when the config loads (so a typo is an error with a position), and resolving them only when a
//! connection opens.

use std::fmt;

/// One piece of a value: literal text or a reference to resolve later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Literal(String),
    Secret(String),
    Env(String),
}

/// A value as written in the config, split into literal text and references. It is kept as
/// written (so `source add` stores references, never their values) until a connection opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    raw: String,
    parts: Vec<Part>,
}

/// Why a value could not be parsed; `offset` is the byte offset inside the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub offset: usize,
    pub message: String,
}

impl Template {
    pub fn parse(raw: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = raw;
        let mut offset = 0;
        while let Some(start) = rest.find("${") {
            literal.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(TemplateError {
                    offset: offset + start,
                    message: "`${` opens a reference that is never closed with `}`".into(),
                });
            };
            let body = &after[..end];
            let (kind, name) = body.split_once(':').unwrap_or((body, ""));
            let valid_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            let part = match kind {
                "secret" if valid_name => Part::Secret(name.to_string()),
                "env" if valid_name => Part::Env(name.to_string()),
                "secret" | "env" => {
                    return Err(TemplateError {
                        offset: offset + start,
                        message: format!(
                            "`${{{body}}}` needs a name of letters, digits, `_`, `-` or `.` after `{kind}:`"
                        ),
                    });
                }
                _ => {
                    return Err(TemplateError {
                        offset: offset + start,
                        message: format!(
                            "`${{{body}}}` is not a reference this config understands; write `${{secret:NAME}}` for a stored credential or `${{env:VAR}}` for an environment variable"
                        ),
                    });
                }
            };
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(part);
            let consumed = start + 2 + end + 1;
            offset += consumed;
            rest = &rest[consumed..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Template {
            raw: raw.to_string(),
            parts,
        })
    }

    /// The value exactly as written in the config.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Names of the secrets this value references.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Secret(name) => Some(name.as_str()),
            _ => None,
        })
    }

    /// Resolves every reference with `lookup`; the first failure is returned as is.
    pub fn resolve<E>(
        &self,
        mut lookup: impl FnMut(&Part) -> Result<String, E>,
    ) -> Result<String, E> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                reference => out.push_str(&lookup(reference)?),
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_literals_and_references() {
        let t = Template::parse("Bearer ${secret:github-personal} for ${env:USER}!").unwrap();
        assert_eq!(
            t.parts(),
            &[
                Part::Literal("Bearer ".into()),
                Part::Secret("github-personal".into()),
                Part::Literal(" for ".into()),
                Part::Env("USER".into()),
                Part::Literal("!".into()),
            ]
        );
        assert_eq!(t.secrets().collect::<Vec<_>>(), vec!["github-personal"]);
    }

    #[test]
    fn plain_values_stay_literal() {
        let t = Template::parse("no references $HOME").unwrap();
        assert_eq!(t.parts(), &[Part::Literal("no references $HOME".into())]);
    }

    #[test]
    fn errors_point_at_the_reference() {
        let e = Template::parse("abc ${sekret:x}").unwrap_err();
        assert_eq!(e.offset, 4);
        assert!(e.message.contains("${secret:NAME}"));
        let e = Template::parse("${env:}").unwrap_err();
        assert!(e.message.contains("needs a name"));
        let e = Template::parse("x ${secret:abc").unwrap_err();
        assert!(e.message.contains("never closed"));
    }

    #[test]
    fn resolves_with_a_lookup() {
        let t = Template::parse("a${env:X}b").unwrap();
        let v: Result<String, ()> = t.resolve(|p| match p {
            Part::Env(n) if n == "X" => Ok("1".into()),
            _ => Err(()),
        });
        assert_eq!(v.unwrap(), "a1b");
    }
}
