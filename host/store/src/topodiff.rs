//! wloc's own topology diff: every difference between two topologies, as
//! the line changes between their canonical XML documents (what `wloc ls
//! --of xml` writes). Whatever the XML holds (objects added or removed,
//! any attribute, info, set, distances, memory attributes, CPU kinds,
//! NUMA page types) is in the diff, and applying it gives back the new
//! document byte for byte, or is refused at the first change that does
//! not fit.
//!
//! # Format (version 1)
//!
//! A text file:
//!
//! ```text
//! wloc-topology-diff 1
//! refname node001.xml
//! @@ -147,1 +147,1 @@ in OSDev os_index=0 (line 145)
//! -            <info name="Address" value="00:26:6c:fa:e8:b4"/>
//! +            <info name="Address" value="00:26:6c:fa:e0:e4"/>
//! ```
//!
//! The first line names the format and its version. `refname` (optional)
//! names the old topology, as in hwloc's diffs. Each change starts with
//! `@@ -A,B +C,D @@`: lines A to A+B-1 of the old document (numbered from
//! 1; when B is 0, the new lines go before line A) are replaced by the
//! D lines that follow, which start at line C of the new document. Old
//! lines follow `-` and new lines `+`, each exactly as in the document.
//! What follows the second `@@` is a comment naming the object the change
//! is in. Changes are in document order and do not overlap.

use std::fmt;

use crate::linediff::{self, Hunk};

/// The first line of a version 1 document.
pub const MAGIC: &str = "wloc-topology-diff";
/// The version this module writes and reads.
pub const VERSION: u32 = 1;

/// A diff of two canonical XML topology documents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RichDiff {
    /// The name of the old topology.
    pub refname: Option<String>,
    /// The changes, in document order.
    pub hunks: Vec<Hunk<String>>,
}

/// Why a diff does not apply: its first change that does not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyError {
    /// The change's position in the diff, from 1.
    pub change: usize,
    /// Its header (`@@ -A,B +C,D @@`) in the direction it was applied.
    pub header: String,
    /// Where in the old document, and why.
    pub reason: String,
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "change #{} ({}) does not apply: {}",
            self.change, self.header, self.reason
        )
    }
}

impl std::error::Error for ApplyError {}

fn lines(text: &str) -> Vec<String> {
    text.split('\n').map(str::to_string).collect()
}

fn header(h: &Hunk<String>) -> String {
    // Widened: a hunk built elsewhere may start at usize::MAX.
    format!(
        "@@ -{},{} +{},{} @@",
        h.old_start as u128 + 1,
        h.old.len(),
        h.new_start as u128 + 1,
        h.new.len()
    )
}

/// Whether `text` looks like a document of this format (rather than
/// hwloc's XML diff).
pub fn is_rich(text: &str) -> bool {
    text.starts_with(MAGIC)
}

/// The diff from `old` to `new` (canonical XML documents).
pub fn compute(old: &str, new: &str) -> RichDiff {
    RichDiff {
        refname: None,
        hunks: linediff::diff(&lines(old), &lines(new), 1 << 24),
    }
}

/// `in Core os_index=3 (line 40)`: the object whose element holds line
/// `at` (0-based) of `doc`.
pub fn context(doc: &[String], at: usize) -> String {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let Some(first) = doc.get(at.min(doc.len().saturating_sub(1))) else {
        return String::new();
    };
    let limit = indent(first);
    let attr = |l: &str, name: &str| {
        let key = format!(" {name}=\"");
        l.find(&key).and_then(|p| {
            let v = &l[p + key.len()..];
            v.find('"').map(|q| v[..q].to_string())
        })
    };
    for i in (0..=at.min(doc.len() - 1)).rev() {
        let l = &doc[i];
        let t = l.trim_start_matches(' ');
        let is_obj = t.starts_with("<object ");
        if is_obj && (i == at || indent(l) < limit) {
            let ty = attr(l, "type").unwrap_or_default();
            let os = attr(l, "os_index")
                .map(|o| format!(" os_index={o}"))
                .unwrap_or_default();
            return format!("in {ty}{os} (line {})", i + 1);
        }
        if t.starts_with("<topology") && i != at {
            return "in the topology".into();
        }
    }
    "in the topology".into()
}

