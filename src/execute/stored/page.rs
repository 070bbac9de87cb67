//! One page of a stored collection, as `hub.read(ref, { path, fields, offset })` answers:
//! `{ items, offset, total, returned, nextOffset, complete }` holding as many whole rows,
//! from `offset` on, as fit the output budget once the page is written as compact JSON.
//!
//! A page never cuts a row and never comes back empty unless nothing is left (`offset` equals
//! the total: an empty, complete page). When the first row alone does not fit, the answer is
//! `row_too_large`, which says how large the row is with the fields asked for, so the script can
//! ask for fewer fields or take the row apart with `hub.get`.
//!
//! Sizes are counted, not written: each row is measured once ([`json_len`], which counts
//! numbers at the longer of serde_json's and JavaScript's spellings, since the page a script
//! returns is measured as `JSON.stringify` writes it), and the envelope's length follows from
//! its numbers. Without `fields`, a page costs what its rows cost, whatever the size of the
//! collection; with `fields`, the check below also reads every row once (a type test and a key
//! lookup per field), a few milliseconds for the largest collections a stored result can hold.
//!
//! `fields` selects literal immediate keys of object rows, in the order listed; a row without
//! one of them simply lacks it. They are checked against the whole collection before any row is
//! returned, so a listed field that no row has, or a row that is not an object, fails the first
//! page rather than a later one.

use serde_json::{Map, Value, json};

use super::discover::{discover, field_names};
use super::pointer;
use super::size::{digits, json_len, member_len, string_len};
use crate::model::closest::closest;
use crate::sandbox::{CallFailure, ErrorCode, ReadRequest};

/// Why a page could not be read as asked. Every message names the path and says what is there
/// (never a scalar of the data: kinds, keys and sizes only).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PageError {
    /// The path is not an RFC 6901 JSON Pointer.
    #[error("{} is not a JSON Pointer: {reason}. {collections}", quote_path(.path))]
    BadPointer {
        path: String,
        reason: String,
        collections: Advertised,
    },
    /// The path runs past what the value holds.
    #[error("{} is not in the stored result: {reason}. {collections}", quote_path(.path))]
    NotFound {
        path: String,
        reason: String,
        collections: Advertised,
    },
    /// The path leads to something other than an array.
    #[error("{} is {what}, not an array: hub.read pages arrays. {collections}", quote_path(.path))]
    NotAnArray {
        path: String,
        what: String,
        collections: Advertised,
    },
    /// The offset is beyond the last row.
    #[error(
        "offset {offset} is past the end of {}, which has {}: an offset runs from 0 to {total} (at {total}, the page is empty and complete)",
        quote_path(.path),
        rows_phrase(*.total)
    )]
    OffsetPastEnd {
        path: String,
        offset: u64,
        total: u64,
    },
    /// `fields` is an empty list.
    #[error(
        "fields is an empty list, which would return every row of {} as {{}}: list the keys to keep, or leave fields out for whole rows",
        quote_path(.path)
    )]
    NoFields { path: String },
    /// `fields` names a key twice.
    #[error("fields lists `{field}` twice; list each key once")]
    DuplicateField { field: String },
    /// `fields` was given for a collection with a row that is not an object.
    #[error(
        "row {index} of {} is {what}, and fields only select keys of object rows: leave fields out to read whole rows",
        quote_path(.path)
    )]
    NotAnObjectRow {
        path: String,
        index: usize,
        what: String,
    },
    /// A listed field is in no row of the collection.
    #[error("no row of {} has the field `{field}`{suggestion}; {known}", quote_path(.path))]
    UnknownField {
        path: String,
        field: String,
        suggestion: Suggestion,
        known: KnownFields,
    },
    /// The row at the offset does not fit a page on its own.
    #[error(
        "row {index} of {} does not fit in one page: with {selection} the page would be {bytes} bytes, over the output budget of {budget} bytes{largest}",
        quote_path(.path)
    )]
    RowTooLarge {
        path: String,
        index: usize,
        selection: Selection,
        bytes: usize,
        budget: usize,
        largest: LargestFields,
    },
}

