//! Keeping stored secrets out of what scripts, models and logs see: refusing tool arguments
//! that carry a secret, blanking secrets an upstream echoes back in results, errors and tool
//! listings, and blanking every secret this process has read from a store out of its log lines
//! (rmcp, reqwest and hyper log raw messages at debug and trace level).
//!
//! A secret is looked for in every form [`forms`](super::forms) lists (raw, JSON-escaped,
//! percent-encoded, base64 at each alignment, hex, each line of a multi-line value, and the
//! escapes a log line adds, and the encodings an upstream bent on getting past a filter reaches
//! for), all at once: one Aho-Corasick automaton of every form, matched ignoring ASCII case (a
//! value upper-cased is still the value), whose matches of base64 forms are then checked for
//! their exact bytes. That is one pass over the text: a secret of random letters and digits
//! gives a search nothing rare to skip ahead on, so each pass reads every byte.
//! Every occurrence of every form is found, overlapping ones included, and the union of what
//! they cover is blanked, so two secrets (or a secret and its own line) that overlap in the text
//! are both blanked whole. A base64, base32, hex or escaped match is widened to the whole run of
//! its characters around it: the edges of a base64 or base32 run carry a few of the secret's
//! bits, and those forms spell out only a value's first bytes, the run holding the rest.
//!
//! A value spelled out with any separators at all, or its bytes' codes however punctuated, is
//! found in the text squeezed to its ASCII letters and digits ([`forms::squeezed`]) by a third
//! automaton of pieces, matched exactly; a match blanks from its first letter to its last.
//!
//! In a JSON answer, a secret taken apart across its strings (two fields, two content blocks, a
//! list of its characters or of their codes) is looked for too, in the strings read one after
//! another in document order and down each column of a list of objects; every string a match
//! spans is blanked whole.
//!
//! A JSON number is blanked too (replaced by the string [`MASK`]) when its text holds a secret:
//! an upstream that reads an all-digit secret (a PIN, a numeric key or account number) as a
//! number echoes it as one. A second automaton, built only when some form of a secret could be
//! part of a number's text at all, looks at the number as serde_json writes it and, for one
//! that is not an integer (`7.3194628501937e13`), at its plain decimal digits, which are what a
//! script sees; so numbers cost nothing more when no secret is number-like. The bytes of a file
//! that is not UTF-8 are searched with the same automata, since every form is a byte string.
//!
//! A piece of a secret is a secret too: every run of [`FRAGMENT`](forms::FRAGMENT) characters of
//! each line is a form of its own, unless it reads as ordinary text (a webhook's host, a
//! passphrase's words), so a value wrapped at a width, cut into a dump's text column or handed
//! out a half per answer is blanked wherever a piece of at least that length is; and every run of
//! eight of its bytes in hex as `xxd`, `hexdump -C`, `od` and `xxd -p` write them and in base64,
//! so a dump's line with that many of them is blanked, and base64 wrapped into lines anywhere
//! in the secret is found on either side of the break.
//!
//! Pieces are looked for only in what upstreams send. What a script writes itself (its code, the
//! arguments of its calls, what it returns or logs, and an upstream's echo of its own arguments)
//! is searched for whole values ([`Redaction::for_script`], [`Sent`]): a blank there would tell
//! the script that a piece it guessed is in a secret.
//!
//! What this cannot catch: a secret an upstream splits across answers into pieces shorter than
//! that, or across the strings of one in an order other than the document's or a column's, or
//! within a text in a way not listed (base64 wrapped into lines shorter than about 14
//! characters, the few bytes a dump's first and last lines hold of it, a value spelled out with
//! letters or digits between its characters or across a log line's escaped line breaks),
//! encodes in
//! a way not listed (encrypted, compressed, HTML entities for some characters and not others,
//! look-alike characters other than fullwidth ones, base64 of something other than the value's
//! UTF-8 or UTF-16, three layers deep, the codes of a non-ASCII value's UTF-8 bytes as numbers),
//! an all-digit secret too long for the float an upstream parsed it into (past about 17 digits
//! its last digits are lost, and the first ones stay), or leaks through behaviour rather than
//! text (a script comparing guesses one character at a time through what a tool does).

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, BuildError, MatchKind};
use serde_json::{Number, Value};

use super::Secret;
use super::forms::{self, Kind};
use super::leaves::{Leaves, mask_leaves};

pub use super::forms::SHORTEST;

/// What replaces a secret's value.
pub const MASK: &str = "•••";

/// Values of fewer characters than this are blanked (from [`SHORTEST`] on), but weakly: a few
/// characters, and their short encodings, also turn up in ordinary text (which is blanked
/// too), and a short value is easier to guess from the pieces that stay. `credential set`
/// warns below it. Eight characters is where a value's shortest base64 form is ten characters,
/// which chance leaves alone even in megabytes of logs.
pub const WEAK: usize = 8;

/// A set of secret values to look for, in all their forms.
#[derive(Default)]
pub struct Redaction {
    matcher: Option<Matcher>,
    /// The longest form, in bytes: how far back from a cut end the start of a secret may lie.
    margin: usize,
}

enum Matcher {
    Forms {
        /// Every form, matched ignoring ASCII case.
        automaton: AhoCorasick,
        /// Each form, by pattern id.
        forms: Vec<Form>,
        /// Pieces of values squeezed, matched exactly in squeezed text (see
        /// [`forms::squeezed`]); pieces all, so never searched for in what a script wrote.
        squeezed: Option<AhoCorasick>,
        /// The forms that can be part of a number's text, as a parser leaves them, matched
        /// ignoring ASCII case (`e` and `E`), and for each whether it is a piece's; none when no
        /// secret is number-like.
        number: Option<(AhoCorasick, Vec<bool>)>,
    },
    /// The automata could not be built (only for absurdly large secrets): every string is
    /// blanked whole, since letting text through unchecked could leak.
    Unavailable,
}

/// One form of a secret, as the automaton finds it.
struct Form {
    text: String,
    kind: Kind,
    /// A form of a piece of the value (see [`forms::forms_of`]) rather than of the whole.
    piece: bool,
}

/// Which matches a search counts: all of them; only those of whole values, for what a script
/// wrote itself (see [`Redaction::for_script`]); or, in an answer to a call, all but the pieces
/// whose text the call's own arguments hold (see [`Redaction::clean_json_answer`]).
#[derive(Clone, Copy)]
enum Reach<'a> {
    All,
    Whole,
    Answer(&'a Sent),
}

impl Reach<'_> {
    /// Whether a match whose text is `matched` counts, of a piece's form or of a whole value's.
    fn counts(self, piece: bool, matched: &[u8]) -> bool {
        match self {
            Reach::All => true,
            Reach::Whole => !piece,
            Reach::Answer(sent) => !piece || !sent.holds(matched),
        }
    }
}

/// What a script sent with one call: the text of the strings (and keys) of its arguments. An
/// answer that echoes it (an echo tool, an error quoting a bad value) tells the script nothing it
/// did not know, so a piece of a secret found there is left as it is: blanked, it would tell the
/// script that ten characters it guessed are in a secret.
#[derive(Debug, Default)]
pub struct Sent {
    /// Each string, ASCII lower-cased as the automaton matches.
    texts: Vec<Vec<u8>>,
}

impl Sent {
    /// Nothing sent: an answer that is not to a call (a listing, a connect's failure).
    pub const NOTHING: Sent = Sent { texts: Vec::new() };

    pub fn of(arguments: &Value) -> Sent {
        let mut texts = Vec::new();
        sent_texts(arguments, &mut texts);
        Sent { texts }
    }

    pub fn of_map(arguments: &serde_json::Map<String, Value>) -> Sent {
        let mut texts = Vec::new();
        sent_map_texts(arguments, &mut texts);
        Sent { texts }
    }

    /// Whether one of the strings holds `matched`, ignoring ASCII case.
    fn holds(&self, matched: &[u8]) -> bool {
        let matched = matched.to_ascii_lowercase();
        !matched.is_empty()
            && self
                .texts
                .iter()
                .any(|text| text.windows(matched.len()).any(|w| w == matched))
    }
}

