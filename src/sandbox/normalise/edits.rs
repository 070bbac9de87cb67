//! Source edits that keep positions: blanking (replace with spaces, keep newlines) never moves
//! anything; the few insertions are recorded so a position in the rewritten code maps back to
//! the user's line:column.

/// Pending edits against one source text, in byte offsets of that text.
#[derive(Debug, Default)]
pub struct Edits {
    blanks: Vec<(usize, usize)>,
    /// (offset, text): inserted before the byte at `offset`.
    inserts: Vec<(usize, String)>,
    /// Offsets whose byte becomes `;` after blanking (so a blanked statement cannot glue the
    /// lines around it together).
    semicolons: Vec<usize>,
    /// (offset, ASCII text) written over blanked bytes, keeping every position.
    overwrites: Vec<(usize, &'static str)>,
}

/// Where the insertions landed in the rewritten text, to undo them when mapping positions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PositionMap {
    /// (offset in the rewritten text, inserted length), ascending.
    inserted: Vec<(usize, usize)>,
}

impl Edits {
    pub fn blank(&mut self, start: u32, end: u32) {
        if end > start {
            self.blanks.push((start as usize, end as usize));
        }
    }

    /// Blanks a whole statement and leaves a `;` in its first column.
    pub fn blank_statement(&mut self, start: u32, end: u32) {
        self.blank(start, end);
        self.semicolons.push(start as usize);
    }

    /// Writes `text` over the bytes at `at` (which must be blanked or ASCII already).
    pub fn overwrite(&mut self, at: u32, text: &'static str) {
        self.overwrites.push((at as usize, text));
    }

    pub fn insert(&mut self, at: u32, text: impl Into<String>) {
        self.inserts.push((at as usize, text.into()));
    }

    /// Applies every edit to `source`.
    pub fn apply(mut self, source: &str) -> (String, PositionMap) {
        let mut bytes = source.as_bytes().to_vec();
        for (start, end) in &self.blanks {
            let end = (*end).min(bytes.len());
            for byte in bytes.iter_mut().take(end).skip(*start) {
                if *byte != b'\n' && *byte != b'\r' {
                    *byte = b' ';
                }
            }
        }
        for at in &self.semicolons {
            if let Some(byte) = bytes.get_mut(*at) {
                *byte = b';';
            }
        }
        for (at, text) in &self.overwrites {
            if let Some(target) = bytes.get_mut(*at..*at + text.len()) {
                target.copy_from_slice(text.as_bytes());
            }
        }
        // Blanking may split a multi-byte character; such bytes are all inside blanked ranges,
        // and a lossy conversion turns any leftover fragment into U+FFFD instead of failing.
        let blanked = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        self.inserts.sort_by_key(|(at, _)| *at);
        let mut out = String::with_capacity(blanked.len() + 64);
        let mut map = PositionMap::default();
        let mut last = 0;
        for (at, text) in &self.inserts {
            let at = (*at).min(blanked.len());
            if !blanked.is_char_boundary(at) {
                continue;
            }
            out.push_str(&blanked[last..at]);
            map.inserted.push((out.len(), text.len()));
            out.push_str(text);
            last = at;
        }
        out.push_str(&blanked[last..]);
        (out, map)
    }
}

impl PositionMap {
    /// Maps a byte offset in the rewritten text back to one in the original.
    pub fn original_offset(&self, offset: usize) -> usize {
        let mut shift = 0;
        for &(at, len) in &self.inserted {
            if offset >= at + len {
                shift += len;
            } else if offset >= at {
                // Inside inserted text: point at where it was inserted.
                return at - shift;
            }
        }
        offset - shift
    }
}

/// The byte offset of a 1-based line and column (columns count chars).
pub fn offset_of(text: &str, line: u32, column: u32) -> usize {
    let mut offset = 0;
    for _ in 1..line {
        match text[offset..].find('\n') {
            Some(i) => offset += i + 1,
            None => return text.len(),
        }
    }
    let rest = &text[offset..];
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let within = rest[..line_end]
        .char_indices()
        .nth(column.saturating_sub(1) as usize)
        .map_or(line_end, |(i, _)| i);
    offset + within
}

/// The 1-based line and column (in chars) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_keep_positions_and_inserts_map_back() {
        let source = "let a: number = 1;\nfoo(a)";
        let mut edits = Edits::default();
        edits.blank(5, 13);
        edits.insert(19, "return ");
        let (out, map) = edits.apply(source);
        assert_eq!(out, "let a         = 1;\nreturn foo(a)");
        // `a` in `foo(a)` is at 2:12 in the output and 2:5 in the original.
        let offset = offset_of(&out, 2, 12);
        assert_eq!(line_column(source, map.original_offset(offset)), (2, 5));
        // A position inside the inserted text maps to the insertion point.
        assert_eq!(
            line_column(source, map.original_offset(offset_of(&out, 2, 3))),
            (2, 1)
        );
    }

    #[test]
    fn blanked_statements_start_with_a_semicolon() {
        let mut edits = Edits::default();
        edits.blank_statement(0, 11);
        let (out, _) = edits.apply("type A = 1;\nx");
        assert_eq!(out, ";          \nx");
    }
}
