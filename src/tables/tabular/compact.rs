//! How the report that leads with what was measured (`show` without
//! `--full`) fits a table to the terminal: before a table is split into
//! stacked blocks of columns ([`TextTable::render_width`], which repeats
//! every row once a block), in turn, while it is still too wide: a column
//! with nothing in it goes; free text (comments, notes: the columns that
//! align left after the labels) leaves the grid for a note under it, a line
//! per distinct text naming its rows (cut to the width, as the split table
//! cut it); headings wrap onto two lines; the row
//! label's longer cells wrap. `--full` and the other formats keep every
//! table as it is.

use super::table::{MAX_CELL, TextTable, cut};

/// The narrowest a wrapped row label gets: narrower, the table is split.
const MIN_LABEL: usize = 24;

/// A table laid out: its heading lines per column, the columns' widths,
/// and the width the label column wraps at (None: it does not).
struct Layout {
    headings: Vec<Vec<String>>,
    widths: Vec<usize>,
    wrap_label: Option<usize>,
}

impl TextTable {
    /// The table within `width` columns, as the module says.
    pub fn render_compact(&self, width: usize) -> String {
        let full = self.render_natural();
        if full.lines().all(|l| l.chars().count() <= width) {
            return full;
        }
        let (t, notes) = self.without_free_text(width);
        let mut layout = Layout { headings: t.headers.iter().map(|h| vec![h.clone()]).collect(), widths: t.widths(), wrap_label: None };
        if total(&layout.widths) > width {
            layout = t.wrapped_headings();
        }
        if total(&layout.widths) > width && t.left > 0 {
            let label = t.left - 1;
            let rest = total(&layout.widths) - layout.widths[label];
            let room = width.saturating_sub(rest);
            if room >= MIN_LABEL {
                layout.widths[label] = room;
                layout.wrap_label = Some(room);
            }
        }
        let grid = if total(&layout.widths) <= width { t.render_laid_out(&layout) } else { t.render_width(width) };
        grid + &notes
    }

    /// The table without its empty columns and its free-text ones, and the
    /// lines that say the free text under it, each cut to `width` as the
    /// split table cut it (the whole text is in `--full` and the JSON).
    fn without_free_text(&self, width: usize) -> (TextTable, String) {
        let filled = |i: usize| self.rows.iter().any(|r| r.get(i).is_some_and(|c| !c.trim().is_empty()));
        let free = |i: usize| i >= self.left && self.also_left.contains(&i);
        let keep: Vec<usize> = (0..self.headers.len()).filter(|&i| i < self.left || filled(i) && !free(i)).collect();
        let mut notes = String::new();
        for i in (self.left..self.headers.len()).filter(|&i| free(i) && filled(i)) {
            let mut texts: Vec<(String, Vec<String>)> = Vec::new();
            for r in &self.rows {
                let Some(text) = r.get(i).map(|c| c.trim()).filter(|c| !c.is_empty()) else { continue };
                let label = r[..self.left.min(r.len())].iter().map(|c| c.trim()).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(" ");
                match texts.iter_mut().find(|t| t.0 == text) {
                    Some(t) => t.1.push(label),
                    None => texts.push((text.to_string(), vec![label])),
                }
            }
            for (text, mut labels) in texts {
                if labels.len() > 4 {
                    let more = labels.len() - 3;
                    labels.truncate(3);
                    labels.push(format!("{more} more"));
                }
                notes += &cut(&format!("  {}: {text}", labels.join(", ")), width);
                notes.push('\n');
            }
        }
        let mut t = TextTable::new(&keep.iter().map(|&i| self.headers[i].as_str()).collect::<Vec<_>>(), self.left);
        t.also_left = keep.iter().enumerate().filter(|(_, i)| self.also_left.contains(i)).map(|(n, _)| n).collect();
        t.rows = self.rows.iter().map(|r| keep.iter().map(|&i| r.get(i).cloned().unwrap_or_default()).collect()).collect();
        (t, notes)
    }

