//! The three hwloc string forms of a bitmap (hwloc, list and taskset):
//! printing, parsing, and the parse errors.

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

use super::*;

/// The infinite prefix of the hwloc and taskset forms.
const INFINITE_PREFIX: &str = "0xf...f";

/// Number of bytes of the offending input kept in a [`BitmapParseError`].
const ERROR_INPUT_MAX: usize = 64;

impl Bitmap {
    // ----- strings --------------------------------------------------------

    /// Parses the hwloc form (`hwloc_bitmap_sscanf`): comma-separated 32-bit
    /// hex chunks, most significant first, each with an optional `0x`/`0X`;
    /// an empty chunk is zero; an optional leading `0xf...f` chunk makes
    /// every bit above the explicit chunks set.  `""` is the empty set.
    ///
    /// Examples: `0x00000078,,0x00000004` = `2,67-70`; `0xf...f` = all;
    /// `0xf...f,0xfffffffc` = `0xf...f,0xffffffff,0xfffffffc` = `2-`.
    ///
    /// # Errors
    ///
    /// A [`BitmapParseError`] locating the first invalid byte.
    #[doc(alias = "hwloc_bitmap_sscanf")]
    pub fn parse(s: &str) -> Result<Self, BitmapParseError> {
        parse_hwloc(s)
    }

    /// Parses the list form (`hwloc_bitmap_list_sscanf`): comma- (or space-)
    /// separated decimal indexes `a` and ranges `a-b`, with an optional
    /// infinite range `a-` at the very end.  `""` is the empty set.
    ///
    /// # Errors
    ///
    /// A [`BitmapParseError`] locating the first invalid byte.
    #[doc(alias = "hwloc_bitmap_list_sscanf")]
    pub fn parse_list(s: &str) -> Result<Self, BitmapParseError> {
        parse_list(s)
    }

    /// Parses the taskset form (`hwloc_bitmap_taskset_sscanf`): one hex
    /// number with an optional `0x`, or `0xf...f` followed by the low hex
    /// digits of an infinite set.  `""` and `0x` are the empty set.
    ///
    /// # Errors
    ///
    /// A [`BitmapParseError`] locating the first invalid byte.
    #[doc(alias = "hwloc_bitmap_taskset_sscanf")]
    pub fn parse_taskset(s: &str) -> Result<Self, BitmapParseError> {
        parse_taskset(s)
    }

    /// The hwloc form, exactly as `hwloc_bitmap_snprintf` prints it (same as
    /// [`Display`](fmt::Display)).
    #[doc(alias = "hwloc_bitmap_snprintf")]
    pub fn to_hwloc_string(&self) -> String {
        let mut s = String::new();
        // Writing to a String cannot fail.
        let _ = write_hwloc(self, &mut s);
        s
    }

    /// The list form, exactly as `hwloc_bitmap_list_snprintf` prints it:
    /// `2,67-70`, `8-` for an infinite tail, `""` for the empty set.
    #[doc(alias = "hwloc_bitmap_list_snprintf")]
    pub fn to_list_string(&self) -> String {
        let mut s = String::new();
        let _ = write_list(self, &mut s);
        s
    }

    /// The taskset form, exactly as `hwloc_bitmap_taskset_snprintf` of
    /// hwloc 2.9 on a 64-bit host prints it: `0x780000000000000004`, `0x0`
    /// when empty, `0xf...f` followed by whole 64-bit words (16 digits
    /// each) below the infinite part.
    #[doc(alias = "hwloc_bitmap_taskset_snprintf")]
    pub fn to_taskset_string(&self) -> String {
        let mut s = String::new();
        let _ = write_taskset(self, &mut s);
        s
    }
}

impl fmt::Display for Bitmap {
    /// The hwloc form, as `hwloc_bitmap_snprintf` prints it.
    #[doc(alias = "hwloc_bitmap_snprintf")]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hwloc(self, f)
    }
}

impl fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hwloc(self, f)
    }
}

impl FromStr for Bitmap {
    type Err = BitmapParseError;

    /// Same as [`Bitmap::parse`] (the hwloc form).
    #[inline]
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_hwloc(s)
    }
}

/// `hwloc_bitmap_snprintf` with 64-bit `unsigned long`: `0xf...f` for the
/// infinite part, then the 32-bit halves of the remaining words, most
/// significant first, as `0x%08x`; zero halves print as nothing between
/// commas, except the last one which prints `0x0`; leading zero halves of a
/// finite set are skipped; `0x0` if nothing else was printed.
#[doc(alias = "hwloc_bitmap_snprintf")]
fn write_hwloc(b: &Bitmap, out: &mut impl fmt::Write) -> fmt::Result {
    let mut need_comma = false;
    let mut wrote = false;
    // As hwloc 2.14: the all-ones 32-bit chunks just below the infinite
    // part belong to it (`0xf...f,,,,,0x000000f0` for `4-7,160-`, where
    // hwloc 2.9 wrote `0xf...f,0xffffffff,,,,,0x000000f0`).
    let mut in_ones = b.infinite;
    if b.infinite {
        out.write_str(INFINITE_PREFIX)?;
        need_comma = true;
        wrote = true;
    }
    let n = b.words.len();
    for i in (0..n).rev() {
        let w = b.words[i];
        for (half, is_low) in [((w >> 32) as u32, false), (w as u32, true)] {
            if in_ones && half == u32::MAX {
                continue;
            }
            in_ones = false;
            let comma = if need_comma { "," } else { "" };
            if half != 0 {
                write!(out, "{comma}0x{half:08x}")?;
                need_comma = true;
                wrote = true;
            } else if i == 0 && is_low {
                write!(out, "{comma}0x0")?;
                wrote = true;
            } else if need_comma {
                out.write_char(',')?;
            }
        }
    }
    if !wrote {
        out.write_str("0x0")?;
    }
    Ok(())
}

