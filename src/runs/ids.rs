//! Run ids, stored-result references and seeds: random, from the operating system, so an id
//! cannot be guessed.

/// 128 random bits as 26 lower-case base32 characters, prefixed `run_`.
pub fn new_run_id() -> String {
    random_id("run_")
}

/// A stored result's reference: 128 random bits, prefixed `res_`.
pub fn new_result_ref() -> String {
    random_id("res_")
}

fn random_id(prefix: &str) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let value = u128::from_le_bytes(random_bytes::<16>());
    let mut id = String::with_capacity(prefix.len() + 26);
    id.push_str(prefix);
    for i in 0..26 {
        id.push(ALPHABET[((value >> (i * 5)) & 31) as usize] as char);
    }
    id
}

/// A seed for a run's Math.random and crypto.
pub fn new_seed() -> u64 {
    u64::from_le_bytes(random_bytes::<8>())
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The OS random source failing is not something a run can recover from; fall back to time
    // and process id so ids stay distinct rather than aborting.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mixed = now ^ (u128::from(std::process::id()) << 64);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (mixed >> ((i % 16) * 8)) as u8;
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_distinct_and_well_formed() {
        let a = super::new_run_id();
        let b = super::new_run_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 30);
        assert!(
            a.starts_with("run_")
                && a[4..]
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || ('2'..='7').contains(&c))
        );
    }
}
