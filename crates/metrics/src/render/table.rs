//! A small table model and its renderers: Markdown (GitHub pipes), CSV (via the `csv` crate)
//! and LaTeX (booktabs). Cells keep their numeric value so each format chooses its precision:
//! Markdown and LaTeX show what the papers print (3 decimals, 1-decimal percentages); CSV is
//! tidy (see `csv_tidy.rs`): numbers only, fractions as fractions, 6 decimals, a mean ± std
//! split into two columns, snake_case column names documented in `schema.json`.
//!
//! LaTeX needs `\usepackage{booktabs}` and `\usepackage{amssymb}` (the README's preamble) and
//! is plain ASCII; numeric columns are right-aligned with a fixed number of decimals per
//! column, so decimal points line up.

use std::fmt::Write as _;
use std::str::FromStr;

/// Output format of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Md,
    Csv,
    Latex,
    Json,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Ok(Format::Md),
            "csv" => Ok(Format::Csv),
            "latex" | "tex" => Ok(Format::Latex),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "unknown format `{other}`; expected md, csv, latex or json"
            )),
        }
    }
}

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Int(u64),
    /// A rate in [0, 1], shown with 3 decimals (Pass^k, recall as a fraction, ...).
    Rate(f64),
    /// A fraction shown as a percentage with 1 decimal.
    Pct(f64),
    /// A signed difference, shown with 3 decimals and an explicit sign.
    Delta(f64),
    /// A plain number with the given decimals.
    Num(f64, usize),
    /// A p-value: 4 significant digits, scientific below 1e-4.
    P(f64),
    /// A signed number with the given decimals (`+2.1`, `−0.4`): a difference that is no
    /// fraction (turns, dollars).
    Signed(f64, usize),
    /// A mean and its standard deviation (`0.890 ± 0.048`); two columns in CSV.
    MeanStd(f64, Option<f64>),
    /// No value.
    Missing,
    /// A value that exists but is not known: a cost involving a model without a price.
    /// Shown as `unknown`, empty (null) in CSV; never a number.
    Unknown,
}

impl Cell {
    pub fn opt_rate(v: Option<f64>) -> Cell {
        v.map_or(Cell::Missing, Cell::Rate)
    }
    pub fn opt_pct(v: Option<f64>) -> Cell {
        v.map_or(Cell::Missing, Cell::Pct)
    }
    pub fn opt_delta(v: Option<f64>) -> Cell {
        v.map_or(Cell::Missing, Cell::Delta)
    }
    pub fn opt_num(v: Option<f64>, decimals: usize) -> Cell {
        v.map_or(Cell::Missing, |x| Cell::Num(x, decimals))
    }
    /// A cost: `None` when nothing was costed (—), `Some(None)` when it is unknown because a
    /// model had no price, else the dollars.
    pub fn cost(v: Option<Option<f64>>, decimals: usize) -> Cell {
        match v {
            None => Cell::Missing,
            Some(None) => Cell::Unknown,
            Some(Some(x)) => Cell::Num(x, decimals),
        }
    }

    /// Display form (Markdown, LaTeX before escaping).
    pub fn display(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Rate(x) => fixed(*x, 3),
            Cell::Pct(x) => format!("{}%", fixed(x * 100.0, 1)),
            Cell::Delta(x) => signed(*x, 3),
            Cell::Num(x, d) => fixed(*x, *d),
            Cell::P(p) => format_p(*p),
            Cell::Signed(x, d) => signed(*x, *d),
            Cell::MeanStd(m, Some(s)) => format!("{} ± {}", fixed(*m, 3), fixed(*s, 3)),
            Cell::MeanStd(m, None) => fixed(*m, 3),
            Cell::Missing => "—".into(),
            Cell::Unknown => "unknown".into(),
        }
    }

    /// Machine form (CSV): plain decimals (fractions stay fractions, p-values are never in
    /// scientific notation), more precision, empty when missing. A [`Cell::MeanStd`] gives
    /// its mean here; CSV writes its std in a second column (see `csv_tidy.rs`).
    pub fn raw(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Rate(x)
            | Cell::Delta(x)
            | Cell::Pct(x)
            | Cell::Signed(x, _)
            | Cell::MeanStd(x, _)
            | Cell::Num(x, _) => fixed(*x, 6),
            // Display of f64 never uses an exponent and round-trips.
            Cell::P(p) => format!("{p}"),
            Cell::Missing | Cell::Unknown => String::new(),
        }
    }
}

/// `x` with `decimals` decimals, never `-0.0`: a value that rounds to zero prints unsigned,
/// whatever its sign (`-0.0`, `-0.00001`), in every table and CSV.
pub(crate) fn fixed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

/// `x` with an explicit sign (`+2.1`, `−0.4`); a value that rounds to zero is `+0.0`.
fn signed(x: f64, decimals: usize) -> String {
    let s = fixed(x, decimals);
    match s.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => format!("+{s}"),
    }
}