/// `hwloc_bitmap_list_snprintf`.
#[doc(alias = "hwloc_bitmap_list_snprintf")]
fn write_list(b: &Bitmap, out: &mut impl fmt::Write) -> fmt::Result {
    for (k, (first, last)) in b.ranges().enumerate() {
        if k > 0 {
            out.write_char(',')?;
        }
        match last {
            Some(last) if last == first => write!(out, "{first}")?,
            Some(last) => write!(out, "{first}-{last}")?,
            None => write!(out, "{first}-")?,
        }
    }
    Ok(())
}

/// `hwloc_bitmap_taskset_snprintf` of hwloc 2.14 with 64-bit `unsigned long`.
#[doc(alias = "hwloc_bitmap_taskset_snprintf")]
fn write_taskset(b: &Bitmap, out: &mut impl fmt::Write) -> fmt::Result {
    let mut started = false;
    if b.infinite {
        out.write_str(INFINITE_PREFIX)?;
        // As hwloc 2.14: all-ones 32-bit chunks just below the infinite
        // part belong to it (see `write_hwloc`).
        let mut in_ones = true;
        for &w in b.words.iter().rev() {
            for half in [(w >> 32) as u32, w as u32] {
                if in_ones && half == u32::MAX {
                    continue;
                }
                in_ones = false;
                write!(out, "{half:08x}")?;
            }
        }
        return Ok(());
    }
    for &w in b.words.iter().rev() {
        if started {
            write!(out, "{w:016x}")?;
        } else {
            // A canonical finite set's top word is non-zero.
            write!(out, "0x{w:x}")?;
            started = true;
        }
    }
    if !started {
        out.write_str("0x0")?;
    }
    Ok(())
}

/// The string form a parser was reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitmapFormat {
    /// hwloc's own form, `0x00000078,,0x00000004`.
    Hwloc,
    /// The list form, `2,67-70`.
    List,
    /// The taskset form, `0x780000000000000004`.
    Taskset,
}

impl BitmapFormat {
    /// A short lowercase name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            BitmapFormat::Hwloc => "hwloc",
            BitmapFormat::List => "list",
            BitmapFormat::Taskset => "taskset",
        }
    }
}

/// Why a bitmap string was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BitmapParseErrorKind {
    /// A character that may not appear at this position.
    UnexpectedChar(char),
    /// A number was expected (end of input, or `0x` without digits).
    MissingNumber,
    /// An hwloc-form chunk is wider than 32 bits.
    ChunkOverflow,
    /// The hwloc form starts with a comma (hwloc miscounts the chunks).
    LeadingEmptyChunk,
    /// The hwloc form ends with a comma (hwloc drops data then).
    TrailingEmptyChunk,
    /// A list index has a leading zero, which hwloc reads as octal.
    LeadingZero,
    /// A list range ends below its start.
    ReversedRange {
        /// The range start.
        first: u32,
        /// The range end, lower than `first`.
        last: u32,
    },
    /// An infinite list range `a-` is followed by more input.
    InfiniteRangeNotLast,
    /// A list holds separators but no index.
    NoItems,
    /// A list ends with more than one separator.
    TrailingSeparators,
    /// An index, or the bit span of a hex string, reaches
    /// [`MAX_PARSE_BITS`].
    TooLarge,
}

impl fmt::Display for BitmapParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnexpectedChar(c) => write!(f, "unexpected character {c:?}"),
            Self::MissingNumber => f.write_str("expected a number"),
            Self::ChunkOverflow => f.write_str("chunk does not fit in 32 bits"),
            Self::LeadingEmptyChunk => f.write_str("leading empty chunk"),
            Self::TrailingEmptyChunk => f.write_str("trailing empty chunk"),
            Self::LeadingZero => f.write_str("index with a leading zero (hwloc reads it as octal)"),
            Self::ReversedRange { first, last } => {
                write!(f, "range end {last} is below range start {first}")
            }
            Self::InfiniteRangeNotLast => f.write_str("infinite range must come last"),
            Self::NoItems => f.write_str("separators without any index"),
            Self::TrailingSeparators => f.write_str("more than one trailing separator"),
            Self::TooLarge => write!(f, "index too large (the maximum is {MAX_PARSE_INDEX})"),
        }
    }
}

