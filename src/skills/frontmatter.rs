//! Reading one `SKILL.md` (the Agent Skills format): YAML frontmatter between `---` lines with
//! a `name` (lowercase letters, digits and single hyphens, at most 64 characters, the same as
//! its folder's name) and a `description` (at most 1,024 characters), then the instructions.
//! Each mistake is reported with its line and what to write instead.

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

/// The longest name and description the Agent Skills format allows.
const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1024;

/// What a `SKILL.md` says about its skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    pub name: String,
    pub description: String,
    /// The instructions after the frontmatter.
    pub body: String,
}

/// A mistake in a `SKILL.md`: the line (1-based) it is on, what is wrong, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mistake {
    pub line: usize,
    pub message: String,
    pub fix: String,
}

fn mistake(line: usize, message: impl Into<String>, fix: impl Into<String>) -> Mistake {
    Mistake {
        line,
        message: message.into(),
        fix: fix.into(),
    }
}

/// Reads `text`, the `SKILL.md` of the folder named `folder`.
pub fn parse(text: &str, folder: &str) -> Result<Frontmatter, Mistake> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(mistake(
            1,
            "SKILL.md does not start with YAML frontmatter",
            "make the first line `---`, then `name: …` and `description: …`, then a closing `---`",
        ));
    }
    let mut yaml = String::new();
    let mut closed_at = None;
    for (i, line) in lines.by_ref().enumerate() {
        if line.trim_end() == "---" {
            closed_at = Some(i + 2);
            break;
        }
        yaml.push_str(line);
    }
    let Some(closed_at) = closed_at else {
        return Err(mistake(
            1,
            "the frontmatter opened on line 1 is never closed",
            "add a line `---` after the description, before the instructions",
        ));
    };
    let body: String = lines.collect();
    let fields = fields(&yaml)?;
    let field = |key: &str| fields.iter().find(|(k, _, _)| k == key);
    let (name, name_line) = match field("name") {
        Some((_, Some(value), line)) => (value.trim().to_string(), *line),
        Some((_, None, line)) => {
            return Err(mistake(
                *line,
                "`name` is not text",
                format!("write `name: {folder}`"),
            ));
        }
        None => {
            return Err(mistake(
                closed_at,
                "the frontmatter has no `name`",
                format!("add `name: {folder}` (the folder's name)"),
            ));
        }
    };
    if let Some(problem) = name_problem(&name) {
        return Err(mistake(
            name_line,
            format!("the name `{name}` {problem}"),
            "use lowercase letters, digits and single hyphens, e.g. `pdf-forms`",
        ));
    }
    if name != folder {
        return Err(mistake(
            name_line,
            format!("the name `{name}` is not its folder's name `{folder}`"),
            format!("rename the folder to `{name}` or write `name: {folder}`"),
        ));
    }
    let description = match field("description") {
        Some((_, Some(value), line)) => {
            let value = value.trim().to_string();
            if value.is_empty() {
                return Err(mistake(
                    *line,
                    "the description is empty",
                    "say what the skill does and when to use it",
                ));
            }
            if value.chars().count() > MAX_DESCRIPTION {
                return Err(mistake(
                    *line,
                    format!(
                        "the description is {} characters long",
                        value.chars().count()
                    ),
                    format!(
                        "shorten it to at most {MAX_DESCRIPTION}; the details belong in the instructions"
                    ),
                ));
            }
            value
        }
        Some((_, None, line)) => {
            return Err(mistake(
                *line,
                "`description` is not text",
                "write `description: what it does and when to use it`",
            ));
        }
        None => {
            return Err(mistake(
                closed_at,
                "the frontmatter has no `description`",
                "add `description: what the skill does and when to use it`",
            ));
        }
    };
    Ok(Frontmatter {
        name,
        description,
        body,
    })
}

/// The frontmatter's top-level keys with their text values (`None` when a value is not a
/// scalar) and lines in the file (the frontmatter starts on line 2).
fn fields(yaml: &str) -> Result<Vec<(String, Option<String>, usize)>, Mistake> {
    let documents = MarkedYaml::load_from_str(yaml).map_err(|error| {
        mistake(
            error.marker().line() + 1,
            format!("the frontmatter is not valid YAML: {}", error.info()),
            "quote a value that holds `: ` or starts with a special character, e.g. description: \"…\"",
        )
    })?;
    let Some(document) = documents.into_iter().next() else {
        return Ok(Vec::new());
    };
    let YamlData::Mapping(map) = &document.data else {
        return Err(mistake(
            2,
            "the frontmatter is not a list of `key: value` lines",
            "write `name: …` and `description: …` on lines of their own",
        ));
    };
    Ok(map
        .iter()
        .filter_map(|(key, value)| {
            let YamlData::Value(Scalar::String(key_text)) = &key.data else {
                return None;
            };
            let text = match &value.data {
                YamlData::Value(Scalar::String(text)) => Some(text.to_string()),
                YamlData::Value(Scalar::Integer(n)) => Some(n.to_string()),
                YamlData::Value(Scalar::Boolean(b)) => Some(b.to_string()),
                _ => None,
            };
            // saphyr counts lines from 1 within the frontmatter, which starts on line 2.
            Some((key_text.to_string(), text, key.span.start.line() + 1))
        })
        .collect())
}

/// Why `name` is not a valid skill name, if it is not.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_NAME {
        Some("is longer than 64 characters")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        Some("has characters other than lowercase letters, digits and hyphens")
    } else if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        Some("starts or ends with a hyphen, or has two in a row")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_has_its_name_description_and_instructions() {
        let text = "---\nname: pdf-forms\ndescription: Fill in PDF forms. Use when a PDF has fields.\nlicense: MIT\n---\n# PDF forms\nStep one.\n";
        let skill = parse(text, "pdf-forms").expect("valid");
        assert_eq!(skill.name, "pdf-forms");
        assert_eq!(
            skill.description,
            "Fill in PDF forms. Use when a PDF has fields."
        );
        assert_eq!(skill.body, "# PDF forms\nStep one.\n");
    }

    #[test]
    fn a_folded_description_reads_as_one_text() {
        let text = "---\nname: a\ndescription: >\n  Two lines\n  of text.\n---\nbody\n";
        assert_eq!(
            parse(text, "a").expect("valid").description,
            "Two lines of text."
        );
    }

    #[test]
    fn each_mistake_names_its_line_and_the_fix() {
        let cases = [
            (
                "# no frontmatter\n",
                1,
                "does not start with YAML frontmatter",
            ),
            ("---\nname: a\ndescription: d\n", 1, "never closed"),
            ("---\ndescription: d\n---\n", 3, "has no `name`"),
            ("---\nname: a\n---\n", 3, "has no `description`"),
            (
                "---\nname: Big_Name\ndescription: d\n---\n",
                2,
                "lowercase letters",
            ),
            (
                "---\nname: other\ndescription: d\n---\n",
                2,
                "not its folder's name `a`",
            ),
            (
                "---\nname: a\ndescription: \"unclosed\n---\n",
                3,
                "not valid YAML",
            ),
            (
                "---\nname: a\n\ndescription: ''\n---\n",
                4,
                "description is empty",
            ),
        ];
        for (text, line, message) in cases {
            let error = parse(text, "a").expect_err(text);
            assert_eq!(error.line, line, "{text}: {error:?}");
            assert!(error.message.contains(message), "{text}: {error:?}");
            assert!(!error.fix.is_empty(), "{text}");
        }
    }
}
