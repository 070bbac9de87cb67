use super::*;
use proptest::prelude::*;

fn written(page: &Value) -> String {
    serde_json::to_string(page).unwrap_or_default()
}

fn returned(page: &Value) -> u64 {
    page["returned"].as_u64().unwrap_or(u64::MAX)
}

/// The page that would hold rows `offset..offset + count` (projected already), written by
/// serde_json: the oracle the code under test is checked against.
fn oracle(rows: &[Value], offset: usize, count: usize) -> String {
    let next = offset + count;
    let complete = next == rows.len();
    written(&json!({
        "items": rows[offset..next],
        "offset": offset,
        "total": rows.len(),
        "returned": count,
        "nextOffset": if complete { Value::Null } else { json!(next) },
        "complete": complete,
    }))
}

fn error(result: Result<Value, PageError>) -> PageError {
    match result {
        Ok(page) => panic!("expected an error, got {page}"),
        Err(error) => error,
    }
}

/// Ten rows, each a string of 300 `x` (302 bytes as JSON).
fn strings() -> Value {
    json!({ "rows": vec!["x".repeat(300); 10] })
}

#[test]
fn fills_pages_exactly_to_the_budget() {
    // Offset 0 of 10, 3 rows, next 3: 69 bytes of envelope text, 5 digits, "false", three
    // rows of 302 bytes and two commas: 79 + 906 + 2 = 987.
    let value = strings();
    let page987 = page(&value, "/rows", None, 0, 987).unwrap_or_default();
    assert_eq!(returned(&page987), 3);
    assert_eq!(written(&page987).len(), 987);
    let page986 = page(&value, "/rows", None, 0, 986).unwrap_or_default();
    assert_eq!(returned(&page986), 2);
}

#[test]
fn pages_walk_the_collection() {
    let value = strings();
    let mut offset = 0;
    let mut sizes = Vec::new();
    loop {
        let page = page(&value, "/rows", None, offset, 1_024).unwrap_or_default();
        sizes.push(returned(&page));
        assert_eq!(page["offset"], json!(offset));
        assert_eq!(page["total"], json!(10));
        if page["complete"] == json!(true) {
            assert_eq!(page["nextOffset"], Value::Null);
            break;
        }
        offset = page["nextOffset"].as_u64().unwrap_or(u64::MAX);
    }
    assert_eq!(sizes, [3, 3, 3, 1]);
}

#[test]
fn keys_come_in_the_spec_order() {
    let value = json!([1, 2]);
    let text = written(&page(&value, "", None, 0, 1_024).unwrap_or_default());
    assert_eq!(
        text,
        r#"{"items":[1,2],"offset":0,"total":2,"returned":2,"nextOffset":null,"complete":true}"#
    );
}

#[test]
fn empty_collection_and_offset_at_the_end_are_empty_complete_pages() {
    let value = json!({ "none": [], "some": [1, 2, 3] });
    let expected = |total: u64| {
        json!({
            "items": [], "offset": total, "total": total, "returned": 0,
            "nextOffset": null, "complete": true
        })
    };
    assert_eq!(page(&value, "/none", None, 0, 1_024), Ok(expected(0)));
    assert_eq!(page(&value, "/some", None, 3, 1_024), Ok(expected(3)));
}

#[test]
fn offset_past_the_end_is_refused() {
    let value = json!({ "some": [1, 2, 3] });
    let failure = error(page(&value, "/some", None, 4, 1_024));
    assert_eq!(
        failure,
        PageError::OffsetPastEnd {
            path: "/some".to_string(),
            offset: 4,
            total: 3
        }
    );
    let message = failure.to_string();
    assert!(
        message.contains("offset 4 is past the end of `/some`, which has 3 rows"),
        "{message}"
    );
    assert_eq!(failure.code(), ErrorCode::InvalidArguments);
    let huge = error(page(&value, "/some", None, u64::MAX, 1_024));
    assert!(matches!(huge, PageError::OffsetPastEnd { .. }), "{huge}");
}

#[test]
fn a_path_that_is_not_a_pointer_says_so_and_lists_collections() {
    let value = json!({ "messages": [1, 2], "users": [1] });
    let failure = error(page(&value, "messages", None, 0, 1_024));
    let message = failure.to_string();
    assert!(matches!(failure, PageError::BadPointer { .. }), "{message}");
    assert!(
        message.starts_with("`messages` is not a JSON Pointer"),
        "{message}"
    );
    assert!(message.contains("like `/messages`"), "{message}");
    assert!(
        message.contains("Collections: `/messages` (2 rows), `/users` (1 row)"),
        "{message}"
    );
    let message = error(page(&value, "/a~2", None, 0, 1_024)).to_string();
    assert!(message.contains("`~` must be followed by 0"), "{message}");
}

