//! Replaying CPUID dumps written by `hwloc-gather-cpuid`.
//!
//! A dump is a directory with one file per PU, `pu0`, `pu1`, ... (numbered
//! contiguously from 0), and a `hwloc-cpuid-info` file whose first line is
//! `Architecture: x86`.  Each PU file holds lines
//!
//! ```text
//! # mask e[abcd]x => e[abcd]x
//! 5 b 0 1 0 => 8 c0 201 0
//! ```
//!
//! in hexadecimal without `0x`: a mask telling which input registers
//! matter (bit 0 eax, bit 1 ebx, bit 2 ecx, bit 3 edx), the four input
//! registers, `=>`, and the four output registers.  A query is answered by
//! the first line whose masked inputs match; when none does, all registers
//! read zero, as hwloc does.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::source::CpuidSource;

/// Name of the file that marks a directory as a CPUID dump.
pub const CPUID_INFO_FILE: &str = "hwloc-cpuid-info";

/// Largest number of PUs a dump may hold.
pub const MAX_DUMP_PUS: usize = 1 << 16;

/// Why a CPUID dump was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpError {
    /// The `hwloc-cpuid-info` file is missing.
    MissingInfo,
    /// `hwloc-cpuid-info` does not describe an x86 dump.
    NotX86 {
        /// Its first line (cut to 80 characters).
        first_line: String,
    },
    /// No `puN` file was found.
    NoPu,
    /// PU files are not numbered contiguously from `pu0`.
    MissingPu {
        /// The first missing index.
        index: usize,
        /// The largest index found.
        last: usize,
    },
    /// A `puN` index is larger than [`MAX_DUMP_PUS`] allows.
    TooManyPus {
        /// The file name.
        file: String,
    },
    /// The same file was given twice.
    DuplicateFile {
        /// The file name.
        file: String,
    },
    /// A line of a PU file could not be parsed.
    Syntax {
        /// The file name.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpError::MissingInfo => write!(
                f,
                "not a CPUID dump: the `{CPUID_INFO_FILE}` file is missing"
            ),
            DumpError::NotX86 { first_line } => write!(
                f,
                "not an x86 CPUID dump: `{CPUID_INFO_FILE}` starts with {first_line:?} instead of \"Architecture: x86\""
            ),
            DumpError::NoPu => f.write_str("the CPUID dump has no `puN` file"),
            DumpError::MissingPu { index, last } => write!(
                f,
                "the CPUID dump is not contiguous: `pu{index}` is missing but `pu{last}` exists"
            ),
            DumpError::TooManyPus { file } => write!(
                f,
                "CPUID dump file `{file}`: PU index too large (at most {MAX_DUMP_PUS} PUs)"
            ),
            DumpError::DuplicateFile { file } => {
                write!(f, "CPUID dump file `{file}` was given twice")
            }
            DumpError::Syntax { file, line, reason } => {
                write!(f, "CPUID dump file `{file}`, line {line}: {reason}")
            }
        }
    }
}

impl core::error::Error for DumpError {}

/// One recorded answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    mask: u32,
    input: [u32; 4],
    output: [u32; 4],
}

impl Entry {
    fn matches(&self, leaf: u32, subleaf: u32) -> bool {
        // The queries of discovery give eax and ecx; ebx and edx are zero.
        let query = [leaf, 0, subleaf, 0];
        (0..4).all(|r| self.mask & (1 << r) == 0 || self.input[r] == query[r])
    }
}

/// CPUID answers replayed from a `hwloc-gather-cpuid` dump.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DumpSource {
    pus: Vec<Vec<Entry>>,
}

/// What a file name means in a dump directory.
enum FileKind {
    Info,
    Pu(usize),
    Other,
}

fn classify(name: &str) -> Result<FileKind, DumpError> {
    if name == CPUID_INFO_FILE {
        return Ok(FileKind::Info);
    }
    let Some(digits) = name.strip_prefix("pu") else {
        return Ok(FileKind::Other);
    };
    // Only canonical decimal names: `pu0`, `pu17`, not `pu`, `pu01` or `pu1.bak`.
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return Ok(FileKind::Other);
    }
    match digits.parse::<usize>() {
        Ok(i) if i < MAX_DUMP_PUS => Ok(FileKind::Pu(i)),
        _ => Err(DumpError::TooManyPus {
            file: name.to_string(),
        }),
    }
}

fn parse_hex(tok: &[u8]) -> Option<u32> {
    let digits = tok
        .strip_prefix(b"0x")
        .or_else(|| tok.strip_prefix(b"0X"))
        .unwrap_or(tok);
    if digits.is_empty() {
        return None;
    }
    let leading_zeros = digits.iter().take_while(|&&b| b == b'0').count();
    if digits.len() - leading_zeros > 8 {
        return None;
    }
    let mut v: u32 = 0;
    for &b in digits {
        v = (v << 4) | (b as char).to_digit(16)?;
    }
    Some(v)
}

