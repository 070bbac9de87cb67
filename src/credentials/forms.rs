//! Every form in which a secret's value can show up in text that an upstream sends or that a
//! log line holds, so that [`Redaction`](super::Redaction) can look for all of them at once.
//!
//! An upstream that echoes its token may write it as it is, JSON-escaped by any common library
//! (Python's `json.dumps` with or without `ensure_ascii`, serde and `JSON.stringify`, Go's HTML-
//! safe escaping, PHP's `\/`, Jackson's and .NET's upper-case `\u00E9`), percent-encoded (Python's
//! `quote`, `quote_plus`, JavaScript's `encodeURIComponent`, `encodeURI`, form encoding),
//! HTML-escaped (a page or an XML document quoting it), base64 or base64url, or hex; and a JSON
//! document in a text result may hold any of those escaped once more. An upstream set on getting
//! a secret past a filter reaches for the next encodings at hand, which are listed too: base32
//! (both alphabets, either case), base64 of the base64, base64 and hex of the UTF-16 a Windows or
//! Java program holds, hex with separators, every character escaped (`\u0073`, `\x73`, `&#115;`,
//! `&#x73;`), the value reversed, ROT13, in fullwidth characters, in another case (matched
//! ignoring case), and spelled out (a separator between its characters, zero-width ones too, or
//! as a list of its characters or of its bytes' codes), and cut into pieces (each run of
//! [`FRAGMENT`] characters of a line, and of [`BYTE_PIECE`] bytes in hex as dumps lay them out
//! and in base64 as a wrapped stream breaks it). A log line adds our own layers: Rust's `{:?}`
//! and the JSON of a `--log-format json` line. Each form is listed here once, for the
//! secret and for each of its lines when it spans several (a multi-line value such as a PEM key
//! is often printed a line at a time).
//!
//! Base64 cannot be matched by encoding the secret alone: inside a longer stream the secret can
//! start at any of three byte offsets, and the characters at its edges mix its bits with its
//! neighbours'. For each offset and alphabet, the form is the run of characters whose six bits
//! all come from the secret (the same whatever surrounds it); [`Kind::Base64`] tells the
//! redaction to blank the whole surrounding run, since the edge characters still carry a few
//! bits each. Base32 is the same at five offsets. Binary and escaped forms spell out only the
//! value's first bytes or characters and are widened over their run the same way, which holds
//! the rest: the forms stay short however long the secret.

use std::collections::HashSet;

use data_encoding::{BASE32, BASE32HEX, BASE64, BASE64URL, Encoding};

/// Values shorter than this, in characters, are not looked for: blanking them would mangle
/// ordinary text, and their encodings are short enough to turn up anywhere by chance.
pub const SHORTEST: usize = 4;

/// How a form is matched and what is blanked around a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    /// Matched ignoring ASCII case (a value upper- or lower-cased is still the value); the
    /// match is blanked.
    Text,
    /// Matched exactly (base64 in another case is other bytes); the run of base64 characters
    /// around the match is blanked.
    Base64,
    /// Matched ignoring ASCII case (hex digits are written both ways); the run of hex digits
    /// and the separators between bytes around the match is blanked.
    Hex,
    /// Matched ignoring ASCII case (base32 is written both ways); the run of base32 characters
    /// around the match is blanked.
    Base32,
    /// The first characters of a value each escaped, matched ignoring ASCII case; the run of
    /// escapes around the match, which holds the rest of the value, is blanked.
    Escaped,
    /// The first characters of a value spelled out (a separator between each, or the codes of
    /// its first bytes), matched ignoring ASCII case; the match and the `rest` bytes after it,
    /// which the rest of the value spelled out the same way takes, are blanked.
    Spelled { rest: usize },
}

impl Kind {
    /// True for a form matched ignoring ASCII case.
    pub(super) fn ignores_case(self) -> bool {
        self != Kind::Base64
    }

    /// What a match of this kind is widened over: the run of its encoding's characters, whose
    /// edges mix the secret's bits with its neighbours' (base64, base32) and which holds the
    /// rest of a value whose form spells out only its first bytes or characters.
    pub(super) fn run(self) -> Option<fn(u8) -> bool> {
        match self {
            Kind::Text | Kind::Spelled { .. } => None,
            Kind::Hex => Some(is_hex_char),
            Kind::Base64 => Some(is_base64_char),
            Kind::Base32 => Some(is_base32_char),
            Kind::Escaped => Some(is_escape_char),
        }
    }
}

/// Forms to look for, and what each is.
pub(super) type FormList = Vec<(String, Kind)>;

/// The forms of one secret (see [`forms_of`]).
pub(super) struct SecretForms {
    /// The forms of the whole value, of a line of it, or of its first characters: only the
    /// value itself gives them.
    pub whole: FormList,
    /// The forms of its pieces, which a guess at part of it gives too.
    pub pieces: FormList,
    /// Pieces of the value squeezed (see [`squeezed`]), matched in squeezed text, exactly.
    pub squeezed: Vec<String>,
}

/// The forms of `secret` to look for, each at least [`SHORTEST`] bytes long, without duplicates:
/// those of the whole value (or of a line of it), then those of its pieces. Empty when the secret
/// is shorter than [`SHORTEST`] characters.
#[cfg(test)]
pub(super) fn forms(secret: &str) -> Vec<(String, Kind)> {
    let SecretForms {
        mut whole, pieces, ..
    } = forms_of(secret);
    whole.extend(pieces);
    whole
}

