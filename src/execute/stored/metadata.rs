//! `stored` and `nextRequest` for a stored result, fitted to the output budget: the envelope
//! that says "your result is stored" must not itself be too large to send.
//!
//! Everything starts at full detail and is cut in a fixed order until
//! `{"stored":…,"nextRequest":…}`, written as compact JSON, fits: first the preview's depth
//! and breadth, together with the field names past the first few of each collection (each
//! collection that loses any says `fieldsComplete: false`), then the preview's remaining shape
//! and every field name, then collections from the smallest up (`collectionsComplete: false`).
//! The largest collection, which `nextRequest` reads, is the last to go. If even then the
//! script does not fit (a pathologically long path), `nextRequest` falls back to reading the
//! value with `hub.get`. What is left at the end is sent even if it is over: the reference and
//! the script cannot be cut.

use serde_json::{Value, json};

use super::discover::discover;
use super::next_request::{get_code, next_request_code, quote};
use super::preview::{Detail, LEVELS, preview_at};
use crate::sandbox::{Collection, NextRequest, Recovery, Stored};

/// The smallest output budget: metadata is fitted to at least this many bytes.
pub(crate) const MIN_BUDGET: usize = 1_024;

/// One try: how much preview, how many field names per collection, how many collections.
struct Cut {
    preview: Option<Detail>,
    fields: usize,
    collections: usize,
}

/// The tries, from the most metadata to the least.
fn cuts(collections: usize) -> Vec<Cut> {
    let cut = |preview: Option<usize>, fields, kept| Cut {
        preview: preview.map(|level| LEVELS[level]),
        fields,
        collections: kept,
    };
    let mut cuts = vec![
        cut(Some(0), usize::MAX, collections),
        cut(Some(1), usize::MAX, collections),
        cut(Some(2), 24, collections),
        cut(Some(2), 16, collections),
        cut(Some(3), 12, collections),
        cut(Some(3), 8, collections),
        cut(Some(3), 6, collections),
        cut(Some(3), 4, collections),
        cut(Some(4), 4, collections),
        cut(Some(4), 3, collections),
        cut(Some(4), 2, collections),
        cut(Some(4), 1, collections),
        cut(Some(5), 1, collections),
        cut(Some(5), 0, collections),
        cut(None, 0, collections),
    ];
    cuts.extend((0..collections).rev().map(|kept| cut(None, 0, kept)));
    cuts
}

/// The `stored` object and `nextRequest` of a result stored as `result_ref`, `bytes` long as
/// JSON, for a run whose output budget is `budget` (fitted to at least [`MIN_BUDGET`]).
/// `output_budget_bytes` reports `budget` as given.
pub(crate) fn fit_metadata(
    value: &Value,
    result_ref: &str,
    bytes: u64,
    budget: usize,
    expires_at_ms: u64,
    recovery: Recovery,
) -> (Stored, NextRequest) {
    let limit = budget.max(MIN_BUDGET);
    let (collections, collections_complete) = discover(value);
    let code = next_request_code(result_ref, &collections);
    let build = |cut: &Cut, code: &str| {
        let kept = collections
            .iter()
            .take(cut.collections)
            .map(|collection| keep_fields(collection, cut.fields))
            .collect();
        let stored = Stored {
            result_ref: result_ref.to_string(),
            bytes,
            output_budget_bytes: budget as u64,
            expires_at_ms,
            collections: kept,
            collections_complete: collections_complete && cut.collections == collections.len(),
            preview: preview_at(value, cut.preview),
            recovery,
        };
        let next = NextRequest {
            code: code.to_string(),
        };
        (stored, next)
    };
    let cuts = cuts(collections.len());
    for cut in &cuts {
        let (stored, next) = build(cut, &code);
        if written_len(&stored, &next) <= limit {
            return (stored, next);
        }
    }
    // Only the reference, the numbers and the script are left; the script is all that can
    // still shrink.
    let least = Cut {
        preview: None,
        fields: 0,
        collections: 0,
    };
    build(&least, &get_code(&quote(result_ref)))
}

/// A collection with at most `limit` field names.
fn keep_fields(collection: &Collection, limit: usize) -> Collection {
    let mut kept = collection.clone();
    if kept.fields.len() > limit {
        kept.fields.truncate(limit);
        kept.fields_complete = false;
    }
    kept
}

