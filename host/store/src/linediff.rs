//! Line diffs (Myers, from the `similar` crate) and their exact
//! application.

use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

/// One change: the lines `old_start..old_start + old.len()` of the old
/// text (0-based) become `new`, which starts at line `new_start` of the new
/// text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk<L> {
    /// First line of the change in the old text (0-based).
    pub old_start: usize,
    /// First line of the change in the new text (0-based).
    pub new_start: usize,
    /// The lines removed from the old text.
    pub old: Vec<L>,
    /// The lines put in their place.
    pub new: Vec<L>,
}

impl<L: Clone> Hunk<L> {
    /// The same change from new to old.
    pub fn reversed(&self) -> Hunk<L> {
        Hunk {
            old_start: self.new_start,
            new_start: self.old_start,
            old: self.new.clone(),
            new: self.old.clone(),
        }
    }
}

/// The hunks that turn `old` into `new`. A diff that takes longer than
/// `budget` to minimise is still exact, only larger.
pub fn diff<L: AsRef<[u8]> + Clone + Ord + std::hash::Hash>(
    old: &[L],
    new: &[L],
    budget: Duration,
) -> Vec<Hunk<L>> {
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(Instant::now() + budget));
    let mut hunks: Vec<Hunk<L>> = Vec::new();
    // Positions come from the lengths of the operations, in order: the
    // indices `similar` 2.x reports with a deadline are not always right.
    let (mut o, mut n) = (0usize, 0usize);
    for op in ops {
        let (ol, nl) = match op {
            DiffOp::Equal { len, .. } => {
                o += len;
                n += len;
                continue;
            }
            DiffOp::Delete { old_len, .. } => (old_len, 0),
            DiffOp::Insert { new_len, .. } => (0, new_len),
            DiffOp::Replace {
                old_len, new_len, ..
            } => (old_len, new_len),
        };
        let (o0, n0) = (o, n);
        o += ol;
        n += nl;
        // Adjacent operations (a delete then an insert) make one hunk.
        if let Some(h) = hunks.last_mut() {
            if h.old_start + h.old.len() == o0 && h.new_start + h.new.len() == n0 {
                h.old.extend_from_slice(&old[o0..o0 + ol]);
                h.new.extend_from_slice(&new[n0..n0 + nl]);
                continue;
            }
        }
        hunks.push(Hunk {
            old_start: o0,
            new_start: n0,
            old: old[o0..o0 + ol].to_vec(),
            new: new[n0..n0 + nl].to_vec(),
        });
    }
    hunks
}

/// Why a hunk does not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The hunk's position in the diff, from 0.
    pub hunk: usize,
    /// The line of the old text (0-based) where it failed.
    pub line: usize,
    /// What did not match there.
    pub reason: String,
}

/// Applies `hunks` to `old` exactly: each hunk's old lines must be at its
/// place, and each new part must land at its recorded place.
pub fn apply<L: AsRef<[u8]> + Clone + Eq>(
    old: &[L],
    hunks: &[Hunk<L>],
) -> Result<Vec<L>, Conflict> {
    let mut out: Vec<L> = Vec::with_capacity(old.len());
    let mut at = 0;
    for (n, h) in hunks.iter().enumerate() {
        let conflict = |line: usize, reason: String| Conflict {
            hunk: n,
            line,
            reason,
        };
        // Line numbers for messages, widened: a hunk read from a file may
        // start anywhere up to usize::MAX.
        let line = |i: usize| i as u128 + 1;
        if h.old_start < at {
            return Err(conflict(
                h.old_start,
                format!(
                    "it starts at line {} inside or before the previous change",
                    line(h.old_start)
                ),
            ));
        }
        let end = h.old_start.checked_add(h.old.len());
        if end.is_none_or(|e| e > old.len()) {
            return Err(conflict(
                h.old_start,
                format!(
                    "it needs lines {}..{} but the old text has {} lines",
                    line(h.old_start),
                    h.old_start as u128 + h.old.len() as u128,
                    old.len()
                ),
            ));
        }
        out.extend_from_slice(&old[at..h.old_start]);
        if out.len() != h.new_start {
            return Err(conflict(
                h.old_start,
                format!(
                    "its new lines start at line {} of the new text, not {}",
                    line(out.len()),
                    line(h.new_start)
                ),
            ));
        }
        for (k, want) in h.old.iter().enumerate() {
            let have = &old[h.old_start + k];
            if have != want {
                return Err(conflict(
                    h.old_start + k,
                    format!(
                        "line {} is `{}`, the change expects `{}`",
                        h.old_start + k + 1,
                        String::from_utf8_lossy(have.as_ref()),
                        String::from_utf8_lossy(want.as_ref())
                    ),
                ));
            }
        }
        out.extend_from_slice(&h.new);
        at = h.old_start + h.old.len();
    }
    out.extend_from_slice(&old[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(s: &str) -> Vec<String> {
        s.split('\n').map(str::to_string).collect()
    }

    #[test]
    fn diffs_apply_forward_and_backward() {
        let a = lines("a\nb\nc\nd\ne");
        let b = lines("a\nB\nc\ne\nf");
        let h = diff(&a, &b, Duration::from_secs(1));
        assert_eq!(apply(&a, &h).unwrap(), b);
        let r: Vec<_> = h.iter().map(Hunk::reversed).collect();
        assert_eq!(apply(&b, &r).unwrap(), a);
    }

    #[test]
    fn conflicts_name_the_hunk_and_line() {
        let a = lines("a\nb\nc");
        let b = lines("a\nx\nc");
        let h = diff(&a, &b, Duration::from_secs(1));
        let e = apply(&lines("a\ny\nc"), &h).unwrap_err();
        assert_eq!((e.hunk, e.line), (0, 1));
        assert!(
            e.reason.contains("`y`") && e.reason.contains("`b`"),
            "{}",
            e.reason
        );
        let e = apply(&lines("a"), &h).unwrap_err();
        assert!(e.reason.contains("has 1 lines"), "{}", e.reason);
    }

    #[test]
    fn hunks_past_the_largest_line_are_conflicts() {
        let a = lines("a\nb");
        for (start, old) in [
            (usize::MAX, 1),
            (usize::MAX - 1, 2),
            (usize::MAX, 0),
            (2, 1),
        ] {
            let h = Hunk {
                old_start: start,
                new_start: start,
                old: vec!["a".to_string(); old],
                new: Vec::new(),
            };
            let e = apply(&a, &[h]).unwrap_err();
            assert_eq!(e.line, start);
            assert!(
                e.reason.contains("the old text has 2 lines"),
                "{}",
                e.reason
            );
        }
        let h = Hunk {
            old_start: 0,
            new_start: usize::MAX,
            old: vec!["a".to_string()],
            new: Vec::new(),
        };
        let e = apply(&a, &[h]).unwrap_err();
        let want = format!("not {}", usize::MAX as u128 + 1);
        assert!(e.reason.contains(&want), "{}", e.reason);
    }

    proptest! {
        #[test]
        fn diff_then_apply_gives_new(
            a in proptest::collection::vec("[abc]{0,2}", 0..40),
            b in proptest::collection::vec("[abc]{0,2}", 0..40),
        ) {
            let h = diff(&a, &b, Duration::from_secs(5));
            prop_assert_eq!(apply(&a, &h).unwrap(), b.clone());
            let r: Vec<_> = h.iter().map(Hunk::reversed).collect();
            prop_assert_eq!(apply(&b, &r).unwrap(), a);
        }
    }
}
