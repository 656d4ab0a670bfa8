//! One table builder for the markup formats (after hyperfine's
//! `export/markup.rs`): a table is columns with their alignment and rows of
//! cells; Markdown and HTML each say how a table begins, how a row is
//! written and how the table ends, and how text is escaped.

/// How a column's cells align (where the format can say so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A cell: its text (None: no value, not even an empty one), and a colour
/// where the format has colours (HTML).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cell {
    pub text: Option<String>,
    pub colour: Option<&'static str>,
}

impl Cell {
    /// A cell with no value.
    pub fn none() -> Self {
        Cell::default()
    }

    /// A cell in `colour`.
    pub fn coloured(text: String, colour: &'static str) -> Self {
        Cell { text: Some(text), colour: Some(colour) }
    }

    fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell { text: Some(text), colour: None }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::from(text.to_string())
    }
}

/// A table: columns (header, alignment) and rows of cells, text unescaped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MarkupTable {
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<Cell>>,
}

impl MarkupTable {
    /// Columns named `headers`, those at the indexes `right` aligned right.
    pub fn new(headers: &[&str], right: &[usize]) -> Self {
        let align = |i: usize| if right.contains(&i) { Align::Right } else { Align::Left };
        MarkupTable { columns: headers.iter().enumerate().map(|(i, h)| (h.to_string(), align(i))).collect(), rows: vec![] }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// A text table's headers and cells, aligned as it aligns them.
    pub fn from_table(t: &crate::tables::tabular::table::TextTable) -> Self {
        let right: Vec<usize> = (t.left..t.headers.len()).filter(|i| !t.also_left.contains(i)).collect();
        let mut m = MarkupTable::new(&t.headers.iter().map(String::as_str).collect::<Vec<_>>(), &right);
        for r in &t.rows {
            m.row(r.iter().map(|c| Cell::from(c.as_str())).collect());
        }
        m
    }
}

/// A markup format.
pub trait Markup {
    /// `text` safe inside the format.
    fn escape(&self, text: &str) -> String;
    /// The table's start, headers included.
    fn begin(&self, columns: &[(String, Align)]) -> String;
    /// One row.
    fn row(&self, cells: &[Cell]) -> String;
    /// The table's end.
    fn end(&self) -> String;
    /// A heading of `level` (1 the top).
    fn heading(&self, level: usize, text: &str) -> String;
    /// A paragraph.
    fn paragraph(&self, text: &str) -> String;

    /// The whole table.
    fn table(&self, t: &MarkupTable) -> String {
        let mut s = self.begin(&t.columns);
        for r in &t.rows {
            s += &self.row(r);
        }
        s + &self.end()
    }
}

/// GitHub-flavoured Markdown: a pipe table, right-aligned columns marked.
pub struct Markdown;

impl Markup for Markdown {
    /// A pipe ends a cell; HTML, which Markdown passes through, is shown
    /// as text (a document's text may hold `<script>`: issue 43, item 15).
    fn escape(&self, text: &str) -> String {
        text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('|', "\\|").replace('\n', " ")
    }

    fn begin(&self, columns: &[(String, Align)]) -> String {
        let cells: Vec<Cell> = columns.iter().map(|(h, _)| Cell::from(h.as_str())).collect();
        let divider: String = columns
            .iter()
            .map(|(_, a)| match a {
                Align::Left => "---|",
                Align::Right => "---:|",
            })
            .collect();
        format!("{}|{divider}\n", self.row(&cells))
    }

    fn row(&self, cells: &[Cell]) -> String {
        let mut s = String::from("|");
        for c in cells {
            s += &match &c.text {
                None => " |".to_string(),
                Some(t) => format!(" {} |", self.escape(t)),
            };
        }
        s + "\n"
    }

    fn end(&self) -> String {
        String::new()
    }

    fn heading(&self, level: usize, text: &str) -> String {
        format!("{} {}\n\n", "#".repeat(level), self.escape(text))
    }

    fn paragraph(&self, text: &str) -> String {
        format!("{}\n\n", self.escape(text))
    }
}

/// HTML: a table of the given class, cells coloured where they say so.
pub struct Html {
    pub class: &'static str,
}

/// Text safe inside HTML (element content and quoted attributes).
pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

impl Markup for Html {
    fn escape(&self, text: &str) -> String {
        escape_html(text)
    }

    fn begin(&self, columns: &[(String, Align)]) -> String {
        let heads: String = columns.iter().map(|(h, _)| format!("<th>{}</th>", self.escape(h))).collect();
        format!("<table class=\"{}\"><thead><tr>{heads}</tr></thead><tbody>\n", self.class)
    }

    fn row(&self, cells: &[Cell]) -> String {
        let tds: String = cells
            .iter()
            .map(|c| match c.colour {
                Some(colour) => format!("<td style=\"color:{colour}\">{}</td>", self.escape(c.text())),
                None => format!("<td>{}</td>", self.escape(c.text())),
            })
            .collect();
        format!("<tr>{tds}</tr>\n")
    }

    fn end(&self) -> String {
        "</tbody></table>\n".into()
    }

    /// The whole table, its right-aligned columns' cells aligned right (numbers under numbers).
    fn table(&self, t: &MarkupTable) -> String {
        let mut s = self.begin(&t.columns);
        for r in &t.rows {
            let tds: String = r
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let right = t.columns.get(i).is_some_and(|(_, a)| *a == Align::Right);
                    let style = match (right, c.colour) {
                        (true, Some(colour)) => format!(" style=\"text-align:right;color:{colour}\""),
                        (true, None) => " style=\"text-align:right\"".to_string(),
                        (false, Some(colour)) => format!(" style=\"color:{colour}\""),
                        (false, None) => String::new(),
                    };
                    format!("<td{style}>{}</td>", self.escape(c.text()))
                })
                .collect();
            s += &format!("<tr>{tds}</tr>\n");
        }
        s + &self.end()
    }

    fn heading(&self, level: usize, text: &str) -> String {
        format!("<h{level}>{}</h{level}>\n", self.escape(text))
    }

    fn paragraph(&self, text: &str) -> String {
        format!("<p>{}</p>\n", self.escape(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MarkupTable {
        let mut t = MarkupTable::new(&["name", "value"], &[1]);
        t.row(vec!["a|b".into(), Cell::coloured("<1>".into(), "#123")]);
        t.row(vec!["c".into(), Cell::none()]);
        t.row(vec!["".into(), "d".into()]);
        t
    }

    #[test]
    fn markdown_and_html_write_the_same_table() {
        // HTML in a cell is shown as text in Markdown too (issue 43, item 15: it was passed through).
        assert_eq!(Markdown.table(&sample()), "| name | value |\n|---|---:|\n| a\\|b | &lt;1&gt; |\n| c | |\n|  | d |\n");
        assert_eq!(
            Html { class: "t" }.table(&sample()),
            "<table class=\"t\"><thead><tr><th>name</th><th>value</th></tr></thead><tbody>\n\
             <tr><td>a|b</td><td style=\"text-align:right;color:#123\">&lt;1&gt;</td></tr>\n<tr><td>c</td><td style=\"text-align:right\"></td></tr>\n\
             <tr><td></td><td style=\"text-align:right\">d</td></tr>\n</tbody></table>\n"
        );
    }
}