/// Error returned by the bitmap parsers: which form, the offending input
/// (truncated to its first 64 bytes), the byte offset and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitmapParseError {
    format: BitmapFormat,
    input: String,
    truncated: bool,
    position: usize,
    kind: BitmapParseErrorKind,
}

impl BitmapParseError {
    fn new(format: BitmapFormat, s: &str, position: usize, kind: BitmapParseErrorKind) -> Self {
        let mut end = s.len().min(ERROR_INPUT_MAX);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        BitmapParseError {
            format,
            input: String::from(&s[..end]),
            truncated: end < s.len(),
            position,
            kind,
        }
    }

    /// The form that was being parsed.
    #[inline]
    pub fn format(&self) -> BitmapFormat {
        self.format
    }

    /// The offending input, truncated to its first 64 bytes.
    #[inline]
    pub fn input(&self) -> &str {
        &self.input
    }

    /// Byte offset of the error in the input.
    #[inline]
    pub fn position(&self) -> usize {
        self.position
    }

    /// Why the input was rejected.
    #[inline]
    pub fn kind(&self) -> BitmapParseErrorKind {
        self.kind
    }
}

impl fmt::Display for BitmapParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} bitmap string {:?}{} at byte {}: {}",
            self.format.name(),
            self.input,
            if self.truncated { "..." } else { "" },
            self.position,
            self.kind
        )
    }
}

impl core::error::Error for BitmapParseError {}

/// The character starting at byte `pos` (a char boundary) of `s`.
fn char_at(s: &str, pos: usize) -> char {
    s[pos..].chars().next().unwrap_or('\0')
}