impl Redaction {
    pub fn new(secrets: impl IntoIterator<Item = Secret>) -> Redaction {
        let mut seen = HashSet::new();
        let mut forms = Vec::new();
        let mut margin = 0;
        let (mut number, mut number_pieces) = (Vec::new(), Vec::new());
        let mut squeezed = Vec::new();
        for secret in secrets {
            for value in searched(secret.expose()) {
                let forms::SecretForms {
                    whole,
                    pieces,
                    squeezed: pressed,
                } = forms::forms_of(value);
                squeezed.extend(pressed);
                for (list, piece) in [(whole, false), (pieces, true)] {
                    let numbers = forms::number_forms(&list);
                    number_pieces.extend(numbers.iter().map(|_| piece));
                    number.extend(numbers);
                    for (text, kind) in list {
                        if !seen.insert((text.clone(), kind)) {
                            continue;
                        }
                        // A spelled-out form reaches as far as the rest of the value after it.
                        let reach = match kind {
                            Kind::Spelled { rest } => text.len() + rest,
                            _ => text.len(),
                        };
                        margin = margin.max(reach);
                        forms.push(Form { text, kind, piece });
                    }
                }
            }
        }
        squeezed.sort_unstable();
        squeezed.dedup();
        let patterns = forms.iter().map(|form| form.text.as_str());
        let exact = automaton(&squeezed, false);
        let matcher = match (
            automaton(patterns, true),
            automaton(number.iter(), true),
            exact,
        ) {
            (Ok(None), ..) => return Redaction::default(),
            (Ok(Some(automaton)), Ok(number), Ok(squeezed)) => Matcher::Forms {
                automaton,
                forms,
                squeezed,
                number: number.map(|automaton| (automaton, number_pieces)),
            },
            (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => {
                tracing::error!(
                    "secrets cannot be searched for ({e}), so every text that could hold one is blanked whole; store shorter secrets"
                );
                Matcher::Unavailable
            }
        };
        Redaction {
            matcher: Some(matcher),
            margin,
        }
    }

    /// How many bytes past a bound a reader that cuts text must keep so that
    /// [`clean_start`](Self::clean_start) still shows everything up to the bound: the longest
    /// form of any secret.
    pub fn margin(&self) -> usize {
        self.margin
    }

    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// True when any string in `value` (keys included) or any number holds a secret in any form.
    pub fn found_in(&self, value: &Value) -> bool {
        self.found_in_value(value, Reach::All)
    }

    /// What a script wrote itself (its code, the arguments of its calls, what it returns or
    /// logs), searched for the forms of whole values only. A script never holds a secret unless
    /// an upstream leaked it, but it can guess: were its own text searched for pieces too, each
    /// answer would tell it whether ten characters it guessed are in a secret, and a known prefix
    /// (`sk_live_`) would give the rest a character at a time. A whole value (or its first dozen
    /// characters spelled out) cannot be guessed that way.
    pub fn for_script(&self) -> ScriptWritten<'_> {
        ScriptWritten(self)
    }

    fn found_in_value(&self, value: &Value, reach: Reach<'_>) -> bool {
        self.found_in_leaves(value, reach)
            || !self.split_across_leaves(value, true, reach).is_empty()
    }

    fn found_in_leaves(&self, value: &Value, reach: Reach<'_>) -> bool {
        match value {
            Value::String(text) => self.found_in_text_as(text, reach),
            Value::Number(number) => self.found_in_number_as(number, reach),
            Value::Array(items) => items.iter().any(|v| self.found_in_leaves(v, reach)),
            Value::Object(map) => map
                .iter()
                .any(|(k, v)| self.found_in_text_as(k, reach) || self.found_in_leaves(v, reach)),
            _ => false,
        }
    }

    /// True when `text` holds a secret in any form.
    pub fn found_in_text(&self, text: &str) -> bool {
        self.found_in_text_as(text, Reach::All)
    }

    fn found_in_text_as(&self, text: &str, reach: Reach<'_>) -> bool {
        match &self.matcher {
            None => false,
            Some(Matcher::Unavailable) => !text.is_empty(),
            Some(Matcher::Forms {
                automaton,
                forms,
                squeezed,
                ..
            }) => {
                matches(automaton, forms, text.as_bytes(), reach)
                    .next()
                    .is_some()
                    || !squeezed_matches(squeezed.as_ref(), text.as_bytes(), reach).is_empty()
            }
        }
    }

    /// True when `number` holds a secret: its text as serde_json writes it (and sends it on),
    /// or, for one that is not an integer, its plain decimal digits (Rust's `{}` of the float,
    /// never an exponent), which is what a script sees of `7.3194628501937e13`.
    pub fn found_in_number(&self, number: &Number) -> bool {
        self.found_in_number_as(number, Reach::All)
    }

    fn found_in_number_as(&self, number: &Number, reach: Reach<'_>) -> bool {
        let (automaton, pieces) = match &self.matcher {
            None => return false,
            Some(Matcher::Unavailable) => return true,
            Some(Matcher::Forms { number: None, .. }) => return false,
            Some(Matcher::Forms {
                number: Some((automaton, pieces)),
                ..
            }) => (automaton, pieces),
        };
        let found = |text: String| {
            automaton.find_overlapping_iter(&text).any(|found| {
                let piece = pieces.get(found.pattern().as_usize()).copied();
                reach.counts(piece.unwrap_or(false), &text.as_bytes()[found.range()])
            })
        };
        if found(number.to_string()) {
            return true;
        }
        let integer = number.is_i64() || number.is_u64();
        !integer
            && number
                .as_f64()
                .is_some_and(|float| found(float.to_string()))
    }

    /// `text` with every form of every secret replaced by [`MASK`].
    pub fn clean(&self, text: &str) -> String {
        self.clean_to(text, text.len(), Reach::All)
    }

    /// `text`, the start of a longer text whose rest was never seen, cleaned and without its
    /// last [`margin`](Self::margin) bytes. A secret cut by the end of `text` matches no form,
    /// so its first characters would otherwise stay; it starts within the margin, which is
    /// dropped (a secret matched whole across the new end is blanked whole).
    pub fn clean_start(&self, text: &str) -> String {
        if self.matcher.is_none() {
            return text.to_string();
        }
        let mut end = text.len().saturating_sub(self.margin);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.clean_to(text, end, Reach::All)
    }

    /// `text` up to `end`, cleaned of every secret found in the whole of it.
    fn clean_to(&self, text: &str, end: usize, reach: Reach<'_>) -> String {
        let Some(spans) = self.spans(text.as_bytes(), reach) else {
            return text.to_string();
        };
        if spans.is_empty() && end == text.len() {
            return text.to_string();
        }
        let blanked = blank(text.as_bytes(), &spans, end);
        // Every span starts and ends on a character boundary (patterns are whole UTF-8, runs
        // are ASCII), and so does `end`, so this is never lossy; lossy rather than a panic if it
        // ever were.
        String::from_utf8(blanked).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    /// `bytes` with every form of every secret replaced by [`MASK`]: for a file that is not
    /// UTF-8 text, which holds a secret's forms as bytes all the same (the blanked file no
    /// longer matches a digest taken of it, as blanked text does not).
    pub fn clean_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        match self.spans(&bytes, Reach::All) {
            Some(spans) if !spans.is_empty() => blank(&bytes, &spans, bytes.len()),
            _ => bytes,
        }
    }

    /// The byte ranges of `bytes` to blank, or none when there is nothing to look for. When
    /// the automata could not be built, the whole of it.
    fn spans(&self, bytes: &[u8], reach: Reach<'_>) -> Option<Vec<(usize, usize)>> {
        self.spans_in(bytes, reach, true)
    }

    /// [`spans`](Self::spans), squeezed text searched too only when `squeeze` (one text: the
    /// strings of a JSON answer joined lose where each ended, which squeezing would not see).
    fn spans_in(
        &self,
        bytes: &[u8],
        reach: Reach<'_>,
        squeeze: bool,
    ) -> Option<Vec<(usize, usize)>> {
        match &self.matcher {
            None => None,
            Some(Matcher::Unavailable) if bytes.is_empty() => Some(Vec::new()),
            Some(Matcher::Unavailable) => Some(vec![(0, bytes.len())]),
            Some(Matcher::Forms {
                automaton,
                forms,
                squeezed,
                ..
            }) => {
                let found = matches(automaton, forms, bytes, reach);
                let squeezed = squeezed.as_ref().filter(|_| squeeze);
                let pressed = squeezed_matches(squeezed, bytes, reach);
                Some(spans(bytes, found.chain(pressed)))
            }
        }
    }