/// The forms of `secret` to look for, each at least [`SHORTEST`] bytes long, without duplicates:
/// those of the whole value (or of a line of it, or of its first characters), which only the
/// value itself gives; and those of its pieces, which a guess at part of it gives too (see
/// [`Redaction::for_script`](super::Redaction::for_script)).
pub(super) fn forms_of(secret: &str) -> SecretForms {
    let mut out = Forms::default();
    let mut parts = Forms::default();
    let mut squeezed = Forms::default();
    let values = values(secret);
    let (text_stride, byte_stride) = strides(&values);
    for value in values {
        for piece in squeezed_pieces(value, text_stride) {
            squeezed.push(piece, Kind::Text);
        }
        let mut upstream = vec![value.to_string()];
        upstream.extend(JSON_STYLES.iter().map(|style| style.escape(value)));
        upstream.extend(percent_forms(value));
        upstream.extend(html_forms(value));
        upstream.extend(obfuscated_forms(value));
        // Matching ignores ASCII case only: a value with other letters is looked for in the
        // cases `upper()` and `lower()` give it as well.
        if !value.is_ascii() {
            upstream.extend([value.to_uppercase(), value.to_lowercase()]);
        }
        // Pieces of a line: what a dump's text column, a wrap at a fixed width or an upstream
        // handing it out over several answers leaves of it. All of them are matched, overlapping
        // ones too, so a piece of any length from `FRAGMENT` on is blanked whole.
        let text_pieces = pieces(value, text_stride);
        // A JSON document (or a debug print) holding one of the above, as a text result, an
        // error message or a raw protocol line can: escaped once more.
        for (forms, into) in [(upstream, &mut out), (text_pieces, &mut parts)] {
            let mut emitted = forms.clone();
            for form in &forms {
                emitted.push(SERDE.escape(form));
                emitted.push(PYTHON_ASCII.escape(form));
            }
            for form in emitted {
                into.with_log_layers(form, Kind::Text);
            }
        }
        for piece in byte_pieces(value, byte_stride) {
            for form in hex_layouts(piece) {
                parts.push(form, Kind::Hex);
            }
            // Base64 wrapped into lines (mail at 76 characters, PEM at 64) can break the head's
            // form; the pieces on either side of the break are whole.
            for (form, kind) in base64_forms(piece) {
                parts.push(form, kind);
            }
        }
        for (head, whole) in spelled_out_forms(value) {
            // Each layer escapes character by character, so the head of the whole is the head.
            for (head, whole) in log_layers(&head).into_iter().zip(log_layers(&whole)) {
                let rest = whole.len().saturating_sub(head.len());
                out.push(head, Kind::Spelled { rest });
            }
        }
        // Binary encodings of the value's first bytes: a match is widened over its run, which
        // holds the rest.
        let head = &value.as_bytes()[..value.len().min(BINARY_HEAD)];
        let head16: String = value.chars().take(BINARY_HEAD / 2).collect();
        let utf16le: Vec<u8> = head16.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let utf16be: Vec<u8> = head16.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let mut binary = binary_forms(head);
        binary.extend(base64_forms(&utf16le));
        binary.push((hex(&utf16le, ""), Kind::Hex));
        binary.push((hex(&utf16be, ""), Kind::Hex));
        // Base64 of the base64: each of the first encoding's middles is what the second one
        // encodes, at any offset.
        for (middle, kind) in base64_forms(head) {
            binary.extend(
                base64_forms(middle.as_bytes())
                    .into_iter()
                    .map(|(f, _)| (f, kind)),
            );
        }
        for (form, kind) in binary {
            for form in [SLASHED.escape(&form), form] {
                out.push(form, kind);
            }
        }
        // Made of backslashes as some are, these are escaped again on their way like the rest.
        for form in escaped_forms(value) {
            out.with_log_layers(SERDE.escape(&form), Kind::Escaped);
            out.with_log_layers(form, Kind::Escaped);
        }
    }
    // A piece that is also a form of the whole (a value of one piece) counts as the whole's.
    let pieces = parts
        .list
        .into_iter()
        .filter(|(form, _)| !out.seen.contains(form))
        .collect();
    SecretForms {
        whole: out.list,
        pieces,
        squeezed: squeezed.list.into_iter().map(|(form, _)| form).collect(),
    }
}

/// `bytes` with every byte left out that is not an ASCII letter or digit (or a NUL, which
/// stands where a text was cut, and which no piece spans): a value spelled out with anything
/// between its characters (`Q;z;7`, `Q | z | 7`, no-break, thin or zero-width spaces, a line
/// per character, separators that vary), or the codes of its bytes in a list however it is
/// punctuated (`81;122;55`, `51,7a,37`), reads as its letters and digits run together. Escapes
/// are left out whole (`\n`, `\u{feff}`, `\u00a0`, `\x0c`, behind any number of backslashes),
/// so a separator or a character a log line escaped adds no letters.
pub(super) fn squeezed(bytes: &[u8]) -> Vec<u8> {
    let kept = |b: &u8| b.is_ascii_alphanumeric() || *b == 0;
    // Most text has no escape to step over: one tight loop.
    if !bytes.contains(&b'\\') {
        return bytes.iter().copied().filter(kept).collect();
    }
    let mut out = Vec::with_capacity(bytes.len());
    squeeze(bytes, |at| out.push(bytes[at]));
    out
}

