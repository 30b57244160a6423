//! `indexes=`: explicit lists, interleaving loops and level types turned
//! into the OS indexes of a level.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::object::{ObjKind, ObjType};

use super::parser::{c_number, decimal_u32, scan_type};
use super::{Level, MAX_OS_INDEX, SyntheticError, SyntheticErrorKind, token_at};

/// Computes the OS index array of an `indexes=` value at `span` for a level
/// (or the attached NUMA nodes when `level` is `None`) of `total` objects.
pub(super) fn resolve_indexes(
    text: &str,
    span: (usize, usize),
    total: u64,
    levels: &[Level],
    level: Option<usize>,
) -> Result<Vec<u32>, SyntheticError> {
    let (start, end) = span;
    let s = &text.as_bytes()[start..end];
    let err = |at: usize, msg: String| {
        SyntheticError::at(SyntheticErrorKind::BadIndexes, start + at, msg)
    };
    let total_usize =
        usize::try_from(total).map_err(|_| err(0, String::from("too many objects")))?;
    if total == 0 {
        return Err(err(
            0,
            String::from("indexes= given for NUMA nodes that are never created"),
        ));
    }

    let array: Vec<u32> = if s.iter().all(|&c| c.is_ascii_digit() || c == b',') {
        // An explicit list.
        let mut out = Vec::with_capacity(total_usize.min(s.len() / 2 + 1));
        let mut p = 0;
        loop {
            let Some((v, e)) = decimal_u32(s, p) else {
                return Err(err(
                    p,
                    format!("expected an OS index, found {}", token_at(text, start + p)),
                ));
            };
            match v {
                Some(v) if v <= MAX_OS_INDEX => out.push(v),
                _ => {
                    return Err(err(
                        p,
                        format!(
                            "OS index {} is above the maximum {MAX_OS_INDEX}",
                            token_at(text, start + p)
                        ),
                    ));
                }
            }
            if out.len() as u64 > total {
                return Err(err(
                    p,
                    format!("indexes= lists more than the {total} objects of the level"),
                ));
            }
            p = e;
            if p == s.len() {
                break;
            }
            p += 1; // the comma
        }
        if out.len() as u64 != total {
            return Err(err(
                0,
                format!(
                    "indexes= lists {} OS indexes for {total} objects",
                    out.len()
                ),
            ));
        }
        out
    } else {
        let loops = if s.first().is_some_and(|c| c.is_ascii_digit()) {
            numeric_loops(text, start, end)?
        } else {
            type_loops(text, start, end, total, levels, level)?
        };
        interleave(&loops, total, total_usize).map_err(|m| err(0, m))?
    };
    // Duplicates.
    let max = array.iter().copied().max().unwrap_or(0) as usize;
    let mut seen = vec![false; max + 1];
    for (i, &v) in array.iter().enumerate() {
        if core::mem::replace(&mut seen[v as usize], true) {
            return Err(err(
                0,
                format!("indexes= gives OS index {v} twice (at position {i})"),
            ));
        }
    }
    Ok(array)
}

/// One interleaving loop: `count` values, each `step` objects apart.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loop {
    pub(super) step: u64,
    pub(super) count: u64,
}

/// Reads `step*count:step*count...`.
fn numeric_loops(text: &str, start: usize, end: usize) -> Result<Vec<Loop>, SyntheticError> {
    let s = &text.as_bytes()[..end];
    let mut out = Vec::new();
    let mut p = start;
    loop {
        let bad = |at: usize, what: &str| {
            SyntheticError::at(
                SyntheticErrorKind::BadIndexes,
                at,
                format!("bad interleaving loop {}: {what}", token_at(text, at)),
            )
        };
        let (step, e) = c_number(s, p).ok_or_else(|| bad(p, "expected step*count"))?;
        let step = step.ok_or_else(|| bad(p, "step too large"))?;
        if s.get(e) != Some(&b'*') {
            return Err(bad(p, "expected `*` after the step"));
        }
        if step == 0 {
            return Err(bad(p, "step 0"));
        }
        let (count, e2) = c_number(s, e + 1).ok_or_else(|| bad(p, "expected a count after `*`"))?;
        let count = count.ok_or_else(|| bad(p, "count too large"))?;
        if count == 0 {
            return Err(bad(p, "count 0"));
        }
        out.push(Loop { step, count });
        if e2 == end {
            break;
        }
        if s.get(e2) != Some(&b':') {
            return Err(bad(e2, "expected `:` between loops"));
        }
        p = e2 + 1;
    }
    Ok(out)
}