impl PageError {
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            PageError::RowTooLarge { .. } => ErrorCode::RowTooLarge,
            _ => ErrorCode::InvalidArguments,
        }
    }

    /// What to do about it.
    pub(crate) fn hint(&self) -> &'static str {
        match self {
            PageError::BadPointer { .. }
            | PageError::NotFound { .. }
            | PageError::NotAnArray { .. } => {
                "Page a path from stored.collections (\"/messages\", or \"\" for a root array) with hub.read(ref, { path }); hub.get(ref) returns the whole value to look into."
            }
            PageError::OffsetPastEnd { .. } => {
                "Start at offset 0 and continue with each page's nextOffset; a null nextOffset means no rows remain."
            }
            PageError::NoFields { .. }
            | PageError::DuplicateField { .. }
            | PageError::UnknownField { .. } => {
                "List literal immediate keys of the rows (stored.collections shows the ones seen), or leave fields out to read whole rows."
            }
            PageError::NotAnObjectRow { .. } => {
                "Leave fields out to read whole rows; fields apply only when every row is an object."
            }
            // A row that is one string or number has no fields to pick.
            PageError::RowTooLarge { largest, .. } if largest.0.is_empty() => {
                "The row is one value larger than a page: read it in the script with hub.get(ref) and return only the part you need."
            }
            PageError::RowTooLarge { .. } => ErrorCode::RowTooLarge.hint(),
        }
    }
}

impl From<PageError> for CallFailure {
    fn from(error: PageError) -> CallFailure {
        let mut failure = CallFailure::new(error.code(), error.to_string());
        failure.hint = Some(error.hint().to_string());
        failure
    }
}

/// The collections discovery advertises, for messages that point the reader at them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Advertised(Vec<(String, u64)>, bool);

impl std::fmt::Display for Advertised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Advertised(collections, complete) = self;
        if collections.is_empty() {
            return write!(
                f,
                "The stored result has no arrays to page{}; read it with hub.get(ref)",
                if *complete {
                    ""
                } else {
                    " that discovery found"
                }
            );
        }
        write!(f, "Collections: ")?;
        for (i, (path, rows)) in collections.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(
                f,
                "{separator}{} ({})",
                quote_path(path),
                rows_phrase(*rows)
            )?;
        }
        if !complete {
            write!(f, ", and perhaps more")?;
        }
        Ok(())
    }
}

fn advertised(value: &Value) -> Advertised {
    let (collections, complete) = discover(value);
    Advertised(
        collections.into_iter().map(|c| (c.path, c.rows)).collect(),
        complete,
    )
}

/// A path as a message shows it: `""` for the root, so that it is visible.
fn quote_path(path: &str) -> String {
    if path.is_empty() {
        "\"\"".to_string()
    } else {
        format!("`{path}`")
    }
}

/// "Did you mean" for an unknown field, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suggestion(Option<String>);

impl std::fmt::Display for Suggestion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(name) => write!(f, " (did you mean `{name}`?)"),
            None => Ok(()),
        }
    }
}

/// The fields a collection's rows have, for an unknown-field message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KnownFields(Vec<String>, bool);

impl std::fmt::Display for KnownFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let KnownFields(names, complete) = self;
        if names.is_empty() {
            return write!(f, "its rows have no keys");
        }
        let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let more = if *complete { "" } else { ", among others" };
        write!(f, "its rows have {}{more}", listed.join(", "))
    }
}

/// The fields a too-large row was measured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection(Option<Vec<String>>);

impl std::fmt::Display for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => write!(f, "the whole row"),
            Some(fields) => {
                let listed: Vec<String> = fields.iter().map(|n| format!("`{n}`")).collect();
                write!(f, "fields {}", listed.join(", "))
            }
        }
    }
}

/// The largest members of a too-large object row, the likely ones to leave out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LargestFields(Vec<(String, usize)>);

impl std::fmt::Display for LargestFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        let listed: Vec<String> = self
            .0
            .iter()
            .map(|(name, bytes)| format!("`{name}` ({bytes} bytes)"))
            .collect();
        write!(f, "; its largest fields are {}", listed.join(", "))
    }
}

/// Largest fields named in a row-too-large message.
const LARGEST_SHOWN: usize = 3;
/// Field names listed in an unknown-field message.
const KNOWN_SHOWN: usize = 16;

/// A page for `hub.read`, failures ready for the script.
pub(crate) fn read_page(value: &Value, request: &ReadRequest) -> Result<Value, CallFailure> {
    page(
        value,
        &request.path,
        request.fields.as_deref(),
        request.offset,
        request.budget,
    )
    .map_err(CallFailure::from)
}