/// Where each byte [`squeezed`] keeps of `bytes` is.
pub(super) fn squeezed_at(bytes: &[u8]) -> Vec<usize> {
    let mut kept = Vec::new();
    squeeze(bytes, |at| kept.push(at));
    kept
}

/// Calls `keep` with the offset of each byte of `bytes` that [`squeezed`] keeps, in order.
fn squeeze(bytes: &[u8], mut keep: impl FnMut(usize)) {
    let hex_run = |from: usize, count: usize| {
        bytes.len() >= from + count && bytes[from..from + count].iter().all(u8::is_ascii_hexdigit)
    };
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte != b'\\' {
            if byte.is_ascii_alphanumeric() || byte == 0 {
                keep(at);
            }
            at += 1;
            continue;
        }
        while at < bytes.len() && bytes[at] == b'\\' {
            at += 1;
        }
        at += match bytes.get(at) {
            // `\u{10ffff}` is the longest.
            Some(b'u') if bytes.get(at + 1) == Some(&b'{') => bytes[at..]
                .iter()
                .take(10)
                .position(|b| *b == b'}')
                .map_or(1, |close| close + 1),
            Some(b'u') if hex_run(at + 1, 4) => 5,
            Some(b'x') if hex_run(at + 1, 2) => 3,
            Some(b'n' | b'r' | b't' | b'0') => 1,
            _ => 0,
        };
    }
}

/// How many digits of a value's bytes' codes run together a squeezed piece of them holds:
/// numbers run together once squeezed, and it takes this many for a piece not to turn up in a
/// table of numbers by chance.
const CODE_PIECE: usize = 16;

/// The pieces of one line `value` looked for in squeezed text (see [`squeezed`]): every run of
/// [`FRAGMENT`] of its ASCII letters and digits (one in `stride`) that neither reads as ordinary
/// text nor is all digits, and every run of [`CODE_PIECE`] digits of its bytes' codes in
/// decimal and in hex (either case). Matched exactly: squeezed text has lost what set words
/// apart, so only a piece's own case keeps a word from matching by chance.
fn squeezed_pieces(value: &str, stride: usize) -> Vec<String> {
    let letters: Vec<u8> = squeezed(value.as_bytes());
    let decimal: Vec<u8> = value
        .bytes()
        .flat_map(|b| b.to_string().into_bytes())
        .collect();
    let hex = hex(value.as_bytes(), "").into_bytes();
    // Runs of ASCII, sampled as pieces are, so a long value yields a bounded number.
    let runs = |text: &[u8], length: usize, stride: usize| -> Vec<String> {
        sampled(value, text, length, stride, |b| char::from(*b))
            .map(|run| String::from_utf8_lossy(run).into_owned())
            .collect()
    };
    let code_stride = |text: &[u8]| {
        (text.len().saturating_sub(CODE_PIECE - 1))
            .div_ceil(MOST_PIECES)
            .max(1)
    };
    let mut out: Vec<String> = runs(&letters, FRAGMENT, stride)
        .into_iter()
        .filter(|piece| !piece.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    out.extend(runs(&decimal, CODE_PIECE, code_stride(&decimal)));
    for piece in runs(&hex, CODE_PIECE, code_stride(&hex)) {
        out.push(piece.to_ascii_uppercase());
        out.push(piece);
    }
    out
}

/// The value reversed, ROT13, and in fullwidth characters (`ｓｅｃｒｅｔ`, which reads as the
/// value and which Unicode normalisation turns back into it): transformations that take no
/// library.
fn obfuscated_forms(value: &str) -> Vec<String> {
    let rot13 = value
        .chars()
        .map(|c| match c {
            'a'..='z' => char::from(b'a' + (c as u8 - b'a' + 13) % 26),
            'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + 13) % 26),
            c => c,
        })
        .collect();
    let fullwidth = value
        .chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(u32::from(c) - 0x21 + 0xFF01).unwrap_or(c),
            ' ' => '\u{3000}',
            c => c,
        })
        .collect();
    vec![value.chars().rev().collect(), rot13, fullwidth]
}

/// What an upstream puts between a value's characters to get it past a filter: spacing, the
/// punctuation of a list (a Python list of its characters among them), a line or tab per
/// character, and the invisible characters (zero-width spaces and joiners, the soft hyphen)
/// that leave it looking whole on a screen.
const SPELLING_SEPARATORS: [&str; 18] = [
    " ", ",", ", ", "-", ".", "_", ":", "|", "/", "\n", "\t", "', '", "','", "\u{200b}",
    "\u{200c}", "\u{200d}", "\u{2060}", "\u{ad}",
];

/// How many of a value's first characters (or bytes, for their codes) a spelled-out form
/// holds: enough that no other text matches by chance; the rest of the value is blanked by its
/// length. Longer forms would make the automaton slower to build, for every separator.
const SPELLED_HEAD: usize = 12;

