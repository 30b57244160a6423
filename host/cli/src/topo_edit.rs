//! The text formats `wloc annotate` reads, as hwloc-annotate reads them:
//! its distances files and its sizes.  Parsing is stricter than hwloc's
//! (which reads numbers with `strtoul` and takes garbage as 0): a line
//! that is not what the format says is an error naming its line.
//!
//! These are small line formats that no crate reads, hence written here.

use std::fmt;

/// The values of a distances file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DistanceValues {
    /// Every value, row after row (`n * n` of them).
    Matrix(Vec<u64>),
    /// `x*y` or `x*y*z`: `x` groups of `y` groups of `z` objects, with
    /// values 10 (itself), 20 (same innermost group), 40 (same middle
    /// group) and 80.
    Combination(u32, u32, u32),
}

/// A distances file: an optional `name=NAME` line, the kind, the number
/// of objects, one object location per line, then the values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistancesFile {
    /// The matrix name.
    pub name: Option<String>,
    /// hwloc's kind flags (`HWLOC_DISTANCES_KIND_*`).
    pub kind: u64,
    /// One location per object (`numa:0`, `pack:1`, ...), with its line number.
    pub objects: Vec<(usize, String)>,
    /// The values.
    pub values: DistanceValues,
}

/// Why a distances file was refused: its line (1-based) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// The line, 1-based (one past the last line for a file that ends early).
    pub line: usize,
    /// What was wrong.
    pub reason: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for LineError {}

/// Reads an unsigned number as C's `strtoull(s, NULL, 0)` would read a
/// whole token: `0x` hexadecimal, leading `0` octal, else decimal.
pub fn parse_c_u64(s: &str) -> Option<u64> {
    let (digits, radix) = split_c_number(s);
    if digits.is_empty() || prefix_len(s) + digits.len() != s.len() {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn prefix_len(s: &str) -> usize {
    if s.starts_with("0x") || s.starts_with("0X") {
        2
    } else if s.len() > 1 && s.starts_with('0') {
        1
    } else {
        0
    }
}

/// The longest run of digits at the start of `s` in the radix its prefix
/// says (without the prefix), and that radix.
fn split_c_number(s: &str) -> (&str, u32) {
    let (body, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let n = body.chars().take_while(|c| c.is_digit(radix)).count();
    (&body[..n], radix)
}

/// Parses a size as hwloc-annotate's `size` annotation: a C number with
/// an optional unit `kB`, `KiB`, `MB`, `MiB`, `GB`, `GiB`, `TB` or `TiB`
/// (case ignored; hwloc counts every one of them in powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let (digits, radix) = split_c_number(s);
    let (value, unit) = if digits.is_empty() {
        // As C reads "0kB": the leading 0 alone.
        if !s.starts_with('0') {
            return Err(SizeError::NotASize(s.to_string()));
        }
        (0, &s[1..])
    } else {
        let v =
            u64::from_str_radix(digits, radix).map_err(|_| SizeError::TooLarge(s.to_string()))?;
        (v, &s[prefix_len(s) + digits.len()..])
    };
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" => 0,
        "kb" | "kib" => 10,
        "mb" | "mib" => 20,
        "gb" | "gib" => 30,
        "tb" | "tib" => 40,
        _ => {
            return Err(SizeError::UnknownUnit {
                unit: unit.to_string(),
                size: s.to_string(),
            });
        }
    };
    value
        .checked_mul(1u64 << shift)
        .ok_or_else(|| SizeError::TooLarge(s.to_string()))
}

/// Why a size (hwloc-annotate's `size` annotation) cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// It does not start with a number.
    #[error("'{0}' is not a size (a number with an optional unit such as kB, MiB, GB)")]
    NotASize(String),
    /// It does not fit in 64 bits.
    #[error("size '{0}' is too large")]
    TooLarge(String),
    /// Its unit is none of hwloc's.
    #[error(
        "unknown unit '{unit}' in size '{size}' (expected kB, KiB, MB, MiB, GB, GiB, TB or TiB)"
    )]
    UnknownUnit {
        /// The unit.
        unit: String,
        /// The whole size.
        size: String,
    },
}

