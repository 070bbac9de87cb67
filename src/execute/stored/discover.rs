//! The collections of a stored value: the arrays `hub.read` can page, each with its row count
//! and the immediate keys seen in its rows, found within fixed bounds so that a hostile or
//! enormous value costs the same as a small one.
//!
//! The walk is breadth-first from the root and goes through objects only. An array is a
//! collection; its rows are inspected for field names but not walked into, because a pointer
//! through a row index (`/items/0/tags`) names one row's detail, not a collection of the result:
//! reading `/items` returns each row's `tags` whole. `hub.read` still takes any pointer, so a
//! script can page `/items/0/tags` or `/0/messages` when it wants to, and the preview shows the
//! shape of the first row to write it from.
//!
//! Bounds (the reference design's): at most [`MAX_COLLECTIONS`] collections, [`MAX_NODES`]
//! containers visited, pointers of at most [`MAX_DEPTH`] tokens, [`MAX_CHILDREN`] containers
//! walked per object (scalar members cost nothing and do not count), [`MAX_ROWS_INSPECTED`] rows
//! read per collection for field names, and [`MAX_FIELDS`] field names of at most
//! [`MAX_NAME_BYTES`] UTF-8 bytes. A key longer than that is not walked through either: its path
//! would crowd the metadata. When more collections are found than kept, the largest stay.
//! Whenever a bound left out something that holds an array, `collections_complete` is false;
//! whenever it left out a field name (or rows went unread), that collection's
//! `fields_complete` is.

use std::collections::{HashSet, VecDeque};

use serde_json::{Map, Value};

use super::pointer;
use crate::sandbox::Collection;

/// Most collections listed.
pub(crate) const MAX_COLLECTIONS: usize = 8;
/// Most containers (objects and arrays) visited.
pub(crate) const MAX_NODES: usize = 256;
/// Most tokens in a collection's pointer.
pub(crate) const MAX_DEPTH: usize = 8;
/// Most containers walked under one object.
pub(crate) const MAX_CHILDREN: usize = 32;
/// Most rows of a collection read for its field names.
pub(crate) const MAX_ROWS_INSPECTED: usize = 512;
/// Most field names listed per collection.
pub(crate) const MAX_FIELDS: usize = 32;
/// Longest field name (and pointer token) listed, in UTF-8 bytes.
pub(crate) const MAX_NAME_BYTES: usize = 128;

/// The collections of `value`, largest (most rows) first and then by path, and whether the
/// list is complete (false when a bound left out something that holds an array).
pub(crate) fn discover(value: &Value) -> (Vec<Collection>, bool) {
    let mut complete = true;
    let mut found: Vec<(String, &Vec<Value>)> = Vec::new();
    let mut queue: VecDeque<(String, usize, &Value)> = VecDeque::from([(String::new(), 0, value)]);
    let mut visited = 0;
    while let Some((path, depth, node)) = queue.pop_front() {
        if visited == MAX_NODES {
            if holds_array(node) || queue.iter().any(|(_, _, rest)| holds_array(rest)) {
                complete = false;
            }
            break;
        }
        visited += 1;
        match node {
            Value::Array(rows) => found.push((path, rows)),
            Value::Object(members) => {
                let mut walked = 0;
                for (key, child) in members {
                    if !may_hold_array(child) {
                        continue;
                    }
                    let within =
                        walked < MAX_CHILDREN && depth < MAX_DEPTH && key.len() <= MAX_NAME_BYTES;
                    if within {
                        walked += 1;
                        queue.push_back((pointer::child(&path, key), depth + 1, child));
                    } else if holds_array(child) {
                        complete = false;
                    }
                }
            }
            _ => {}
        }
    }
    found.sort_by(|(a_path, a_rows), (b_path, b_rows)| {
        b_rows
            .len()
            .cmp(&a_rows.len())
            .then_with(|| a_path.cmp(b_path))
    });
    if found.len() > MAX_COLLECTIONS {
        found.truncate(MAX_COLLECTIONS);
        complete = false;
    }
    let collections = found
        .into_iter()
        .map(|(path, rows)| {
            let (fields, fields_complete) = field_names(rows);
            Collection {
                path,
                rows: rows.len() as u64,
                fields,
                fields_complete,
            }
        })
        .collect();
    (collections, complete)
}

/// Whether walking `value` could find an array: cheap, one level deep, for deciding what to
/// queue.
fn may_hold_array(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(members) => members.values().any(|v| v.is_array() || v.is_object()),
        _ => false,
    }
}

/// Whether `value` is or contains an array: exact, for deciding whether a part left out made
/// the list incomplete. Each part left out is a separate subtree, so this reads each byte of
/// the value at most once per discovery.
fn holds_array(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(members) => members.values().any(holds_array),
        _ => false,
    }
}