/// The value spelled out, as its first characters and as the whole: its characters with a
/// separator between each, as a JSON list of them (`s", "e", "c`), and the codes of its bytes
/// as a list (`115, 101, 99`, `0x73,0x65`), as an upstream writes what it took apart.
fn spelled_out_forms(value: &str) -> Vec<(String, String)> {
    let chars: Vec<String> = value.chars().map(String::from).collect();
    let head = &chars[..chars.len().min(SPELLED_HEAD)];
    let mut out: Vec<(String, String)> = SPELLING_SEPARATORS
        .iter()
        .map(|separator| (head.join(separator), chars.join(separator)))
        .collect();
    let items: Vec<String> = chars.iter().map(|c| SERDE.escape(c)).collect();
    let head_items = &items[..head.len()];
    for separator in ["\", \"", "\",\""] {
        out.push((head_items.join(separator), items.join(separator)));
    }
    let decimal: Vec<String> = value.bytes().map(|b| b.to_string()).collect();
    let hex: Vec<String> = value.bytes().map(|b| format!("0x{b:02x}")).collect();
    for codes in [decimal, hex] {
        let head = &codes[..codes.len().min(SPELLED_HEAD)];
        for separator in [", ", ",", " "] {
            out.push((head.join(separator), codes.join(separator)));
        }
    }
    out
}

/// How many of a value's first bytes a binary encoding (base64, base32, hex) encodes, and
/// twice how many characters its UTF-16 forms do: enough that no other text matches by chance
/// (24 base64 characters, 36 hex digits). The rest of the value is in the run the match is
/// widened over, so longer forms would find nothing more, and would make the automaton slower to
/// build.
const BINARY_HEAD: usize = 18;

/// How many of a value's first characters an escaped form spells out: enough that no other text
/// matches by chance. The match is widened over the run of escapes, which blanks the rest; so
/// the form stays short however long the secret (every character takes six to twelve bytes
/// escaped, and twice that again in a log line, which would make the automaton slow to build).
const ESCAPED_HEAD: usize = 12;

/// The value's first characters with each escaped, as an encoder that escapes everything
/// writes them: `\uXXXX` per UTF-16 unit (JSON, JavaScript, Java), `\xNN` per byte (Python's
/// bytes, C), `&#xNN;` and `&#NNN;` per character (HTML); matched ignoring case, as hex is.
fn escaped_forms(value: &str) -> Vec<String> {
    let head: String = value.chars().take(ESCAPED_HEAD).collect();
    let units = head.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
    let bytes = head.bytes().map(|b| format!("\\x{b:02x}")).collect();
    let entities = |hex: bool, end: &str| {
        head.chars()
            .map(|c| match hex {
                true => format!("&#x{:x}{end}", u32::from(c)),
                false => format!("&#{}{end}", u32::from(c)),
            })
            .collect()
    };
    // HTML parsers read an entity without its `;` too.
    vec![
        units,
        bytes,
        entities(true, ";"),
        entities(false, ";"),
        entities(true, ""),
        entities(false, ""),
    ]
}

/// How many characters of a line a piece of it holds: pieces this long are looked for on their
/// own. Ten characters is the length of the shortest base64 form [`WEAK`](super::redaction::WEAK)
/// allows, which chance leaves alone; a shorter piece (the end of a line wrapped at a width, each
/// half of a short value) stays.
pub(super) const FRAGMENT: usize = 10;

/// How many pieces of each kind (of characters, of bytes) a secret is looked for in at most,
/// over all its lines: every piece of a token (up to 105 characters), one in every few of a
/// longer value (a JWT, a PEM key), whose sampled pieces then still overlap or meet for values
/// up to about a thousand characters. Every piece of a key file of 2,400 characters took a
/// quarter of a second to build into the automaton (each byte piece is ten forms).
const MOST_PIECES: usize = 96;

/// How far apart the character and the byte pieces of `values` start: one after another, or
/// far enough apart that there are at most [`MOST_PIECES`] of each.
fn strides(values: &[&str]) -> (usize, usize) {
    let lines = values.iter().filter(|v| !v.contains(['\n', '\r']));
    let (mut characters, mut bytes) = (0, 0);
    for value in lines {
        characters += value.chars().count().saturating_sub(FRAGMENT - 1);
        bytes += value.len().saturating_sub(BYTE_PIECE - 1);
    }
    let stride = |pieces: usize| pieces.div_ceil(MOST_PIECES).max(1);
    (stride(characters), stride(bytes))
}

/// Every run of [`FRAGMENT`] characters of a `value` longer than that starting `stride` after
/// the last, when it is one line (a piece across a line break is made of pieces of the lines,
/// which are values of their own), except those that read as ordinary text.
fn pieces(value: &str, stride: usize) -> Vec<String> {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() <= FRAGMENT {
        return Vec::new();
    }
    sampled(value, &chars, FRAGMENT, stride, |c| *c)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// The runs of `length` items of `items` (the characters or the bytes of `value`), each starting
/// `stride` after the last, that do not read as ordinary text (`as_char` tells how an item
/// reads); none when `value` is more than one line.
fn sampled<'a, T>(
    value: &str,
    items: &'a [T],
    length: usize,
    stride: usize,
    as_char: impl Fn(&T) -> char,
) -> impl Iterator<Item = &'a [T]> {
    let items = if value.contains(['\n', '\r']) {
        &[]
    } else {
        items
    };
    items
        .windows(length)
        .step_by(stride)
        .filter(move |piece| !reads_as_text(piece.iter().map(&as_char)))
}

/// True for a piece made of letters in one case and the punctuation of words, host names, paths
/// and addresses: the part of a secret that is not random (a webhook's `https://hooks.slack.com/`,
/// a connection string's `postgres://`, a passphrase's words), which answers hold for reasons of
/// their own and which blanking would mangle. A piece with a digit, both cases or any other
/// character is the value's own.
fn reads_as_text(mut piece: impl Iterator<Item = char> + Clone) -> bool {
    let text = |c: char| matches!(c, ' ' | '.' | ':' | '/' | '-' | '_' | '@');
    piece.clone().all(|c| c.is_ascii_lowercase() || text(c))
        || piece.all(|c| c.is_ascii_uppercase() || text(c))
}

