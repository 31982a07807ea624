//! `--stats`: the sizes of the JSON and the TOON text (tokens, bytes,
//! characters), what TOON saves and that saving in percent of the JSON, as a
//! table on stderr; and the table layout `choose` prints too.

use polywire::tokens::Tokenizer;

use crate::Fail;

/// The measures of one text; `tokens` when counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    pub tokens: Option<usize>,
    pub bytes: usize,
    pub chars: usize,
}

impl Size {
    /// The measures of `text` (`bytes`: of the input it was read from).
    pub fn of(text: &str, bytes: usize, tokenizer: &Tokenizer) -> Result<Size, Fail> {
        let tokens = tokenizer.count(text).map_err(|e| Fail::codec(e.to_string(), &e))?;
        Ok(Size { tokens: Some(tokens), bytes, chars: text.chars().count() })
    }
}

/// The --stats record: for each measure both texts have (tokens, bytes,
/// chars, in that order), the JSON's, the TOON's, what TOON saves and that
/// in percent of the JSON.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub measures: Vec<&'static str>,
    pub json: Vec<i128>,
    pub toon: Vec<i128>,
    pub saved: Vec<i128>,
    pub saved_percent: Vec<String>,
}

pub(crate) fn compute_stats(json: &Size, toon: &Size) -> Record {
    let mut r = Record { measures: Vec::new(), json: Vec::new(), toon: Vec::new(), saved: Vec::new(), saved_percent: Vec::new() };
    let pairs = [
        ("tokens", json.tokens, toon.tokens),
        ("bytes", Some(json.bytes), Some(toon.bytes)),
        ("chars", Some(json.chars), Some(toon.chars)),
    ];
    for (name, j, t) in pairs {
        let (Some(j), Some(t)) = (j, t) else { continue };
        let (j, t) = (j as i128, t as i128);
        r.measures.push(name);
        r.json.push(j);
        r.toon.push(t);
        r.saved.push(j - t);
        r.saved_percent.push(percent(j - t, j));
    }
    r
}

/// `saved` in percent of `total`, to a tenth, halves rounded up (`-` of 0).
fn percent(saved: i128, total: i128) -> String {
    if total == 0 {
        return "-".to_owned();
    }
    let tenths = (saved.abs() * 2000 + total) / (2 * total);
    let sign = if saved < 0 && tenths != 0 { "-" } else { "" };
    format!("{sign}{}.{}%", tenths / 10, tenths % 10)
}

/// The record as a table: one column per measure, one row per line.
pub(crate) fn format_record(r: &Record) -> String {
    let mut rows = vec![std::iter::once(String::new()).chain(r.measures.iter().map(|m| m.to_string())).collect::<Vec<_>>()];
    let numbers = |label: &str, v: &[i128]| std::iter::once(label.to_owned()).chain(v.iter().map(i128::to_string)).collect();
    rows.push(numbers("JSON", &r.json));
    rows.push(numbers("TOON", &r.toon));
    rows.push(numbers("saved", &r.saved));
    rows.push(std::iter::once("saved %".to_owned()).chain(r.saved_percent.iter().cloned()).collect());
    table(&rows)
}

pub(crate) fn format_stats(json: &Size, toon: &Size) -> String {
    format_record(&compute_stats(json, toon))
}

/// Rows as columns: the first left-aligned, the others right-aligned, two
/// spaces apart, no space at the end of a line.
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, cell)| if c == 0 { format!("{cell:<w$}", w = widths[c]) } else { format!("{cell:>w$}", w = widths[c]) })
                .collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tests-py/test_cli.py's test_stats_functions (cli.py's compute_stats
    /// and format_stats, now here).
    #[test]
    fn stats_functions() {
        let r = compute_stats(&Size { tokens: None, bytes: 400, chars: 3 }, &Size { tokens: None, bytes: 399, chars: 4 });
        assert_eq!(r.saved, vec![1, -1]);
        assert_eq!(r.saved_percent, vec!["0.3%", "-33.3%"]); // 0.25 rounds up
        assert_eq!(format_record(&r).lines().last(), Some("saved %   0.3%  -33.3%"));
        let r = compute_stats(&Size { tokens: Some(10), bytes: 40, chars: 40 }, &Size { tokens: Some(5), bytes: 20, chars: 20 });
        assert_eq!(format_record(&r).lines().next().unwrap().split_whitespace().collect::<Vec<_>>(), ["tokens", "bytes", "chars"]);
        assert_eq!(r.saved_percent[0], "50.0%");
        assert_eq!(percent(0, 0), "-");
        assert_eq!(percent(-1, 10_000), "0.0%");
    }
}