#[test]
fn a_missing_path_says_what_is_there() {
    let value = json!({ "messages": [{ "id": 1 }], "meta": { "count": 1 } });
    let message = error(page(&value, "/mesages", None, 0, 1_024)).to_string();
    assert!(
        message.starts_with("`/mesages` is not in the stored result: the root is an object with no key `mesages` (did you mean `/messages`?)"),
        "{message}"
    );
    assert!(
        message.contains("Collections: `/messages` (1 row)"),
        "{message}"
    );
    let message = error(page(&value, "/messages/3/tags", None, 0, 1_024)).to_string();
    assert!(
        message.contains("`/messages` is an array of 1 row, with no row 3"),
        "{message}"
    );
    let message = error(page(&value, "/messages/first", None, 0, 1_024)).to_string();
    assert!(message.contains("`first` is not a row number"), "{message}");
    let message = error(page(&value, "/meta/count/x", None, 0, 1_024)).to_string();
    assert!(
        message.contains("`/meta/count` is a number, with nothing inside"),
        "{message}"
    );
}

#[test]
fn a_path_to_something_else_says_what_it_is() {
    let value = json!({ "meta": { "a": "SECRET-VALUE", "b": 2 }, "rows": [1] });
    let failure = error(page(&value, "/meta", None, 0, 1_024));
    let message = failure.to_string();
    assert!(
        message.starts_with(
            "`/meta` is an object with 2 keys (`a`, `b`), not an array: hub.read pages arrays. Collections: `/rows` (1 row)"
        ),
        "{message}"
    );
    assert!(!message.contains("SECRET"), "{message}");
    let message = error(page(&value, "/meta/a", None, 0, 1_024)).to_string();
    assert!(
        message.starts_with("`/meta/a` is a string of 12 bytes, not an array"),
        "{message}"
    );
    let message = error(page(&value, "", None, 0, 1_024)).to_string();
    assert!(
        message.starts_with("\"\" is an object with 2 keys (`meta`, `rows`), not an array"),
        "{message}"
    );
    let failure = CallFailure::from(failure);
    assert_eq!(failure.code, ErrorCode::InvalidArguments);
    assert!(
        failure
            .hint
            .as_deref()
            .is_some_and(|hint| hint.contains("stored.collections")),
        "{:?}",
        failure.hint
    );
}

#[test]
fn no_arrays_at_all_points_at_get() {
    let message = error(page(&json!({ "a": 1 }), "/a", None, 0, 1_024)).to_string();
    assert!(
        message.ends_with("The stored result has no arrays to page; read it with hub.get(ref)"),
        "{message}"
    );
}

fn people() -> Value {
    json!({ "people": [
        { "id": 1, "name": "Ann", "email": "ann@example.com" },
        { "id": 2, "name": "Bob" },
        { "email": "cy@example.com", "id": 3, "extra": [1, 2] }
    ] })
}

#[test]
fn fields_keep_the_listed_keys_in_order_and_sparse_ones_stay_absent() {
    let fields = ["email".to_string(), "id".to_string()];
    let page = page(&people(), "/people", Some(&fields), 0, 1_024).unwrap_or_default();
    let text = written(&page["items"]);
    assert_eq!(
        text,
        r#"[{"email":"ann@example.com","id":1},{"id":2},{"email":"cy@example.com","id":3}]"#
    );
    assert_eq!(page["complete"], json!(true));
}

#[test]
fn a_field_no_row_has_is_named() {
    let fields = ["id".to_string(), "nmae".to_string()];
    let failure = error(page(&people(), "/people", Some(&fields), 0, 1_024));
    let message = failure.to_string();
    assert_eq!(
        message,
        "no row of `/people` has the field `nmae` (did you mean `name`?); its rows have `id`, `name`, `email`, `extra`"
    );
    assert_eq!(failure.code(), ErrorCode::InvalidArguments);
}

#[test]
fn fields_on_rows_that_are_not_objects_are_refused() {
    let value = json!({ "mixed": [{ "id": 1 }, { "id": 2 }, "loose text", 4] });
    let fields = ["id".to_string()];
    let failure = error(page(&value, "/mixed", Some(&fields), 0, 1_024));
    assert_eq!(
        failure.to_string(),
        "row 2 of `/mixed` is a string of 10 bytes, and fields only select keys of object rows: leave fields out to read whole rows"
    );
    // Without fields the same rows page fine.
    let whole = page(&value, "/mixed", None, 0, 1_024).unwrap_or_default();
    assert_eq!(returned(&whole), 4);
}

#[test]
fn empty_and_repeated_field_lists_are_refused() {
    let none: [String; 0] = [];
    assert!(matches!(
        error(page(&people(), "/people", Some(&none), 0, 1_024)),
        PageError::NoFields { .. }
    ));
    let twice = ["id".to_string(), "id".to_string()];
    assert_eq!(
        error(page(&people(), "/people", Some(&twice), 0, 1_024)).to_string(),
        "fields lists `id` twice; list each key once"
    );
}