/// How many bytes of a line a piece of it in a binary encoding holds: half a line of
/// `hexdump -C` and `xxd -g1`, which put a second space in the middle of each line of sixteen
/// bytes. Sixteen hex digits, or ten base64 characters matched exactly, are more than chance
/// matches, and a piece this short fits in any dump's or wrapped stream's line.
const BYTE_PIECE: usize = 8;

/// Every run of [`BYTE_PIECE`] bytes of a one-line `value` of at least that many (a value of
/// exactly one piece too: its whole-value forms are neither grouped nor wrapped) starting
/// `stride` after the last, except those that read as ordinary text.
fn byte_pieces(value: &str, stride: usize) -> Vec<&[u8]> {
    sampled(value, value.as_bytes(), BYTE_PIECE, stride, |b| {
        char::from(*b)
    })
    .collect()
}

/// `piece` in hex as dumps write it: bare (`xxd -p`, wrapped at 60 digits), a space between
/// bytes (`hexdump -C`, `od`) and in `xxd`'s groups of two bytes (the piece starting a group or
/// inside one). Matched as hex, a match is widened over its line's run of digits; a dump's line
/// that holds fewer of the value's bytes keeps them.
fn hex_layouts(piece: &[u8]) -> [String; 4] {
    let pairs = |bytes: &[u8]| {
        let groups: Vec<String> = bytes.chunks(2).map(|pair| hex(pair, "")).collect();
        groups.join(" ")
    };
    let (first, rest) = piece.split_at(1);
    [
        hex(piece, ""),
        hex(piece, " "),
        pairs(piece),
        format!("{} {}", hex(first, ""), pairs(rest)),
    ]
}

/// The secret, and each of its lines when it has several, that is long enough to look for.
fn values(secret: &str) -> Vec<&str> {
    let mut values = vec![secret];
    let lines: Vec<&str> = secret.split(['\n', '\r']).collect();
    if lines.len() > 1 {
        values.extend(lines.into_iter().filter(|line| !line.is_empty()));
    }
    values.retain(|value| value.chars().count() >= SHORTEST);
    values.dedup();
    values
}

/// The list being built, and what is in it already.
#[derive(Default)]
struct Forms {
    list: Vec<(String, Kind)>,
    seen: HashSet<String>,
}

impl Forms {
    fn push(&mut self, form: String, kind: Kind) {
        if form.len() >= SHORTEST && self.seen.insert(form.clone()) {
            self.list.push((form, kind));
        }
    }

    /// `form` as an upstream emits it, and as this process's log lines can hold it (see
    /// [`log_layers`]).
    fn with_log_layers(&mut self, form: String, kind: Kind) {
        for layer in log_layers(&form) {
            self.push(layer, kind);
        }
    }
}

/// `form` as it is, and as this process's log lines can hold it: debug-printed (a dependency
/// logging a message with `{:?}`), as a JSON string (a line of `--log-format json`), and both.
fn log_layers(form: &str) -> [String; 5] {
    let debug = debug_escape(form);
    [
        form.to_string(),
        SERDE.escape(form),
        SERDE.escape(&debug),
        debug_escape(&SERDE.escape(form)),
        debug,
    ]
}

/// Rust's `{:?}` of a string, without its quotes.
fn debug_escape(text: &str) -> String {
    let quoted = format!("{text:?}");
    quoted[1..quoted.len() - 1].to_string()
}

/// How one JSON library escapes the inside of a string.
struct JsonStyle {
    /// Everything past printable ASCII (DEL too, as Python does) as `\uXXXX`: UTF-16 units, so
    /// astral characters as a pair.
    ascii_only: bool,
    /// `\u00E9` rather than `\u00e9`.
    upper_hex: bool,
    /// `/` as `\/`.
    slash: bool,
    /// Characters always written as `\uXXXX`: HTML-sensitive ones (Go, .NET), the quote
    /// (.NET).
    always_escaped: &'static str,
    /// `\b` and `\f` as such rather than `\u0008` and `\u000c`.
    short_controls: bool,
}

/// serde_json, `JSON.stringify`, and Python's `json.dumps(ensure_ascii=False)`.
const SERDE: JsonStyle = JsonStyle {
    ascii_only: false,
    upper_hex: false,
    slash: false,
    always_escaped: "",
    short_controls: true,
};

/// Python's `json.dumps` as it is by default.
const PYTHON_ASCII: JsonStyle = JsonStyle {
    ascii_only: true,
    ..SERDE
};

/// PHP's `json_encode` with `JSON_UNESCAPED_UNICODE`: `\/`, which also changes base64.
const SLASHED: JsonStyle = JsonStyle {
    slash: true,
    ..SERDE
};

/// The libraries whose escaping differs: each is one form per value.
const JSON_STYLES: [JsonStyle; 8] = [
    SERDE,
    PYTHON_ASCII,
    // Go's encoding/json: HTML-safe, and the two JavaScript line separators escaped.
    JsonStyle {
        always_escaped: "<>&\u{2028}\u{2029}",
        short_controls: false,
        ..SERDE
    },
    // PHP's json_encode with JSON_UNESCAPED_UNICODE.
    SLASHED,
    // PHP's json_encode.
    JsonStyle {
        ascii_only: true,
        slash: true,
        ..SERDE
    },
    // Jackson: control characters in upper-case hex.
    JsonStyle {
        upper_hex: true,
        ..SERDE
    },
    // Java and .NET escaping everything past ASCII, in upper-case hex.
    JsonStyle {
        ascii_only: true,
        upper_hex: true,
        ..SERDE
    },
    // .NET's System.Text.Json default encoder.
    JsonStyle {
        ascii_only: true,
        upper_hex: true,
        always_escaped: "\"<>&'+`",
        ..SERDE
    },
];