/// The page of the array at `path` (an RFC 6901 pointer; `""` is the root) from row `offset`:
/// as many whole rows, projected to `fields` when given, as keep the compact JSON of the whole
/// page within `budget` bytes.
pub(crate) fn page(
    value: &Value,
    path: &str,
    fields: Option<&[String]>,
    offset: u64,
    budget: usize,
) -> Result<Value, PageError> {
    let rows = collection(value, path)?;
    let total = rows.len();
    if let Some(fields) = fields {
        check_fields(rows, path, fields)?;
    }
    let start = match usize::try_from(offset) {
        Ok(start) if start <= total => start,
        _ => {
            return Err(PageError::OffsetPastEnd {
                path: path.to_string(),
                offset,
                total: total as u64,
            });
        }
    };
    let remaining = total - start;
    let measure = |row: &Value| match fields {
        Some(fields) => projected_len(row, fields),
        None => json_len(row),
    };
    // The largest count whose page fits. Pages only grow with each row, except that the last
    // row swaps `"nextOffset":N,"complete":false` for the shorter `null,…true`; so the loop
    // stops at the first count that does not fit unless the next one would be the last row.
    let mut rows_bytes = 0;
    let mut count = 0;
    let mut first_bytes = 0;
    for (i, row) in rows[start..].iter().enumerate() {
        let taken = i + 1;
        rows_bytes += measure(row) + usize::from(taken > 1);
        let size = envelope_len(start, total, taken) + rows_bytes;
        if taken == 1 {
            first_bytes = size;
        }
        if size <= budget {
            count = taken;
        } else if taken + 1 != remaining {
            break;
        }
    }
    if count == 0 && remaining > 0 {
        return Err(row_too_large(
            rows,
            path,
            fields,
            start,
            first_bytes,
            budget,
        ));
    }
    let items: Vec<Value> = rows[start..start + count]
        .iter()
        .map(|row| match fields {
            Some(fields) => project(row, fields),
            None => row.clone(),
        })
        .collect();
    let next = start + count;
    let complete = next == total;
    let mut page = Map::new();
    page.insert("items".to_string(), Value::Array(items));
    page.insert("offset".to_string(), json!(start));
    page.insert("total".to_string(), json!(total));
    page.insert("returned".to_string(), json!(count));
    page.insert(
        "nextOffset".to_string(),
        if complete { Value::Null } else { json!(next) },
    );
    page.insert("complete".to_string(), Value::Bool(complete));
    Ok(Value::Object(page))
}

/// The page's length without its rows and their commas:
/// `{"items":[],"offset":O,"total":T,"returned":R,"nextOffset":N,"complete":B}`.
fn envelope_len(start: usize, total: usize, count: usize) -> usize {
    const FIXED: usize =
        r#"{"items":[],"offset":,"total":,"returned":,"nextOffset":,"complete":}"#.len();
    let next = start + count;
    let tail = if next == total {
        "null".len() + "true".len()
    } else {
        digits(next as u64) + "false".len()
    };
    FIXED + digits(start as u64) + digits(total as u64) + digits(count as u64) + tail
}

/// The array at `path`, or why not.
fn collection<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], PageError> {
    let tokens = pointer::parse(path).map_err(|reason| PageError::BadPointer {
        path: path.to_string(),
        reason,
        collections: advertised(value),
    })?;
    let mut here = value;
    let mut at = String::new();
    for token in &tokens {
        let next = match here {
            Value::Object(members) => members.get(token).ok_or_else(|| {
                let names = members.keys().map(String::as_str);
                let suggestion = closest(token, names, 1)
                    .first()
                    .map(|name| format!(" (did you mean `{}`?)", pointer::child(&at, name)))
                    .unwrap_or_default();
                format!(
                    "{} is an object with no key `{token}`{suggestion}",
                    place(&at)
                )
            }),
            Value::Array(items) => match pointer::as_index(token) {
                Some(index) if index < items.len() => Ok(&items[index]),
                Some(index) => Err(format!(
                    "{} is an array of {}, with no row {index}",
                    place(&at),
                    rows_phrase(items.len() as u64)
                )),
                None => Err(format!(
                    "{} is an array, and `{token}` is not a row number (0, 1, 2, …)",
                    place(&at)
                )),
            },
            scalar => Err(format!(
                "{} is {}, with nothing inside",
                place(&at),
                kind(scalar)
            )),
        };
        match next {
            Ok(next) => {
                at = pointer::child(&at, token);
                here = next;
            }
            Err(reason) => {
                return Err(PageError::NotFound {
                    path: path.to_string(),
                    reason,
                    collections: advertised(value),
                });
            }
        }
    }
    match here {
        Value::Array(rows) => Ok(rows),
        other => Err(PageError::NotAnArray {
            path: path.to_string(),
            what: kind(other),
            collections: advertised(value),
        }),
    }
}

/// "1 row", "3 rows".
fn rows_phrase(rows: u64) -> String {
    if rows == 1 {
        "1 row".to_string()
    } else {
        format!("{rows} rows")
    }
}