    /// Each value column's heading on at most two lines, where that makes
    /// the column narrower (split at the space that makes the wider line
    /// the narrowest, never narrower than the column's cells).
    fn wrapped_headings(&self) -> Layout {
        let cells = self.widths_of_cells();
        let mut headings = Vec::new();
        let mut widths = Vec::new();
        for (i, h) in self.headers.iter().enumerate() {
            let h = cut(h, MAX_CELL);
            let whole = h.chars().count();
            let best = h
                .match_indices(' ')
                .map(|(at, _)| (h[..at].to_string(), h[at + 1..].to_string()))
                .min_by_key(|(a, b)| a.chars().count().max(b.chars().count()));
            match best {
                Some((a, b)) if i >= self.left && a.chars().count().max(b.chars().count()).max(cells[i]) < whole.max(cells[i]) => {
                    widths.push(a.chars().count().max(b.chars().count()).max(cells[i]));
                    headings.push(vec![a, b]);
                }
                _ => {
                    widths.push(whole.max(cells[i]));
                    headings.push(vec![h]);
                }
            }
        }
        Layout { headings, widths, wrap_label: None }
    }

    /// The widest cell of each column, headings left out.
    fn widths_of_cells(&self) -> Vec<usize> {
        (0..self.headers.len())
            .map(|i| self.rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count().min(MAX_CELL)).max().unwrap_or(0))
            .collect()
    }

    /// The table as `layout` says: headings on their lines, a wrapped row
    /// label's rest on lines of its own under it, indented.
    fn render_laid_out(&self, layout: &Layout) -> String {
        let ncol = self.headers.len();
        let line = |cells: &[String]| {
            let parts: Vec<String> = (0..ncol)
                .map(|i| {
                    let c = cut(cells.get(i).map(String::as_str).unwrap_or(""), layout.widths[i]);
                    if i < self.left || self.also_left.contains(&i) {
                        format!("{c:<w$}", w = layout.widths[i])
                    } else {
                        format!("{c:>w$}", w = layout.widths[i])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string() + "\n"
        };
        let depth = layout.headings.iter().map(Vec::len).max().unwrap_or(1);
        let mut out = String::new();
        for n in 0..depth {
            // A heading of fewer lines sits on the last ones, over its cells.
            let cells: Vec<String> =
                layout.headings.iter().map(|h| h.get((n + h.len()).wrapping_sub(depth)).cloned().unwrap_or_default()).collect();
            out += &line(&cells);
        }
        out += &format!("{}\n", "-".repeat(total(&layout.widths)));
        for r in &self.rows {
            let label = self.left.checked_sub(1).filter(|_| layout.wrap_label.is_some());
            let pieces = match (label, layout.wrap_label) {
                (Some(l), Some(w)) => pieces(r.get(l).map(String::as_str).unwrap_or(""), w),
                _ => vec![],
            };
            let mut first = r.clone();
            if let (Some(l), Some(p)) = (label, pieces.first()) {
                first[l] = p.clone();
            }
            out += &line(&first);
            for p in pieces.iter().skip(1) {
                let mut cells = vec![String::new(); ncol];
                cells[label.unwrap_or(0)] = format!("  {p}");
                out += &line(&cells);
            }
        }
        out
    }
}

/// The columns' total width with the two spaces between them.
fn total(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// `text` in pieces of at most `width` characters, broken at spaces (the
/// pieces after the first two narrower, for their indent); a word too long
/// is cut.
fn pieces(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in text.split_whitespace() {
        let room = if out.is_empty() { width } else { width.saturating_sub(2) };
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > room {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur += w;
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(cur);
    }
    out
}

/// The text `f` renders, every table in it laid out by
/// [`TextTable::render_compact`] within `width` columns.
pub fn within_compact(width: usize, f: impl FnOnce() -> String) -> String {
    super::table::laid_out(f, |t| t.render_compact(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(text: &str, width: usize) -> bool {
        text.lines().all(|l| l.chars().count() <= width)
    }

    #[test]
    fn a_table_that_fits_is_as_it_is() {
        let mut t = TextTable::new(&["call", "median"], 1);
        t.row(vec!["getpid".into(), "472".into()]);
        assert_eq!(t.render_compact(80), t.render_natural());
    }

    #[test]
    fn free_text_leaves_the_grid_for_a_note_a_line_per_distinct_text() {
        let mut t = TextTable::new(&["row", "us", "Comment on this row"], 1);
        t.also_left = vec![2];
        let long = "one CPU";
        for r in ["lat_ctx 2", "lat_ctx 4"] {
            t.row(vec![r.into(), "2.4".into(), long.into()]);
        }
        t.row(vec!["bw_pipe".into(), "3933".into(), String::new()]);
        let text = t.render_compact(32);
        assert!(!text.contains("continued") && fits(&text, 32), "{text}");
        assert_eq!(text.matches(long).count(), 1, "one line per distinct text:\n{text}");
        assert!(text.contains(&format!("  lat_ctx 2, lat_ctx 4: {long}")), "{text}");
        let mut t2 = TextTable::new(&["row", "us", "Comment"], 1);
        t2.also_left = vec![2];
        t2.row(vec!["lat_ctx".into(), "2.4".into(), "a comment far longer than the forty columns of this screen".into()]);
        assert!(t2.render_compact(40).ends_with("  lat_ctx: a comment far longer than ...\n"), "cut as a split table cut it");
    }

    #[test]
    fn headings_wrap_onto_two_lines_before_a_table_is_split() {
        let mut t = TextTable::new(&["space", "words", "qemu-tcg pipe (instr)", "qemu-tcg futex (instr)", "sel4 sel4-call (instr)"], 2);
        t.row(vec!["intra".into(), "0".into(), "6702".into(), "5217".into(), "258".into()]);
        let text = t.render_compact(60);
        assert!(fits(&text, 60) && !text.contains("continued"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("qemu-tcg") && lines[1].contains("(instr)") && lines[1].starts_with("space"), "{text}");
        assert!(lines[3].starts_with("intra") && lines[3].ends_with("258"), "{text}");
    }

    #[test]
    fn a_long_row_label_wraps_and_an_empty_column_goes() {
        let mut t = TextTable::new(&["", "value", "unit", "time"], 1);
        t.row(vec![
            "fork + _exit + wait ((static fork): a 1.0 MiB static C process)".into(),
            "170959".into(),
            "cycles".into(),
            String::new(),
        ]);
        t.row(vec!["getpid".into(), "303".into(), "cycles".into(), String::new()]);
        let text = t.render_compact(50);
        assert!(fits(&text, 50) && !text.contains("time"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].starts_with("fork + _exit") && lines[2].ends_with("170959  cycles"), "{text}");
        let rest: Vec<&str> = lines[3..lines.len() - 1].iter().map(|l| l.trim()).collect();
        assert!(lines[3].starts_with("  ") && rest.last().unwrap().ends_with("process)"), "the rest under it: {text}");
        assert_eq!(format!("{} {}", lines[2].split("  ").next().unwrap(), rest.join(" ")), t.rows[0][0], "{text}");
        assert!(lines.last().unwrap().starts_with("getpid"), "{text}");
    }

    #[test]
    fn a_table_that_cannot_fit_otherwise_is_split_as_before() {
        let mut t = TextTable::new(&["case", "a", "b"], 1);
        t.row(vec!["x".into(), "1".repeat(30), "2".repeat(30)]);
        let text = t.render_compact(40);
        assert!(text.contains("(continued: columns 3 of 3)") && fits(&text, 40), "{text}");
        assert_eq!(within_compact(40, || format!("title\n{}", t.render())), format!("title\n{text}"));
    }
}