impl JsonStyle {
    fn escape(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            match c {
                _ if self.always_escaped.contains(c) => self.unicode(&mut out, c),
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '/' if self.slash => out.push_str("\\/"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' if self.short_controls => out.push_str("\\b"),
                '\u{c}' if self.short_controls => out.push_str("\\f"),
                c if c < ' ' || (self.ascii_only && c > '~') => self.unicode(&mut out, c),
                c => out.push(c),
            }
        }
        out
    }

    fn unicode(&self, out: &mut String, c: char) {
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            if self.upper_hex {
                out.push_str(&format!("\\u{unit:04X}"));
            } else {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
}

/// The characters besides ASCII letters and digits that each percent-encoder leaves as they
/// are: Python's `quote(safe="")` and `quote_plus` (RFC 3986's unreserved), Python's `quote`,
/// `encodeURIComponent`, `encodeURI`, and form encoding (`URLSearchParams`).
const PERCENT_KEEPS: [&str; 5] = ["-._~", "-._~/", "-._~!'()*", "-._~!'()*;,/?:@&=+$#", "-._*"];

/// How an HTML or XML escaper writes the two quotes (`&`, `<` and `>` are written alike by
/// all of them); `None` leaves the quote as it is.
const HTML_QUOTES: [(Option<&str>, Option<&str>); 6] = [
    // Python's `html.escape(quote=False)` and `xml.sax.saxutils.escape`.
    (None, None),
    // Python's `html.escape`.
    (Some("&quot;"), Some("&#x27;")),
    // Go's `html.EscapeString` and `html/template`, Jinja's and MarkupSafe's.
    (Some("&#34;"), Some("&#39;")),
    // PHP's `htmlspecialchars` (ENT_QUOTES, the default since 8.1).
    (Some("&quot;"), Some("&#039;")),
    // XML's named entities.
    (Some("&quot;"), Some("&apos;")),
    // An attribute quoted with `"` (`xml.sax.saxutils.quoteattr`).
    (Some("&quot;"), None),
];

/// The secret as each common HTML or XML escaper writes it; none when it has nothing they
/// escape.
fn html_forms(value: &str) -> Vec<String> {
    if !value.contains(['&', '<', '>', '"', '\'']) {
        return Vec::new();
    }
    HTML_QUOTES
        .iter()
        .map(|(quot, apos)| {
            let mut out = String::with_capacity(value.len() + 16);
            for c in value.chars() {
                match (c, quot, apos) {
                    ('&', ..) => out.push_str("&amp;"),
                    ('<', ..) => out.push_str("&lt;"),
                    ('>', ..) => out.push_str("&gt;"),
                    ('"', Some(quot), _) => out.push_str(quot),
                    ('\'', _, Some(apos)) => out.push_str(apos),
                    _ => out.push(c),
                }
            }
            out
        })
        .collect()
}

/// The secret percent-encoded by each common encoder, with spaces as `%20` and as `+`, and in
/// upper- and lower-case hex; and each of those encoded again (a URL put in a query parameter
/// of another), where only the `%` changes.
fn percent_forms(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    for keep in PERCENT_KEEPS {
        for plus in [false, true] {
            for upper in [true, false] {
                let once = percent_encode(value, keep, plus, upper);
                if once.contains('%') {
                    out.push(once.replace('%', "%25"));
                }
                out.push(once);
            }
        }
    }
    out
}

fn percent_encode(value: &str, keep: &str, plus: bool, upper: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || keep.as_bytes().contains(&byte) {
            out.push(char::from(byte));
        } else if byte == b' ' && plus {
            out.push('+');
        } else if upper {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push_str(&format!("%{byte:02x}"));
        }
    }
    out
}

/// True for a character of either base64 alphabet, its padding, the backslash of an escaped
/// `\/`, or a line break: what a redaction blanks around a base64 match. An encoder for mail or
/// PEM (Python's `encodebytes`, `openssl base64`) wraps its lines, and the rest of a long value
/// is on the lines after its first characters'.
fn is_base64_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(
            byte,
            b'+' | b'/' | b'-' | b'_' | b'=' | b'\\' | b'\n' | b'\r'
        )
}

/// True for a character of either base32 alphabet (in either case) or its padding: what a
/// redaction blanks around a base32 match.
fn is_base32_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'='
}

/// True for a hex digit or a separator [`binary_forms`] puts between bytes: what a redaction
/// blanks around a hex match.
fn is_hex_char(byte: u8) -> bool {
    byte.is_ascii_hexdigit() || matches!(byte, b' ' | b':' | b'-' | b'%')
}

/// True for a character of an escape `escaped_forms` lists, or of the backslashes a log line
/// adds before one: what a redaction blanks around an escaped match.
fn is_escape_char(byte: u8) -> bool {
    byte.is_ascii_hexdigit()
        || matches!(byte, b'\\' | b'u' | b'U' | b'x' | b'X' | b'&' | b'#' | b';')
}

