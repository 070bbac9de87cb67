//! The arguments of the three tools, read from the client's JSON by hand so that every mistake
//! (a wrong type, a missing or unknown field, `code` and `resume` together) comes back as a tool
//! error that names the field and says what to send instead.

use serde_json::{Map, Value};

use super::fields::{self, Field, Kind};

/// A mistake in the arguments, worded for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgsError(pub String);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchArgs {
    pub query: String,
    pub namespace: Option<String>,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeArgs {
    pub targets: Vec<String>,
    pub budget: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecuteArgs {
    Run {
        code: String,
        output_budget_bytes: Option<u64>,
    },
    Resume {
        run_id: String,
    },
}

impl SearchArgs {
    pub fn parse(arguments: &Map<String, Value>) -> Result<SearchArgs, ArgsError> {
        let args = Fields::new("search", arguments, fields::SEARCH)?;
        let query = args.string("query")?.ok_or_else(|| {
            ArgsError(
                "search needs `query`: what you want to do, e.g. {\"query\": \"create an issue\"}"
                    .into(),
            )
        })?;
        let limit = args.whole("limit")?;
        Ok(SearchArgs {
            query,
            namespace: args.string("namespace")?,
            limit: limit as usize,
        })
    }
}

impl DescribeArgs {
    pub fn parse(arguments: &Map<String, Value>) -> Result<DescribeArgs, ArgsError> {
        let args = Fields::new("describe", arguments, fields::DESCRIBE)?;
        let targets = match args.get("targets") {
            None => {
                return Err(ArgsError(
                    "describe needs `targets`: a list of 1 to 10 addresses, namespaces or type names, e.g. {\"targets\": [\"github.createIssue\"]}".into(),
                ));
            }
            // A lone string is an easy slip; take it as a list of one.
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ArgsError(format!(
                        "`targets` must hold strings, got {}",
                        kind(other)
                    ))),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(ArgsError(format!(
                    "`targets` must be a list of strings, got {}",
                    kind(other)
                )));
            }
        };
        if let Some(Kind::Texts { min, max }) = args.kind("targets")
            && !(min..=max).contains(&targets.len())
        {
            return Err(ArgsError(format!(
                "`targets` must hold {min} to {max} items, got {}; split larger requests over several calls",
                targets.len()
            )));
        }
        let budget = args.whole("budget")?;
        Ok(DescribeArgs {
            targets,
            budget: budget as usize,
        })
    }
}

impl ExecuteArgs {
    /// `max_code_bytes` is the configured code limit; longer code is refused here, before a run
    /// is recorded.
    pub fn parse(
        arguments: &Map<String, Value>,
        max_code_bytes: u64,
    ) -> Result<ExecuteArgs, ArgsError> {
        let args = Fields::new("execute", arguments, fields::EXECUTE)?;
        let code = args.string("code")?;
        let resume = args.string("resume")?;
        let budget = args.integer("outputBudgetBytes")?;
        match (code, resume) {
            (Some(_), Some(_)) => Err(ArgsError(
                "send exactly one of `code` (a new run) or `resume` (continue a waiting run), not both".into(),
            )),
            (None, None) => Err(ArgsError(
                "execute needs `code`: the body of an async function, e.g. {\"code\": \"return await github.listIssues({})\"}; or `resume` with a runId".into(),
            )),
            (Some(code), None) if code.len() as u64 > max_code_bytes => Err(ArgsError(format!(
                "`code` is {} bytes; the limit is {max_code_bytes}. Send a shorter script: let it fetch data through the tools instead of pasting data into it",
                code.len()
            ))),
            (Some(code), None) => Ok(ExecuteArgs::Run { code, output_budget_bytes: budget }),
            (None, Some(_)) if budget.is_some() => {
                Err(ArgsError("`outputBudgetBytes` goes with `code`; a resumed run keeps the budget it started with".into()))
            }
            (None, Some(run_id)) => Ok(ExecuteArgs::Resume { run_id }),
        }
    }
}

/// The arguments object of one tool, checked against its table (`fields`) for unknown fields.
struct Fields<'a> {
    tool: &'static str,
    map: &'a Map<String, Value>,
    table: &'static [Field],
}

