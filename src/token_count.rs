//! Token counting with the o200k_base encoding, the unit of every token budget (describe's
//! budget, the fixed cost of the MCP surface).

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn encoder() -> &'static CoreBPE {
    static ENCODER: OnceLock<CoreBPE> = OnceLock::new();
    // The ranks ship inside tiktoken-rs, so building the encoder cannot fail at run time.
    ENCODER.get_or_init(|| tiktoken_rs::o200k_base().expect("the bundled o200k_base ranks load"))
}

/// Number of o200k_base tokens in `text`.
pub fn count(text: &str) -> usize {
    encoder().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_tokens() {
        assert_eq!(super::count(""), 0);
        let n = super::count(
            "declare const github: { createIssue(input: { title: string }): Promise<unknown>; };",
        );
        assert!(n > 10 && n < 40, "{n}");
    }
}