fn parse_line(line: &[u8]) -> Result<Option<Entry>, &'static str> {
    // Cut a trailing comment.
    let line = match line.iter().position(|&b| b == b'#') {
        Some(p) => &line[..p],
        None => line,
    };
    let mut toks = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty());
    let Some(first) = toks.next() else {
        return Ok(None);
    };
    let mut vals = [0u32; 9];
    vals[0] = parse_hex(first).ok_or("the mask is not a 32-bit hexadecimal number")?;
    for v in vals.iter_mut().take(5).skip(1) {
        let t = toks
            .next()
            .ok_or("expected four input registers after the mask")?;
        *v = parse_hex(t).ok_or("an input register is not a 32-bit hexadecimal number")?;
    }
    match toks.next() {
        Some(b"=>") => {}
        Some(_) => return Err("expected `=>` after the four input registers"),
        None => return Err("expected `=>` and four output registers"),
    }
    for v in vals.iter_mut().skip(5) {
        let t = toks
            .next()
            .ok_or("expected four output registers after `=>`")?;
        *v = parse_hex(t).ok_or("an output register is not a 32-bit hexadecimal number")?;
    }
    if toks.next().is_some() {
        return Err("unexpected text after the four output registers");
    }
    Ok(Some(Entry {
        mask: vals[0],
        input: [vals[1], vals[2], vals[3], vals[4]],
        output: [vals[5], vals[6], vals[7], vals[8]],
    }))
}

fn parse_pu_file(name: &str, bytes: &[u8]) -> Result<Vec<Entry>, DumpError> {
    let mut entries = Vec::new();
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        match parse_line(raw) {
            Ok(Some(e)) => entries.push(e),
            Ok(None) => {}
            Err(reason) => {
                return Err(DumpError::Syntax {
                    file: name.to_string(),
                    line: n + 1,
                    reason,
                });
            }
        }
    }
    Ok(entries)
}

fn check_info(bytes: &[u8]) -> Result<(), DumpError> {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or(&[]);
    if first.starts_with(b"Architecture: x86") {
        return Ok(());
    }
    let shown: String = String::from_utf8_lossy(first).chars().take(80).collect();
    Err(DumpError::NotX86 { first_line: shown })
}

impl DumpSource {
    /// Reads a dump from the files of its directory, given as
    /// `(file name, contents)` pairs in any order.
    ///
    /// `hwloc-cpuid-info` must be present and say `Architecture: x86`;
    /// `pu0` to `puN` must all be present; other files are ignored, as
    /// hwloc ignores them.  Malformed lines are reported with their file
    /// and line number.
    pub fn from_files<I, N, B>(files: I) -> Result<Self, DumpError>
    where
        I: IntoIterator<Item = (N, B)>,
        N: AsRef<str>,
        B: AsRef<[u8]>,
    {
        let mut info_seen = false;
        let mut pus: Vec<Option<Vec<Entry>>> = Vec::new();
        for (name, bytes) in files {
            let (name, bytes) = (name.as_ref(), bytes.as_ref());
            match classify(name)? {
                FileKind::Info => {
                    if info_seen {
                        return Err(DumpError::DuplicateFile {
                            file: name.to_string(),
                        });
                    }
                    check_info(bytes)?;
                    info_seen = true;
                }
                FileKind::Pu(i) => {
                    if pus.len() <= i {
                        pus.resize(i + 1, None);
                    }
                    if pus[i].is_some() {
                        return Err(DumpError::DuplicateFile {
                            file: name.to_string(),
                        });
                    }
                    pus[i] = Some(parse_pu_file(name, bytes)?);
                }
                FileKind::Other => {}
            }
        }
        if !info_seen {
            return Err(DumpError::MissingInfo);
        }
        if pus.is_empty() {
            return Err(DumpError::NoPu);
        }
        let last = pus.len() - 1;
        let mut out = Vec::with_capacity(pus.len());
        for (index, p) in pus.into_iter().enumerate() {
            match p {
                Some(e) => out.push(e),
                None => return Err(DumpError::MissingPu { index, last }),
            }
        }
        Ok(DumpSource { pus: out })
    }

    /// Whether discovery reads a file of that name from a dump directory
    /// (`hwloc-cpuid-info` and `puN`): hosts can skip the others.
    pub fn wants_file(name: &str) -> bool {
        matches!(classify(name), Ok(FileKind::Info) | Ok(FileKind::Pu(_)))
    }

    /// Number of recorded answers for a PU.
    pub fn entry_count(&self, pu: usize) -> usize {
        self.pus.get(pu).map_or(0, Vec::len)
    }
}

impl CpuidSource for DumpSource {
    fn pu_count(&self) -> usize {
        self.pus.len()
    }

