//! Plain-text tables with aligned columns.

pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The first `left` columns align left; the rest align right...
    pub left: usize,
    /// ...but for these, which align left too (free text such as comments).
    pub also_left: Vec<usize>,
}

impl Table {
    pub fn new(headers: &[&str], left: usize) -> Self {
        Table { headers: headers.iter().map(|s| s.to_string()).collect(), rows: vec![], left, also_left: vec![] }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let ncol = self.headers.len();
        let width = |i: usize| {
            self.rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).chain([self.headers[i].chars().count()]).max().unwrap_or(0)
        };
        let widths: Vec<usize> = (0..ncol).map(width).collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = (0..ncol)
                .map(|i| {
                    let c = cells.get(i).map(String::as_str).unwrap_or("");
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

/// Cycles as people read them: integers, one decimal below 100.
pub fn cycles(v: f64) -> String {
    if v < 100.0 { format!("{v:.1}") } else { format!("{v:.0}") }
}

pub fn percent(frac: f64) -> String {
    format!("{:.1}%", frac * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["name", "value"], 1);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["long name".into(), "12345".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "name       value");
        assert_eq!(lines[2], "a              1");
        assert_eq!(lines[3], "long name  12345");
    }

    #[test]
    fn formats_cycles() {
        assert_eq!(cycles(42.25), "42.2");
        assert_eq!(cycles(1234.6), "1235");
    }
}