fn format_p(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else if p < 1e-4 {
        format!("{p:.3e}")
    } else {
        format!("{p:.4}")
    }
}

/// A titled table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File stem of its CSV (`<id>.csv`).
    pub id: &'static str,
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Footnotes printed under the table.
    pub notes: Vec<String>,
    /// Per header, its declaration when a registered measure made the column (the CSV schema
    /// reads it); shorter than `headers` or `None` where the schema describes the header.
    pub declared: Vec<Option<crate::measure::registry::Declared>>,
}

impl Table {
    pub fn new(id: &'static str, title: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            id,
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
            declared: Vec::new(),
        }
    }

    /// An empty table whose columns are `columns`, each declared.
    pub(crate) fn declared(
        id: &'static str,
        title: impl Into<String>,
        columns: &[crate::measure::registry::Column],
    ) -> Table {
        let mut t = Table::new(id, title, &[]);
        for c in columns {
            t.push_column(*c);
        }
        t
    }

    /// Appends the column `c` declares: its header and, for the CSV schema, its declaration.
    pub(crate) fn push_column(&mut self, c: crate::measure::registry::Column) {
        self.push_declared(c.header.to_string(), c.into());
    }

    /// Appends the column `c` declares made for `value` (each `{}` replaced by it, see
    /// [`crate::measure::registry::Column::repeated`]).
    pub(crate) fn push_column_for(&mut self, c: crate::measure::registry::Column, value: &str) {
        let (header, declared) = c.repeated(value);
        self.push_declared(header, declared);
    }

    /// Appends a column under `header` with its declaration made by the table's code (a
    /// column whose name and meaning carry values, such as a domain and a k).
    pub(crate) fn push_declared(
        &mut self,
        header: String,
        declared: crate::measure::registry::Declared,
    ) {
        self.declared.resize(self.headers.len(), None);
        self.headers.push(header);
        self.declared.push(Some(declared));
    }

    /// GitHub-flavoured Markdown with a `###` title.
    pub fn to_markdown(&self) -> String {
        let mut s = format!("### {}\n\n", self.title);
        let esc = |c: String| c.replace('|', "\\|");
        let _ = writeln!(s, "| {} |", self.headers.join(" | "));
        let _ = writeln!(
            s,
            "|{}|",
            self.headers
                .iter()
                .enumerate()
                .map(|(i, _)| if i < self.text_columns() {
                    ":---"
                } else {
                    "---:"
                })
                .collect::<Vec<_>>()
                .join("|")
        );
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| esc(c.display())).collect();
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
        for n in &self.notes {
            let _ = writeln!(s, "\n{n}");
        }
        s
    }

    /// Leading columns holding text (left-aligned).
    fn text_columns(&self) -> usize {
        self.rows.first().map_or(1, |r| {
            r.iter().take_while(|c| matches!(c, Cell::Text(_))).count()
        })
    }

    /// Tidy CSV with a header row of documented snake_case names (see `csv_tidy.rs`).
    pub fn to_csv(&self) -> String {
        crate::render::csv_tidy::tidy(self).to_csv()
    }

    /// A LaTeX `table` with a booktabs `tabular`; past [`LONG_ROWS`] rows a `longtable`
    /// (package `longtable`) so it breaks across pages.
    pub fn to_latex(&self) -> String {
        let n_text = self.text_columns();
        let spec: String = (0..self.headers.len())
            .map(|i| if i < n_text { 'l' } else { 'r' })
            .collect();
        let caption = latex_escape(&self.title);
        let label = self.id.replace('_', "-");
        let head: Vec<String> = self.headers.iter().map(|h| latex_escape(h)).collect();
        let body: String = self
            .rows
            .iter()
            .map(|row| {
                let cells: Vec<String> = row.iter().map(|c| latex_escape(&c.display())).collect();
                format!("{} \\\\\n", cells.join(" & "))
            })
            .collect();
        let notes: String = self
            .notes
            .iter()
            .map(|n| format!("\\par\\footnotesize {}\n", latex_escape(n)))
            .collect();
        if self.rows.len() > LONG_ROWS {
            return format!(
                "{{\\small\n\\begin{{longtable}}{{{spec}}}\n\\caption{{{caption}}}\\label{{tab:{label}}}\\\\\n\\toprule\n{} \\\\\n\\midrule\n\\endhead\n{body}\\bottomrule\n\\end{{longtable}}\n{notes}}}\n",
                head.join(" & ")
            );
        }
        let mut s = String::from("\\begin{table}[t]\n\\centering\n\\small\n");
        let _ = writeln!(s, "\\caption{{{caption}}}");
        let _ = writeln!(s, "\\label{{tab:{label}}}");
        let _ = writeln!(s, "\\begin{{tabular}}{{{spec}}}\n\\toprule");
        let _ = writeln!(s, "{} \\\\\n\\midrule", head.join(" & "));
        s.push_str(&body);
        s.push_str("\\bottomrule\n\\end{tabular}\n");
        s.push_str(&notes);
        s.push_str("\\end{table}\n");
        s
    }
}