    /// Blanks secrets in every string of `value`, keys included, and replaces a number that
    /// holds one by [`MASK`]: for what an upstream sends, whose numbers can be its secrets.
    pub fn clean_json(&self, value: &mut Value) {
        self.clean_value(value, true, Reach::All);
    }

    /// Blanks secrets in every string of `value`, keys included, and leaves its numbers: for a
    /// record of this process's own (counts, sizes, times) that must still read back as one.
    pub fn clean_json_strings(&self, value: &mut Value) {
        self.clean_value(value, false, Reach::All);
    }

    /// [`clean_json`](Self::clean_json) for an upstream's answer to a call that sent `sent`:
    /// a piece of a secret that the arguments themselves hold is the script's own guess echoed,
    /// and is left as it is (see [`Sent`]).
    pub fn clean_json_answer(&self, value: &mut Value, sent: &Sent) {
        self.clean_value(value, true, Reach::Answer(sent));
    }

    /// [`clean`](Self::clean) for the text of an upstream's answer to a call that sent `sent`
    /// (see [`clean_json_answer`](Self::clean_json_answer)).
    pub fn clean_answer(&self, text: &str, sent: &Sent) -> String {
        self.clean_to(text, text.len(), Reach::Answer(sent))
    }

    fn clean_value(&self, value: &mut Value, numbers: bool, reach: Reach<'_>) {
        if self.is_empty() {
            return;
        }
        self.clean_leaves(value, numbers, reach);
        let split = self.split_across_leaves(value, numbers, reach);
        if !split.is_empty() {
            let mut index = 0;
            mask_leaves(value, numbers, &split, &mut index);
        }
    }

    /// Blanks what each string (key or value) and number of `value` holds on its own.
    fn clean_leaves(&self, value: &mut Value, numbers: bool, reach: Reach<'_>) {
        match value {
            Value::String(text) if self.found_in_text_as(text, reach) => {
                *text = self.clean_to(text, text.len(), reach)
            }
            Value::Number(number) if numbers && self.found_in_number_as(number, reach) => {
                *value = Value::String(MASK.to_string())
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|v| self.clean_leaves(v, numbers, reach)),
            Value::Object(map) => {
                if map.keys().any(|k| self.found_in_text_as(k, reach)) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.clean_to(&k, k.len(), reach), v))
                        .collect();
                }
                map.values_mut()
                    .for_each(|v| self.clean_leaves(v, numbers, reach));
            }
            _ => {}
        }
    }

    /// The leaves of `value` (numbered in document order) that a secret is split across: a
    /// form of one found in the text of several leaves read one after another, as an upstream
    /// writes a value it took apart (`{"a": "sec", "b": "ret"}`, a list of its characters or of
    /// their codes). Leaves are read in document order, and down each column of a list of
    /// objects (the `text` of each content block, a field of each row), which other leaves do
    /// not interrupt. Only the `margin` bytes at each end of a long leaf are read, since a form
    /// reaching into another leaf is no longer than that.
    fn split_across_leaves(
        &self,
        value: &Value,
        numbers: bool,
        reach: Reach<'_>,
    ) -> HashSet<usize> {
        let mut leaves = Leaves {
            numbers,
            pieces: Vec::new(),
            columns: Vec::new(),
        };
        leaves.walk(value);
        let mut split = HashSet::new();
        if leaves.pieces.len() < 2 {
            return split;
        }
        let everything: Vec<usize> = (0..leaves.pieces.len()).collect();
        for sequence in std::iter::once(&everything).chain(&leaves.columns) {
            let mut joined = Vec::new();
            let mut bounds = Vec::with_capacity(sequence.len());
            for &leaf in sequence {
                let piece = &leaves.pieces[leaf];
                let start = joined.len();
                if piece.len() > 2 * self.margin + 1 {
                    joined.extend_from_slice(&piece[..self.margin]);
                    // Nothing spans the middle left out: no form holds a NUL.
                    joined.push(0);
                    joined.extend_from_slice(&piece[piece.len() - self.margin..]);
                } else {
                    joined.extend_from_slice(piece);
                }
                bounds.push((leaf, start, joined.len()));
            }
            for (start, end) in self.spans_in(&joined, reach, false).unwrap_or_default() {
                let touched: Vec<usize> = bounds
                    .iter()
                    .filter(|(_, from, to)| *from < end && start < *to)
                    .map(|(leaf, ..)| *leaf)
                    .collect();
                if touched.len() > 1 {
                    split.extend(touched);
                }
            }
        }
        split
    }
}

/// A [`Redaction`] for what a script wrote itself: the forms of whole values only (see
/// [`Redaction::for_script`]).
#[derive(Clone, Copy)]
pub struct ScriptWritten<'a>(&'a Redaction);

impl ScriptWritten<'_> {
    /// True when any string in `value` (keys included) or any number holds a whole secret.
    pub fn found_in(self, value: &Value) -> bool {
        self.0.found_in_value(value, Reach::Whole)
    }

    /// `text` with every whole secret replaced by [`MASK`].
    pub fn clean(self, text: &str) -> String {
        self.0.clean_to(text, text.len(), Reach::Whole)
    }

    /// [`Redaction::clean_json`], for whole secrets.
    pub fn clean_json(self, value: &mut Value) {
        self.0.clean_value(value, true, Reach::Whole);
    }

    /// [`Redaction::clean_json_strings`], for whole secrets.
    pub fn clean_json_strings(self, value: &mut Value) {
        self.0.clean_value(value, false, Reach::Whole);
    }
}

/// Each string and key of `value`, ASCII lower-cased, into `texts` (see [`Sent`]).
fn sent_texts(value: &Value, texts: &mut Vec<Vec<u8>>) {
    match value {
        Value::String(text) => texts.push(text.to_ascii_lowercase().into_bytes()),
        Value::Array(items) => items.iter().for_each(|v| sent_texts(v, texts)),
        Value::Object(map) => sent_map_texts(map, texts),
        _ => {}
    }
}

fn sent_map_texts(map: &serde_json::Map<String, Value>, texts: &mut Vec<Vec<u8>>) {
    for (key, value) in map {
        texts.push(key.to_ascii_lowercase().into_bytes());
        sent_texts(value, texts);
    }
}

/// `bytes` up to `end` with each of `spans` (sorted, disjoint) replaced by [`MASK`]; a span
/// that crosses `end` is blanked whole.
fn blank(bytes: &[u8], spans: &[(usize, usize)], end: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(end);
    let mut at = 0;
    for &(start, stop) in spans {
        if start >= end {
            break;
        }
        out.extend_from_slice(&bytes[at..start]);
        out.extend_from_slice(MASK.as_bytes());
        at = stop;
    }
    if at < end {
        out.extend_from_slice(&bytes[at..end]);
    }
    out
}

/// An automaton finding every occurrence of `patterns` (ignoring ASCII case when
/// `ignore_case`), overlapping ones included (only the standard semantics report those); none
/// when there is nothing to find.
fn automaton<P: AsRef<[u8]>>(
    patterns: impl IntoIterator<Item = P>,
    ignore_case: bool,
) -> Result<Option<AhoCorasick>, BuildError> {
    let patterns: Vec<P> = patterns.into_iter().collect();
    if patterns.is_empty() {
        return Ok(None);
    }
    AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(ignore_case)
        .build(patterns)
        .map(Some)
}

/// Every occurrence in `bytes` of a form `reach` counts, as its byte range and kind: the
/// automaton's matches, less those of a form matched exactly whose bytes differ in case.
fn matches<'a>(
    automaton: &'a AhoCorasick,
    forms: &'a [Form],
    bytes: &'a [u8],
    reach: Reach<'a>,
) -> impl Iterator<Item = (usize, usize, Kind)> + 'a {
    automaton
        .find_overlapping_iter(bytes)
        .filter_map(move |found| {
            let form = forms.get(found.pattern().as_usize())?;
            let exact = form.kind.ignores_case() || &bytes[found.range()] == form.text.as_bytes();
            let counts = exact && reach.counts(form.piece, &bytes[found.range()]);
            counts.then_some((found.start(), found.end(), form.kind))
        })
}