/// The document of `diff`; `old` (the old document) gives the comments
/// naming where each change is.
pub fn to_text(diff: &RichDiff, old: &str) -> String {
    let doc = lines(old);
    let mut s = format!("{MAGIC} {VERSION}\n");
    if let Some(r) = &diff.refname {
        s.push_str(&format!("refname {r}\n"));
    }
    for h in &diff.hunks {
        s.push_str(&header(h));
        s.push(' ');
        s.push_str(&context(&doc, h.old_start));
        s.push('\n');
        for l in &h.old {
            s.push('-');
            s.push_str(l);
            s.push('\n');
        }
        for l in &h.new {
            s.push('+');
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// Reads a document of this format.
///
/// # Errors
///
/// The line (from 1) and what is wrong with it.
pub fn parse(text: &str) -> Result<RichDiff, String> {
    let mut it = text.split('\n').enumerate().peekable();
    let err = |n: usize, m: String| format!("line {}: {m}", n + 1);
    let (_, first) = it.next().unwrap_or((0, ""));
    let version = first
        .strip_prefix(MAGIC)
        .and_then(|v| v.strip_prefix(' '))
        .ok_or_else(|| {
            err(
                0,
                format!("not a wloc topology diff (it must start with `{MAGIC} {VERSION}`)"),
            )
        })?;
    if version.trim() != VERSION.to_string() {
        return Err(err(
            0,
            format!(
                "version {version} of the wloc topology diff format is not supported (only {VERSION})"
            ),
        ));
    }
    let mut diff = RichDiff::default();
    if let Some((_, l)) = it.peek()
        && let Some(r) = l.strip_prefix("refname ")
    {
        diff.refname = Some(r.to_string());
        it.next();
    }
    let num = |n: usize, s: &str, what: &str| -> Result<usize, String> {
        // Digits only (`parse` would take a `+`).
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err(n, format!("{what} `{s}` is not a number")));
        }
        s.parse::<usize>()
            .map_err(|_| err(n, format!("{what} `{s}` is larger than {}", usize::MAX)))
    };
    let pair = |n: usize, s: &str, sign: char| -> Result<(usize, usize), String> {
        let s = s.strip_prefix(sign).ok_or_else(|| {
            err(
                n,
                format!("expected `{sign}START,COUNT` in the change header"),
            )
        })?;
        let (a, b) = s.split_once(',').ok_or_else(|| {
            err(
                n,
                format!("expected `{sign}START,COUNT` in the change header"),
            )
        })?;
        let a = num(n, a, "start line")?;
        if a == 0 {
            return Err(err(n, "line numbers start at 1".into()));
        }
        let count = num(n, b, "line count")?;
        // The change's last line must itself be a line number: a header
        // from a file cannot make the positions overflow.
        if (a - 1).checked_add(count).is_none() {
            return Err(err(
                n,
                format!(
                    "`{sign}{a},{count}` goes past the largest line number ({})",
                    usize::MAX
                ),
            ));
        }
        Ok((a - 1, count))
    };
    while let Some((n, l)) = it.next() {
        if l.is_empty() && it.peek().is_none() {
            break;
        }
        let Some(rest) = l.strip_prefix("@@ ") else {
            return Err(err(
                n,
                format!("expected a change header `@@ -A,B +C,D @@`, found `{l}`"),
            ));
        };
        let mut f = rest.split(' ');
        let (o0, ol) = pair(n, f.next().unwrap_or(""), '-')?;
        let (n0, nl) = pair(n, f.next().unwrap_or(""), '+')?;
        if f.next() != Some("@@") {
            return Err(err(n, "the change header does not end with `@@`".into()));
        }
        let mut h = Hunk {
            old_start: o0,
            new_start: n0,
            old: Vec::new(),
            new: Vec::new(),
        };
        for (count, sign, into) in [(ol, '-', &mut h.old), (nl, '+', &mut h.new)] {
            for _ in 0..count {
                let Some((m, l)) = it.next() else {
                    return Err(err(
                        n,
                        format!("the change announces more `{sign}` lines than the file has"),
                    ));
                };
                let Some(body) = l.strip_prefix(sign) else {
                    return Err(err(
                        m,
                        format!("expected a `{sign}` line of the change at line {}", n + 1),
                    ));
                };
                into.push(body.to_string());
            }
        }
        diff.hunks.push(h);
    }
    Ok(diff)
}

/// Applies `diff` to the canonical document `old` (from new to old when
/// `reverse`) and returns the new document.
///
/// # Errors
///
/// The first change that does not fit `old` (its lines differ, or lie
/// past its end); nothing is applied then.
pub fn apply(old: &str, diff: &RichDiff, reverse: bool) -> Result<String, ApplyError> {
    let hunks: Vec<Hunk<String>> = if reverse {
        diff.hunks.iter().map(Hunk::reversed).collect()
    } else {
        diff.hunks.clone()
    };
    let doc = lines(old);
    match linediff::apply(&doc, &hunks) {
        Ok(l) => Ok(l.join("\n")),
        Err(c) => Err(ApplyError {
            change: c.hunk + 1,
            header: header(&hunks[c.hunk]),
            reason: format!("{} ({})", c.reason, context(&doc, c.line)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OLD: &str = "<topology version=\"3.0\">\n  <object type=\"Machine\" os_index=\"0\">\n    <object type=\"Core\" os_index=\"1\">\n      <info name=\"A\" value=\"1\"/>\n    </object>\n  </object>\n</topology>\n";

    #[test]
    fn writes_reads_and_applies() {
        let new = OLD.replace("value=\"1\"", "value=\"2\"");
        let mut d = compute(OLD, &new);
        d.refname = Some("a.xml".into());
        let text = to_text(&d, OLD);
        assert!(
            text.contains("@@ -4,1 +4,1 @@ in Core os_index=1 (line 3)"),
            "{text}"
        );
        let back = parse(&text).unwrap();
        assert_eq!(back, d);
        assert_eq!(apply(OLD, &back, false).unwrap(), new);
        assert_eq!(apply(&new, &back, true).unwrap(), OLD);
        let e = apply(&new, &back, false).unwrap_err().to_string();
        assert!(
            e.starts_with("change #1 (@@ -4,1 +4,1 @@) does not apply: line 4 is"),
            "{e}"
        );
        assert!(e.contains("in Core os_index=1"), "{e}");
    }

    #[test]
    fn bad_documents_name_their_line() {
        for (doc, want) in [
            ("garbage", "line 1: not a wloc topology diff"),
            ("wloc-topology-diff 9\n", "version 9"),
            (
                "wloc-topology-diff 1\nxx\n",
                "line 2: expected a change header",
            ),
            (
                "wloc-topology-diff 1\n@@ -0,1 +1,1 @@\n",
                "line 2: line numbers start at 1",
            ),
            (
                "wloc-topology-diff 1\n@@ -1,1 +1,1 @@\n-a\n",
                "expected a `+` line",
            ),
            (
                "wloc-topology-diff 1\n@@ -1,1 +1,2 @@\n-a\n+b",
                "more `+` lines",
            ),
            (
                "wloc-topology-diff 1\n@@ -1,1 +1,1 @@\n+a\n-b\n",
                "line 3: expected a `-` line",
            ),
            ("wloc-topology-diff 1\n@@ -1,x +1,1 @@\n", "line count `x`"),
        ] {
            let e = parse(doc).unwrap_err();
            assert!(e.contains(want), "{doc}: {e}");
        }
    }

    /// Headers with numbers at and past the limits, signs, and missing or
    /// truncated parts: each is refused with a message naming the problem,
    /// or read and then refused by `apply`; none panics.
    #[test]
    fn hostile_headers_are_refused_by_name() {
        let max = usize::MAX;
        let big = format!("{max}0");
        for (header, want) in [
            (
                format!("@@ -{max},2 +1,1 @@"),
                "goes past the largest line number",
            ),
            (
                format!("@@ -1,1 +{max},2 @@"),
                "goes past the largest line number",
            ),
            (
                format!("@@ -2,{max} +1,1 @@"),
                "goes past the largest line number",
            ),
            (format!("@@ -{big},1 +1,1 @@"), "is larger than"),
            (format!("@@ -1,{big} +1,1 @@"), "is larger than"),
            ("@@ --1,1 +1,1 @@".into(), "start line `-1` is not a number"),
            ("@@ -1,-1 +1,1 @@".into(), "line count `-1` is not a number"),
            ("@@ -+1,1 +1,1 @@".into(), "start line `+1` is not a number"),
            ("@@ -1,+1 +1,1 @@".into(), "line count `+1` is not a number"),
            ("@@ -,1 +1,1 @@".into(), "start line `` is not a number"),
            ("@@ -1, +1,1 @@".into(), "line count `` is not a number"),
            ("@@ ".into(), "expected `-START,COUNT`"),
            ("@@ -1,1".into(), "expected `+START,COUNT`"),
            ("@@ -1 +1,1 @@".into(), "expected `-START,COUNT`"),
            ("@@ -1,1 +1,1".into(), "does not end with `@@`"),
            ("@@ -0,0 +1,0 @@".into(), "line numbers start at 1"),
            ("@@".into(), "expected a change header"),
        ] {
            let doc = format!("wloc-topology-diff 1\n{header}\n-a\n+b\n");
            let e = parse(&doc).unwrap_err();
            assert!(
                e.starts_with("line 2: ") && e.contains(want),
                "{header}: {e}"
            );
        }
        // The largest start that fits reads, and is refused by `apply`
        // in both directions, naming the line.
        for (header, lines) in [
            (format!("@@ -{max},1 +1,1 @@"), "-a\n+b\n"),
            (format!("@@ -{max},0 +{max},0 @@"), ""),
            (format!("@@ -1,1 +{max},1 @@"), "-a\n+b\n"),
        ] {
            let d = parse(&format!("wloc-topology-diff 1\n{header}\n{lines}")).unwrap();
            for reverse in [false, true] {
                let e = apply("a\nb\n", &d, reverse).unwrap_err().to_string();
                assert!(e.starts_with("change #1 (@@ -"), "{header}: {e}");
                assert!(e.contains("does not apply"), "{header}: {e}");
            }
        }
    }

    #[test]
    fn hunks_built_at_the_limits_do_not_overflow() {
        let h = Hunk {
            old_start: usize::MAX,
            new_start: usize::MAX,
            old: vec!["a".to_string()],
            new: vec!["b".to_string()],
        };
        let d = RichDiff {
            refname: None,
            hunks: vec![h],
        };
        let e = apply("a\n", &d, false).unwrap_err().to_string();
        assert!(e.contains(&format!("-{},1", usize::MAX as u128 + 1)), "{e}");
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "(wloc-topology-diff 1\n)?(@@ -[0-9],[0-9] \\+[0-9],[0-9] @@\n|[-+ ]?[a-z]{0,3}\n){0,8}") {
            let _ = parse(&s);
        }

        /// Any numbers in a header, up to and past usize::MAX: read and
        /// applied, or refused, never a panic.
        #[test]
        fn any_header_numbers_parse_and_apply_or_fail(
            nums in proptest::array::uniform4(prop_oneof![
                0usize..4,
                (usize::MAX - 3)..=usize::MAX,
                any::<usize>(),
            ]),
            extra in "[0-9]{0,2}",
            lines in proptest::collection::vec("[-+][ab]", 0..6),
        ) {
            let doc = format!(
                "wloc-topology-diff 1\n@@ -{},{}{extra} +{},{} @@\n{}",
                nums[0], nums[1], nums[2], nums[3],
                lines.join("\n")
            );
            if let Ok(d) = parse(&doc) {
                for reverse in [false, true] {
                    let _ = apply("a\nb\na\n", &d, reverse);
                }
            }
        }

        #[test]
        fn written_diffs_read_back_and_apply(
            a in proptest::collection::vec("[ab<]{0,3}", 1..30),
            b in proptest::collection::vec("[ab<]{0,3}", 1..30),
        ) {
            let (a, b) = (a.join("\n"), b.join("\n"));
            let d = compute(&a, &b);
            let back = parse(&to_text(&d, &a)).unwrap();
            prop_assert_eq!(apply(&a, &back, false).unwrap(), b.clone());
            prop_assert_eq!(apply(&b, &back, true).unwrap(), a);
        }
    }
}