    fn os_index(&self, pu: usize) -> u32 {
        // Dumps are numbered by OS index; the count is capped well below u32::MAX.
        pu as u32
    }

    fn cpuid(&self, pu: usize, leaf: u32, subleaf: u32) -> [u32; 4] {
        self.pus
            .get(pu)
            .and_then(|entries| entries.iter().find(|e| e.matches(leaf, subleaf)))
            .map_or([0; 4], |e| e.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &[u8] = b"Architecture: x86\n";

    #[test]
    fn parses_and_matches_first_entry() {
        let pu0 = b"# mask e[abcd]x => e[abcd]x\n\
                    1 0 0 0 0 => d 756e6547 6c65746e 49656e69\n\
                    5 4 0 1 0 => 1c004122 1c0003f 3f 0\n\
                    5 4 0 0 0 => 1c004121 1c0003f 3f 0\n\
                    1 4 0 0 0 => 0 0 0 0\n";
        let d = DumpSource::from_files([("hwloc-cpuid-info", INFO), ("pu0", &pu0[..])]).unwrap();
        assert_eq!(d.pu_count(), 1);
        assert_eq!(d.cpuid(0, 0, 7), [0xd, 0x756e6547, 0x6c65746e, 0x49656e69]);
        assert_eq!(d.cpuid(0, 4, 1)[0], 0x1c004122);
        assert_eq!(d.cpuid(0, 4, 0)[0], 0x1c004121);
        assert_eq!(d.cpuid(0, 4, 2), [0; 4]);
        assert_eq!(d.cpuid(0, 0x8000_0000, 0), [0; 4]);
        assert_eq!(d.cpuid(5, 0, 0), [0; 4]);
    }

    #[test]
    fn reports_file_and_line() {
        let pu1 = b"1 0 0 0 0 => 1 2 3 4\n\n1 1 0 0 0 -> 1 2 3 4\n";
        let e = DumpSource::from_files([
            ("pu0", &b""[..]),
            ("hwloc-cpuid-info", INFO),
            ("pu1", &pu1[..]),
        ])
        .unwrap_err();
        assert_eq!(
            e,
            DumpError::Syntax {
                file: "pu1".into(),
                line: 3,
                reason: "expected `=>` after the four input registers"
            }
        );
        let s = alloc::format!("{e}");
        assert!(s.contains("pu1") && s.contains("line 3"), "{s}");
    }

    #[test]
    fn rejects_bad_directories() {
        assert_eq!(
            DumpSource::from_files([("pu0", &b""[..])]).unwrap_err(),
            DumpError::MissingInfo
        );
        assert!(matches!(
            DumpSource::from_files([("hwloc-cpuid-info", &b"Architecture: arm\n"[..])]),
            Err(DumpError::NotX86 { .. })
        ));
        assert_eq!(
            DumpSource::from_files([("hwloc-cpuid-info", INFO)]).unwrap_err(),
            DumpError::NoPu
        );
        assert_eq!(
            DumpSource::from_files([("hwloc-cpuid-info", INFO), ("pu1", &b""[..])]).unwrap_err(),
            DumpError::MissingPu { index: 0, last: 1 }
        );
        assert!(matches!(
            DumpSource::from_files([
                ("hwloc-cpuid-info", INFO),
                ("pu99999999999999999999", &b""[..])
            ]),
            Err(DumpError::TooManyPus { .. })
        ));
        // Other names are ignored.
        let d = DumpSource::from_files([
            ("hwloc-cpuid-info", INFO),
            ("pu0", &b""[..]),
            ("pu01", &b"garbage"[..]),
            ("README", &b"garbage"[..]),
        ])
        .unwrap();
        assert_eq!(d.pu_count(), 1);
    }

    #[test]
    fn hex_edge_cases() {
        assert_eq!(parse_hex(b"ffffffff"), Some(u32::MAX));
        assert_eq!(parse_hex(b"0x1F"), Some(0x1f));
        assert_eq!(parse_hex(b"000000000012"), Some(0x12));
        assert_eq!(parse_hex(b"100000000"), None);
        assert_eq!(parse_hex(b"0000000000"), Some(0));
        assert_eq!(parse_hex(b"g"), None);
        assert_eq!(parse_hex(b""), None);
        assert_eq!(parse_hex(b"0x"), None);
        assert!(
            parse_line(b"1 0 0 0 0 => 1 2 3 4 # note\r")
                .unwrap()
                .is_some()
        );
        assert!(parse_line(b"   \r").unwrap().is_none());
        assert!(parse_line(b"1 0 0 0 0 => 1 2 3 4 5").is_err());
        assert!(parse_line(b"1 0 0 0 0 => 1 2 3").is_err());
        assert!(parse_line("é".as_bytes()).is_err());
    }
}