/// The matches in `bytes` of the squeezed pieces `squeezed` finds in its squeezed text (see
/// [`forms::squeezed`]), each as the span of `bytes` from the first of its letters to the last,
/// separators and all; none for a `reach` that counts no piece, or for one whose text the
/// call's own arguments hold.
fn squeezed_matches(
    squeezed: Option<&AhoCorasick>,
    bytes: &[u8],
    reach: Reach<'_>,
) -> Vec<(usize, usize, Kind)> {
    let Some(automaton) = squeezed else {
        return Vec::new();
    };
    // No piece is shorter than ten letters and digits: a shorter text (most of a JSON answer's
    // strings) is not squeezed at all.
    if !reach.counts(true, b"") || bytes.len() < forms::FRAGMENT {
        return Vec::new();
    }
    let pressed = forms::squeezed(bytes);
    let found: Vec<(usize, usize)> = automaton
        .find_overlapping_iter(&pressed)
        .map(|found| (found.start(), found.end()))
        .collect();
    if found.is_empty() {
        return Vec::new();
    }
    // Where each kept byte was: only when something was found, which is rare.
    let kept = forms::squeezed_at(bytes);
    found
        .into_iter()
        .filter_map(|(start, end)| {
            let (first, last) = (*kept.get(start)?, *kept.get(end.checked_sub(1)?)?);
            let span = (first, last + 1);
            reach
                .counts(true, &bytes[span.0..span.1])
                .then_some((span.0, span.1, Kind::Text))
        })
        .collect()
}