/// The immediate keys of the object rows among the first [`MAX_ROWS_INSPECTED`], in the order
/// first seen, and whether that is all of them.
pub(super) fn field_names(rows: &[Value]) -> (Vec<String>, bool) {
    let mut complete = rows.len() <= MAX_ROWS_INSPECTED;
    let mut names: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    'rows: for row in rows.iter().take(MAX_ROWS_INSPECTED) {
        let Value::Object(members) = row else {
            continue;
        };
        for key in keys(members) {
            if !seen.insert(key) {
                continue;
            }
            if key.len() > MAX_NAME_BYTES {
                complete = false;
            } else if names.len() == MAX_FIELDS {
                // A 33rd name: the list is known to be partial, nothing more can join it.
                complete = false;
                break 'rows;
            } else {
                names.push(key.to_string());
            }
        }
    }
    (names, complete)
}

fn keys(members: &Map<String, Value>) -> impl Iterator<Item = &str> {
    members.keys().map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(collections: &[Collection]) -> Vec<&str> {
        collections.iter().map(|c| c.path.as_str()).collect()
    }

    #[test]
    fn finds_arrays_through_objects_largest_first() {
        let value = json!({
            "meta": { "pages": [1, 2], "owner": { "teams": [] } },
            "messages": [{ "id": 1, "text": "a" }, { "id": 2, "from": "b" }, { "id": 3 }],
            "count": 3,
            "tags": ["x", "y"]
        });
        let (collections, complete) = discover(&value);
        assert!(complete);
        assert_eq!(
            paths(&collections),
            ["/messages", "/meta/pages", "/tags", "/meta/owner/teams"]
        );
        assert_eq!(collections[0].rows, 3);
        assert_eq!(collections[0].fields, ["id", "text", "from"]);
        assert!(collections[0].fields_complete);
        assert_eq!(collections[1].fields, Vec::<String>::new());
        assert_eq!(collections[3].rows, 0);
    }

    #[test]
    fn root_array_is_the_empty_pointer_and_rows_are_not_walked() {
        let value = json!([{ "tags": ["a"], "id": 1 }, { "tags": [], "id": 2 }]);
        let (collections, complete) = discover(&value);
        assert!(complete);
        assert_eq!(paths(&collections), [""]);
        assert_eq!(collections[0].fields, ["tags", "id"]);
    }

    #[test]
    fn escapes_slash_and_tilde_in_keys() {
        let value = json!({ "a/b": [1], "m~n": { "x": [1, 2] } });
        let (collections, _) = discover(&value);
        assert_eq!(paths(&collections), ["/m~0n/x", "/a~1b"]);
    }

    #[test]
    fn ties_go_by_path() {
        let value = json!({ "b": [1], "a": [2], "c": [3, 4] });
        let (collections, _) = discover(&value);
        assert_eq!(paths(&collections), ["/c", "/a", "/b"]);
    }

    #[test]
    fn nine_collections_keep_the_eight_largest() {
        let mut value = serde_json::Map::new();
        for i in 0..9 {
            // c0 has 1 row … c8 has 9 rows: c0 is the one left out.
            value.insert(format!("c{i}"), json!(vec![0; i + 1]));
        }
        let (collections, complete) = discover(&Value::Object(value));
        assert!(!complete);
        assert_eq!(
            paths(&collections),
            ["/c8", "/c7", "/c6", "/c5", "/c4", "/c3", "/c2", "/c1"]
        );
    }

    #[test]
    fn eight_collections_are_complete() {
        let mut value = serde_json::Map::new();
        for i in 0..8 {
            value.insert(format!("c{i}"), json!([i]));
        }
        let (collections, complete) = discover(&Value::Object(value));
        assert!(complete);
        assert_eq!(collections.len(), 8);
    }

    #[test]
    fn depth_bound_is_eight_tokens() {
        // /a/a/a/a/a/a/a/x: 8 tokens, found.
        let mut at_eight = json!({ "x": [1] });
        for _ in 0..7 {
            at_eight = json!({ "a": at_eight });
        }
        let (collections, complete) = discover(&at_eight);
        assert!(complete);
        assert_eq!(paths(&collections), ["/a/a/a/a/a/a/a/x"]);

        // One level more: 9 tokens, not found, and the list says so.
        let at_nine = json!({ "a": at_eight });
        let (collections, complete) = discover(&at_nine);
        assert!(!complete);
        assert!(collections.is_empty());
    }

    #[test]
    fn a_deep_object_without_arrays_leaves_the_list_complete() {
        let mut value = json!({ "leaf": 1 });
        for _ in 0..12 {
            value = json!({ "a": value });
        }
        let (collections, complete) = discover(&value);
        assert!(complete);
        assert!(collections.is_empty());
    }

    #[test]
    fn thirty_three_containers_under_one_object() {
        let mut members = serde_json::Map::new();
        for i in 0..32 {
            // Objects without arrays: walked (they are containers) but hold nothing.
            members.insert(format!("k{i:02}"), json!({ "inner": {} }));
        }
        members.insert("k32".to_string(), json!({ "late": [1, 2] }));
        let (collections, complete) = discover(&Value::Object(members));
        assert!(!complete);
        assert!(collections.is_empty());
    }

    #[test]
    fn scalar_members_do_not_use_up_children() {
        let mut members = serde_json::Map::new();
        for i in 0..40 {
            members.insert(format!("field{i}"), json!(i));
        }
        members.insert("items".to_string(), json!([1, 2, 3]));
        let (collections, complete) = discover(&Value::Object(members));
        assert!(complete);
        assert_eq!(paths(&collections), ["/items"]);
    }

    #[test]
    fn node_bound_is_256_containers() {
        // The root, 16 objects under it, 16 under each (256 at the second level): the walk
        // visits 1 + 16 + 239 containers, so the last objects of the second level, and the
        // array in the very last one, are never reached.
        let mut root = serde_json::Map::new();
        for i in 0..16 {
            let mut mid = serde_json::Map::new();
            for j in 0..16 {
                let leaf = if i == 15 && j == 15 {
                    json!({ "hidden": [1] })
                } else {
                    json!({ "x": {} })
                };
                mid.insert(format!("m{j:02}"), leaf);
            }
            root.insert(format!("r{i:02}"), Value::Object(mid));
        }
        let (collections, complete) = discover(&Value::Object(root));
        assert!(!complete);
        assert!(collections.is_empty());
    }

    #[test]
    fn exactly_256_containers_are_all_visited() {
        // The root, 15 objects under it, 16 under each: 256 containers. The very last one is an
        // array, reached as the 256th.
        let mut root = serde_json::Map::new();
        for i in 0..15 {
            let mut mid = serde_json::Map::new();
            for j in 0..16 {
                let leaf = if i == 14 && j == 15 {
                    json!([1])
                } else {
                    json!({ "x": {} })
                };
                mid.insert(format!("m{j:02}"), leaf);
            }
            root.insert(format!("r{i:02}"), Value::Object(mid));
        }
        let (collections, complete) = discover(&Value::Object(root));
        assert!(complete);
        assert_eq!(paths(&collections), ["/r14/m15"]);
    }

    #[test]
    fn field_only_past_row_512_is_not_seen() {
        let mut rows: Vec<Value> = (0..600).map(|i| json!({ "id": i })).collect();
        rows[550] = json!({ "id": 550, "late": true });
        let (collections, _) = discover(&json!({ "rows": rows }));
        assert_eq!(collections[0].fields, ["id"]);
        assert!(!collections[0].fields_complete);
    }

    #[test]
    fn all_rows_read_and_all_names_kept_is_complete() {
        let mut rows: Vec<Value> = (0..512).map(|i| json!({ "id": i })).collect();
        rows[511] = json!({ "id": 511, "late": true });
        let (collections, _) = discover(&json!({ "rows": rows }));
        assert_eq!(collections[0].fields, ["id", "late"]);
        assert!(collections[0].fields_complete);
    }

    #[test]
    fn thirty_three_field_names() {
        let mut row = serde_json::Map::new();
        for i in 0..33 {
            row.insert(format!("f{i:02}"), json!(i));
        }
        let (collections, _) = discover(&json!({ "rows": [Value::Object(row)] }));
        let fields = &collections[0].fields;
        assert_eq!(fields.len(), 32);
        assert_eq!(fields[0], "f00");
        assert_eq!(fields[31], "f31");
        assert!(!collections[0].fields_complete);
    }

    #[test]
    fn thirty_two_field_names_are_complete() {
        let mut row = serde_json::Map::new();
        for i in 0..32 {
            row.insert(format!("f{i:02}"), json!(i));
        }
        let (collections, _) = discover(&json!({ "rows": [Value::Object(row)] }));
        assert_eq!(collections[0].fields.len(), 32);
        assert!(collections[0].fields_complete);
    }

    #[test]
    fn a_129_byte_name_is_left_out() {
        let long = "é".repeat(64) + "x"; // 129 bytes, 65 characters
        let fine = "é".repeat(64); // 128 bytes
        let rows = json!([{ long.clone(): 1, fine.clone(): 2, "id": 3 }]);
        let (collections, _) = discover(&json!({ "rows": rows }));
        assert_eq!(collections[0].fields, [fine, "id".to_string()]);
        assert!(!collections[0].fields_complete);
    }

    #[test]
    fn a_key_over_128_bytes_is_not_walked() {
        let long = "k".repeat(129);
        let value = json!({ long: [1, 2], "ok": [1] });
        let (collections, complete) = discover(&value);
        assert!(!complete);
        assert_eq!(paths(&collections), ["/ok"]);
    }

    #[test]
    fn scalar_rows_have_no_fields_and_that_is_complete() {
        let (collections, complete) = discover(&json!(["a", 1, null]));
        assert!(complete);
        assert_eq!(collections[0].fields, Vec::<String>::new());
        assert!(collections[0].fields_complete);
        let (collections, complete) = discover(&json!("just text"));
        assert!(complete);
        assert!(collections.is_empty());
    }
}
