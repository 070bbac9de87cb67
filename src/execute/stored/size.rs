//! The byte length of a value as compact JSON, counted without writing it: what page sizing
//! measures each row with.
//!
//! Two writers matter. The hub writes with serde_json; a page that a script returns is written
//! by the sandbox's `JSON.stringify`, and that text is what the output budget is checked
//! against. Both escape strings the same way (`\"`, `\\`, `\b \f \n \r \t`, other controls as
//! `\u00xx`, everything else as UTF-8) and write integers the same way, but floats differ:
//! serde_json writes `1e+20`, `1e-6`, `1.0` and `-0.0` where JavaScript writes
//! `100000000000000000000`, `0.000001`, `1` and `0`, and an integer past 2^53 becomes the nearest
//! double in JavaScript (`9999999999999999999` prints as `10000000000000000000`). So a number
//! counts as the longer of its two spellings: a page that fits by this count fits whichever of
//! them writes it, at the cost of a few bytes per float. serde_json's spelling of a float is
//! measured by letting serde_json write it (its float formatter has changed between versions);
//! JavaScript's follows the language's definition.

use serde_json::{Number, Value};

/// The compact JSON length of `value` in bytes, numbers counted at their longer spelling.
pub(super) fn json_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => number_len(number),
        Value::String(text) => string_len(text),
        Value::Array(items) => {
            2 + items.iter().map(json_len).sum::<usize>() + items.len().saturating_sub(1)
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(key, value)| member_len(key, value))
                .sum::<usize>()
                + map.len().saturating_sub(1)
        }
    }
}

/// `"key":value` in bytes.
pub(super) fn member_len(key: &str, value: &Value) -> usize {
    string_len(key) + 1 + json_len(value)
}

/// A string with its quotes and escapes, in UTF-8 bytes.
pub(super) fn string_len(text: &str) -> usize {
    2 + text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// The decimal digits of `n`.
pub(super) fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

fn number_len(number: &Number) -> usize {
    // Integers are exact in serde_json; JavaScript sees them as doubles.
    if let Some(n) = number.as_u64() {
        return digits(n).max(javascript_len(n as f64));
    }
    if let Some(n) = number.as_i64() {
        return (1 + digits(n.unsigned_abs())).max(javascript_len(n as f64));
    }
    match number.as_f64() {
        Some(f) => serde_len(f).max(javascript_len(f)),
        // Not reachable without serde_json's arbitrary_precision; its own text is then exact.
        None => number.to_string().len(),
    }
}

/// The shortest round-trip digits of a finite, non-zero `f` (both writers use them) as the
/// number of digits `k` and the decimal exponent `n` with |f| = 0.d₁…dₖ × 10ⁿ.
fn decompose(f: f64) -> (i64, i64) {
    // `{:e}` writes the shortest round-trip digits: `1.2345e3`, `1e-7`.
    let text = format!("{:e}", f.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let k = mantissa.bytes().filter(u8::is_ascii_digit).count() as i64;
    let e: i64 = exponent.parse().unwrap_or(0);
    (k, e + 1)
}

/// The length of JavaScript's exponent: `e`, its sign (always written), its digits.
fn exponent_len(exponent: i64) -> usize {
    2 + digits(exponent.unsigned_abs())
}

/// How long serde_json writes a finite double, measured by writing it to a counter.
fn serde_len(f: f64) -> usize {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, &f) {
        Ok(()) => counter.0,
        // Counting cannot fail; should serde_json refuse the number, it writes nothing.
        Err(_) => 0,
    }
}

/// A writer that only counts bytes.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How JavaScript's `Number.prototype.toString` (and so `JSON.stringify`) writes a finite
/// double (ECMA-262, Number::toString).
fn javascript_len(f: f64) -> usize {
    if f == 0.0 {
        return 1; // -0 too
    }
    let sign = usize::from(f < 0.0);
    let (k, n) = decompose(f);
    let body = if k <= n && n <= 21 {
        n // 100000000000000000000
    } else if 0 < n && n <= 21 {
        k + 1 // 12.34
    } else if -6 < n && n <= 0 {
        2 - n + k // 0.000001
    } else {
        let mantissa = if k == 1 { 1 } else { k + 1 };
        return sign + mantissa as usize + exponent_len(n - 1); // 1e+21, 1.5e-7
    };
    sign + body as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn javascript_spellings() {
        // What JSON.stringify writes, copied from a JavaScript console.
        let cases: [(f64, &str); 14] = [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1.0, "1"),
            (-0.0, "0"),
            (0.1, "0.1"),
            (-12.34, "-12.34"),
            (123.456e-10, "1.23456e-8"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.000123, "0.000123"),
            (9999999999999999999.0, "10000000000000000000"),
        ];
        for (f, written) in cases {
            assert_eq!(javascript_len(f), written.len(), "{f:e} → {written}");
        }
    }

    #[test]
    fn strings_and_containers_match_serde() {
        let value = json!({
            "quote\"back\\slash": ["\u{0}\u{1f}\n\t\u{8}\u{c}\r", "é😀€", null, true, false],
            "n": [0, -1, 18446744073709551615u64, -9223372036854775808i64, 0.5, -2.25],
            "": {},
            "e": []
        });
        let written = serde_json::to_string(&value).unwrap_or_default();
        assert_eq!(json_len(&value), written.len(), "{written}");
    }

    #[test]
    fn integers_past_two_to_the_53_count_their_javascript_spelling() {
        // 9999999999999999999 is 10000000000000000000 as a double: 20 digits, not 19.
        assert_eq!(json_len(&json!(9999999999999999999u64)), 20);
        assert_eq!(json_len(&json!(9007199254740993u64)), 16);
    }

    proptest! {
        #[test]
        fn a_double_counts_at_least_as_serde_json_writes_it(
            f in any::<f64>().prop_filter("finite", |f| f.is_finite())
        ) {
            let written = serde_json::to_string(&f).unwrap_or_default();
            prop_assert!(json_len(&json!(f)) >= written.len(), "{}", written);
            prop_assert!(json_len(&json!(f)) >= javascript_len(f));
        }
    }
}