#[inline]
fn hex_value(c: u8) -> Option<u64> {
    match c {
        b'0'..=b'9' => Some(u64::from(c - b'0')),
        b'a'..=b'f' => Some(u64::from(c - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(c - b'A' + 10)),
        _ => None,
    }
}

/// Rejects an infinite set whose all-set tail starts at or past
/// [`MAX_PARSE_BITS`], so that its list form stays parseable.
fn check_tail(bm: Bitmap) -> Result<Bitmap, BitmapParseErrorKind> {
    // Finite sets (nearly every parsed one) have no tail: skip the scan.
    if !bm.infinite {
        return Ok(bm);
    }
    let tail_start = bm.find_last(false).map_or(0, |p| p + 1);
    if tail_start > u64::from(MAX_PARSE_INDEX) {
        Err(BitmapParseErrorKind::TooLarge)
    } else {
        Ok(bm)
    }
}

fn parse_hwloc(s: &str) -> Result<Bitmap, BitmapParseError> {
    use BitmapParseErrorKind as K;
    let err = |pos, kind| BitmapParseError::new(BitmapFormat::Hwloc, s, pos, kind);
    let b = s.as_bytes();

    let (infinite, body_start) = match s.strip_prefix(INFINITE_PREFIX) {
        Some("") => return Ok(Bitmap::full()),
        Some(rest) if rest.starts_with(',') => (true, INFINITE_PREFIX.len() + 1),
        Some(_) => {
            let pos = INFINITE_PREFIX.len();
            return Err(err(pos, K::UnexpectedChar(char_at(s, pos))));
        }
        None => (false, 0),
    };
    if s.is_empty() {
        return Ok(Bitmap::new());
    }
    if body_start == b.len() || b[b.len() - 1] == b',' {
        return Err(err(b.len(), K::TrailingEmptyChunk));
    }
    if b[0] == b',' {
        return Err(err(0, K::LeadingEmptyChunk));
    }

    let body = &b[body_start..];
    let chunks = 1 + body.iter().filter(|&&c| c == b',').count();
    if chunks > (MAX_PARSE_BITS / 32) as usize {
        return Err(err(body_start, K::TooLarge));
    }
    let mut words = Words::from_elem(0, chunks.div_ceil(2));
    let mut pos = body_start;
    for (k, chunk) in body.split(|&c| c == b',').enumerate() {
        let value = parse_hex_chunk(s, chunk, pos).map_err(|(p, kind)| err(p, kind))?;
        let idx = chunks - 1 - k; // chunk index from the least significant
        words[idx / 2] |= value << (32 * (idx % 2));
        pos += chunk.len() + 1;
    }
    if infinite && !chunks.is_multiple_of(2) {
        // Bits from 32*chunks on are set; the top half of the last word.
        words[chunks / 2] |= FULL << 32;
    }
    let mut bm = Bitmap { words, infinite };
    bm.normalize();
    check_tail(bm).map_err(|kind| err(body_start, kind))
}

/// One hwloc-form chunk of `s` starting at byte `start`: empty (zero) or an
/// optional `0x`/`0X` followed by hex digits whose value fits in 32 bits.
fn parse_hex_chunk(
    s: &str,
    chunk: &[u8],
    start: usize,
) -> Result<u64, (usize, BitmapParseErrorKind)> {
    if chunk.is_empty() {
        return Ok(0);
    }
    let skip = if chunk.len() >= 2 && chunk[0] == b'0' && (chunk[1] == b'x' || chunk[1] == b'X') {
        2
    } else {
        0
    };
    let digits = &chunk[skip..];
    if digits.is_empty() {
        return Err((start + skip, BitmapParseErrorKind::MissingNumber));
    }
    let mut value: u64 = 0;
    for (j, &c) in digits.iter().enumerate() {
        let pos = start + skip + j;
        let Some(d) = hex_value(c) else {
            // `pos` is a char boundary: every byte before it was ASCII.
            return Err((pos, BitmapParseErrorKind::UnexpectedChar(char_at(s, pos))));
        };
        value = (value << 4) | d;
        if value > u64::from(u32::MAX) {
            return Err((start, BitmapParseErrorKind::ChunkOverflow));
        }
    }
    Ok(value)
}

fn parse_taskset(s: &str) -> Result<Bitmap, BitmapParseError> {
    use BitmapParseErrorKind as K;
    let err = |pos, kind| BitmapParseError::new(BitmapFormat::Taskset, s, pos, kind);

    let (infinite, start) = if s.starts_with(INFINITE_PREFIX) {
        (true, INFINITE_PREFIX.len())
    } else if s.starts_with("0x") {
        (false, 2)
    } else {
        (false, 0)
    };
    let digits = &s.as_bytes()[start..];
    if digits.is_empty() {
        return Ok(if infinite {
            Bitmap::full()
        } else {
            Bitmap::new()
        });
    }
    if let Some(j) = digits.iter().position(|&c| hex_value(c).is_none()) {
        return Err(err(start + j, K::UnexpectedChar(char_at(s, start + j))));
    }
    if digits.len() > (MAX_PARSE_BITS / 4) as usize {
        return Err(err(start, K::TooLarge));
    }

    let nbits = digits.len() * 4;
    let mut words = Words::from_elem(0, nbits.div_ceil(64));
    // Whole 16-digit groups from the least significant end, then the rest.
    for (i, group) in digits.rchunks(16).enumerate() {
        words[i] = group
            .iter()
            .fold(0u64, |acc, &c| (acc << 4) | hex_value(c).unwrap_or(0));
    }
    if infinite && !nbits.is_multiple_of(64) {
        words[nbits / 64] |= FULL << (nbits % 64);
    }
    let mut bm = Bitmap { words, infinite };
    bm.normalize();
    check_tail(bm).map_err(|kind| err(start, kind))
}

fn parse_list(s: &str) -> Result<Bitmap, BitmapParseError> {
    use BitmapParseErrorKind as K;
    let err = |pos, kind| BitmapParseError::new(BitmapFormat::List, s, pos, kind);
    let b = s.as_bytes();
    let n = b.len();
    let is_sep = |c: u8| c == b',' || c == b' ';

    // A decimal index at `pos`: returns it and the position after it.
    let number = |pos: usize| -> Result<(u32, usize), BitmapParseError> {
        let len = b[pos..].iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 {
            return Err(if pos < n {
                err(pos, K::UnexpectedChar(char_at(s, pos)))
            } else {
                err(pos, K::MissingNumber)
            });
        }
        if len > 1 && b[pos] == b'0' {
            return Err(err(pos, K::LeadingZero));
        }
        let mut v: u32 = 0;
        for &c in &b[pos..pos + len] {
            v = v * 10 + u32::from(c - b'0');
            if v > MAX_PARSE_INDEX {
                return Err(err(pos, K::TooLarge));
            }
        }
        Ok((v, pos + len))
    };

    let mut bm = Bitmap::new();
    if n == 0 {
        return Ok(bm);
    }
    let mut pos = 0;
    let mut items = 0usize;
    loop {
        while pos < n && is_sep(b[pos]) {
            pos += 1;
        }
        if pos == n {
            // hwloc accepts a single separator after an item, handled below.
            let kind = if items == 0 {
                K::NoItems
            } else {
                K::TrailingSeparators
            };
            return Err(err(pos, kind));
        }
        let (first, p) = number(pos)?;
        items += 1;
        pos = p;
        if pos == n {
            bm.set(first);
            break;
        }
        match b[pos] {
            b'-' => {
                pos += 1;
                if pos == n {
                    bm.set_range(first, None);
                    break;
                }
                if is_sep(b[pos]) {
                    return Err(err(pos, K::InfiniteRangeNotLast));
                }
                let (last, p) = number(pos)?;
                if last < first {
                    return Err(err(pos, K::ReversedRange { first, last }));
                }
                bm.set_range(first, Some(last));
                pos = p;
                if pos == n {
                    break;
                }
                if !is_sep(b[pos]) {
                    return Err(err(pos, K::UnexpectedChar(char_at(s, pos))));
                }
            }
            c if is_sep(c) => bm.set(first),
            _ => return Err(err(pos, K::UnexpectedChar(char_at(s, pos)))),
        }
        // Consume the separator after the item; one trailing separator is
        // fine.
        pos += 1;
        if pos == n {
            break;
        }
    }
    Ok(bm)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::super::test_util::*;
    use super::super::*;
    use super::*;
    use alloc::string::ToString;

    type K = BitmapParseErrorKind;

    /// Checks the three printed forms and that each parses back.
    fn check_forms(b: &Bitmap, hwloc: &str, list_form: &str, taskset: &str) {
        assert_eq!(b.to_string(), hwloc, "hwloc form of {list_form}");
        assert_eq!(alloc::format!("{b:?}"), hwloc);
        assert_eq!(b.to_hwloc_string(), hwloc);
        assert_eq!(b.to_list_string(), list_form, "list form of {hwloc}");
        assert_eq!(
            b.to_taskset_string(),
            taskset,
            "taskset form of {list_form}"
        );
        assert_eq!(&Bitmap::parse(hwloc).unwrap(), b, "parse {hwloc}");
        assert_eq!(&hwloc.parse::<Bitmap>().unwrap(), b);
        assert_eq!(
            &Bitmap::parse_list(list_form).unwrap(),
            b,
            "parse_list {list_form}"
        );
        assert_eq!(
            &Bitmap::parse_taskset(taskset).unwrap(),
            b,
            "parse_taskset {taskset}"
        );
    }

    // ----- string vectors ---------------------------------------------------

    /// The vectors of hwloc's own test, tests/hwloc/hwloc_bitmap_string.c.
    #[test]
    fn hwloc_documented_vectors() {
        check_forms(&Bitmap::new(), "0x0", "", "0x0");
        check_forms(&Bitmap::full(), "0xf...f", "0-", "0xf...f");

        let mut b = Bitmap::full();
        b.unset(173);
        b.unset_range(60, Some(70));
        check_forms(
            &b,
            "0xf...f,0xffffdfff,0xffffffff,0xffffffff,0xffffff80,0x0fffffff,0xffffffff",
            "0-59,71-172,174-",
            "0xf...fffffdfffffffffffffffffffffffff800fffffffffffffff",
        );

        let mut b = Bitmap::new();
        b.set(2);
        b.set_range(67, Some(70));
        check_forms(
            &b,
            "0x00000078,,0x00000004",
            "2,67-70",
            "0x780000000000000004",
        );
    }

    /// Outputs of hwloc 2.9 (x86_64) `hwloc_bitmap_{,list_,taskset_}asprintf`
    /// for sets parsed with `hwloc_bitmap_list_sscanf`.
    #[test]
    fn hwloc_2_9_vectors() {
        #[rustfmt::skip]
        let vectors: &[(&str, &str, &str)] = &[
            ("", "0x0", "0x0"),
            ("0", "0x00000001", "0x1"),
            ("1", "0x00000002", "0x2"),
            ("31", "0x80000000", "0x80000000"),
            ("32", "0x00000001,0x0", "0x100000000"),
            ("63", "0x80000000,0x0", "0x8000000000000000"),
            ("64", "0x00000001,,0x0", "0x10000000000000000"),
            ("0-31", "0xffffffff", "0xffffffff"),
            ("0-63", "0xffffffff,0xffffffff", "0xffffffffffffffff"),
            ("0-64", "0x00000001,0xffffffff,0xffffffff", "0x1ffffffffffffffff"),
            ("32-63", "0xffffffff,0x0", "0xffffffff00000000"),
            ("2,67-70", "0x00000078,,0x00000004", "0x780000000000000004"),
            ("0-31,64-95", "0xffffffff,,0xffffffff", "0xffffffff00000000ffffffff"),
            ("0-127", "0xffffffff,0xffffffff,0xffffffff,0xffffffff", "0xffffffffffffffffffffffffffffffff"),
            ("128", "0x00000001,,,,0x0", "0x100000000000000000000000000000000"),
            ("0-", "0xf...f", "0xf...f"),
            ("1-", "0xf...f,0xfffffffe", "0xf...ffffffffe"),
            ("2-", "0xf...f,0xfffffffc", "0xf...ffffffffc"),
            ("31-", "0xf...f,0x80000000", "0xf...f80000000"),
            ("32-", "0xf...f,0x0", "0xf...f00000000"),
            ("33-", "0xf...f,0xfffffffe,0x0", "0xf...ffffffffe00000000"),
            ("63-", "0xf...f,0x80000000,0x0", "0xf...f8000000000000000"),
            ("64-", "0xf...f,,0x0", "0xf...f0000000000000000"),
            ("65-", "0xf...f,0xfffffffe,,0x0", "0xf...ffffffffe0000000000000000"),
            ("100-", "0xf...f,0xfffffff0,,,0x0", "0xf...ffffffff0000000000000000000000000"),
            ("0,32-", "0xf...f,0x00000001", "0xf...f00000001"),
            ("0,64-", "0xf...f,,0x00000001", "0xf...f0000000000000001"),
            ("2-31,64-", "0xf...f,,0xfffffffc", "0xf...f00000000fffffffc"),
            ("2-63,65-", "0xf...f,0xfffffffe,0xffffffff,0xfffffffc", "0xf...ffffffffefffffffffffffffc"),
            ("0-3,128-", "0xf...f,,,,0x0000000f", "0xf...f0000000000000000000000000000000f"),
            ("1,3,5-7,200-", "0xf...f,0xffffff00,,,,,,0x000000ea", "0xf...fffffff000000000000000000000000000000000000000000000000ea"),
        ];
        for &(l, h, t) in vectors {
            check_forms(&list(l), h, l, t);
        }
    }

    #[test]
    fn parse_accepts_hwloc_variants() {
        let b = list("2,67-70");
        // Chunks without padding, without 0x, with 0X.
        assert_eq!(Bitmap::parse("0x78,,0x4").unwrap(), b);
        assert_eq!(Bitmap::parse("78,,4").unwrap(), b);
        assert_eq!(Bitmap::parse("0X78,0x0,0X00000004").unwrap(), b);
        assert_eq!(Bitmap::parse("0x000000078,,0x4").unwrap(), b);
        assert_eq!(Bitmap::parse("").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse("0x0").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse("0x0,0x0,,0x0").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse("0x0,0x1").unwrap(), list("0"));
        assert_eq!(Bitmap::parse("0xFFFFFFFF").unwrap(), list("0-31"));
        // An empty chunk right after the infinite prefix, as hwloc prints.
        assert_eq!(Bitmap::parse("0xf...f,,0x1").unwrap(), list("0,64-"));
        // Taskset form: optional 0x, uppercase digits, leading zeros.
        assert_eq!(Bitmap::parse_taskset("780000000000000004").unwrap(), b);
        assert_eq!(
            Bitmap::parse_taskset("0x00000780000000000000004").unwrap(),
            b
        );
        assert_eq!(
            Bitmap::parse_taskset("0xABC").unwrap(),
            Bitmap::from_u64(0xabc)
        );
        assert_eq!(Bitmap::parse_taskset("").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse_taskset("0x").unwrap(), Bitmap::new());
        assert_eq!(Bitmap::parse_taskset("0x0").unwrap(), Bitmap::new());
        // List form: spaces as separators, one trailing separator, runs of
        // separators, overlapping and unsorted items.
        assert_eq!(Bitmap::parse_list("2 67-70").unwrap(), b);
        assert_eq!(Bitmap::parse_list("2, 67-70").unwrap(), b);
        assert_eq!(Bitmap::parse_list(",2,,67-70,").unwrap(), b);
        assert_eq!(Bitmap::parse_list("67-70,2,68-69,2").unwrap(), b);
        assert_eq!(Bitmap::parse_list("5-5").unwrap(), Bitmap::from_index(5));
        assert_eq!(
            Bitmap::parse_list("3-,5-").unwrap_err().kind(),
            K::InfiniteRangeNotLast
        );
        assert_eq!(Bitmap::parse_list("5,3-").unwrap(), list("3-"));
        let max = alloc::format!("{MAX_PARSE_INDEX}");
        assert_eq!(
            Bitmap::parse_list(&max).unwrap().first(),
            Some(MAX_PARSE_INDEX)
        );
        assert_eq!(
            Bitmap::parse_list(&alloc::format!("{max}-"))
                .unwrap()
                .first(),
            Some(MAX_PARSE_INDEX)
        );
    }

    /// Where this module reads the string the way its text says and hwloc
    /// 2.9 (64-bit) rounds the explicit part up to 64 bits.
    #[test]
    fn infinite_prefix_with_partial_word() {
        // hwloc 2.9: 0-1,64-
        assert_eq!(
            Bitmap::parse("0xf...f,0x00000003").unwrap(),
            list("0-1,32-")
        );
        assert_eq!(Bitmap::parse("0xf...f,0xfffffffc").unwrap(), list("2-"));
        assert_eq!(Bitmap::parse("0xf...f,0x3").unwrap(), list("0-1,32-"));
        // hwloc 2.9: 64-; newer hwloc: 4-
        assert_eq!(Bitmap::parse_taskset("0xf...f0").unwrap(), list("4-"));
        assert_eq!(Bitmap::parse_taskset("0xf...f1").unwrap(), list("0,4-"));
        assert_eq!(
            Bitmap::parse_taskset("0xf...ffffffffc").unwrap(),
            list("2-")
        );
        assert_eq!(
            Bitmap::parse_taskset("0xf...f00000000fffffffc").unwrap(),
            list("2-31,64-")
        );
    }

    // ----- parse errors -----------------------------------------------------

    #[test]
    fn parse_errors() {
        #[rustfmt::skip]
        let cases: &[(BitmapFormat, &str, usize, K)] = &[
            (BitmapFormat::Hwloc, "garbage", 0, K::UnexpectedChar('g')),
            (BitmapFormat::Hwloc, "0xg", 2, K::UnexpectedChar('g')),
            (BitmapFormat::Hwloc, "0x", 2, K::MissingNumber),
            (BitmapFormat::Hwloc, "0x1,0x", 6, K::MissingNumber),
            (BitmapFormat::Hwloc, "0x1,", 4, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, "0x1,,", 5, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, ",", 1, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, ",0x1", 0, K::LeadingEmptyChunk),
            (BitmapFormat::Hwloc, ",,0x1", 0, K::LeadingEmptyChunk),
            (BitmapFormat::Hwloc, "0xf...f,", 8, K::TrailingEmptyChunk),
            (BitmapFormat::Hwloc, "0xf...fzz", 7, K::UnexpectedChar('z')),
            (BitmapFormat::Hwloc, "0xf...f0", 7, K::UnexpectedChar('0')),
            (BitmapFormat::Hwloc, "0xF...F", 3, K::UnexpectedChar('.')),
            (BitmapFormat::Hwloc, "0x1,0xf...f", 7, K::UnexpectedChar('.')),
            (BitmapFormat::Hwloc, "0x123456789", 0, K::ChunkOverflow),
            (BitmapFormat::Hwloc, "0x1,,0x1ffffffff", 5, K::ChunkOverflow),
            (BitmapFormat::Hwloc, " 0x1", 0, K::UnexpectedChar(' ')),
            (BitmapFormat::Hwloc, "0x1\n", 3, K::UnexpectedChar('\n')),
            (BitmapFormat::Hwloc, "0x1, 0x2", 4, K::UnexpectedChar(' ')),
            (BitmapFormat::Hwloc, "-0x1", 0, K::UnexpectedChar('-')),
            (BitmapFormat::Hwloc, "0x1,é", 4, K::UnexpectedChar('é')),
            (BitmapFormat::Hwloc, "\u{0}", 0, K::UnexpectedChar('\0')),
            (BitmapFormat::List, "3-1", 2, K::ReversedRange { first: 3, last: 1 }),
            (BitmapFormat::List, "99999999999999-", 0, K::TooLarge),
            (BitmapFormat::List, "0-99999999999999999999999999", 2, K::TooLarge),
            (BitmapFormat::List, "16777216", 0, K::TooLarge),
            (BitmapFormat::List, "4294967295", 0, K::TooLarge),
            (BitmapFormat::List, ",", 1, K::NoItems),
            (BitmapFormat::List, " ", 1, K::NoItems),
            (BitmapFormat::List, ",,", 2, K::NoItems),
            (BitmapFormat::List, "2,,", 3, K::TrailingSeparators),
            (BitmapFormat::List, "2, ", 3, K::TrailingSeparators),
            (BitmapFormat::List, "8-,", 2, K::InfiniteRangeNotLast),
            (BitmapFormat::List, "8- 9", 2, K::InfiniteRangeNotLast),
            (BitmapFormat::List, "8-9-", 3, K::UnexpectedChar('-')),
            (BitmapFormat::List, "5x7", 1, K::UnexpectedChar('x')),
            (BitmapFormat::List, "010", 0, K::LeadingZero),
            (BitmapFormat::List, "1-010", 2, K::LeadingZero),
            (BitmapFormat::List, "0x10", 1, K::UnexpectedChar('x')),
            (BitmapFormat::List, "-5", 0, K::UnexpectedChar('-')),
            (BitmapFormat::List, "1--2", 2, K::UnexpectedChar('-')),
            (BitmapFormat::List, "1 -2", 2, K::UnexpectedChar('-')),
            (BitmapFormat::List, "+1", 0, K::UnexpectedChar('+')),
            (BitmapFormat::List, "1\t2", 1, K::UnexpectedChar('\t')),
            (BitmapFormat::List, "1,ü", 2, K::UnexpectedChar('ü')),
            (BitmapFormat::List, "0xf...f", 1, K::UnexpectedChar('x')),
            (BitmapFormat::Taskset, "0xg", 2, K::UnexpectedChar('g')),
            (BitmapFormat::Taskset, "0X12", 1, K::UnexpectedChar('X')),
            (BitmapFormat::Taskset, "0xf...f..", 7, K::UnexpectedChar('.')),
            (BitmapFormat::Taskset, "0xf...", 3, K::UnexpectedChar('.')),
            (BitmapFormat::Taskset, "0x1 ", 3, K::UnexpectedChar(' ')),
            (BitmapFormat::Taskset, "0x1,0x2", 3, K::UnexpectedChar(',')),
            (BitmapFormat::Taskset, "x1", 0, K::UnexpectedChar('x')),
            (BitmapFormat::Taskset, "0xé", 2, K::UnexpectedChar('é')),
        ];
        for &(format, input, position, kind) in cases {
            let r = match format {
                BitmapFormat::Hwloc => Bitmap::parse(input),
                BitmapFormat::List => Bitmap::parse_list(input),
                BitmapFormat::Taskset => Bitmap::parse_taskset(input),
            };
            let e = r.expect_err(input);
            assert_eq!(
                (e.format(), e.position(), e.kind()),
                (format, position, kind),
                "{input:?}: {e}"
            );
            assert_eq!(e.input(), input);
        }
    }

    #[test]
    fn parse_rejects_huge_inputs_without_allocating() {
        // 2^19 + 1 chunks describe more than MAX_PARSE_BITS bits.
        let mut s = String::from("0x1");
        for _ in 0..(MAX_PARSE_BITS / 32) {
            s.push_str(",0");
        }
        let e = Bitmap::parse(&s).unwrap_err();
        assert_eq!(e.kind(), K::TooLarge);
        assert_eq!(e.input().len(), ERROR_INPUT_MAX);
        assert!(e.to_string().contains("\"... at byte 0"), "{e}");
        // Exactly 2^19 chunks is fine.
        let ok = &s[..s.len() - 2];
        assert_eq!(
            Bitmap::parse(ok).unwrap().first(),
            Some(MAX_PARSE_BITS - 32)
        );

        let mut t = String::from("0x1");
        t.extend(core::iter::repeat_n('0', (MAX_PARSE_BITS / 4) as usize));
        assert_eq!(Bitmap::parse_taskset(&t).unwrap_err().kind(), K::TooLarge);
        let ok = &t[..t.len() - 1];
        assert_eq!(
            Bitmap::parse_taskset(ok).unwrap().first(),
            Some(MAX_PARSE_INDEX - 3)
        );

        // An infinite tail must start at a valid index, so that the list form
        // of every parsed set parses back.
        let mut inf = String::from("0xf...f");
        inf.extend(core::iter::repeat_n('0', (MAX_PARSE_BITS / 4) as usize));
        assert_eq!(Bitmap::parse_taskset(&inf).unwrap_err().kind(), K::TooLarge);
        let b = Bitmap::parse_taskset(&inf[..inf.len() - 1]).unwrap();
        assert_eq!(b.first(), Some(MAX_PARSE_INDEX - 3));
        assert_eq!(Bitmap::parse_list(&b.to_list_string()).unwrap(), b);
        let mut inf = String::from("0xf...f,0x0");
        for _ in 1..(MAX_PARSE_BITS / 32) {
            inf.push_str(",0");
        }
        assert_eq!(Bitmap::parse(&inf).unwrap_err().kind(), K::TooLarge);
        let b = Bitmap::parse(&inf[..inf.len() - 2]).unwrap();
        assert_eq!(b.first(), Some(MAX_PARSE_BITS - 32));
        assert_eq!(Bitmap::parse_list(&b.to_list_string()).unwrap(), b);
        assert_eq!(Bitmap::parse(&b.to_string()).unwrap(), b);
        assert_eq!(Bitmap::parse_taskset(&b.to_taskset_string()).unwrap(), b);
        // The largest tail start: 2^19 chunks whose top bit is set.
        let edge = alloc::format!("0xf...f,0x80000000{}", &inf[11..]);
        let b = Bitmap::parse(&edge).unwrap();
        assert_eq!(b.last_unset(), Some(MAX_PARSE_INDEX - 1));
        assert_eq!(b.to_list_string(), alloc::format!("{}-", MAX_PARSE_INDEX));
        assert_eq!(Bitmap::parse(&b.to_string()).unwrap(), b);
    }

    #[test]
    fn parse_error_display() {
        let e = Bitmap::parse_list("3-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid list bitmap string \"3-1\" at byte 2: range end 1 is below range start 3"
        );
        let e = Bitmap::parse("0xg").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid hwloc bitmap string \"0xg\" at byte 2: unexpected character 'g'"
        );
        let e = Bitmap::parse_list("99999999999999-").unwrap_err();
        assert!(
            e.to_string()
                .contains("index too large (the maximum is 16777215)")
        );
        let e = Bitmap::parse_taskset("0xé").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid taskset bitmap string \"0xé\" at byte 2")
        );
        // Truncation keeps a char boundary.
        let long: String = core::iter::repeat_n('é', 100).collect();
        let e = Bitmap::parse(&long).unwrap_err();
        assert_eq!(e.input().chars().count(), 32);
        let _: &dyn core::error::Error = &e;
    }

    #[test]
    fn parsers_do_not_panic_on_odd_inputs() {
        let odd = [
            "",
            ",",
            ",,",
            "-",
            "--",
            "0",
            "0x",
            "0xf...f",
            "0xf...f,",
            "0xf...f,,",
            "0xf...",
            "0xf..",
            "f...f",
            "...",
            "0x,0x",
            "1-",
            "-1",
            "1-2-3",
            "\u{0}",
            "\u{feff}0x1",
            "🦀",
            "0x1🦀",
            "1,🦀",
            "0xf...f🦀",
            "4294967295",
            "4294967296",
            "18446744073709551616",
            "0xffffffffffffffffffffffffffffffff",
            "0x0000000000000000000000000000000000001",
        ];
        for s in odd {
            let _ = Bitmap::parse(s);
            let _ = Bitmap::parse_list(s);
            let _ = Bitmap::parse_taskset(s);
            let _ = CpuSet::parse(s);
        }
    }
}