/// Parses a distances file as hwloc-annotate's `distances` annotation
/// reads it.
pub fn parse_distances(text: &str) -> Result<DistancesFile, LineError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut at = 0usize;
    let err = |line: usize, reason: String| LineError { line, reason };
    let mut next = |what: &str| -> Result<(usize, &str), LineError> {
        match lines.get(at) {
            Some(l) => {
                at += 1;
                Ok((at, l.trim()))
            }
            None => Err(err(at + 1, format!("the file ends before {what}"))),
        }
    };
    let (mut n, mut line) = next("the kind line")?;
    let mut name = None;
    if let Some(v) = line.strip_prefix("name=") {
        name = Some(v.to_string());
        (n, line) = next("the kind line")?;
    }
    let kind = parse_c_u64(line).ok_or_else(|| {
        err(
            n,
            format!("'{line}' is not a distances kind (an integer such as 5 for latency given by the user)"),
        )
    })?;
    let (n, line) = next("the number of objects")?;
    let nbobjs =
        parse_c_u64(line).ok_or_else(|| err(n, format!("'{line}' is not a number of objects")))?;
    if nbobjs < 2 {
        return Err(err(
            n,
            format!("a distances matrix needs at least 2 objects, not {nbobjs}"),
        ));
    }
    let mut objects = Vec::new();
    for i in 0..nbobjs {
        let (n, line) = next(&format!("object #{i} (of {nbobjs})"))?;
        if line.is_empty() {
            return Err(err(n, format!("object #{i} is an empty line")));
        }
        objects.push((n, line.to_string()));
    }
    let (n, first) = next("the values")?;
    if first.contains('*') {
        let parts: Vec<&str> = first.split('*').map(str::trim).collect();
        let nums: Option<Vec<u32>> = parts.iter().map(|p| p.parse::<u32>().ok()).collect();
        let (x, y, z) = match nums.as_deref() {
            Some([x, y]) => (*x, *y, 1),
            Some([x, y, z]) => (*x, *y, *z),
            _ => {
                return Err(err(
                    n,
                    format!("'{first}' is not a combination x*y or x*y*z of positive integers"),
                ));
            }
        };
        let product = u64::from(x) * u64::from(y) * u64::from(z);
        if product != nbobjs {
            return Err(err(
                n,
                format!("the combination {x}*{y}*{z} makes {product} objects, not {nbobjs}"),
            ));
        }
        return Ok(DistancesFile {
            name,
            kind,
            objects,
            values: DistanceValues::Combination(x, y, z),
        });
    }
    let total = nbobjs * nbobjs;
    let mut values = Vec::new();
    let push = |n: usize, line: &str, values: &mut Vec<u64>| -> Result<(), LineError> {
        let v = line.parse::<u64>().map_err(|_| {
            err(
                n,
                format!("'{line}' is not a distance value (a decimal integer)"),
            )
        })?;
        values.push(v);
        Ok(())
    };
    push(n, first, &mut values)?;
    for i in 1..total {
        let (n, line) = next(&format!("value #{i} (of {total})"))?;
        push(n, line, &mut values)?;
    }
    Ok(DistancesFile {
        name,
        kind,
        objects,
        values: DistanceValues::Matrix(values),
    })
}