/// The base64 and base32 forms, the hex form (bare and with the separators `xxd`, Go's `% x`
/// and MAC-style dumps put between bytes), and every byte percent-encoded (letters and digits
/// too, as an encoder that escapes everything writes them).
fn binary_forms(bytes: &[u8]) -> Vec<(String, Kind)> {
    let mut out = base64_forms(bytes);
    out.extend(base32_forms(bytes));
    for separator in ["", " ", ":", "-"] {
        out.push((hex(bytes, separator), Kind::Hex));
    }
    let escaped = bytes.iter().map(|b| format!("%{b:02x}")).collect();
    out.push((escaped, Kind::Hex));
    out
}

/// `bytes` in lower-case hex, `separator` between bytes.
fn hex(bytes: &[u8], separator: &str) -> String {
    let digits: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    digits.join(separator)
}

/// The base64 forms: both alphabets, the secret at each of the three byte offsets in a longer
/// stream, each the characters whose bits all come from the secret (padding never falls inside
/// them).
fn base64_forms(bytes: &[u8]) -> Vec<(String, Kind)> {
    middles(bytes, 6, &[BASE64, BASE64URL], Kind::Base64)
}

/// The base32 forms: both alphabets (matched ignoring case), the secret at each of the five byte
/// offsets in a longer stream.
fn base32_forms(bytes: &[u8]) -> Vec<(String, Kind)> {
    middles(bytes, 5, &[BASE32, BASE32HEX], Kind::Base32)
}

/// For each encoding of `bits` bits a character and each byte offset the secret can start at
/// in a longer stream (an encoding repeats every `8 * bits` bits), the characters that depend
/// on the secret alone: character i holds bits `bits * i..bits * (i + 1)` of the stream, the
/// secret bits `8 * offset..8 * (offset + len)`.
fn middles(bytes: &[u8], bits: usize, encodings: &[Encoding], kind: Kind) -> Vec<(String, Kind)> {
    // Bytes per group of whole characters: 3 for base64, 5 for base32.
    let group = bits / gcd(8, bits);
    let mut out = Vec::new();
    for encoding in encodings {
        for offset in 0..group {
            let mut stream = vec![0u8; offset];
            stream.extend_from_slice(bytes);
            let encoded = encoding.encode(&stream);
            let start = (8 * offset).div_ceil(bits);
            let end = 8 * (offset + bytes.len()) / bits;
            if let Some(middle) = encoded.get(start..end) {
                out.push((middle.to_string(), kind));
            }
        }
    }
    out
}

/// True for a byte that can be part of a JSON number's text (as serde_json or Rust's float
/// formatting writes it): only a form made of these can turn up inside a number.
fn is_number_byte(byte: u8) -> bool {
    byte.is_ascii_digit() || matches!(byte, b'-' | b'+' | b'.' | b'e' | b'E')
}