impl<'a> Fields<'a> {
    fn new(
        tool: &'static str,
        map: &'a Map<String, Value>,
        table: &'static [Field],
    ) -> Result<Fields<'a>, ArgsError> {
        if let Some(unknown) = map.keys().find(|k| fields::field(table, k).is_none()) {
            let known = table
                .iter()
                .map(|f| format!("`{}`", f.name))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(ArgsError(format!(
                "{tool} has no argument `{unknown}`; it takes {known}"
            )));
        }
        Ok(Fields { tool, map, table })
    }

    /// What the table says field `name` holds.
    fn kind(&self, name: &str) -> Option<Kind> {
        fields::field(self.table, name).map(|f| f.kind)
    }

    /// A whole number field, or its default when absent.
    fn whole(&self, name: &str) -> Result<u64, ArgsError> {
        let default = match self.kind(name) {
            Some(Kind::Whole { default, .. }) => default,
            _ => None,
        };
        Ok(self.integer(name)?.or(default).unwrap_or(0))
    }

    /// The field, with JSON `null` read as absent.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn string(&self, name: &str) -> Result<Option<String>, ArgsError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(ArgsError(format!(
                "{}: `{name}` must be a string, got {}",
                self.tool,
                kind(other)
            ))),
        }
    }

    /// A whole number field within the table's bounds, if present.
    fn integer(&self, name: &str) -> Result<Option<u64>, ArgsError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let (min, max) = match self.kind(name) {
            Some(Kind::Whole { min, max, .. }) => (min, max),
            _ => (0, u64::MAX),
        };
        match value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }) {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(n) => Err(ArgsError(format!(
                "{}: `{name}` must be from {min} to {max}, got {n}",
                self.tool
            ))),
            None => Err(ArgsError(format!(
                "{}: `{name}` must be a whole number from {min} to {max}, got {}",
                self.tool,
                kind(value)
            ))),
        }
    }
}

/// A short description of a JSON value for error messages: its type, and the value when short.
fn kind(value: &Value) -> String {
    let shown = value.to_string();
    let type_name = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    if shown.chars().count() <= 40 {
        format!("{type_name} ({shown})")
    } else {
        type_name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn search_reads_defaults_and_rejects_wrong_types() {
        let args = SearchArgs::parse(&map(json!({ "query": "echo" }))).unwrap();
        assert_eq!(
            args,
            SearchArgs {
                query: "echo".into(),
                namespace: None,
                limit: 10
            }
        );
        let err = SearchArgs::parse(&map(json!({ "query": 5 })))
            .unwrap_err()
            .0;
        assert_eq!(err, "search: `query` must be a string, got a number (5)");
        let err = SearchArgs::parse(&map(json!({}))).unwrap_err().0;
        assert!(err.starts_with("search needs `query`"), "{err}");
        let err = SearchArgs::parse(&map(json!({ "query": "x", "limit": 500 })))
            .unwrap_err()
            .0;
        assert_eq!(err, "search: `limit` must be from 1 to 50, got 500");
        let err = SearchArgs::parse(&map(json!({ "q": "x" }))).unwrap_err().0;
        assert_eq!(
            err,
            "search has no argument `q`; it takes `query`, `namespace`, `limit`"
        );
    }

    #[test]
    fn describe_takes_one_to_ten_targets() {
        let args = DescribeArgs::parse(&map(json!({ "targets": "a.b" }))).unwrap();
        assert_eq!(args.targets, ["a.b"]);
        assert_eq!(args.budget, 2_500);
        let err = DescribeArgs::parse(&map(json!({ "targets": [] })))
            .unwrap_err()
            .0;
        assert!(err.contains("1 to 10 items, got 0"), "{err}");
        let eleven: Vec<String> = (0..11).map(|i| format!("a.t{i}")).collect();
        let err = DescribeArgs::parse(&map(json!({ "targets": eleven })))
            .unwrap_err()
            .0;
        assert!(err.contains("got 11"), "{err}");
        let err = DescribeArgs::parse(&map(json!({ "targets": [1] })))
            .unwrap_err()
            .0;
        assert_eq!(err, "`targets` must hold strings, got a number (1)");
    }

    #[test]
    fn execute_takes_exactly_one_of_code_or_resume() {
        let run = ExecuteArgs::parse(
            &map(json!({ "code": "return 1", "outputBudgetBytes": 2048 })),
            100,
        )
        .unwrap();
        assert_eq!(
            run,
            ExecuteArgs::Run {
                code: "return 1".into(),
                output_budget_bytes: Some(2048)
            }
        );
        let both = ExecuteArgs::parse(&map(json!({ "code": "1", "resume": "run_x" })), 100)
            .unwrap_err()
            .0;
        assert!(both.contains("exactly one of `code`"), "{both}");
        let neither = ExecuteArgs::parse(&map(json!({})), 100).unwrap_err().0;
        assert!(neither.starts_with("execute needs `code`"), "{neither}");
        let long = ExecuteArgs::parse(&map(json!({ "code": "x".repeat(101) })), 100)
            .unwrap_err()
            .0;
        assert!(
            long.starts_with("`code` is 101 bytes; the limit is 100"),
            "{long}"
        );
        let resume =
            ExecuteArgs::parse(&map(json!({ "resume": "run_x", "code": null })), 100).unwrap();
        assert_eq!(
            resume,
            ExecuteArgs::Resume {
                run_id: "run_x".into()
            }
        );
    }
}