/// The byte ranges of `bytes` to blank: every match of every form (base64 and base32 ones
/// widened to their run, spelled-out ones to the rest of the value), sorted and merged.
fn spans(bytes: &[u8], matches: impl Iterator<Item = (usize, usize, Kind)>) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    // The run last widened to: matches inside it (a long run holds many) add nothing.
    let mut run = (0, 0);
    for (mut start, mut end, kind) in matches {
        if let Some(within) = kind.run() {
            if run.0 <= start && end <= run.1 {
                continue;
            }
            while start > 0 && within(bytes[start - 1]) {
                start -= 1;
            }
            while end < bytes.len() && within(bytes[end]) {
                end += 1;
            }
            run = (start, end);
        }
        if let Kind::Spelled { rest } = kind {
            end = (end + rest).min(bytes.len());
            // To the end of the character the rest ends in, should the text differ from it.
            while end < bytes.len() && bytes[end] & 0xC0 == 0x80 {
                end += 1;
            }
        }
        spans.push((start, end));
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Every secret value this process has read from a store, and the redaction of them that
/// [`RedactingStderr`] applies.
static SEEN: RwLock<Seen> = RwLock::new(Seen {
    secrets: Vec::new(),
    redaction: None,
});

struct Seen {
    secrets: Vec<Secret>,
    redaction: Option<Arc<Redaction>>,
}

/// Remembers a value read from a store, so that no log line shows it in any form.
pub(crate) fn remember(secret: &Secret) {
    if secret.expose().chars().count() < SHORTEST {
        return;
    }
    let mut seen = SEEN.write().unwrap_or_else(|p| p.into_inner());
    if seen.secrets.contains(secret) {
        return;
    }
    seen.secrets.push(secret.clone());
    // Built again when a log line is next written, not here: a process reads its secrets one
    // after another as it starts, and most write no log line at all.
    seen.redaction = None;
}

/// The redaction of every value in [`SEEN`], built now if a value was added since it last was;
/// none when no value was read.
fn seen_redaction() -> Option<Arc<Redaction>> {
    if let Some(redaction) = &SEEN.read().unwrap_or_else(|p| p.into_inner()).redaction {
        return Some(redaction.clone());
    }
    let mut seen = SEEN.write().unwrap_or_else(|p| p.into_inner());
    if seen.secrets.is_empty() {
        return None;
    }
    let redaction = Arc::new(Redaction::new(seen.secrets.iter().cloned()));
    seen.redaction = Some(redaction.clone());
    Some(redaction)
}

/// Standard error with every value in [`SEEN`] blanked: the log writer. The log formatter
/// writes each event in one call, so a value is never split across two writes.
pub struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let redaction = seen_redaction();
        let text = String::from_utf8_lossy(buf);
        match redaction {
            Some(redaction) if redaction.found_in_text(&text) => {
                std::io::stderr().write_all(redaction.clean(&text).as_bytes())?
            }
            _ => std::io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// What is searched for a secret: its value, and the password of a `user:password` pair (as
/// HTTP Basic sends them) when that alone is long enough to search for safely, since a server
/// may echo the password without the user.
fn searched(value: &str) -> impl Iterator<Item = &str> {
    let password = value
        .split_once(':')
        .filter(|(user, password)| {
            !user.is_empty()
                && password.chars().count() >= WEAK
                && !password.contains(':')
                && !value.chars().any(char::is_whitespace)
        })
        .map(|(_, password)| password);
    std::iter::once(value).chain(password)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn a_value_spelled_out_with_any_separators_is_blanked() {
        let secret = "Qz7Lp2Xw9Rk4Tm8Vb3Nc6Hd1";
        let redaction = Redaction::new([Secret::new(secret.into())]);
        let chars: Vec<String> = secret.chars().map(String::from).collect();
        let decimal: Vec<String> = secret.bytes().map(|b| b.to_string()).collect();
        let hex: Vec<String> = secret.bytes().map(|b| format!("{b:02x}")).collect();
        let mut spelled: Vec<String> = [
            ";", "+", "*", "#", "\\", "**", "  ", " - ", " | ", "\r\n", "\u{a0}", "\u{2009}",
            "\u{feff}", "\u{2062}", "\u{2063}", "\u{180e}",
        ]
        .iter()
        .map(|separator| chars.join(separator))
        .collect();
        // Separators that vary, and codes however they are punctuated.
        let varying: String = chars
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c}{}", [";", " ", "/", "\u{200b}"][i % 4]))
            .collect();
        spelled.extend([
            varying,
            decimal.join(";"),
            hex.join(","),
            hex.join(" | ").to_uppercase(),
        ]);
        for form in spelled {
            let cleaned = redaction.clean(&format!("token: {form} (end)"));
            // From its first letter to its last; a separator after the last may stay.
            assert!(
                cleaned.starts_with(&format!("token: {MASK}")),
                "{form:?}: {cleaned:?}"
            );
            assert_eq!(
                forms::squeezed(cleaned.as_bytes()),
                b"tokenend",
                "{form:?}: {cleaned:?}"
            );
        }
        // Entities without their `;`, which HTML parsers read all the same.
        let entities: String = secret
            .chars()
            .map(|c| format!("&#{}", u32::from(c)))
            .collect();
        assert_eq!(redaction.clean(&entities), MASK);
        // Prose and numbers that share letters and digits with it in another order stay.
        for text in [
            "Q z 7 is a model number; L p 2 is another",
            "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20",
            "the quick brown fox jumps over the lazy dog",
        ] {
            assert_eq!(redaction.clean(text), text);
        }
        // What a script wrote is searched for whole values only: a spelled-out guess at part of
        // a secret is its own.
        assert_eq!(
            redaction.for_script().clean(&chars[..12].join(";")),
            chars[..12].join(";")
        );
    }

    #[test]
    fn the_password_of_a_basic_pair_is_blanked_on_its_own() {
        let redaction = Redaction::new([Secret::new("ann:correct-horse-battery".into())]);
        assert_eq!(
            redaction.clean("wrong password correct-horse-battery for ann"),
            format!("wrong password {MASK} for ann")
        );
        // Not a pair: a URL, a short password, text with spaces.
        for value in [
            "https://h.example:port/x",
            "ann:short",
            "a b:longer-than-eight",
        ] {
            let redaction = Redaction::new([Secret::new(value.into())]);
            let (_, after) = value.split_once(':').expect("a colon");
            assert_eq!(redaction.clean(after), after, "{value}");
        }
    }

    #[test]
    fn finds_and_blanks_secrets_anywhere() {
        let redaction =
            Redaction::new([Secret::new("tok-123456".into()), Secret::new("ab".into())]);
        let mut value = json!({ "a": ["x", "Bearer tok-123456"], "tok-123456": 1, "ab": "ab" });
        assert!(redaction.found_in(&value));
        redaction.clean_json(&mut value);
        assert_eq!(
            value,
            json!({ "a": ["x", "Bearer •••"], "•••": 1, "ab": "ab" })
        );
        assert!(!redaction.found_in(&value));
        assert_eq!(
            redaction.clean("401: token tok-123456 rejected"),
            "401: token ••• rejected"
        );
    }

    #[test]
    fn a_remembered_secret_is_known_in_its_escaped_forms() {
        let secret = "quote\"back\\slash\ttab-7f3a";
        remember(&Secret::new(secret.into()));
        let json = serde_json::to_string(secret).unwrap();
        let debug = format!("{secret:?}");
        let json_of_debug = serde_json::to_string(&debug).unwrap();
        let redaction = seen_redaction().expect("remembered");
        for line in [secret, &json, &debug, &json_of_debug] {
            let cleaned = redaction.clean(&format!("log: {line}"));
            assert!(!cleaned.contains("7f3a"), "{cleaned}");
        }
    }

    /// Encoders written apart from the ones the matcher uses, the way the libraries upstreams
    /// use them do it (Python's `json` and `urllib.parse`, `JSON.stringify`, PHP, Jackson).
    mod emit {
        /// A JSON string's inside: `ascii` escapes everything past ASCII (Python's default),
        /// `upper` writes `\u00E9` (Jackson), `slash` writes `\/` (PHP).
        pub fn json(s: &str, ascii: bool, upper: bool, slash: bool) -> String {
            let mut out = String::new();
            let unit = |out: &mut String, u: u16| {
                let hex = format!("\\u{u:04x}");
                out.push_str(&if upper {
                    hex.to_uppercase().replace("\\U", "\\u")
                } else {
                    hex
                });
            };
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '/' if slash => out.push_str("\\/"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    c if (c as u32) < 0x20 || (ascii && (c as u32) > 0x7e) => {
                        let mut units = [0u16; 2];
                        for u in c.encode_utf16(&mut units) {
                            unit(&mut out, *u);
                        }
                    }
                    c => out.push(c),
                }
            }
            out
        }

        /// Percent-encoding that leaves ASCII letters, digits and `keep` alone; `plus` writes a
        /// space as `+` (form encoding).
        pub fn percent(s: &str, keep: &str, plus: bool, upper: bool) -> String {
            let mut out = String::new();
            for &b in s.as_bytes() {
                if b.is_ascii_alphanumeric() || keep.as_bytes().contains(&b) {
                    out.push(b as char);
                } else if b == b' ' && plus {
                    out.push('+');
                } else if upper {
                    out.push_str(&format!("%{b:02X}"));
                } else {
                    out.push_str(&format!("%{b:02x}"));
                }
            }
            out
        }

        pub fn base64(bytes: &[u8], url: bool) -> String {
            let alphabet: &[u8] = if url {
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            } else {
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            };
            let mut out = String::new();
            for chunk in bytes.chunks(3) {
                let n = chunk
                    .iter()
                    .enumerate()
                    .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
                for i in 0..=chunk.len() {
                    out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
                }
                for _ in chunk.len()..3 {
                    out.push('=');
                }
            }
            out
        }

        pub fn hex(s: &str) -> String {
            s.bytes().map(|b| format!("{b:02x}")).collect()
        }

        /// RFC 4648 base32, padded, in `alphabet` (upper case).
        pub fn base32(bytes: &[u8], alphabet: &[u8]) -> String {
            let mut bits = String::new();
            for b in bytes {
                bits.push_str(&format!("{b:08b}"));
            }
            while !bits.len().is_multiple_of(5) {
                bits.push('0');
            }
            let mut out: String = bits
                .as_bytes()
                .chunks(5)
                .map(|c| {
                    let i = usize::from_str_radix(std::str::from_utf8(c).unwrap(), 2).unwrap();
                    alphabet[i] as char
                })
                .collect();
            while !out.len().is_multiple_of(8) {
                out.push('=');
            }
            out
        }

        pub fn rot13(s: &str) -> String {
            let shift = |c: char, base: u8| (((c as u8 - base + 13) % 26) + base) as char;
            s.chars()
                .map(|c| match c {
                    'a'..='z' => shift(c, b'a'),
                    'A'..='Z' => shift(c, b'A'),
                    c => c,
                })
                .collect()
        }

        pub fn utf16(s: &str, little_endian: bool) -> Vec<u8> {
            s.encode_utf16()
                .flat_map(|u| {
                    if little_endian {
                        u.to_le_bytes()
                    } else {
                        u.to_be_bytes()
                    }
                })
                .collect()
        }

        /// HTML escaping: `&`, `<`, `>` always, the quotes as given (or left alone).
        pub fn html(s: &str, quot: Option<&str>, apos: Option<&str>) -> String {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', quot.unwrap_or("\""))
                .replace('\'', apos.unwrap_or("'"))
        }

        /// The lines of a value that spans several.
        pub fn lines(s: &str) -> Vec<String> {
            let parts: Vec<String> = s
                .replace("\r\n", "\n")
                .replace('\r', "\n")
                .split('\n')
                .map(str::to_string)
                .collect();
            if parts.len() > 1 { parts } else { Vec::new() }
        }
    }

    /// One way an upstream can carry a value: the text it writes around `before` and `after`,
    /// and the part of it that carries the value (for base64, the characters that depend on
    /// the value alone).
    struct Emitted {
        kind: String,
        text: String,
        needle: String,
    }

    impl Emitted {
        /// True when `cleaned` still holds the value in this encoding.
        fn found_in(&self, cleaned: &str) -> bool {
            if self.kind.starts_with("hex") || self.kind.starts_with("base32") {
                cleaned.to_lowercase().contains(&self.needle.to_lowercase())
            } else {
                cleaned.contains(&self.needle)
            }
        }
    }

    /// Every way the value and each of its lines of at least [`SHORTEST`] characters can be
    /// emitted between `before` and `after`.
    fn emitted(secret: &str, before: &str, after: &str) -> Vec<Emitted> {
        let mut values = vec![secret.to_string()];
        values.extend(
            emit::lines(secret)
                .into_iter()
                .filter(|l| l.chars().count() >= SHORTEST),
        );
        let mut out = Vec::new();
        for value in &values {
            // Base64 wrapped as PEM and mail wrap it (shorter lines here, so short values wrap).
            let mut wrapped = Vec::new();
            let stream = [value.as_bytes(), b"!\x00"].concat();
            let encoded = emit::base64(&stream, false);
            let lines: Vec<&str> = encoded
                .as_bytes()
                .chunks(32)
                .filter_map(|line| std::str::from_utf8(line).ok())
                .collect();
            if let [_, .., last] = lines.as_slice() {
                for newline in ["\n", "\r\n"] {
                    wrapped.push(Emitted {
                        kind: "base64 wrapped".into(),
                        text: format!("{before}{}{after}", lines.join(newline)),
                        needle: last.to_string(),
                    });
                }
            }
            out.extend(wrapped);
            let mut push = |kind: &str, encoded: String| {
                out.push(Emitted {
                    kind: kind.into(),
                    text: format!("{before}{encoded}{after}"),
                    needle: encoded,
                });
            };
            push("raw", value.clone());
            for (ascii, upper, slash) in [
                (false, false, false),
                (true, false, false),
                (true, true, false),
                (false, false, true),
                (true, false, true),
            ] {
                push("json", emit::json(value, ascii, upper, slash));
            }
            push(
                "json of json",
                emit::json(&emit::json(value, true, false, false), false, false, false),
            );
            let debug = format!("{value:?}");
            push("debug", debug[1..debug.len() - 1].to_string());
            // Python's quote(safe=""), quote(), quote_plus(), encodeURIComponent, lower-case hex.
            push("percent", emit::percent(value, "-._~", false, true));
            push("percent", emit::percent(value, "-._~/", false, true));
            push("percent", emit::percent(value, "-._~", true, true));
            push("percent", emit::percent(value, "-._~!'()*", false, true));
            push("percent", emit::percent(value, "-._~", false, false));
            // Encoded twice (a URL inside a query parameter); every byte escaped.
            push(
                "percent twice",
                emit::percent(
                    &emit::percent(value, "-._~", false, true),
                    "-._~",
                    false,
                    true,
                ),
            );
            // Every byte escaped, letters and digits too (matched as hex is, in either case).
            let every_byte: String = value.bytes().map(|b| format!("%{b:02X}")).collect();
            push("hex as percent escapes", every_byte.to_lowercase());
            push("hex as percent escapes", every_byte);
            push("hex", emit::hex(value));
            push("hex upper", emit::hex(value).to_uppercase());
            // Python's html.escape with and without quote, Go's html.EscapeString.
            push("html", emit::html(value, Some("&quot;"), Some("&#x27;")));
            push("html", emit::html(value, None, None));
            push("html", emit::html(value, Some("&#34;"), Some("&#39;")));
            // What an upstream set on slipping past a filter does without a library.
            push("upper case", value.to_uppercase());
            push("lower case", value.to_lowercase());
            let chars: Vec<String> = value.chars().map(String::from).collect();
            for separator in [" ", ", ", "\n", "\u{200b}", "\u{ad}"] {
                push("spelled out", chars.join(separator));
            }
            let list = serde_json::to_string(&chars).unwrap_or_default();
            push("list of characters", list[2..list.len() - 2].to_string());
            let codes: Vec<String> = value.bytes().map(|b| b.to_string()).collect();
            push("byte codes", codes.join(", "));
            let codes: Vec<String> = value.bytes().map(|b| format!("0x{b:02X}")).collect();
            push("byte codes in hex", codes.join(","));
            // Base64 of the UTF-16 a Windows program holds.
            let utf16 = emit::base64(&emit::utf16(value, true), false);
            push("base64 of utf-16", utf16.trim_end_matches('=').to_string());
            push("reversed", value.chars().rev().collect());
            push("rot13", emit::rot13(value));
            let fullwidth: String = value
                .chars()
                .map(|c| match c {
                    ' ' => '\u{3000}',
                    '!'..='~' => char::from_u32(c as u32 + 0xFEE0).unwrap(),
                    c => c,
                })
                .collect();
            push("fullwidth", fullwidth);
            let entities = |hex: bool| -> String {
                value
                    .chars()
                    .map(|c| match hex {
                        true => format!("&#X{:X};", c as u32),
                        false => format!("&#{};", c as u32),
                    })
                    .collect()
            };
            push("html every character", entities(false));
            push("hex html every character", entities(true));
            let units: String = value
                .encode_utf16()
                .map(|u| format!("\\u{u:04X}"))
                .collect();
            push("hex \\u every unit", units);
            let bytes: String = value.bytes().map(|b| format!("\\x{b:02x}")).collect();
            push("hex \\x every byte", bytes);
            push("hex spaced", {
                let pairs: Vec<String> = value.bytes().map(|b| format!("{b:02X}")).collect();
                pairs.join(" ")
            });
            push("hex colons", {
                let pairs: Vec<String> = value.bytes().map(|b| format!("{b:02x}")).collect();
                pairs.join(":")
            });
            for little_endian in [true, false] {
                let units = emit::utf16(value, little_endian);
                let hex: String = units.iter().map(|b| format!("{b:02x}")).collect();
                push(&format!("hex utf-16 le={little_endian}"), hex);
            }
            let mut base = |kind: &str, bytes: &[u8], case: fn(&str) -> String| {
                for (name, alphabet) in [
                    ("standard", &b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[..]),
                    ("hex", &b"0123456789ABCDEFGHIJKLMNOPQRSTUV"[..]),
                ] {
                    for offset in 0..5 {
                        let mut stream = b"\xfa\x01\x02\xfb"[..offset].to_vec();
                        stream.extend_from_slice(bytes);
                        stream.push(b'!');
                        let encoded = case(&emit::base32(&stream, alphabet));
                        let start = (8 * offset).div_ceil(5);
                        let end = 8 * (offset + bytes.len()) / 5;
                        out.push(Emitted {
                            kind: format!("base32 {kind} {name} offset={offset}"),
                            text: format!("{before}{encoded}{after}"),
                            needle: encoded[start..end].to_string(),
                        });
                    }
                }
            };
            base("upper", value.as_bytes(), str::to_string);
            base("lower", value.as_bytes(), str::to_lowercase);
            // Base64 of the base64.
            for offset in 0..3 {
                let mut inner = b"\xfa\x01"[..offset].to_vec();
                inner.extend_from_slice(value.as_bytes());
                let inner = emit::base64(&inner, false);
                // The inner characters that depend on the value alone, and the outer ones
                // that depend on those alone.
                let (start, end) = ((8 * offset).div_ceil(6), 8 * (offset + value.len()) / 6);
                for outer_offset in 0..3 {
                    let mut outer = b"{\""[..outer_offset].to_vec();
                    outer.extend_from_slice(inner.as_bytes());
                    let encoded = emit::base64(&outer, true);
                    let from = (8 * (outer_offset + start)).div_ceil(6);
                    let to = 8 * (outer_offset + end) / 6;
                    if to >= from + SHORTEST {
                        out.push(Emitted {
                            kind: format!("base64 of base64 offsets={offset},{outer_offset}"),
                            text: format!("{before}{encoded}{after}"),
                            needle: encoded[from..to].to_string(),
                        });
                    }
                }
            }
            for url in [false, true] {
                for offset in 0..3 {
                    let mut stream = b"\xfa\x01"[..offset].to_vec();
                    stream.extend_from_slice(value.as_bytes());
                    stream.extend_from_slice(b"!\x00");
                    let encoded = emit::base64(&stream, url);
                    // Only the characters whose six bits all come from the value.
                    let start = (8 * offset).div_ceil(6);
                    let end = 8 * (offset + value.len()) / 6;
                    let needle =
                        emit::base64(&[&[0u8; 2][..offset], value.as_bytes()].concat(), url)
                            [start..end]
                            .to_string();
                    assert!(encoded.contains(&needle));
                    out.push(Emitted {
                        kind: format!("base64 url={url} offset={offset}"),
                        text: format!("{before}{encoded}{after}"),
                        needle: needle.clone(),
                    });
                    out.push(Emitted {
                        kind: format!("base64 unpadded url={url} offset={offset}"),
                        text: format!("{before}{}{after}", encoded.trim_end_matches('=')),
                        needle: needle.clone(),
                    });
                    if !url {
                        out.push(Emitted {
                            kind: format!("base64 with \\/ offset={offset}"),
                            text: format!("{before}{}{after}", encoded.replace('/', "\\/")),
                            needle: needle.replace('/', "\\/"),
                        });
                    }
                }
            }
        }
        out
    }

    /// Secrets with what breaks naive matching: quotes, backslashes, slashes, spaces, `+`,
    /// non-ASCII (astral too), control characters, and line breaks.
    fn secrets() -> impl Strategy<Value = String> {
        let chars: Vec<char> =
            "aZ09-_.~\"\\/ +%&<'=é€中😀\u{1}\u{8}\t\u{c}\u{1b}\u{1f}\u{7f}\u{2028}"
                .chars()
                .collect();
        let char = prop_oneof![
            6 => proptest::char::range('a', 'z'),
            2 => proptest::char::range('A', 'Z'),
            2 => proptest::char::range('0', '9'),
            5 => proptest::sample::select(chars),
        ];
        let line = proptest::collection::vec(char, SHORTEST..16)
            .prop_map(|chars| chars.into_iter().collect::<String>());
        let separator = proptest::sample::select(vec!["\n", "\r\n", "\r"]);
        (
            line.clone(),
            proptest::collection::vec((separator, line), 0..3),
        )
            .prop_map(|(first, rest)| {
                rest.into_iter().fold(first, |mut s, (sep, line)| {
                    s.push_str(sep);
                    s.push_str(&line);
                    s
                })
            })
    }

    /// Ordinary text around an echo, base64 and JSON punctuation included.
    fn noise() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            proptest::sample::select(" aZ9+/=-_\"\\:{}[],.%\n".chars().collect::<Vec<_>>()),
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    fn config(cases: u32) -> ProptestConfig {
        let mut config = ProptestConfig::default();
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = cases;
        }
        // The same cases every run, so a failure in CI reproduces; PROPTEST_RNG_SEED explores.
        if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
            config.rng_seed = proptest::test_runner::RngSeed::Fixed(0x5ec_2e7);
        }
        // The fixed seed is what makes a failure reproduce; no regression files in the tree.
        config.failure_persistence = None;
        config
    }

    /// Every string in `value`, keys included.
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                out.push(k.clone());
                strings(v, out);
            }),
            _ => {}
        }
    }

    proptest! {
        #![proptest_config(config(256))]

        /// Whatever encoding an upstream echoes a secret (or one of its lines) in, and whatever
        /// text surrounds it, nothing of the encoding is left after cleaning: in plain text, in
        /// a JSON string, and in a JSON key.
        #[test]
        fn no_encoding_of_a_secret_survives_cleaning(
            secret in secrets(),
            before in noise(),
            after in noise(),
        ) {
            let redaction = Redaction::new([Secret::new(secret.clone())]);
            for emitted in emitted(&secret, &before, &after) {
                let cleaned = redaction.clean(&emitted.text);
                prop_assert!(
                    !emitted.found_in(&cleaned),
                    "{} form {:?} survives in {:?}", emitted.kind, emitted.needle, cleaned
                );
                prop_assert!(cleaned.contains(MASK));
                // The same echo inside a file that is not UTF-8 text.
                let mut binary = b"\xff\x00".to_vec();
                binary.extend_from_slice(emitted.text.as_bytes());
                binary.push(0xfe);
                let cleaned = redaction.clean_bytes(binary);
                let cleaned = String::from_utf8_lossy(&cleaned);
                prop_assert!(
                    !emitted.found_in(&cleaned),
                    "{} form {:?} survives in bytes {:?}", emitted.kind, emitted.needle, cleaned
                );
                let mut value = json!({ "content": [{ "text": emitted.text.clone() }] });
                value[emitted.text.as_str()] = json!(1);
                prop_assert!(redaction.found_in(&value), "{} form not found", emitted.kind);
                redaction.clean_json(&mut value);
                let mut texts = Vec::new();
                strings(&value, &mut texts);
                for text in texts {
                    prop_assert!(!emitted.found_in(&text), "{} form survives in JSON: {:?}", emitted.kind, text);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(config(128))]

        /// A secret an upstream took apart across the strings of one answer (two fields, two
        /// content blocks, a list of its characters or of their codes) is blanked where its
        /// parts are, and nothing else is.
        #[test]
        fn a_secret_split_across_strings_is_blanked_where_its_parts_are(
            secret in secrets(),
            cut in 1usize..64,
            before in noise(),
        ) {
            let redaction = Redaction::new([Secret::new(secret.clone())]);
            let chars: Vec<char> = secret.chars().collect();
            let cut = cut % (chars.len() - 1) + 1;
            let head: String = chars[..cut].iter().collect();
            let tail: String = chars[cut..].iter().collect();
            let letters: Vec<Value> = chars.iter().map(|c| json!(c.to_string())).collect();
            let codes: Vec<Value> = chars.iter().map(|c| json!(u32::from(*c))).collect();
            let answers = [
                json!({ "a": format!("{before}{head}"), "b": tail.clone(), "kept": "untouched" }),
                json!({ "content": [{ "type": "text", "text": head.clone() }, { "type": "text", "text": tail }] }),
                json!({ "letters": letters, "kept": "untouched" }),
                json!({ "codes": codes, "kept": "untouched" }),
            ];
            let mut needles = vec![secret.clone()];
            needles.extend(emit::lines(&secret).into_iter().filter(|l| l.chars().count() >= SHORTEST));
            for mut answer in answers {
                prop_assert!(redaction.found_in(&answer), "not found in {answer}");
                redaction.clean_json(&mut answer);
                let mut joined = String::new();
                joined_text(&answer, &mut joined);
                for needle in &needles {
                    prop_assert!(!joined.contains(needle.as_str()), "{needle:?} survives in {answer}");
                }
                prop_assert!(answer.get("kept").is_none_or(|kept| kept == "untouched"), "{answer}");
            }
        }
    }

    /// The strings of `value` and the characters whose codes its integers are, one after
    /// another: what a script can put back together.
    fn joined_text(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => out.push_str(s),
            Value::Number(n) => out.extend(n.as_u64().and_then(|n| char::from_u32(n as u32))),
            Value::Array(items) => items.iter().for_each(|v| joined_text(v, out)),
            Value::Object(map) => map.values().for_each(|v| joined_text(v, out)),
            _ => {}
        }
    }

    #[test]
    fn ordinary_answers_of_many_strings_are_left_as_they_were() {
        let redaction = Redaction::new([Secret::new("sk-live-4f9a2c81".into())]);
        let answer = json!({
            "rows": [{ "id": 115, "name": "sk" }, { "id": 45, "name": "live" }, { "id": 108, "name": "4f9a" }],
            "letters": ["s", "k", "-", "l", "i", "v", "e"],
            "codes": [115, 107, 45, 108, 105, 118, 101],
        });
        let mut cleaned = answer.clone();
        redaction.clean_json(&mut cleaned);
        assert_eq!(cleaned, answer);
        assert!(!redaction.found_in(&answer));
        // Its own records' numbers are never read as characters.
        let mut record = json!({ "a": "sk-live", "codes": [45, 52, 102, 57, 97, 50, 99, 56, 49] });
        redaction.clean_json_strings(&mut record);
        assert_eq!(record["codes"][0], json!(45));
    }

    #[test]
    fn the_start_of_a_cut_text_keeps_no_prefix_of_a_secret() {
        let secret = "xoxb-Sl4ckT0kenValue-1234567890abc";
        let redaction = Redaction::new([Secret::new(secret.into())]);
        assert!(redaction.margin() >= secret.len());
        // Whatever the cut leaves of the secret (its raw form or an encoding of it), none of
        // its first characters survive, and a secret wholly before the cut is blanked.
        for cut in 1..secret.len() {
            let text = format!("{}{}", "p".repeat(200), &secret[..cut]);
            let cleaned = redaction.clean_start(&text);
            assert!(!cleaned.contains("xo"), "cut {cut}: {cleaned:?}");
            assert!(
                text.starts_with(&cleaned),
                "cut {cut}: only the end is dropped"
            );
            let hex = emit::hex(secret);
            let text = format!("{}{}", "p".repeat(200), &hex[..cut * 2]);
            assert!(
                !redaction.clean_start(&text).contains("786f"),
                "hex cut {cut}"
            );
        }
        let whole = format!("token={secret} {}", "p".repeat(2 * redaction.margin()));
        let cleaned = redaction.clean_start(&whole);
        assert!(
            cleaned.starts_with(&format!("token={MASK} p")),
            "{cleaned:?}"
        );
        assert_eq!(Redaction::default().clean_start("abc"), "abc");
    }

    #[test]
    fn a_secret_is_masked_where_it_overlaps_another() {
        // Matching one secret and skipping past it must not leave the rest of the other.
        let redaction =
            Redaction::new(["token-abcd", "abcd-more-9"].map(|s| Secret::new(s.into())));
        assert_eq!(
            redaction.clean("x token-abcd-more-9 y"),
            format!("x {MASK} y")
        );
    }

    #[test]
    fn base64_is_masked_to_the_end_of_its_run() {
        // The characters next to the secret's own carry some of its bits, so the whole run goes.
        let redaction = Redaction::new([Secret::new("s3cr3t-value".into())]);
        let encoded = emit::base64(b"xs3cr3t-value!", false);
        assert_eq!(
            redaction.clean(&format!("data: {encoded}, more")),
            format!("data: {MASK}, more")
        );
        // Ordinary text with no secret in it is left exactly as it was.
        let text = "aGVsbG8gd29ybGQ= 68656c6c6f %7B\"a\":1%7D caf\\u00e9";
        assert_eq!(redaction.clean(text), text);
    }

    #[test]
    fn a_number_that_holds_a_numeric_secret_is_masked_in_every_form_a_parser_leaves() {
        let redaction = Redaction::new([Secret::new("73194628501937".into())]);
        // As an integer, as a float written with an exponent or a fraction (what a script
        // sees of it is its plain digits), negated, and inside a longer number.
        for text in [
            "73194628501937",
            "7.3194628501937e13",
            "7.3194628501937E+13",
            "73194628501937.0",
            "-73194628501937",
            "1731946285019370",
        ] {
            let mut value: Value = serde_json::from_str(&format!(
                r#"{{"pin": {text}, "list": [{text}], "default": {{"enum": [1, {text}]}}}}"#
            ))
            .expect("valid JSON");
            assert!(redaction.found_in(&value), "{text} is not found");
            redaction.clean_json(&mut value);
            assert_eq!(
                value,
                json!({ "pin": MASK, "list": [MASK], "default": { "enum": [1, MASK] } }),
                "{text}"
            );
        }
        // Other numbers, its first nine digits included, stay numbers; ten of them in a row are
        // a piece of it.
        let mut value = json!([42, 1.5, 731946285_u64, -7.3e13, 0]);
        assert!(redaction.found_in(&json!(7319462850193_u64)));
        let before = value.clone();
        assert!(!redaction.found_in(&value));
        redaction.clean_json(&mut value);
        assert_eq!(value, before);
    }

    #[test]
    fn a_numeric_secret_is_known_as_a_parser_writes_it_back() {
        // Read as a number, leading zeros and a fraction's trailing zeros are gone.
        let redaction =
            Redaction::new(["0073194628", "4417.2500"].map(|secret| Secret::new(secret.into())));
        for number in [json!(73194628), json!(4417.25), json!(-4417.25)] {
            assert!(redaction.found_in(&number), "{number}");
        }
        assert!(!redaction.found_in(&json!(4417.2)));
    }

    #[test]
    fn numbers_are_not_looked_at_for_a_secret_no_number_can_hold() {
        // No form of this secret is made of digits alone (nor is its hex, which has letters).
        let redaction = Redaction::new([Secret::new("tok-123456".into())]);
        assert!(matches!(
            redaction.matcher,
            Some(Matcher::Forms { number: None, .. })
        ));
        let mut value = json!({ "n": 123456, "m": 1.5e300 });
        let before = value.clone();
        redaction.clean_json(&mut value);
        assert_eq!(value, before);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_cleaned_around_the_secret() {
        let secret = "sk-live-SkillSecret-0123456789abcdef";
        let redaction = Redaction::new([Secret::new(secret.into())]);
        let mut bytes = b"\xff\x00key=".to_vec();
        bytes.extend_from_slice(secret.as_bytes());
        bytes.extend_from_slice(b"\n\xfe");
        bytes.extend_from_slice(emit::hex(secret).to_uppercase().as_bytes());
        bytes.extend_from_slice(b"\x80");
        let mut expected = b"\xff\x00key=".to_vec();
        expected.extend_from_slice(MASK.as_bytes());
        expected.extend_from_slice(b"\n\xfe");
        expected.extend_from_slice(MASK.as_bytes());
        expected.extend_from_slice(b"\x80");
        assert_eq!(redaction.clean_bytes(bytes), expected);
        let clean = b"\xff\x00nothing here".to_vec();
        assert_eq!(redaction.clean_bytes(clean.clone()), clean);
    }

    #[test]
    fn a_piece_of_a_secret_is_blanked_whole_however_it_was_cut() {
        let secret = "ghp_R2d9Xk4LmQ7vT1sN8wJ3pY6cB5hF0aE";
        let redaction = Redaction::new([Secret::new(secret.into())]);
        let chars: Vec<char> = secret.chars().collect();
        // Wrapped at a width (a terminal, `fold`), as a dump's text column holds it (sixteen
        // characters a line), and handed out in halves over two answers: every piece of at
        // least FRAGMENT characters goes whole, and a shorter end stays.
        for width in [10, 12, 16, 20] {
            let lines: Vec<String> = chars.chunks(width).map(|c| c.iter().collect()).collect();
            let cleaned = redaction.clean(&lines.join("\n"));
            let left: Vec<&str> = cleaned.split('\n').collect();
            for (line, piece) in left.iter().zip(&lines) {
                let expected = if piece.chars().count() >= forms::FRAGMENT {
                    MASK
                } else {
                    piece
                };
                assert_eq!(*line, expected, "width {width}: {cleaned:?}");
            }
        }
        let dump = format!("00000010  |{}|", &secret[3..19]);
        assert_eq!(redaction.clean(&dump), format!("00000010  |{MASK}|"));
        let (head, tail) = secret.split_at(secret.len() / 2);
        for half in [head, tail] {
            let mut answer =
                json!({ "content": [{ "type": "text", "text": format!("part: {half}.") }] });
            assert!(redaction.found_in(&answer));
            redaction.clean_json(&mut answer);
            assert_eq!(answer["content"][0]["text"], format!("part: {MASK}."));
        }
        // Nine characters of it, and text that shares only its prefix's letters, stay.
        let text = format!("ghp_ tokens; {}", &secret[4..13]);
        assert_eq!(redaction.clean(&text), text);
    }

    #[test]
    fn a_long_secret_wrapped_at_a_width_keeps_no_twenty_characters_together() {
        // A JWT-sized value of random characters: its pieces are sampled, one in every few,
        // and the samples still meet.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let secret: String = (0..900)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(alphabet[(state % 64) as usize])
            })
            .collect();
        let redaction = Redaction::new([Secret::new(secret.clone())]);
        let chars: Vec<char> = secret.chars().collect();
        for width in [64, 76, 80] {
            let lines: Vec<String> = chars.chunks(width).map(|c| c.iter().collect()).collect();
            let cleaned = redaction.clean(&lines.join("\n"));
            for run in chars.windows(2 * forms::FRAGMENT) {
                let run: String = run.iter().collect();
                assert!(!cleaned.contains(&run), "width {width}: {run} in {cleaned}");
            }
        }
    }

    #[test]
    fn base64_wrapped_anywhere_in_a_secret_is_blanked_whole() {
        let secret = "ghp_R2d9Xk4LmQ7vT1sN8wJ3pY6cB5hF0aE";
        let redaction = Redaction::new([Secret::new(secret.into())]);
        // Mail wraps at 76 characters, PEM at 64; at any of these the line break can fall
        // inside the secret's first 24 characters, which is all its whole-value forms hold.
        for width in [16, 20, 24, 64, 76] {
            for before in 0..width {
                let data = format!("{}{secret}!", "x".repeat(before));
                let encoded = emit::base64(data.as_bytes(), false);
                let lines: Vec<String> = encoded
                    .as_bytes()
                    .chunks(width)
                    .map(|line| String::from_utf8_lossy(line).into_owned())
                    .collect();
                let text = format!("body: [{}] end", lines.join("\r\n"));
                assert_eq!(
                    redaction.clean(&text),
                    format!("body: [{MASK}] end"),
                    "width {width}, {before} bytes before"
                );
            }
        }
    }

    /// `data` as `xxd`, `hexdump -C` and `xxd -p` print it.
    fn dumps(data: &[u8]) -> [String; 3] {
        let printable = |b: &u8| {
            if b.is_ascii_graphic() {
                char::from(*b)
            } else {
                '.'
            }
        };
        let (mut xxd, mut canonical) = (String::new(), String::new());
        for (line, bytes) in data.chunks(16).enumerate() {
            let digits: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let pairs: Vec<String> = digits.chunks(2).map(|p| p.concat()).collect();
            let text: String = bytes.iter().map(printable).collect();
            xxd += &format!("{:08x}: {:<39}  {text}\n", line * 16, pairs.join(" "));
            let (left, right) = digits.split_at(digits.len().min(8));
            canonical += &format!(
                "{:08x}  {:<23}  {:<23}  |{text}|\n",
                line * 16,
                left.join(" "),
                right.join(" ")
            );
        }
        let plain: Vec<String> = emit::hex(&String::from_utf8_lossy(data))
            .as_bytes()
            .chunks(60)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        [xxd, canonical, plain.join("\n")]
    }

    #[test]
    fn a_secret_in_a_hex_dump_keeps_no_eight_of_its_bytes_together() {
        let secret = "ghp_R2d9Xk4LmQ7vT1sN8wJ3pY6cB5hF0aE";
        let redaction = Redaction::new([Secret::new(secret.into())]);
        let windows: Vec<String> = secret
            .as_bytes()
            .windows(8)
            .map(|w| emit::hex(&String::from_utf8_lossy(w)))
            .collect();
        for at in [0, 3, 5, 8, 13, 16] {
            let data = format!("{}{secret}{}", "x".repeat(at), "y".repeat(40));
            for dump in dumps(data.as_bytes()) {
                let cleaned = redaction.clean(&dump);
                // Each stretch between a dump's double spaces (its columns and `hexdump -C`'s
                // halves), read without its single spaces.
                for stretch in cleaned.lines().flat_map(|line| line.split("  ")) {
                    let digits = stretch.replace(' ', "").to_ascii_lowercase();
                    for window in &windows {
                        assert!(!digits.contains(window.as_str()), "at {at}: {cleaned}");
                    }
                }
                // The lines after the secret's are left as they were.
                let last = dump.lines().last().unwrap_or_default();
                assert_eq!(cleaned.lines().last(), Some(last), "at {at}: {cleaned}");
            }
        }
    }

    #[test]
    fn short_values_are_left_alone() {
        let redaction = Redaction::new([Secret::new("abc".into())]);
        assert!(redaction.is_empty());
        assert_eq!(redaction.clean("abc YWJj 616263"), "abc YWJj 616263");
    }
}