#[test]
fn a_row_too_large_says_its_size_and_what_is_large() {
    let value = json!({ "docs": [
        { "id": 1, "title": "short" },
        { "id": 2, "title": "t", "body": "b".repeat(2_000), "html": "h".repeat(1_500) }
    ] });
    // Offset 1 of 2, 1 row, complete: the envelope is 69 + 1 + 1 + 1 + "null" + "true" = 80
    // bytes; the row {"id":2,"title":"t","body":"bbb…","html":"hhh…"} is 2 + 6 + 1 + 11 + 1
    // + 2009 + 1 + 1509 = 3540.
    let failure = error(page(&value, "/docs", None, 1, 1_024));
    assert_eq!(failure.code(), ErrorCode::RowTooLarge);
    assert_eq!(
        failure.to_string(),
        "row 1 of `/docs` does not fit in one page: with the whole row the page would be 3620 bytes, over the output budget of 1024 bytes; its largest fields are `body` (2009 bytes), `html` (1509 bytes), `title` (11 bytes)"
    );
    let failure = CallFailure::from(failure);
    assert_eq!(failure.code, ErrorCode::RowTooLarge);
    assert_eq!(failure.hint.as_deref(), Some(ErrorCode::RowTooLarge.hint()));

    // A row that is one long string has no fields to pick: the hint does not offer any.
    let strings = json!(["s".repeat(2_000), "t"]);
    let failure = CallFailure::from(error(page(&strings, "", None, 0, 1_024)));
    assert_eq!(failure.code, ErrorCode::RowTooLarge);
    let hint = failure.hint.unwrap_or_default();
    assert!(
        hint.starts_with("The row is one value larger than a page") && !hint.contains("fields"),
        "{hint}"
    );

    // The first page stops before it rather than failing.
    let first = page(&value, "/docs", None, 0, 1_024).unwrap_or_default();
    assert_eq!(returned(&first), 1);
    assert_eq!(first["nextOffset"], json!(1));

    // With fewer fields it fits.
    let fields = ["id".to_string(), "title".to_string()];
    let narrow = page(&value, "/docs", Some(&fields), 1, 1_024).unwrap_or_default();
    assert_eq!(narrow["items"], json!([{ "id": 2, "title": "t" }]));
    let fields = ["id".to_string(), "body".to_string()];
    let message = error(page(&value, "/docs", Some(&fields), 1, 1_024)).to_string();
    assert!(
        message.contains("with fields `id`, `body` the page would be 2098 bytes"),
        "{message}"
    );
}

#[test]
fn numbers_count_as_javascript_writes_them() {
    // 1e20 is "1e+20" to serde_json and "100000000000000000000" to JSON.stringify, which is
    // what the sandbox measures a returned page with.
    let rows = vec![json!(1e20); 100];
    let value = Value::Array(rows.clone());
    let page = page(&value, "", None, 0, 1_024).unwrap_or_default();
    let count = usize::try_from(returned(&page)).unwrap_or(usize::MAX);
    let serde_spelling = serde_json::to_string(&1e20).unwrap_or_default();
    assert_ne!(serde_spelling, "100000000000000000000");
    let as_javascript =
        |count: usize| oracle(&rows, 0, count).replace(&serde_spelling, "100000000000000000000");
    assert!(as_javascript(count).len() <= 1_024);
    assert!(as_javascript(count + 1).len() > 1_024);
}

#[test]
fn twenty_thousand_rows_page_through_quickly() {
    let rows: Vec<Value> = (0..20_000)
        .map(|i| json!({ "id": i, "name": format!("user number {i}"), "tags": ["a", "b"] }))
        .collect();
    let value = json!({ "users": rows });
    assert!(written(&value).len() > 1_000_000);
    let fields = ["id".to_string()];
    for (fields, budget) in [(None, 1_024), (None, 65_536), (Some(&fields[..]), 1_024)] {
        let mut offset = 0;
        let mut seen = 0;
        loop {
            let page = page(&value, "/users", fields, offset, budget).unwrap_or_default();
            assert!(written(&page).len() <= budget);
            let got = returned(&page);
            seen += got;
            if page["complete"] == json!(true) {
                break;
            }
            assert!(got >= 1);
            offset += got;
        }
        assert_eq!(seen, 20_000);
    }
}

#[test]
fn read_page_answers_a_read_request() {
    let request = ReadRequest {
        result_ref: "res_1".to_string(),
        path: "/people".to_string(),
        fields: Some(vec!["name".to_string()]),
        offset: 1,
        budget: 1_024,
    };
    let page = read_page(&people(), &request).unwrap_or_default();
    assert_eq!(page["items"], json!([{ "name": "Bob" }, {}]));
    let request = ReadRequest {
        path: "/nobody".to_string(),
        ..request
    };
    let failure = read_page(&people(), &request).err();
    assert_eq!(failure.map(|f| f.code), Some(ErrorCode::InvalidArguments));
}

