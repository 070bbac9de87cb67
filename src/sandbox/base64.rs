//! `decodeBase64` / `encodeBase64` exactly as spec 004 states them: standard or URL-safe alphabet,
//! padding optional, at most 1 MiB of raw or decoded bytes (1,398,104 characters of input,
//! whitespace included), malformed input and invalid UTF-8 rejected. The encoding itself is
//! `data-encoding`'s; what is ours is what the spec adds to it (either alphabet but not both,
//! optional padding, whitespace, the limits) and the messages a script is given.

use data_encoding::{BASE64, BASE64_NOPAD, BASE64URL_NOPAD, DecodeKind};

/// The most bytes one conversion may produce or consume.
pub const MAX_BYTES: usize = 1 << 20;
/// The most characters `decodeBase64` accepts: the base64 expansion of `MAX_BYTES`.
pub const MAX_ENCODED_CHARS: usize = 1_398_104;

/// Decodes standard base64 or base64url (not mixed), padded or not, to UTF-8 text.
/// ASCII whitespace is skipped but counts toward the input limit.
pub fn decode(text: &str) -> Result<String, String> {
    if text.chars().count() > MAX_ENCODED_CHARS {
        return Err(format!(
            "decodeBase64 accepts at most {MAX_ENCODED_CHARS} characters"
        ));
    }
    let symbols: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let body_len = symbols
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(0, |i| i + 1);
    let (body, padding) = symbols.split_at(body_len);
    if padding.len() > 2 || (!padding.is_empty() && !symbols.len().is_multiple_of(4)) {
        return Err("decodeBase64: malformed padding".into());
    }
    let url = body.iter().any(|&b| b == b'-' || b == b'_');
    let standard = body.iter().any(|&b| b == b'+' || b == b'/');
    if url && standard {
        return Err("decodeBase64: mixes the standard and URL-safe alphabets".into());
    }
    let encoding = if url { &BASE64URL_NOPAD } else { &BASE64_NOPAD };
    let bytes = encoding.decode(body).map_err(|e| match e.kind {
        DecodeKind::Symbol => format!(
            "decodeBase64: {:?} is not a base64 character",
            char::from(body.get(e.position).copied().unwrap_or(b'?'))
        ),
        // Leftover bits must be zero, or the text was not produced by an encoder.
        DecodeKind::Trailing => "decodeBase64: malformed base64 (non-zero trailing bits)".into(),
        DecodeKind::Length | DecodeKind::Padding => {
            "decodeBase64: malformed base64 (wrong length)".into()
        }
    })?;
    if bytes.len() > MAX_BYTES {
        return Err(format!("decodeBase64 decodes at most {MAX_BYTES} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| {
        "decodeBase64: the decoded bytes are not valid UTF-8; use atob for binary data".into()
    })
}

/// Encodes UTF-8 text: padded standard base64, or unpadded base64url when `url_safe`.
pub fn encode(text: &str, url_safe: bool) -> Result<String, String> {
    let bytes = text.as_bytes();
    if bytes.len() > MAX_BYTES {
        return Err(format!("encodeBase64 encodes at most {MAX_BYTES} bytes"));
    }
    let encoding = if url_safe { &BASE64URL_NOPAD } else { &BASE64 };
    Ok(encoding.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_both_alphabets() {
        for text in ["", "f", "fo", "foo", "foob", "héllo wörld ✓", "subjects?>>"] {
            assert_eq!(
                decode(&encode(text, false).unwrap_or_default()).as_deref(),
                Ok(text)
            );
            assert_eq!(
                decode(&encode(text, true).unwrap_or_default()).as_deref(),
                Ok(text)
            );
        }
        assert_eq!(encode("foob", false).as_deref(), Ok("Zm9vYg=="));
        assert_eq!(encode("foob", true).as_deref(), Ok("Zm9vYg"));
        assert_eq!(
            encode("subjects?>>", true).as_deref(),
            Ok("c3ViamVjdHM_Pj4")
        );
    }

    #[test]
    fn accepts_missing_padding_and_whitespace() {
        assert_eq!(decode("Zm9vYg").as_deref(), Ok("foob"));
        assert_eq!(decode("Zm9v\nYg==").as_deref(), Ok("foob"));
    }

    #[test]
    fn rejects_malformed_input() {
        for bad in [
            "Zm9vY",
            "Zm9v!g==",
            "Zm9vYg===",
            "Zm=9",
            "Zh==",
            "c3ViamVjdHM_Pj4+",
        ] {
            assert!(decode(bad).is_err(), "{bad}");
        }
        // 0xff is not UTF-8.
        assert!(decode("/w==").is_err());
    }

    #[test]
    fn enforces_the_size_limits() {
        assert!(encode(&"a".repeat(MAX_BYTES + 1), false).is_err());
        assert!(encode(&"a".repeat(MAX_BYTES), false).is_ok());
        assert!(decode(&"A".repeat(MAX_ENCODED_CHARS + 1)).is_err());
    }
}