/// The forms (of those [`forms`] lists) that can be part of a JSON number's text, and what a
/// parser leaves of each when it reads it as a number: leading zeros dropped (`0042137` is
/// read as `42137`) and trailing zeros of a fraction dropped (`12.50` as `12.5`). An upstream
/// that parses an all-digit secret and echoes it as a number writes that text, not the secret's.
pub(super) fn number_forms(forms: &[(String, Kind)]) -> Vec<String> {
    let mut out = Forms::default();
    for (form, _) in forms {
        if !form.bytes().all(is_number_byte) {
            continue;
        }
        let (sign, digits) = form.split_at(usize::from(form.starts_with('-')));
        let unpadded = digits.trim_start_matches('0');
        // `0.5`, not `.5`: the zero before a point stays.
        let unpadded = if unpadded.starts_with('.') || unpadded.is_empty() {
            digits
                .len()
                .checked_sub(unpadded.len() + 1)
                .map_or(digits, |at| &digits[at..])
        } else {
            unpadded
        };
        let unpadded = format!("{sign}{unpadded}");
        let trimmed = if unpadded.contains('.') && !unpadded.contains(['e', 'E']) {
            unpadded
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        } else {
            unpadded.clone()
        };
        for form in [form.clone(), unpadded, trimmed] {
            out.push(form, Kind::Text);
        }
    }
    out.list.into_iter().map(|(form, _)| form).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(forms: &[(String, Kind)], form: &str) -> bool {
        forms.iter().any(|(f, _)| f == form)
    }

    #[test]
    fn forms_cover_the_common_escapings() {
        let forms = forms("pé/\"x\u{1}");
        for expected in [
            "pé/\"x\u{1}",
            // serde, JSON.stringify
            "pé/\\\"x\\u0001",
            // Python's json.dumps, then PHP's, then Jackson's and .NET's
            "p\\u00e9/\\\"x\\u0001",
            "p\\u00e9\\/\\\"x\\u0001",
            "pé/\\\"x\\u0001",
            "p\\u00E9/\\\"x\\u0001",
            "p\\u00E9/\\u0022x\\u0001",
            // Python's quote(safe=""), quote, quote_plus; lower-case hex
            "p%C3%A9%2F%22x%01",
            "p%C3%A9/%22x%01",
            "p%c3%a9%2f%22x%01",
            // Rust's {:?}, and a JSON log line holding it
            "pé/\\\"x\\u{1}",
            "pé/\\\\\\\"x\\\\u{1}",
            // hex
            "70c3a92f227801",
        ] {
            assert!(has(&forms, expected), "no {expected:?} in {forms:#?}");
        }
    }

    #[test]
    fn base64_forms_are_the_middles_at_each_offset() {
        let forms = forms("abcdef");
        // "abcdef" → YWJjZGVm; after one byte → AGFiY2RlZg==, of which "FiY2RlZ" depends on
        // the secret alone; after two → AABhYmNkZWY=, of which "hYmNkZW" does.
        for expected in ["YWJjZGVm", "FiY2RlZ", "hYmNkZW", "FiY2RlZ", "hYmNkZW"] {
            assert!(has(&forms, expected), "no {expected:?} in {forms:#?}");
        }
    }

    #[test]
    fn number_forms_are_the_forms_a_number_can_hold_as_a_parser_leaves_them() {
        for (secret, expected) in [
            (
                "0042.500",
                &["0042.500", "42.500", "42.5", "303034322e353030"][..],
            ),
            ("-0042.500", &["-0042.500", "-42.500", "-42.5"]),
        ] {
            let found = number_forms(&forms(secret));
            for expected in expected {
                assert!(found.iter().any(|f| f == expected), "{expected}: {found:?}");
            }
            assert!(found.iter().all(|f| f.bytes().all(is_number_byte)));
        }
        // The zero before a point stays, as a number is written.
        let found = number_forms(&forms("0000.0001"));
        assert!(found.iter().any(|f| f == "0.0001"), "{found:?}");
        assert!(!found.iter().any(|f| f == ".0001"), "{found:?}");
        // Letters in every form but none a number has: nothing to look for in numbers.
        assert!(number_forms(&forms("tok-1234")).is_empty());
    }

    #[test]
    fn pieces_are_the_runs_of_a_line_that_do_not_read_as_text() {
        let found = pieces("https://hooks.example/T0a9Zk3qX", 1);
        // The address's own words and punctuation are not looked for; every run with the
        // token's characters in it is.
        assert!(!found.iter().any(|p| p == "https://ho"), "{found:?}");
        assert!(found.iter().any(|p| p == "ample/T0a9"), "{found:?}");
        assert!(found.iter().any(|p| p == "/T0a9Zk3qX"), "{found:?}");
        assert!(found.iter().all(|p| p.chars().count() == FRAGMENT));
        assert_eq!(pieces("ANY_API_KEY_NAME", 1), Vec::<String>::new());
        // A line no longer than a piece, or a value of several lines, has none of its own.
        assert!(pieces("T0a9Zk3qX1", 1).is_empty());
        assert!(pieces("T0a9Zk3qX1\nT0a9Zk3qX1b", 1).is_empty());
        assert!(has(&forms("first0LINE1\nsecond0LINE2"), "irst0LINE1"));
    }

    #[test]
    fn byte_pieces_are_written_as_dumps_and_wrapped_base64_write_them() {
        let pieces = byte_pieces("ab:T0a9Zk3", 1);
        assert_eq!(pieces, [&b"ab:T0a9Z"[..], b"b:T0a9Zk", b":T0a9Zk3"]);
        let hex: Vec<String> = pieces.iter().flat_map(|p| hex_layouts(p)).collect();
        for expected in [
            "61623a543061395a",
            "61 62 3a 54 30 61 39 5a",
            "6162 3a54 3061 395a",
            "61 623a 5430 6139 5a",
            "62 3a54 3061 395a 6b",
            "3a543061395a6b33",
        ] {
            assert!(
                hex.iter().any(|f| f == expected),
                "no {expected:?} in {hex:?}"
            );
        }
        // "ab:T0a9Z" → YWI6VDBhOVo=, whose first ten characters hold its bits alone.
        assert!(has(&forms("ab:T0a9Zk3"), "YWI6VDBhOV"));
        assert!(byte_pieces("https://hooks.example/", 1).is_empty());
        assert_eq!(byte_pieces("T0a9Zk3q", 1).len(), 1);
        assert!(byte_pieces("T0a9Zk3", 1).is_empty());
    }

    #[test]
    fn a_long_value_is_looked_for_in_a_bounded_number_of_pieces() {
        let token = "ghp_R2d9Xk4LmQ7vT1sN8wJ3pY6cB5hF0aEx7Kq2Wz9Lm4Np8Rt3Vb6Yc1Df5Gh0Jk2Mn";
        assert_eq!(strides(&[token]), (1, 1), "every piece of a token");
        let long = "aB3xY9kQ".repeat(300);
        let values = [long.as_str()];
        let (text, bytes) = strides(&values);
        assert!(pieces(&long, text).len() <= MOST_PIECES);
        assert!(byte_pieces(&long, bytes).len() <= MOST_PIECES);
        // A PEM key's lines share one budget.
        let line = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyjiWA4R";
        let pem = [line; 26].join("\n");
        let lines: Vec<&str> = std::iter::once(pem.as_str()).chain([line; 26]).collect();
        let (text, _) = strides(&lines);
        let all: usize = lines.iter().map(|l| pieces(l, text).len()).sum();
        assert!(all <= MOST_PIECES + 26, "{all}");
    }

    #[test]
    fn each_long_enough_line_is_a_secret_of_its_own() {
        let forms = forms("first-line\r\nsecond\nab");
        assert!(has(&forms, "first-line"));
        assert!(has(&forms, "second"));
        assert!(has(&forms, "first-line\\r\\nsecond\\nab"));
        assert!(!has(&forms, "ab"));
        assert!(forms.iter().all(|(f, _)| f.len() >= SHORTEST));
        assert!(super::forms("abc").is_empty());
    }
}
