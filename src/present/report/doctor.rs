//! The doctor's findings as text: the `oscycles doctor` listing, and the
//! one-line warnings of a run's header.

use crate::measure::checks::{Finding, Level};

/// The narrowest text column kept, however small the width asked for.
const MIN_TEXT: usize = 20;

fn tag(level: Level) -> &'static str {
    match level {
        Level::Ok => "ok",
        Level::Info => "info",
        Level::Warn => "warn",
    }
}

/// Word-wraps `text` to `width` columns: the first line after `first`, the
/// others after `indent` spaces. A word longer than a line stays whole.
fn wrap(first: &str, indent: usize, text: &str, width: usize) -> String {
    let width = width.max(indent + MIN_TEXT);
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
            out += line.trim_end();
            out.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line += word;
        empty = false;
    }
    out += line.trim_end();
    out.push('\n');
    out
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `oscycles doctor`: one line per finding (tag, check id, what was seen),
/// the advice of each non-Ok finding below it, wrapped to `width` columns;
/// then the counts.
pub fn render(findings: &[Finding], width: usize) -> String {
    let id_w = findings.iter().map(|f| f.check.chars().count()).max().unwrap_or(0);
    let indent = 4 + 1 + id_w + 2;
    let mut out = String::new();
    for f in findings {
        let head = format!("{:<4} {:<id_w$}  ", tag(f.level), f.check);
        out += &wrap(&head, indent, &f.observed, width);
        if f.level != Level::Ok
            && let Some(a) = &f.advice
        {
            let first = format!("{}advice: ", " ".repeat(indent));
            out += &wrap(&first, indent + "advice: ".len(), a, width);
        }
    }
    let n = |l: Level| findings.iter().filter(|f| f.level == l).count();
    out += &format!("{}, {}, {} ok\n", count(n(Level::Warn), "warning", "warnings"), count(n(Level::Info), "note", "notes"), n(Level::Ok));
    out
}

/// Short one-line warnings (Level::Warn only) for a run's header: what was
/// seen, without the clause on why it matters.
pub fn header_warnings(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .filter(|f| f.level == Level::Warn)
        .map(|f| {
            let short = f.observed.split_once("; ").map_or(f.observed.as_str(), |(s, _)| s);
            format!("warning: {short} (oscycles doctor for advice)")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(check: &str, level: Level, observed: &str, advice: Option<&str>) -> Finding {
        Finding { check: check.into(), level, observed: observed.into(), advice: advice.map(String::from) }
    }

    fn sample() -> Vec<Finding> {
        vec![
            f(
                "governor",
                Level::Warn,
                "governor powersave on CPU 0; the core clock may change between cases",
                Some("cpupower frequency-set -g performance (as root)"),
            ),
            f(
                "swap",
                Level::Info,
                "2048 MiB of swap on (none in use); a page swapped out mid-run costs a disk access",
                Some("swapoff -a (as root)"),
            ),
            f("thp", Level::Ok, "transparent huge pages: madvise", Some("never shown")),
            f("aslr", Level::Info, "ASLR on (randomize_va_space=2); oscycles samples address layouts across rounds on purpose", None),
            f(
                "irqbalance",
                Level::Warn,
                "irqbalance is running (pid 812); it can move IRQs onto measured CPUs mid-run",
                Some("systemctl stop irqbalance"),
            ),
        ]
    }

    #[test]
    fn render_lists_advice_wraps_and_counts() {
        let width = 60;
        let s = render(&sample(), width);
        for l in s.lines() {
            assert!(l.chars().count() <= width, "too long: {l:?}");
        }
        assert!(s.starts_with("warn governor    governor powersave on CPU 0;"), "{s}");
        assert!(s.contains("advice: cpupower frequency-set -g"), "{s}");
        assert!(s.contains("systemctl stop irqbalance"), "{s}");
        assert!(s.contains("ok   thp"), "{s}");
        assert!(!s.contains("never shown"), "{s}");
        assert_eq!(s.lines().last(), Some("2 warnings, 2 notes, 1 ok"));
        // Nothing is lost by wrapping.
        let words: Vec<&str> = s.split_whitespace().collect();
        for w in "a page swapped out mid-run costs a disk access".split(' ') {
            assert!(words.contains(&w), "{w}");
        }
        // Continuation lines sit under the observed column.
        let cont = s.lines().nth(1).unwrap();
        assert!(cont.starts_with(&" ".repeat(17)) && !cont.starts_with(&" ".repeat(18)), "{cont:?}");
    }

    #[test]
    fn render_keeps_long_words_whole_and_singular_counts() {
        let one = [f("x", Level::Warn, "see /a/very/long/path/that/does/not/fit/in/any/line/at/all/really", Some("do it"))];
        let s = render(&one, 10);
        assert!(s.contains("/a/very/long/path/that/does/not/fit/in/any/line/at/all/really"), "{s}");
        assert_eq!(s.lines().last(), Some("1 warning, 0 notes, 0 ok"));
        assert_eq!(render(&[], 80), "0 warnings, 0 notes, 0 ok\n");
    }

    #[test]
    fn header_warnings_are_short_and_only_warnings() {
        let h = header_warnings(&sample());
        assert_eq!(
            h,
            vec![
                "warning: governor powersave on CPU 0 (oscycles doctor for advice)".to_string(),
                "warning: irqbalance is running (pid 812) (oscycles doctor for advice)".to_string(),
            ]
        );
    }
}
