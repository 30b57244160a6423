//! Explicit OS proc lists: `GOMP_CPU_AFFINITY` and the `proclist=[...]`
//! modifier of `KMP_AFFINITY`.
//!
//! Both are lists of entries, one per thread (thread `n` takes entry `n`
//! modulo the list length).  An entry is one OS proc, or in `proclist` a
//! `{a,b,...}` set the thread floats over; a range `a-b` or `a-b:s`
//! stands for one entry per proc it covers.

use crate::error::{ParseError, ParseErrorKind, Setting};

/// Largest OS proc id accepted, far above any machine, so that a typo
/// cannot make the sets huge.
pub const MAX_PROC_ID: u32 = (1 << 20) - 1;
/// Most entries one list may expand to.
pub const MAX_ENTRIES: usize = 1 << 20;

/// One entry of an explicit list: the OS procs one thread may run on, in
/// the order written (duplicates removed).
pub type ProcEntry = Vec<u32>;

pub(crate) fn parse_id(setting: Setting, tok: &str) -> Result<u32, ParseError> {
    let t = tok.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::new(setting, tok, ParseErrorKind::BadNumber));
    }
    match t.parse::<u32>() {
        Ok(v) if v <= MAX_PROC_ID => Ok(v),
        _ => Err(ParseError::new(setting, tok, ParseErrorKind::BadNumber)),
    }
}

fn parse_signed(setting: Setting, tok: &str) -> Result<i64, ParseError> {
    let t = tok.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 9 {
        return Err(ParseError::new(setting, tok, ParseErrorKind::BadNumber));
    }
    t.parse::<i64>()
        .map_err(|_| ParseError::new(setting, tok, ParseErrorKind::BadNumber))
}

/// Expands `a`, `a-b` or `a-b:s` into the ids it covers, in order.
fn expand_range(setting: Setting, tok: &str, out: &mut Vec<u32>) -> Result<(), ParseError> {
    let t = tok.trim();
    let (range, stride) = match t.split_once(':') {
        Some((r, s)) => (r, Some(s)),
        None => (t, None),
    };
    let Some((a, b)) = range.split_once('-') else {
        if stride.is_some() {
            return Err(ParseError::new(
                setting,
                tok,
                ParseErrorKind::Syntax("a stride needs a range a-b:s"),
            ));
        }
        out.push(parse_id(setting, range)?);
        return Ok(());
    };
    let (a, b) = (parse_id(setting, a)? as i64, parse_id(setting, b)? as i64);
    let s = match stride {
        Some(s) => parse_signed(setting, s)?,
        None => 1,
    };
    if s == 0 {
        return Err(ParseError::new(setting, tok, ParseErrorKind::ZeroStride));
    }
    if (s > 0 && a > b) || (s < 0 && a < b) {
        return Err(ParseError::new(setting, tok, ParseErrorKind::BadRange));
    }
    let count = (b - a) / s + 1;
    if out.len() + count as usize > MAX_ENTRIES {
        return Err(ParseError::new(setting, tok, ParseErrorKind::BadNumber));
    }
    let mut v = a;
    for _ in 0..count {
        out.push(v as u32);
        v += s;
    }
    Ok(())
}

/// Parses a `GOMP_CPU_AFFINITY` value: ids and ranges (`a-b`, `a-b:s`)
/// separated by commas or white space; each proc is one entry.
pub fn parse_gomp(value: &str) -> Result<Vec<ProcEntry>, ParseError> {
    let setting = Setting::GompCpuAffinity;
    let mut ids = Vec::new();
    for tok in value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        expand_range(setting, tok, &mut ids)?;
    }
    if ids.is_empty() {
        return Err(ParseError::new(setting, value, ParseErrorKind::Empty));
    }
    Ok(ids.into_iter().map(|i| vec![i]).collect())
}