impl DistanceValues {
    /// The `n * n` values, row after row.
    pub fn matrix(&self, n: usize) -> Vec<u64> {
        match self {
            DistanceValues::Matrix(v) => v.clone(),
            &DistanceValues::Combination(_, y, z) => {
                let (y, z) = (y as usize, z as usize);
                let mut v = Vec::with_capacity(n * n);
                for i in 0..n {
                    for j in 0..n {
                        v.push(if i == j {
                            10
                        } else if i / z == j / z {
                            20
                        } else if i / z / y == j / z / y {
                            40
                        } else {
                            80
                        });
                    }
                }
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_take_hwlocs_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0x10"), Ok(16));
        assert_eq!(parse_size("32kB"), Ok(32 << 10));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("3gb"), Ok(3 << 30));
        assert_eq!(parse_size("1TB"), Ok(1 << 40));
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_size("12 apples").is_err());
        assert!(parse_size("GB").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999TB").is_err());
    }

    #[test]
    fn c_numbers() {
        assert_eq!(parse_c_u64("10"), Some(10));
        assert_eq!(parse_c_u64("0x1f"), Some(31));
        assert_eq!(parse_c_u64("010"), Some(8));
        assert_eq!(parse_c_u64("0"), Some(0));
        assert_eq!(parse_c_u64("1x"), None);
        assert_eq!(parse_c_u64(""), None);
        assert_eq!(parse_c_u64("0x"), None);
    }

    #[test]
    fn distances_files_full_and_combined() {
        let d = parse_distances("name=Rack\n5\n2\nnuma:0\nnuma:1\n10\n20\n20\n10\n").unwrap();
        assert_eq!(d.name.as_deref(), Some("Rack"));
        assert_eq!(d.kind, 5);
        assert_eq!(d.objects, [(4, "numa:0".into()), (5, "numa:1".into())]);
        assert_eq!(d.values, DistanceValues::Matrix(vec![10, 20, 20, 10]));
        let d = parse_distances("6\n4\npu:0\npu:1\npu:2\npu:3\n2*2\n").unwrap();
        assert_eq!(d.values, DistanceValues::Combination(2, 2, 1));
        assert_eq!(
            d.values.matrix(4),
            vec![
                10, 40, 80, 80, 40, 10, 80, 80, 80, 80, 10, 40, 80, 80, 40, 10
            ]
        );
        let d = parse_distances("6\n8\n1:0\n1:1\n1:2\n1:3\n1:4\n1:5\n1:6\n1:7\n2*2*2\n").unwrap();
        let m = d.values.matrix(8);
        assert_eq!((m[1], m[2], m[4]), (20, 40, 80));
    }

    #[test]
    fn bad_distances_files_name_their_line() {
        let e = |t: &str| parse_distances(t).unwrap_err();
        assert_eq!(e("").line, 1);
        assert_eq!(e("x\n").line, 1);
        assert_eq!(e("5\n1\n").line, 2);
        assert_eq!(e("5\n2\nnuma:0\n").line, 4);
        assert_eq!(e("5\n2\nnuma:0\nnuma:1\n10\n20\nfoo\n10\n").line, 7);
        assert_eq!(e("5\n2\nnuma:0\nnuma:1\n10\n20\n").line, 7);
        assert_eq!(e("5\n3\na:0\na:1\na:2\n2*2\n").line, 6);
        assert!(e("5\n3\na:0\na:1\na:2\n2*2\n").reason.contains("4 objects"));
    }

    proptest! {
        /// Any text: an answer, never a panic; an error names a line
        /// within the file or just past its end.
        #[test]
        fn distances_parser_never_panics(text in "(name=[a-z]{0,3}\n)?[0-9a-z*:\n]{0,80}") {
            if let Err(e) = parse_distances(&text) {
                prop_assert!(e.line >= 1 && e.line <= text.lines().count() + 1);
            }
        }

        /// A written matrix is read back as written.
        #[test]
        fn matrices_round_trip(n in 2usize..6, seed in any::<u64>()) {
            let values: Vec<u64> = (0..n * n).map(|i| seed.wrapping_mul(i as u64 + 1) >> 40).collect();
            let mut text = String::from("name=M\n9\n");
            text.push_str(&format!("{n}\n"));
            for i in 0..n {
                text.push_str(&format!("pu:{i}\n"));
            }
            for v in &values {
                text.push_str(&format!("{v}\n"));
            }
            let d = parse_distances(&text).unwrap();
            prop_assert_eq!(d.kind, 9);
            prop_assert_eq!(d.objects.len(), n);
            prop_assert_eq!(d.values.matrix(n), values);
        }

        #[test]
        fn sizes_never_panic(s in "[0-9a-zA-Z]{0,12}") {
            let _ = parse_size(&s);
        }
    }
}
