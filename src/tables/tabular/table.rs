//! Plain-text tables with aligned columns.

pub struct TextTable {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The first `left` columns align left; the rest align right...
    pub left: usize,
    /// ...but for these, which align left too (free text such as comments).
    pub also_left: Vec<usize>,
}

impl TextTable {
    pub fn new(headers: &[&str], left: usize) -> Self {
        TextTable { headers: headers.iter().map(|s| s.to_string()).collect(), rows: vec![], left, also_left: vec![] }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as wide as it is; inside [`marked`] (and so inside
    /// [`within`], which lays it out to a width), one marked line.
    pub fn render(&self) -> String {
        if MARKED.get() {
            return self.render_marked();
        }
        self.render_natural()
    }

    /// The table within `width` columns: as it is when it fits; otherwise
    /// its value columns go to several stacked tables, each repeating the
    /// row labels (the first `left` columns); a cell still too wide (free
    /// text) is cut with "..." (the whole text is in `--full` and the JSON).
    pub fn render_width(&self, width: usize) -> String {
        let full = self.render_natural();
        if full.lines().all(|l| l.chars().count() <= width) {
            return full;
        }
        let ncol = self.headers.len();
        let widths = self.widths();
        let left = self.left.min(ncol);
        let label_w: usize = widths[..left].iter().map(|w| w + 2).sum();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut cur: Vec<usize> = Vec::new();
        let mut used = label_w;
        for (i, w) in widths.iter().enumerate().skip(left) {
            if !cur.is_empty() && used + w > width {
                groups.push(std::mem::take(&mut cur));
                used = label_w;
            }
            cur.push(i);
            used += w + 2;
        }
        if !cur.is_empty() || groups.is_empty() {
            groups.push(cur);
        }
        let mut out = String::new();
        for (g, cols) in groups.iter().enumerate() {
            let keep: Vec<usize> = (0..left).chain(cols.iter().copied()).collect();
            let mut t = TextTable::new(&keep.iter().map(|&i| self.headers[i].as_str()).collect::<Vec<_>>(), left);
            t.also_left = keep.iter().enumerate().filter(|(_, i)| self.also_left.contains(i)).map(|(n, _)| n).collect();
            for r in &self.rows {
                t.row(keep.iter().map(|&i| r.get(i).cloned().unwrap_or_default()).collect());
            }
            if g > 0 {
                out.push_str(&format!("(continued: columns {} of {})\n", cols.first().map_or(0, |c| c + 1), ncol));
            }
            for l in t.render_natural().lines() {
                out.push_str(&cut(l, width));
                out.push('\n');
            }
        }
        out
    }

    pub(crate) fn widths(&self) -> Vec<usize> {
        (0..self.headers.len())
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| c.chars().count().min(MAX_CELL))
                    .chain([self.headers[i].chars().count().min(MAX_CELL)])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The table as wide as its cells make it.
    pub fn render_natural(&self) -> String {
        let ncol = self.headers.len();
        let width = |i: usize| {
            let n = |c: &String| c.chars().count().min(MAX_CELL);
            self.rows.iter().filter_map(|r| r.get(i)).map(n).chain([n(&self.headers[i])]).max().unwrap_or(0)
        };
        let widths: Vec<usize> = (0..ncol).map(width).collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = (0..ncol)
                .map(|i| {
                    let c = cut(cells.get(i).map(String::as_str).unwrap_or(""), MAX_CELL);
                    if i < self.left || self.also_left.contains(&i) {
                        format!("{c:<w$}", w = widths[i])
                    } else {
                        format!("{c:>w$}", w = widths[i])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.headers);
        out.push('\n');
        out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (ncol.saturating_sub(1))));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

impl TextTable {
    /// The table as one line that [`parse_marked`] reads back: [`MARK`],
    /// then its headers, rows and alignment as JSON.
    fn render_marked(&self) -> String {
        let t = serde_json::json!({ "headers": self.headers, "rows": self.rows, "left": self.left, "also_left": self.also_left });
        format!("{MARK}{t}\n")
    }
}

/// What begins a table rendered by [`marked`] (ASCII's record separator,
/// which no table of text holds).
pub const MARK: char = '\u{1e}';

thread_local! {
    static MARKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// What `f` returns, with every table it renders (on this thread) rendered
/// as one marked line instead of aligned text: so that a format with tables
/// of its own (HTML) lays out the very tables the terminal shows, with
/// their labels, from the text around them.
pub fn marked<T>(f: impl FnOnce() -> T) -> T {
    let was = MARKED.replace(true);
    let out = f();
    MARKED.set(was);
    out
}

/// A table from the part of `line` after [`MARK`], if it is one (a line
/// of a document that merely holds the mark is none: its text stays text).
pub fn parse_marked(line: &str) -> Option<(String, TextTable)> {
    let (before, json) = line.split_once(MARK)?;
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let strings = |v: &serde_json::Value| -> Option<Vec<String>> { v.as_array()?.iter().map(|c| c.as_str().map(String::from)).collect() };
    let t = TextTable {
        headers: strings(&v["headers"])?,
        rows: v["rows"].as_array()?.iter().map(strings).collect::<Option<_>>()?,
        left: usize::try_from(v["left"].as_u64()?).ok()?,
        also_left: v["also_left"].as_array()?.iter().map(|i| i.as_u64().and_then(|i| usize::try_from(i).ok())).collect::<Option<_>>()?,
    };
    Some((before.to_string(), t))
}

/// The text `f` renders, every table in it within `width` columns
/// ([`TextTable::render_width`]; None: as wide as it is, as `--full` shows
/// them): the tables are rendered [`marked`], then laid out.
pub fn within(width: Option<usize>, f: impl FnOnce() -> String) -> String {
    let Some(width) = width else { return f() };
    laid_out(f, |t| t.render_width(width))
}

/// The text `f` renders, every table in it rendered [`marked`], then laid
/// out by `layout`.
pub(crate) fn laid_out(f: impl FnOnce() -> String, layout: impl Fn(&TextTable) -> String) -> String {
    let text = marked(f);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match parse_marked(line.trim_end_matches('\n')) {
            Some((before, t)) => {
                out += &before;
                out += &layout(&t);
            }
            None => out += line,
        }
    }
    out
}

/// The widest a cell is shown: a longer one (a document's field may be of
/// any length) is cut, "..." marking the cut.
pub const MAX_CELL: usize = 200;

/// A line cut to `width` columns, "..." marking the cut (ASCII, so that the
/// width holds in bytes too, for tools that count them).
pub fn cut(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut s: String = line.chars().take(width.saturating_sub(3)).collect();
    s.push_str("...");
    s
}

/// Every line of a text within `width` (cut where longer).
pub fn fit(text: &str, width: usize) -> String {
    text.lines().map(|l| cut(l, width) + "\n").collect()
}

/// Cycles as people read them: integers, one decimal below 100.
pub fn cycles(v: f64) -> String {
    if v < 100.0 { format!("{v:.1}") } else { format!("{v:.0}") }
}

/// A cell whose 95% interval is wider than this fraction of its median is
/// marked in the tables.
pub const WIDE_INTERVAL: f64 = 0.10;

/// Whether a metric's interval is wider than WIDE_INTERVAL of its median;
/// without an interval (a version 1 document), whether its batches' CV is
/// above it.
pub fn uncertain(m: &crate::data::results::Metric) -> bool {
    match &m.estimate {
        Some(e) => (e.interval.hi - e.interval.lo) > WIDE_INTERVAL * e.median.abs(),
        None => m.summary.cv > WIDE_INTERVAL,
    }
}

/// The 95% interval of a metric's median as "+-x%" (half its width, relative
/// to the median), "?" appended when it is wide; "-" where there is none.
pub fn interval(m: &crate::data::results::Metric) -> String {
    match &m.estimate {
        Some(e) => format!("+-{:.1}%{}", e.interval.relative_half_width(e.median) * 100.0, if uncertain(m) { "?" } else { "" }),
        None => "-".into(),
    }
}

/// The legend of that column.
pub fn interval_note(rounds: usize) -> String {
    format!(
        "  +-x% = half the 95% interval of the median ({}), relative to it; ? = interval wider than {:.0}% of the median\n",
        if rounds > 1 { format!("over {rounds} rounds, then batches") } else { "one round: batches only".into() },
        WIDE_INTERVAL * 100.0
    )
}

/// A byte count as people read it: "1 MiB", "4 KiB", "1500 B".
pub fn bytes_label(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

pub fn percent(frac: f64) -> String {
    format!("{:.1}%", frac * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = TextTable::new(&["name", "value"], 1);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["long name".into(), "12345".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "name       value");
        assert_eq!(lines[2], "a              1");
        assert_eq!(lines[3], "long name  12345");
    }

    #[test]
    fn a_cell_of_any_width_is_cut_never_a_panic() {
        // 65,536 characters and more overflowed the formatter's width (issue 58, item 5).
        for n in [MAX_CELL + 1, 65_535, 65_536, 300_000] {
            let mut t = TextTable::new(&["host", "value"], 1);
            t.row(vec!["h".repeat(n), "1".into()]);
            t.row(vec!["short".into(), "x".repeat(n)]);
            let s = t.render_natural();
            assert!(s.lines().all(|l| l.chars().count() <= 2 * MAX_CELL + 2), "{n}");
            assert!(s.contains(&format!("{}...", "h".repeat(MAX_CELL - 3))), "{n}");
            assert!(within(Some(200), || t.render()).lines().all(|l| l.chars().count() <= 200), "{n}");
        }
    }

    #[test]
    fn formats_cycles() {
        assert_eq!(cycles(42.25), "42.2");
        assert_eq!(cycles(1234.6), "1235");
    }

    #[test]
    fn a_marked_table_reads_back_as_it_was_and_text_stays_text() {
        let mut t = TextTable::new(&["call", "median cyc"], 1);
        t.also_left = vec![1];
        t.row(vec!["getpid".into(), "472 \"q\"".into()]);
        let text = marked(|| format!("title\n{}", t.render()));
        assert!(!MARKED.get(), "marking ends with the closure");
        let line = text.lines().nth(1).unwrap();
        let (before, back) = parse_marked(line).expect("a marked table");
        assert_eq!(
            (before.as_str(), back.headers.clone(), back.rows.clone(), back.left, back.also_left.clone()),
            ("", t.headers.clone(), t.rows.clone(), 1, vec![1])
        );
        assert!(parse_marked("title").is_none());
        assert!(parse_marked("a document's \u{1e} mark, not a table").is_none());
        assert!(!t.render().contains(MARK), "unmarked outside the closure");
    }

    #[test]
    fn a_table_within_a_width_is_laid_out_there_and_the_text_around_it_stays() {
        let mut t = TextTable::new(&["call", "a long header one", "a long header two"], 1);
        t.row(vec!["getpid".into(), "472".into(), "473".into()]);
        let text = within(Some(30), || format!("title\n{}after\n", t.render()));
        assert_eq!(text, format!("title\n{}after\n", t.render_width(30)));
        assert_ne!(t.render_width(30), t.render_natural(), "the table is split at 30 columns");
        assert!(text.lines().all(|l| l.chars().count() <= 30), "{text}");
        assert_eq!(within(None, || t.render()), t.render_natural(), "no width: as wide as it is");
        assert!(!MARKED.get(), "marking ends with the closure");
    }
}