/// Where a pointer points, for a message.
fn place(at: &str) -> String {
    if at.is_empty() {
        "the root".to_string()
    } else {
        format!("`{at}`")
    }
}

/// What a value is, with its size but never its content: "an object with 3 keys (`a`, `b`,
/// `c`)", "a string of 12 bytes".
fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(_) => "a boolean".to_string(),
        Value::Number(_) => "a number".to_string(),
        Value::String(text) => format!("a string of {} bytes", text.len()),
        Value::Array(items) => format!("an array of {}", rows_phrase(items.len() as u64)),
        Value::Object(members) => {
            let (names, complete) = key_list(members.keys().map(String::as_str), 8);
            let more = if complete { "" } else { ", …" };
            let noun = if members.len() == 1 { "key" } else { "keys" };
            format!("an object with {} {noun} ({names}{more})", members.len())
        }
    }
}

/// Up to `limit` names as `` `a`, `b` ``, leaving out any too long to show, and whether that is
/// all of them.
fn key_list<'a>(names: impl Iterator<Item = &'a str>, limit: usize) -> (String, bool) {
    let mut listed = Vec::new();
    let mut complete = true;
    for name in names {
        if listed.len() == limit || name.len() > super::discover::MAX_NAME_BYTES {
            complete = false;
            continue;
        }
        listed.push(format!("`{name}`"));
    }
    (listed.join(", "), complete)
}

/// Every row an object, the list well formed, and each listed field in some row.
fn check_fields(rows: &[Value], path: &str, fields: &[String]) -> Result<(), PageError> {
    if fields.is_empty() {
        return Err(PageError::NoFields {
            path: path.to_string(),
        });
    }
    for (i, field) in fields.iter().enumerate() {
        if fields[..i].contains(field) {
            return Err(PageError::DuplicateField {
                field: field.clone(),
            });
        }
    }
    if let Some((index, row)) = rows.iter().enumerate().find(|(_, row)| !row.is_object()) {
        return Err(PageError::NotAnObjectRow {
            path: path.to_string(),
            index,
            what: kind(row),
        });
    }
    for field in fields {
        let present = rows
            .iter()
            .any(|row| row.as_object().is_some_and(|m| m.contains_key(field)));
        if !present {
            let (names, complete) = field_names(rows);
            let suggestion = closest(field, names.iter().map(String::as_str), 1)
                .first()
                .map(|name| name.to_string());
            let complete = complete && names.len() <= KNOWN_SHOWN;
            return Err(PageError::UnknownField {
                path: path.to_string(),
                field: field.clone(),
                suggestion: Suggestion(suggestion),
                known: KnownFields(names.into_iter().take(KNOWN_SHOWN).collect(), complete),
            });
        }
    }
    Ok(())
}

/// The length of `row` kept to `fields` (an object, checked before).
fn projected_len(row: &Value, fields: &[String]) -> usize {
    let Some(members) = row.as_object() else {
        return json_len(row);
    };
    let mut len = 2;
    let mut kept: usize = 0;
    for field in fields {
        if let Some(member) = members.get(field) {
            len += member_len(field, member);
            kept += 1;
        }
    }
    len + kept.saturating_sub(1)
}

/// `row` kept to `fields`, in their order; a field the row lacks stays absent.
fn project(row: &Value, fields: &[String]) -> Value {
    let Some(members) = row.as_object() else {
        return row.clone();
    };
    let mut kept = Map::new();
    for field in fields {
        if let Some(member) = members.get(field) {
            kept.insert(field.clone(), member.clone());
        }
    }
    Value::Object(kept)
}

fn row_too_large(
    rows: &[Value],
    path: &str,
    fields: Option<&[String]>,
    index: usize,
    bytes: usize,
    budget: usize,
) -> PageError {
    let mut largest: Vec<(String, usize)> = match &rows[index] {
        Value::Object(members) => members
            .iter()
            .filter(|(name, _)| fields.is_none_or(|fields| fields.contains(name)))
            .filter(|(name, _)| name.len() <= super::discover::MAX_NAME_BYTES)
            .map(|(name, member)| (name.clone(), string_len(name) + 1 + json_len(member)))
            .collect(),
        _ => Vec::new(),
    };
    largest.sort_by(|(a_name, a), (b_name, b)| b.cmp(a).then_with(|| a_name.cmp(b_name)));
    largest.truncate(LARGEST_SHOWN);
    PageError::RowTooLarge {
        path: path.to_string(),
        index,
        selection: Selection(fields.map(<[String]>::to_vec)),
        bytes,
        budget,
        largest: LargestFields(largest),
    }
}

#[cfg(test)]
mod tests;
