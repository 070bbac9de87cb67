//! Redaction benchmarks: building the automata for a hub's secrets, and cleaning a 1 MiB result
//! with no secret in it (the common case: every upstream result is searched) and with a secret
//! echoed in it a hundred times, as text and as the JSON of thousands of rows (whose strings are
//! also read one after another, for a secret taken apart across them).

use std::hint::black_box;

use capabilities::credentials::{Redaction, Secret};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::Value;

/// `count` secrets of the shapes sources use: a GitHub token, a Slack token and a password
/// pair, and as many more as a hub of a dozen sources holds.
fn secrets(count: usize) -> Vec<Secret> {
    let mut values = vec![
        "ghp_R2aX9kQ7vLm3Tz8NfW1yBc4HsJ6dPe0UoKi5".to_string(),
        "xoxb-2048613795-4096227183-Kq9ZbX3mT7vRw1LcN8yPj2Ds".to_string(),
        "deploy:correct-horse-battery-staple".to_string(),
    ];
    // Random letters and digits, as most API keys are: no rare byte in common for a search
    // to skip ahead on.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in values.len()..count {
        values.push(random(&mut state, &ALPHABET[..62], 32));
    }
    values.into_iter().take(count).map(Secret::new).collect()
}

/// Letters, digits and base64's two more.
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `length` characters of `alphabet` drawn by xorshift from `state`: the same every run.
fn random(state: &mut u64, alphabet: &[u8], length: usize) -> String {
    (0..length)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            char::from(alphabet[(*state % alphabet.len() as u64) as usize])
        })
        .collect()
}

/// A JWT (900 characters), a PEM key (1,700 in lines of 64) and a service account's key file on
/// one line (2,400).
fn long_secrets() -> Vec<(&'static str, String)> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = |length: usize| random(&mut state, ALPHABET, length);
    let jwt = format!("eyJhbGciOiJSUzI1NiJ9.{}.{}", random(500), random(380));
    let body: Vec<String> = (0..26).map(|_| random(64)).collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
        body.join("\n")
    );
    let account = format!(
        r#"{{"type": "service_account", "private_key_id": "{}", "private_key": "{}"}}"#,
        random(40),
        random(2300)
    );
    vec![("a JWT", jwt), ("a PEM key", pem), ("a key file", account)]
}

/// About 1 MiB of JSON-like text of the kind upstreams return.
fn text(echoes: usize) -> String {
    let row = r#"{"id": 4821, "title": "Fix the flaky retry test", "state": "open", "url": "https://example.com/issues/4821", "body": "The retry loop waits 250 ms between attempts; under load it times out."},"#;
    let rows = (1 << 20) / row.len();
    let mut out = String::with_capacity(1 << 20);
    for i in 0..rows {
        if echoes > 0 && i % (rows / echoes) == 0 {
            out.push_str(r#"{"token": "ghp_R2aX9kQ7vLm3Tz8NfW1yBc4HsJ6dPe0UoKi5"},"#);
        }
        out.push_str(row);
    }
    out
}

fn redaction(c: &mut Criterion) {
    let mut group = c.benchmark_group("redaction");
    group.sample_size(20);
    group.bench_function("build 3 secrets", |b| {
        b.iter(|| black_box(Redaction::new(secrets(3))))
    });
    // Long values: a JWT, a PEM key (a line of 64 characters each) and a service account's
    // JSON key on one line, each of random characters as above.
    for (name, value) in long_secrets() {
        group.bench_function(format!("build {name}"), |b| {
            b.iter(|| black_box(Redaction::new([Secret::new(value.clone())])))
        });
    }
    for count in [3, 12] {
        let redaction = Redaction::new(secrets(count));
        for echoes in [0, 100] {
            let text = text(echoes);
            group.bench_with_input(
                BenchmarkId::new(format!("clean 1 MiB, {count} secrets, echoes"), echoes),
                &text,
                |b, text| b.iter(|| black_box(redaction.clean(text))),
            );
            let rows: Value = serde_json::from_str(&format!("[{}]", text.trim_end_matches(',')))
                .expect("the rows are JSON");
            group.bench_with_input(
                BenchmarkId::new(format!("clean JSON 1 MiB, {count} secrets, echoes"), echoes),
                &rows,
                |b, rows| {
                    b.iter_batched(
                        || rows.clone(),
                        |mut rows| {
                            redaction.clean_json(&mut rows);
                            rows
                        },
                        BatchSize::LargeInput,
                    )
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, redaction);
criterion_main!(benches);
