//! The `nextRequest` of a stored result: a script that, sent to `execute` exactly as it is,
//! starts reading the result without repeating anything that produced it.

use crate::sandbox::Collection;

/// The script that reads the first page of the largest collection (most rows; ties by path):
/// `return await hub.read("<ref>", { path: "/messages" });`. It reads whole rows: the page shows
/// the fields, and the reader narrows them if a row does not fit.
///
/// With no collection that has rows, paging has nothing to offer, and returning
/// `hub.get(ref)` would only be stored again (the value is over the budget; that is why it was
/// stored). The script then returns what the value is made of instead: an object's keys, or
/// the start of a string (100 characters are at most 600 bytes of JSON, within the smallest
/// budget), with a comment on reading on.
///
/// Strings are quoted as JSON, which is a JavaScript string literal whatever they hold.
pub(crate) fn next_request_code(result_ref: &str, collections: &[Collection]) -> String {
    let reference = quote(result_ref);
    let largest = collections
        .iter()
        .filter(|collection| collection.rows > 0)
        .min_by(|a, b| b.rows.cmp(&a.rows).then_with(|| a.path.cmp(&b.path)));
    match largest {
        Some(collection) => format!(
            "return await hub.read({reference}, {{ path: {} }});",
            quote(&collection.path)
        ),
        None => get_code(&reference),
    }
}

/// The script for a value with no rows to page, `reference` already quoted.
pub(super) fn get_code(reference: &str) -> String {
    format!(
        "const value = await hub.get({reference});\n\
         // Return one part at a time: value[key], or value.slice(start, end) of a string.\n\
         return typeof value === \"string\" ? value.slice(0, 100) : Object.keys(value).slice(0, 100);"
    )
}

pub(super) fn quote(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collection(path: &str, rows: u64) -> Collection {
        Collection {
            path: path.to_string(),
            rows,
            fields: vec!["id".to_string()],
            fields_complete: true,
        }
    }

    #[test]
    fn reads_the_largest_collection_whole() {
        let code = next_request_code(
            "res_abc",
            &[
                collection("/small", 2),
                collection("/messages", 40),
                collection("/alsoForty", 40),
            ],
        );
        assert_eq!(
            code,
            r#"return await hub.read("res_abc", { path: "/alsoForty" });"#
        );
    }

    #[test]
    fn root_collection_and_hostile_strings_are_quoted() {
        let code = next_request_code(
            "r\"ef\\\u{2028}",
            &[collection("", 3), collection("/a\"b~1c", 1)],
        );
        assert_eq!(
            code,
            "return await hub.read(\"r\\\"ef\\\\\u{2028}\", { path: \"\" });"
        );
        let code = next_request_code("r", &[collection("/a\"b~1c", 1)]);
        assert_eq!(code, r#"return await hub.read("r", { path: "/a\"b~1c" });"#);
    }

    #[test]
    fn without_rows_it_returns_the_parts() {
        let code = next_request_code("res_1", &[collection("/empty", 0)]);
        assert!(
            code.starts_with("const value = await hub.get(\"res_1\");\n"),
            "{code}"
        );
        assert!(code.contains("Object.keys(value)"), "{code}");
        assert!(code.contains("value.slice(0, 100)"), "{code}");
        assert_eq!(next_request_code("res_1", &[]), code);
    }
}
