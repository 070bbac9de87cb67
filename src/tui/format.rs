//! Short human forms of durations and cut-down text for narrow columns.

/// `350ms`, `2.1s`, `3m 05s`, `1h 02m`: precise while it matters, short when it does not.
pub fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}.{}s", ms / 1_000, ms % 1_000 / 100),
        60_000..3_600_000 => format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1_000),
        _ => format!("{}h {:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A whole-second countdown (`29m 59s`, `45s`), for time left before an approval expires.
pub fn countdown(ms: u64) -> String {
    let seconds = ms / 1_000;
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3_600, seconds % 3_600 / 60),
    }
}

/// How long ago, coarsely: `now`, `12s`, `4m`, `3h`, `2d`.
pub fn age(ms: u64) -> String {
    let seconds = ms / 1_000;
    match seconds {
        0 => "now".to_string(),
        1..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m", seconds / 60),
        3_600..86_400 => format!("{}h", seconds / 3_600),
        _ => format!("{}d", seconds / 86_400),
    }
}

/// `text` cut to `width` characters, ending in `…` when it was cut.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

/// `1 run`, `2 runs`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// One line: newlines and runs of whitespace become single spaces, so a preview stays in its row.
pub fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::printable::escaped(&joined).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_stay_short() {
        assert_eq!(duration(350), "350ms");
        assert_eq!(duration(2_140), "2.1s");
        assert_eq!(duration(185_000), "3m 05s");
        assert_eq!(duration(3_720_000), "1h 02m");
        assert_eq!(countdown(1_799_999), "29m 59s");
        assert_eq!(countdown(45_500), "45s");
        assert_eq!(age(500), "now");
        assert_eq!(age(3 * 86_400_000), "3d");
        assert_eq!(
            (count(1, "run"), count(0, "run")),
            ("1 run".to_string(), "0 runs".to_string())
        );
    }

    #[test]
    fn text_is_cut_with_an_ellipsis() {
        assert_eq!(fit("counter.publish", 9), "counter.…");
        assert_eq!(fit("short", 9), "short");
        assert_eq!(fit("abc", 0), "");
        assert_eq!(one_line("{\n  key: \"b\"\n}"), "{ key: \"b\" }");
    }
}