/// Parses the inside of `proclist=[...]`: ids, ranges and `{a,b,...}`
/// float sets separated by commas.
pub fn parse_kmp_proclist(inner: &str) -> Result<Vec<ProcEntry>, ParseError> {
    let setting = Setting::KmpAffinity;
    let mut entries: Vec<ProcEntry> = Vec::new();
    let mut rest = inner.trim();
    if rest.is_empty() {
        return Err(ParseError::new(setting, inner, ParseErrorKind::Empty));
    }
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let Some(end) = after.find('}') else {
                return Err(ParseError::new(setting, rest, ParseErrorKind::Unbalanced));
            };
            let body = &after[..end];
            if body.contains('{') {
                return Err(ParseError::new(setting, rest, ParseErrorKind::Unbalanced));
            }
            let mut set = Vec::new();
            for id in body.split(',') {
                let v = parse_id(setting, id)?;
                if !set.contains(&v) {
                    set.push(v);
                }
            }
            entries.push(set);
            rest = after[end + 1..].trim_start();
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let tok = &rest[..end];
            if tok.contains('}') || tok.contains('{') {
                return Err(ParseError::new(setting, tok, ParseErrorKind::Unbalanced));
            }
            let mut ids = Vec::new();
            expand_range(setting, tok, &mut ids)?;
            entries.extend(ids.into_iter().map(|i| vec![i]));
            rest = &rest[end..];
        }
        if entries.len() > MAX_ENTRIES {
            return Err(ParseError::new(setting, inner, ParseErrorKind::BadNumber));
        }
        match rest.strip_prefix(',') {
            Some(r) if !r.trim().is_empty() => rest = r.trim_start(),
            Some(_) => {
                return Err(ParseError::new(
                    setting,
                    inner,
                    ParseErrorKind::Syntax("trailing comma"),
                ));
            }
            None if rest.is_empty() => {}
            None => {
                return Err(ParseError::new(
                    setting,
                    rest,
                    ParseErrorKind::Syntax("expected a comma"),
                ));
            }
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gomp_ranges_and_strides() {
        let e = parse_gomp("3,0-2").unwrap();
        assert_eq!(e, vec![vec![3], vec![0], vec![1], vec![2]]);
        let e = parse_gomp("0 3 1-2 4-15:4").unwrap();
        assert_eq!(
            e,
            vec![
                vec![0],
                vec![3],
                vec![1],
                vec![2],
                vec![4],
                vec![8],
                vec![12]
            ]
        );
        let e = parse_gomp("6-0:-3").unwrap();
        assert_eq!(e, vec![vec![6], vec![3], vec![0]]);
    }

    #[test]
    fn gomp_errors_name_the_token() {
        let e = parse_gomp("0,x1").unwrap_err();
        assert_eq!(e.token, "x1");
        assert_eq!(e.kind, ParseErrorKind::BadNumber);
        assert_eq!(
            parse_gomp("4-2").unwrap_err().kind,
            ParseErrorKind::BadRange
        );
        assert_eq!(
            parse_gomp("0-4:0").unwrap_err().kind,
            ParseErrorKind::ZeroStride
        );
        assert_eq!(parse_gomp("  ").unwrap_err().kind, ParseErrorKind::Empty);
        assert_eq!(
            parse_gomp("99999999999").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert!(parse_gomp("0-1048575,0-1048575").is_err());
    }

    #[test]
    fn kmp_float_sets() {
        let e = parse_kmp_proclist("3,0,{1,2},{1,2}").unwrap();
        assert_eq!(e, vec![vec![3], vec![0], vec![1, 2], vec![1, 2]]);
        let e = parse_kmp_proclist("{0, 4}, 1-3").unwrap();
        assert_eq!(e, vec![vec![0, 4], vec![1], vec![2], vec![3]]);
        assert_eq!(
            parse_kmp_proclist("{1,2").unwrap_err().kind,
            ParseErrorKind::Unbalanced
        );
        assert_eq!(
            parse_kmp_proclist("1,").unwrap_err().kind,
            ParseErrorKind::Syntax("trailing comma")
        );
        assert_eq!(parse_kmp_proclist("{1,a}").unwrap_err().token, "a");
        assert_eq!(
            parse_kmp_proclist("{1-3}").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
    }
}