/// Rows past which LaTeX uses a `longtable`.
pub(crate) const LONG_ROWS: usize = 40;

/// Escapes LaTeX specials and maps the few Unicode symbols tables use.
pub(crate) fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        i += 1;
        // `Pass^4`, `Pass^k`: a superscript, as the papers print it.
        if ch == '^' {
            let sup: String = chars[i..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if !sup.is_empty() && sup.len() <= 3 {
                out.push_str(&format!("\\textsuperscript{{{sup}}}"));
                i += sup.chars().count();
                continue;
            }
        }
        match ch {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '—' => out.push_str("---"),
            '−' => out.push('-'),
            'Δ' => out.push_str("$\\Delta$"),
            'χ' => out.push_str("$\\chi$"),
            '²' => out.push_str("$^2$"),
            '±' => out.push_str("$\\pm$"),
            '≤' => out.push_str("$\\le$"),
            '✓' => out.push_str("$\\checkmark$"),
            '✗' => out.push_str("$\\times$"),
            '×' => out.push_str("$\\times$"),
            '·' => out.push_str("$\\cdot$"),
            '≥' => out.push_str("$\\ge$"),
            '→' => out.push_str("$\\to$"),
            '–' => out.push_str("--"),
            'τ' => out.push_str("$\\tau$"),
            c if !c.is_ascii() => out.push('?'),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        use crate::measure::registry::{AGENT, Column};
        let column = |header, name, unit| Column {
            header,
            name,
            unit,
            meaning: "a sample column",
        };
        let mut t = Table::declared("t", "Pass^4 & more", &[AGENT]);
        t.push_column_for(crate::render::columns::PASS_K, "4");
        t.push_column(column("Δ", "delta", "fraction"));
        t.push_column(column("Block%", "block_rate", "fraction"));
        t.rows.push(vec![
            Cell::Text("gpt_5|x".into()),
            Cell::Rate(0.58),
            Cell::Delta(-0.12),
            Cell::Pct(0.441),
        ]);
        t.rows.push(vec![
            Cell::Text("b".into()),
            Cell::Missing,
            Cell::Delta(0.06),
            Cell::Int(3),
        ]);
        t
    }

    #[test]
    fn markdown_shape() {
        let md = sample().to_markdown();
        assert!(md.starts_with("### Pass^4 & more\n\n| Agent | Pass^4 | Δ | Block% |\n"));
        assert!(md.contains("|:---|---:|---:|---:|"));
        assert!(md.contains("| gpt_5\\|x | 0.580 | −0.120 | 44.1% |"));
        assert!(md.contains("| b | — | +0.060 | 3 |"));
    }

    #[test]
    fn csv_is_raw_and_quoted() {
        let csv = sample().to_csv();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("agent_model,pass_4,delta,block_rate"));
        assert_eq!(lines.next(), Some("gpt_5|x,0.580000,-0.120000,0.441000"));
        assert_eq!(lines.next(), Some("b,,0.060000,3"));
    }

    #[test]
    fn latex_escapes() {
        let tex = sample().to_latex();
        assert!(tex.contains("\\caption{Pass\\textsuperscript{4} \\& more}"));
        assert!(tex.contains("\\begin{tabular}{lrrr}"));
        assert!(tex.contains("gpt\\_5|x & 0.580 & -0.120 & 44.1\\% \\\\"));
        assert!(tex.contains("b & --- & +0.060 & 3 \\\\"));
    }

    #[test]
    fn negative_zero_never_prints() {
        for x in [-0.0, -0.00001] {
            assert_eq!(Cell::Num(x, 1).display(), "0.0");
            assert_eq!(Cell::Rate(x).display(), "0.000");
            assert_eq!(Cell::Pct(x).display(), "0.0%");
            assert_eq!(Cell::MeanStd(x, Some(x)).display(), "0.000 ± 0.000");
            assert_eq!(Cell::Signed(x, 1).display(), "+0.0");
            assert_eq!(Cell::Delta(x).display(), "+0.000");
        }
        for x in [-0.0, -1e-9] {
            assert_eq!(Cell::Num(x, 1).raw(), "0.000000");
        }
        assert_eq!(Cell::Signed(-0.06, 1).display(), "−0.1");
        assert_eq!(Cell::Num(-2.5, 1).display(), "-2.5");
        assert_eq!(fixed(-0.04, 1), "0.0");
    }

    #[test]
    fn format_parses() {
        assert_eq!("MD".parse::<Format>(), Ok(Format::Md));
        assert_eq!("latex".parse::<Format>(), Ok(Format::Latex));
        assert!("xml".parse::<Format>().is_err());
    }
}