/// `{"stored":…,"nextRequest":…}` as compact JSON, in bytes.
fn written_len(stored: &Stored, next: &NextRequest) -> usize {
    serde_json::to_string(&json!({ "stored": stored, "nextRequest": next }))
        .map(|text| text.len())
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    const REF: &str = "res_0123456789abcdefghijklmnop";
    const EXPIRES: u64 = 1_760_000_000_000;

    fn written(stored: &Stored, next: &NextRequest) -> String {
        serde_json::to_string(&json!({ "stored": stored, "nextRequest": next })).unwrap_or_default()
    }

    /// Twelve collections (the largest, `/zz-largest`, has 40 rows), each row with 40 keys of
    /// 120 bytes, nested objects for the preview to describe.
    fn nasty() -> Value {
        let mut root = Map::new();
        for c in 0..12 {
            let mut row = Map::new();
            for f in 0..40 {
                row.insert(
                    format!("{f:02}{}", "long_field_name/with~escapes\"".repeat(4)),
                    json!({ "deep": { "deeper": [1, 2, 3] } }),
                );
            }
            let rows = if c == 11 { 40 } else { c + 1 };
            let name = if c == 11 {
                "zz-largest".to_string()
            } else {
                format!("collection{c:02}")
            };
            root.insert(name, Value::Array(vec![Value::Object(row); rows]));
        }
        Value::Object(root)
    }

    #[test]
    fn nasty_value_fits_the_smallest_budget() {
        let value = nasty();
        let (stored, next) = fit_metadata(
            &value,
            REF,
            900_000,
            1_024,
            EXPIRES,
            Recovery::USE_NEXT_REQUEST,
        );
        let text = written(&stored, &next);
        assert!(text.len() <= 1_024, "{} bytes: {text}", text.len());
        assert_eq!(
            next.code,
            format!(r#"return await hub.read("{REF}", {{ path: "/zz-largest" }});"#)
        );
        assert_eq!(stored.result_ref, REF);
        assert_eq!(stored.bytes, 900_000);
        assert_eq!(stored.output_budget_bytes, 1_024);
        assert_eq!(stored.expires_at_ms, EXPIRES);
        assert_eq!(stored.recovery, Recovery::USE_NEXT_REQUEST);
        assert!(!stored.collections_complete);
        assert_eq!(
            stored.collections.first().map(|c| c.path.as_str()),
            Some("/zz-largest")
        );
        assert!(stored.collections.iter().all(|c| !c.fields_complete));
        // Discovery lists 32 names of each; none of them fit here.
        assert!(stored.collections.iter().all(|c| c.fields.is_empty()));
        assert_eq!(stored.preview["complete"], json!(false));
    }

    #[test]
    fn a_larger_budget_keeps_more_of_the_nasty_value() {
        let (stored, next) = fit_metadata(
            &nasty(),
            REF,
            900_000,
            16_384,
            EXPIRES,
            Recovery::USE_NEXT_REQUEST,
        );
        let text = written(&stored, &next);
        assert!(text.len() <= 16_384, "{} bytes", text.len());
        // 8 collections of 32 names of about 120 bytes are over 30 KiB: names are cut, but
        // not all of them, and every collection stays.
        assert_eq!(stored.collections.len(), 8);
        let kept: Vec<usize> = stored.collections.iter().map(|c| c.fields.len()).collect();
        assert!(kept.iter().all(|&n| (1..32).contains(&n)), "{kept:?}");
        assert!(
            stored.preview["shape"]
                .as_str()
                .is_some_and(|shape| shape.contains("zz-largest") || shape.contains("more")),
            "{}",
            stored.preview
        );
    }

    #[test]
    fn a_small_value_keeps_everything() {
        let value = json!({ "messages": [{ "id": 1, "text": "x" }, { "id": 2 }], "n": 2 });
        let (stored, next) = fit_metadata(
            &value,
            REF,
            20_000,
            16_384,
            EXPIRES,
            Recovery::USE_NEXT_REQUEST,
        );
        assert!(stored.collections_complete);
        assert_eq!(
            stored.collections,
            vec![Collection {
                path: "/messages".to_string(),
                rows: 2,
                fields: vec!["id".to_string(), "text".to_string()],
                fields_complete: true,
            }]
        );
        assert_eq!(
            stored.preview,
            json!({
                "complete": false,
                "shape": "{ messages: array(2) of { id: number, text: string(1 byte) }, n: number }"
            })
        );
        assert_eq!(
            next.code,
            format!(r#"return await hub.read("{REF}", {{ path: "/messages" }});"#)
        );
    }

    #[test]
    fn a_budget_under_the_minimum_is_fitted_to_the_minimum() {
        let (stored, next) = fit_metadata(
            &nasty(),
            REF,
            900_000,
            100,
            EXPIRES,
            Recovery::USE_NEXT_REQUEST,
        );
        let text = written(&stored, &next);
        assert!(text.len() <= 1_024, "{} bytes", text.len());
        assert!(text.len() > 100);
        assert_eq!(stored.output_budget_bytes, 100);
    }

    #[test]
    fn a_path_too_long_for_the_budget_falls_back_to_get() {
        // One collection, eight keys deep, each key 120 `~` (240 bytes escaped): its pointer
        // alone is about 1,900 bytes.
        let key = "~".repeat(120);
        let mut value = json!([1, 2, 3]);
        for _ in 0..8 {
            let mut wrapper = Map::new();
            wrapper.insert(key.clone(), value);
            value = Value::Object(wrapper);
        }
        let (collections, _) = discover(&value);
        assert_eq!(collections.len(), 1);
        let (stored, next) = fit_metadata(
            &value,
            REF,
            500_000,
            1_024,
            EXPIRES,
            Recovery::USE_NEXT_REQUEST,
        );
        let text = written(&stored, &next);
        assert!(text.len() <= 1_024, "{} bytes", text.len());
        assert!(
            next.code
                .starts_with(&format!("const value = await hub.get(\"{REF}\");")),
            "{}",
            next.code
        );
        assert!(stored.collections.is_empty());
        assert!(!stored.collections_complete);
    }
}