fn text(len: std::ops::Range<usize>) -> impl Strategy<Value = Value> {
    prop::collection::vec(any::<char>(), len)
        .prop_map(|chars| Value::String(chars.into_iter().collect()))
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => text(0..24),
        1 => text(200..4_000),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => any::<i64>().prop_map(|n| json!(n)),
        // Floats that serde_json and JavaScript spell alike, so the serde_json oracle is exact.
        1 => (-1_000_000i32..1_000_000).prop_map(|n| json!(f64::from(n) + 0.25)),
    ]
}

fn row() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (prop::sample::select(vec!["a", "b", "é\"\n", "d/~"]), inner),
                0..6
            )
            .prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// Pages `rows` (projected already for the oracle) from 0 and checks every page.
fn walk(
    value: &Value,
    path: &str,
    fields: Option<&[String]>,
    expected: &[Value],
    budget: usize,
) -> Result<(), TestCaseError> {
    let mut offset = 0;
    let mut seen: Vec<Value> = Vec::new();
    loop {
        match page(value, path, fields, offset as u64, budget) {
            Ok(page) => {
                let text = written(&page);
                prop_assert!(text.len() <= budget, "{} > {budget}", text.len());
                let count = usize::try_from(returned(&page)).unwrap_or(usize::MAX);
                prop_assert_eq!(&page["offset"], &json!(offset));
                prop_assert_eq!(&page["total"], &json!(expected.len()));
                let items = page["items"].as_array().cloned().unwrap_or_default();
                prop_assert_eq!(items.len(), count);
                prop_assert_eq!(&items[..], &expected[offset..offset + count]);
                seen.extend(items);
                if page["complete"] == json!(true) {
                    prop_assert_eq!(&page["nextOffset"], &Value::Null);
                    prop_assert_eq!(offset + count, expected.len());
                    break;
                }
                prop_assert!(count >= 1, "an empty page that is not complete");
                prop_assert_eq!(&page["nextOffset"], &json!(offset + count));
                // As many rows as fit: one more would not.
                prop_assert!(oracle(expected, offset, count + 1).len() > budget);
                offset += count;
            }
            Err(PageError::RowTooLarge { index, .. }) => {
                prop_assert_eq!(index, offset);
                prop_assert_eq!(seen.len(), offset);
                prop_assert!(oracle(expected, offset, 1).len() > budget);
                break;
            }
            Err(other) => return Err(TestCaseError::fail(other.to_string())),
        }
    }
    // Every row up to where paging ended, once and in order (the pages checked their own
    // rows; this checks that they joined up).
    prop_assert_eq!(&seen[..], &expected[..seen.len()]);
    Ok(())
}

/// Budgets from the smallest to the largest, often small so that collections take many pages.
fn budget() -> impl Strategy<Value = usize> {
    prop_oneof![1_024usize..4_096, 1_024usize..=65_536]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn paging_visits_every_row_once_within_the_budget(
        rows in prop::collection::vec(row(), 0..60),
        budget in budget(),
    ) {
        let value = json!({ "nested": { "rows": rows.clone() } });
        walk(&value, "/nested/rows", None, &rows, budget)?;
    }

    #[test]
    fn paging_with_fields_projects_every_row(
        rows in prop::collection::vec(
            prop::collection::vec((prop::sample::select(vec!["a", "b", "c", "é\"\n"]), row()), 0..5),
            1..40,
        ),
        budget in budget(),
        picked in prop::sample::subsequence(vec!["c", "a", "é\"\n"], 1..=3),
    ) {
        let rows: Vec<Value> = rows
            .into_iter()
            .map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
            .collect();
        let fields: Vec<String> = picked.iter().map(|f| f.to_string()).collect();
        let value = Value::Array(rows.clone());
        let missing = fields
            .iter()
            .find(|f| !rows.iter().any(|row| row.get(f.as_str()).is_some()));
        if let Some(missing) = missing {
            let failure = page(&value, "", Some(&fields), 0, budget);
            prop_assert!(
                matches!(&failure, Err(PageError::UnknownField { field, .. }) if field == missing),
                "{:?}",
                failure
            );
        } else {
            let expected: Vec<Value> = rows
                .iter()
                .map(|row| {
                    Value::Object(
                        fields
                            .iter()
                            .filter_map(|f| row.get(f.as_str()).map(|v| (f.clone(), v.clone())))
                            .collect(),
                    )
                })
                .collect();
            walk(&value, "", Some(&fields), &expected, budget)?;
        }
    }
}
