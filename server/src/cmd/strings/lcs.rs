//! LCS: the longest common subsequence of two strings, its length, or the matching ranges
//! (IDX, MINMATCHLEN, WITHMATCHLEN), by the dynamic-programming table Redis uses, so ties
//! resolve to the same subsequence and ranges as Redis's.

use bytes::Bytes;

use super::store::read_string;
use crate::cmd::{NOT_INT, parse_i64};
use crate::resp::Reply;
use crate::store::{Meta, R, Txn};

/// Most bytes the table may take: Redis refuses tables past `proto-max-bulk-len` (512 MB).
const MAX_TABLE_BYTES: u64 = 512 * 1024 * 1024;

/// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]`
pub fn lcs(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut strings = Vec::with_capacity(2);
    for key in &a[1..3] {
        strings.push(match txn.meta(key)? {
            None => Vec::new(),
            Some(m @ (Meta::Str(_) | Meta::Chunked { .. })) => read_string(txn, key, &m)?,
            Some(_) => {
                return Err(Reply::err("The specified keys must contain string values"));
            }
        });
    }
    let (mut idx, mut len_only, mut with_len) = (false, false, false);
    let mut min_len: u64 = 0;
    let mut j = 3;
    while j < a.len() {
        match a[j].to_ascii_uppercase().as_slice() {
            b"IDX" => idx = true,
            b"LEN" => len_only = true,
            b"WITHMATCHLEN" => with_len = true,
            b"MINMATCHLEN" if j + 1 < a.len() => {
                let n = parse_i64(&a[j + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
                min_len = n.max(0) as u64;
                j += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        j += 1;
    }
    if idx && len_only {
        return Err(Reply::err(
            "If you want both the length and indexes, please just use IDX.",
        ));
    }
    let (x, y) = (&strings[0], &strings[1]);
    if x.len() as u64 >= u64::from(u32::MAX) - 1 || y.len() as u64 >= u64::from(u32::MAX) - 1 {
        return Err(Reply::err("String too long for LCS"));
    }
    let cells = (x.len() as u64 + 1) * (y.len() as u64 + 1);
    if cells * 4 > MAX_TABLE_BYTES {
        return Err(Reply::err(
            "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    let table = Table::build(x, y);
    let total = table.at(x.len(), y.len());
    if len_only {
        return Ok(Reply::Int(i64::from(total)));
    }
    let (common, ranges) = table.walk(x, y);
    if !idx {
        return Ok(Reply::bulk(common));
    }
    let matches = ranges
        .into_iter()
        .filter(|r| min_len == 0 || r.len() >= min_len)
        .map(|r| {
            let mut m = vec![
                Reply::Array(vec![Reply::Int(r.a.0 as i64), Reply::Int(r.a.1 as i64)]),
                Reply::Array(vec![Reply::Int(r.b.0 as i64), Reply::Int(r.b.1 as i64)]),
            ];
            if with_len {
                m.push(Reply::Int(r.len() as i64));
            }
            Reply::Array(m)
        })
        .collect();
    Ok(Reply::Map(vec![
        (Reply::bulk("matches"), Reply::Array(matches)),
        (Reply::bulk("len"), Reply::Int(i64::from(total))),
    ]))
}

/// A matching run: inclusive byte ranges in the first and the second string.
struct Range {
    a: (usize, usize),
    b: (usize, usize),
}

impl Range {
    fn len(&self) -> u64 {
        (self.a.1 - self.a.0 + 1) as u64
    }
}

/// `at(i, j)`: the LCS length of the first `i` bytes of one string and `j` of the other.
struct Table {
    cols: usize,
    cells: Vec<u32>,
}

impl Table {
    fn build(x: &[u8], y: &[u8]) -> Table {
        let cols = y.len() + 1;
        let mut cells = vec![0u32; (x.len() + 1) * cols];
        for i in 1..=x.len() {
            for j in 1..=y.len() {
                cells[i * cols + j] = if x[i - 1] == y[j - 1] {
                    cells[(i - 1) * cols + j - 1] + 1
                } else {
                    cells[(i - 1) * cols + j].max(cells[i * cols + j - 1])
                };
            }
        }
        Table { cols, cells }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.cols + j]
    }

    /// Walks back from the end: the subsequence, and its matching runs from the last to the
    /// first (the order Redis reports them in). On a tie the walk moves in the second string.
    fn walk(&self, x: &[u8], y: &[u8]) -> (Vec<u8>, Vec<Range>) {
        let mut common = Vec::with_capacity(self.at(x.len(), y.len()) as usize);
        let mut ranges = Vec::new();
        let mut run: Option<Range> = None;
        let (mut i, mut j) = (x.len(), y.len());
        while i > 0 && j > 0 {
            if x[i - 1] == y[j - 1] {
                common.push(x[i - 1]);
                match &mut run {
                    Some(r) if r.a.0 == i && r.b.0 == j => {
                        r.a.0 -= 1;
                        r.b.0 -= 1;
                    }
                    Some(_) => ranges.extend(run.take()),
                    None => {
                        run = Some(Range {
                            a: (i - 1, i - 1),
                            b: (j - 1, j - 1),
                        });
                    }
                }
                // A run that reached the start of either string ends here.
                if run.as_ref().is_some_and(|r| r.a.0 == 0 || r.b.0 == 0) {
                    ranges.extend(run.take());
                }
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                ranges.extend(run.take());
            }
        }
        common.reverse();
        (common, ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn redis_documentation_example() {
        let (x, y) = (b"ohmytext", b"mynewtext");
        let t = Table::build(x, y);
        assert_eq!(t.at(x.len(), y.len()), 6);
        let (common, ranges) = t.walk(x, y);
        assert_eq!(common, b"mytext");
        let got: Vec<_> = ranges.iter().map(|r| (r.a, r.b)).collect();
        assert_eq!(got, vec![((4, 7), (5, 8)), ((2, 3), (0, 1))]);
    }
}