/// Reads `type:type...` and turns it into loops over the named levels.
fn type_loops(
    text: &str,
    start: usize,
    end: usize,
    total: u64,
    levels: &[Level],
    level: Option<usize>,
) -> Result<Vec<Loop>, SyntheticError> {
    let s = &text.as_bytes()[..end];
    // Levels that have children: every level but the last.
    let searchable = levels.len().saturating_sub(1);
    let mut depths: Vec<usize> = Vec::new();
    let mut p = start;
    loop {
        let bad =
            |at: usize, what: String| SyntheticError::at(SyntheticErrorKind::BadIndexes, at, what);
        let (sp, e) = scan_type(s, p)
            .ok_or_else(|| bad(p, format!("unknown type {} in indexes=", token_at(text, p))))?;
        if matches!(sp.ty.kind(), ObjKind::Io | ObjKind::Misc) {
            return Err(SyntheticError::at(
                SyntheticErrorKind::DisallowedType,
                p,
                format!("{} cannot name an interleaving level", sp.ty),
            ));
        }
        if e != end && s.get(e) != Some(&b':') {
            return Err(bad(
                e,
                format!("expected `:` between types, found {}", token_at(text, e)),
            ));
        }
        let found = levels[..searchable].iter().position(|l| {
            l.obj_type == sp.ty
                && (sp.ty != ObjType::Group
                    || sp.group_depth.is_none()
                    || sp.group_depth == l.group_depth)
        });
        let d = found.ok_or_else(|| {
            bad(
                p,
                format!("no level above the PUs has type {}", token_at(text, p)),
            )
        })?;
        if level.is_some_and(|cur| d >= cur) {
            return Err(bad(
                p,
                format!("level {} is not above the indexed level", token_at(text, p)),
            ));
        }
        if depths.contains(&d) {
            return Err(bad(p, format!("level {} named twice", token_at(text, p))));
        }
        depths.push(d);
        if e == end {
            break;
        }
        p = e + 1;
    }
    let mut out = Vec::with_capacity(depths.len());
    for &d in &depths {
        let prev = depths.iter().copied().filter(|&o| o < d).max().unwrap_or(0);
        let width = levels[d].width;
        let step = total / width;
        let count = width / levels[prev].width.max(1);
        if step == 0 || count == 0 {
            return Err(SyntheticError::at(
                SyntheticErrorKind::BadIndexes,
                start,
                String::from("interleaving levels do not divide the indexed objects"),
            ));
        }
        out.push(Loop { step, count });
    }
    Ok(out)
}

/// Expands interleaving loops into an OS index array of `total` entries,
/// adding the innermost loop when it is the only one missing (as hwloc does).
fn interleave(loops: &[Loop], total: u64, total_usize: usize) -> Result<Vec<u32>, String> {
    // Loops of one value add nothing; dropping them bounds the work.
    let mut loops: Vec<Loop> = loops.iter().copied().filter(|l| l.count > 1).collect();
    let min_step = loops
        .iter()
        .map(|l| l.step)
        .min()
        .unwrap_or(total)
        .min(total);
    let mut product: u64 = 1;
    for l in &loops {
        product = product
            .checked_mul(l.count)
            .filter(|&p| p <= total)
            .ok_or_else(|| format!("interleaving covers more than the {total} objects"))?;
    }
    if product != total {
        if min_step == total / product {
            loops.push(Loop {
                step: 1,
                count: total / product,
            });
        } else {
            return Err(format!(
                "interleaving covers {product} objects instead of {total}"
            ));
        }
    }
    let mut array = vec![0u64; total_usize];
    let mut mul: u64 = 1;
    for l in &loops {
        for (j, v) in array.iter_mut().enumerate() {
            *v += ((j as u64 / l.step) % l.count) * mul;
        }
        mul = mul.saturating_mul(l.count);
    }
    array
        .into_iter()
        .map(|v| {
            if v < total {
                Ok(v as u32)
            } else {
                Err(format!("interleaving generates out-of-range OS index {v}"))
            }
        })
        .collect()
}
