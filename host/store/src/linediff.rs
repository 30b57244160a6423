//! Line diffs (Myers' algorithm, bounded by a count of work so that the
//! same inputs always give the same diff) and their exact application.
//!
//! Written here rather than taken from `similar`: its only bound on a
//! diff's cost is a wall-clock deadline, so under load the same inputs
//! gave different stores, and the store format promises the same bytes
//! for the same inputs.

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

/// One step of an edit script, in lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Equal(usize),
    Delete(usize),
    Insert(usize),
}

/// Pushes `op`, merged into the last one if of the same kind.
fn push(ops: &mut Vec<Op>, op: Op) {
    match (ops.last_mut(), op) {
        (_, Op::Equal(0) | Op::Delete(0) | Op::Insert(0)) => {}
        (Some(Op::Equal(a)), Op::Equal(b))
        | (Some(Op::Delete(a)), Op::Delete(b))
        | (Some(Op::Insert(a)), Op::Insert(b)) => *a += b,
        _ => ops.push(op),
    }
}

/// The shortest edit script from `a` to `b` (Myers' greedy algorithm), or
/// `None` once it has cost more than `max_work` steps (line comparisons,
/// diagonals tried and positions kept to trace the script back): a count,
/// not a time, so that the result never depends on the machine's load.
fn myers<L: Eq>(a: &[L], b: &[L], max_work: u64) -> Option<Vec<Op>> {
    let (n, m) = (a.len(), b.len());
    let max_d = n + m;
    let mut work = 0u64;
    // v[k + off]: the furthest x on diagonal k; trace[d]: v's window
    // -d..=d before round d.
    let off = max_d + 1;
    let mut v = vec![0u32; 2 * max_d + 3];
    let mut trace: Vec<Vec<u32>> = Vec::new();
    for d in 0..=max_d {
        work += 2 * d as u64 + 1;
        if work > max_work {
            return None;
        }
        trace.push(v[off - d..=off + d].to_vec());
        let mut k = off - d;
        while k <= off + d {
            let mut x = if k == off - d || (k != off + d && v[k - 1] < v[k + 1]) {
                v[k + 1] as usize
            } else {
                v[k - 1] as usize + 1
            };
            let mut y = (x + off) - k;
            while x < n && y < m && a[x] == b[y] {
                x += 1;
                y += 1;
                work += 1;
            }
            if work > max_work {
                return None;
            }
            v[k] = x as u32;
            if x >= n && y >= m {
                return Some(trace_back(&trace, n, m));
            }
            k += 2;
        }
    }
    None
}

/// The edit script that reaches (`n`, `m`) through the rounds of `trace`.
fn trace_back(trace: &[Vec<u32>], n: usize, m: usize) -> Vec<Op> {
    let (mut x, mut y) = (n as isize, m as isize);
    let mut rev = Vec::new();
    for (d, v) in trace.iter().enumerate().rev() {
        let di = d as isize;
        if d == 0 {
            rev.push(Op::Equal(x as usize));
            break;
        }
        let k = x - y;
        let at = |k: isize| v[(k + di) as usize] as isize;
        let prev_k = if k == -di || (k != di && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        // The snake after the edit, then the edit itself.
        let (sx, sy) = if prev_k == k + 1 {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        rev.push(Op::Equal((x - sx) as usize));
        rev.push(if prev_k == k + 1 {
            Op::Insert(1)
        } else {
            Op::Delete(1)
        });
        debug_assert_eq!(x - sx, y - sy);
        x = prev_x;
        y = prev_y;
    }
    let mut ops = Vec::new();
    for op in rev.into_iter().rev() {
        push(&mut ops, op);
    }
    ops
}

/// The hunks that turn `old` into `new`.  Past `max_work` steps of
/// Myers' algorithm ([`myers`]) the changed middle (between the common
/// first and last lines) is one hunk: still exact, only larger, and the
/// same on every run.
pub fn diff<L: AsRef<[u8]> + Clone + Eq>(old: &[L], new: &[L], max_work: u64) -> Vec<Hunk<L>> {
    let pre = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suf = old[pre..]
        .iter()
        .rev()
        .zip(new[pre..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (&old[pre..old.len() - suf], &new[pre..new.len() - suf]);
    let mut ops = vec![Op::Equal(pre)];
    match myers(a, b, max_work) {
        Some(mid) => ops.extend(mid),
        None => ops.extend([Op::Delete(a.len()), Op::Insert(b.len())]),
    }
    ops.push(Op::Equal(suf));
    let mut hunks: Vec<Hunk<L>> = Vec::new();
    let (mut o, mut n) = (0usize, 0usize);
    for op in ops {
        let (ol, nl) = match op {
            Op::Equal(len) => {
                o += len;
                n += len;
                continue;
            }
            Op::Delete(len) => (len, 0),
            Op::Insert(len) => (0, len),
        };
        if ol + nl == 0 {
            continue;
        }
        let (o0, n0) = (o, n);
        o += ol;
        n += nl;
        // Adjacent operations (a delete then an insert) make one hunk.
        if let Some(h) = hunks.last_mut()
            && h.old_start + h.old.len() == o0
            && h.new_start + h.new.len() == n0
        {
            h.old.extend_from_slice(&old[o0..o0 + ol]);
            h.new.extend_from_slice(&new[n0..n0 + nl]);
            continue;
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
        let h = diff(&a, &b, 1 << 20);
        assert_eq!(apply(&a, &h).unwrap(), b);
        let r: Vec<_> = h.iter().map(Hunk::reversed).collect();
        assert_eq!(apply(&b, &r).unwrap(), a);
    }

    #[test]
    fn conflicts_name_the_hunk_and_line() {
        let a = lines("a\nb\nc");
        let b = lines("a\nx\nc");
        let h = diff(&a, &b, 1 << 20);
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

    #[test]
    fn finds_the_shortest_script_and_gives_up_by_count() {
        let a = lines("a\nb\nc\nd\ne\nf");
        let b = lines("a\nx\nc\nd\ny\nf");
        let h = diff(&a, &b, 1 << 20);
        assert_eq!(h.len(), 2);
        assert_eq!(h.iter().map(|h| h.old.len()).sum::<usize>(), 2);
        // Without room to search, the middle is one hunk: the same on
        // every run, whatever the load.
        let small = diff(&a, &b, 1);
        assert_eq!(small.len(), 1);
        assert_eq!((small[0].old_start, small[0].old.len()), (1, 4));
        assert_eq!(apply(&a, &small).unwrap(), b);
    }

    proptest! {
        #[test]
        fn bounded_diff_then_apply_gives_new(
            a in proptest::collection::vec("[abc]{0,2}", 0..40),
            b in proptest::collection::vec("[abc]{0,2}", 0..40),
            work in 0u64..400,
        ) {
            let h = diff(&a, &b, work);
            prop_assert_eq!(apply(&a, &h).unwrap(), b.clone());
        }

        #[test]
        fn diff_then_apply_gives_new(
            a in proptest::collection::vec("[abc]{0,2}", 0..40),
            b in proptest::collection::vec("[abc]{0,2}", 0..40),
        ) {
            let h = diff(&a, &b, 1 << 20);
            prop_assert_eq!(apply(&a, &h).unwrap(), b.clone());
            let r: Vec<_> = h.iter().map(Hunk::reversed).collect();
            prop_assert_eq!(apply(&b, &r).unwrap(), a);
        }
    }
}
