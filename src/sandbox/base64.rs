//! `decodeBase64` / `encodeBase64` exactly as spec 004 states them: standard or URL-safe alphabet,
//! padding optional, at most 1 MiB of raw or decoded bytes (1,398,104 characters of input,
//! whitespace included), malformed input and invalid UTF-8 rejected.

/// The most bytes one conversion may produce or consume.
pub const MAX_BYTES: usize = 1 << 20;
/// The most characters `decodeBase64` accepts: the base64 expansion of `MAX_BYTES`.
pub const MAX_ENCODED_CHARS: usize = 1_398_104;

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

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
    if body.len() % 4 == 1 {
        return Err("decodeBase64: malformed base64 (wrong length)".into());
    }
    let url = body.iter().any(|&b| b == b'-' || b == b'_');
    let standard = body.iter().any(|&b| b == b'+' || b == b'/');
    if url && standard {
        return Err("decodeBase64: mixes the standard and URL-safe alphabets".into());
    }
    let alphabet = if url { URL_SAFE } else { STANDARD };
    let mut bytes = Vec::with_capacity(body.len() / 4 * 3 + 2);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &symbol in body {
        let Some(value) = alphabet.iter().position(|&a| a == symbol) else {
            return Err(format!(
                "decodeBase64: {:?} is not a base64 character",
                char::from(symbol)
            ));
        };
        acc = (acc << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero, or the text was not produced by an encoder.
    if acc != 0 {
        return Err("decodeBase64: malformed base64 (non-zero trailing bits)".into());
    }
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
    let alphabet = if url_safe { URL_SAFE } else { STANDARD };
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        let symbols = chunk.len() + 1;
        for i in 0..4 {
            if i < symbols {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if !url_safe {
                out.push('=');
            }
        }
    }
    Ok(out)
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
