//! A reversible transform of XML topology text that takes away what a
//! general-purpose compressor pays for again and again in hwloc-style
//! documents: indentation, `complete_cpuset`/`complete_nodeset` equal to
//! `cpuset`/`nodeset`, `id="objN"` equal to `gp_index="N"` (and
//! `gp_index` itself, as the difference from the previous one), and the
//! element openings of objects and infos.
//!
//! It is written here rather than taken from a crate because it is
//! specific to the text wloc and hwloc export; on the hwloc corpus it makes
//! zstd's output about 30% smaller. It works line by line so that line
//! diffs of squeezed documents stay line diffs of the documents.
//!
//! Every text round-trips exactly: a line that the transform could
//! confuse (one holding a byte from 0x01 to 0x08, 0x0b or 0x0c, or an odd or very deep
//! indentation) is kept whole behind an escape byte.
//!
//! Decoding squeezed lines read from a file is bounded: a marker copies
//! only the value just before it (text of the line itself, never an
//! earlier copy), so a line's text is at most a fixed multiple of its
//! bytes (252 spaces for one indentation byte is the most), and
//! [`unsqueeze_bounded`] and [`Unsqueezer`] take an output budget and
//! refuse as soon as the text would pass it.

/// Escape: the rest of the line is the original line.
const RAW: u8 = 0x01;
/// `complete_cpuset` equal to the `cpuset` just before it.
const CCPU: u8 = 0x02;
/// `complete_nodeset` equal to the `nodeset` just before it.
const CNODE: u8 = 0x03;
/// `gp_index="N" id="objN"` as a signed decimal difference, ended by GP_END.
const GP: u8 = 0x04;
const GP_END: u8 = 0x05;
const TOKENS: [(u8, &[u8]); 5] = [
    (0x06, b"<object type=\""),
    (0x07, b"<info name=\""),
    (0x08, b"\" value=\""),
    (0x0b, b"<page_type size=\""),
    (0x0c, b"\" count=\""),
];
/// First byte of a squeezed line: 0x80 + half its indentation.
const INDENT: u8 = 0x80;

/// A substring searcher built once (building one per search was a large
/// part of the time spent squeezing).
struct Needle {
    text: &'static [u8],
    finder: memchr::memmem::Finder<'static>,
}

impl Needle {
    fn new(text: &'static [u8]) -> Needle {
        Needle {
            text,
            finder: memchr::memmem::Finder::new(text),
        }
    }
}

struct Needles {
    gp: Needle,
    cpuset: Needle,
    nodeset: Needle,
    tokens: Vec<(u8, Needle)>,
}

fn needles() -> &'static Needles {
    static N: std::sync::OnceLock<Needles> = std::sync::OnceLock::new();
    N.get_or_init(|| Needles {
        gp: Needle::new(b" gp_index=\""),
        cpuset: Needle::new(b" cpuset=\""),
        nodeset: Needle::new(b" nodeset=\""),
        tokens: TOKENS.iter().map(|&(c, t)| (c, Needle::new(t))).collect(),
    })
}

fn find(hay: &[u8], needle: &Needle, from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    needle.finder.find(&hay[from..]).map(|p| p + from)
}

/// Replaces ` KEY="X" complete_KEY="X"` by ` KEY="X"<marker>` (`open`
/// is ` KEY="`).
fn squeeze_complete(line: &[u8], open: &Needle, marker: u8, out: &mut Vec<u8>) {
    let key = &open.text[1..open.text.len() - 2];
    let mut at = 0;
    while let Some(p) = find(line, open, at) {
        let v0 = p + open.text.len();
        let Some(q) = line[v0..].iter().position(|&b| b == b'"').map(|q| q + v0) else {
            break;
        };
        let value = &line[v0..q];
        out.extend_from_slice(&line[at..=q]);
        at = q + 1;
        // ` complete_KEY="VALUE"` follows?
        let rest = &line[at..];
        let n = 10 + key.len() + 2 + value.len() + 1;
        if rest.len() >= n
            && rest.starts_with(b" complete_")
            && &rest[10..10 + key.len()] == key
            && &rest[10 + key.len()..12 + key.len()] == b"=\""
            && &rest[12 + key.len()..n - 1] == value
            && rest[n - 1] == b'"'
        {
            out.push(marker);
            at += n;
        }
    }
    out.extend_from_slice(&line[at..]);
}

/// Expands every `marker` of `line` (a line whose tokens are already
/// expanded) into ` complete_KEY="VALUE"`, VALUE being the text between
/// the last two quotes before the marker, which must be preceded by
/// ` KEY="`: exactly where [`squeeze_complete`] puts a marker (its value
/// holds no quote). So a value is always text of the line itself, never
/// what an earlier marker copied (that one is preceded by `_KEY="`): the
/// output is at most about twice the line, whatever the markers. Refuses
/// as soon as the output would pass `limit` bytes.
fn unsqueeze_complete(
    line: &[u8],
    open: &[u8],
    marker: u8,
    limit: usize,
) -> Result<Vec<u8>, UnsqueezeError> {
    let key = &open[1..open.len() - 2];
    let mut out = Vec::with_capacity((line.len() + 64).min(limit));
    let mut at = 0;
    while let Some(m) = memchr::memchr(marker, &line[at..]) {
        out.extend_from_slice(&line[at..at + m]);
        at += m + 1;
        if out.last() != Some(&b'"') {
            return Err(UnsqueezeError::Corrupt);
        }
        let close = out.len() - 1;
        let v0 = memchr::memrchr(b'"', &out[..close]).ok_or(UnsqueezeError::Corrupt)? + 1;
        if !out[..v0].ends_with(open) {
            return Err(UnsqueezeError::Corrupt);
        }
        let grown = out.len() + 12 + key.len() + (close - v0) + 1;
        if grown > limit {
            return Err(UnsqueezeError::TooLong { budget: limit });
        }
        out.extend_from_slice(b" complete_");
        out.extend_from_slice(key);
        out.extend_from_slice(b"=\"");
        out.extend_from_within(v0..close);
        out.push(b'"');
    }
    out.extend_from_slice(&line[at..]);
    Ok(out)
}

/// The squeezed form of one line; `gp` is the last gp_index seen.
fn squeeze_line(line: &[u8], gp: &mut u64, out: &mut Vec<u8>) {
    let spaces = line.iter().take_while(|&&b| b == b' ').count();
    if spaces % 2 == 1
        || spaces / 2 >= 0x7f
        || line
            .iter()
            .any(|&b| (1..=8).contains(&b) || b == 0x0b || b == 0x0c)
    {
        out.push(RAW);
        out.extend_from_slice(line);
        return;
    }
    out.push(INDENT + (spaces / 2) as u8);
    let body = &line[spaces..];
    // gp_index and id.
    let mut b1 = Vec::with_capacity(body.len());
    let mut at = 0;
    let n = needles();
    while let Some(p) = find(body, &n.gp, at) {
        let d0 = p + n.gp.text.len();
        let digits = body[d0..].iter().take_while(|b| b.is_ascii_digit()).count();
        let d1 = d0 + digits;
        let num = core::str::from_utf8(&body[d0..d1])
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|n| n.to_string().as_bytes() == &body[d0..d1]);
        let tail = num.map(|n| format!("\" id=\"obj{n}\""));
        match (num, tail) {
            (Some(n), Some(t)) if body[d1..].starts_with(t.as_bytes()) => {
                b1.extend_from_slice(&body[at..p]);
                b1.push(GP);
                let delta = n as i128 - *gp as i128;
                b1.extend_from_slice(delta.to_string().as_bytes());
                b1.push(GP_END);
                *gp = n;
                at = d1 + t.len();
            }
            _ => {
                b1.extend_from_slice(&body[at..d0]);
                at = d0;
            }
        }
    }
    b1.extend_from_slice(&body[at..]);
    let mut b2 = Vec::with_capacity(b1.len());
    squeeze_complete(&b1, &n.cpuset, CCPU, &mut b2);
    b1.clear();
    squeeze_complete(&b2, &n.nodeset, CNODE, &mut b1);
    let (mut cur, mut next) = (b1, b2);
    for (code, text) in &n.tokens {
        next.clear();
        let mut at = 0;
        while let Some(p) = find(&cur, text, at) {
            next.extend_from_slice(&cur[at..p]);
            next.push(*code);
            at = p + text.text.len();
        }
        if at == 0 {
            // Not found: keep `cur` as it is.
            continue;
        }
        next.extend_from_slice(&cur[at..]);
        std::mem::swap(&mut cur, &mut next);
    }
    out.extend_from_slice(&cur);
}

/// Appends the decimal digits of `n`.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut d = [0u8; 20];
    let mut i = d.len();
    loop {
        i -= 1;
        d[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&d[i..]);
}

/// Appends the text of one squeezed line to `out`, refusing as soon as
/// `out` would pass `limit` bytes.
fn unsqueeze_line(
    line: &[u8],
    gp: &mut u64,
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), UnsqueezeError> {
    use UnsqueezeError::Corrupt;
    let too_long = UnsqueezeError::TooLong { budget: limit };
    let (&first, rest) = line.split_first().ok_or(Corrupt)?;
    if first == RAW {
        if out.len() + rest.len() > limit {
            return Err(too_long);
        }
        out.extend_from_slice(rest);
        return Ok(());
    }
    if first < INDENT {
        return Err(Corrupt);
    }
    let indent = 2 * (first - INDENT) as usize;
    // What is left of the budget for the rest of the line. Every step
    // below only makes the line longer (a token is longer than its code,
    // a gp_index sequence of at least 3 bytes becomes at least 23), so a
    // step that passes it is refused at once.
    let room = limit.checked_sub(out.len() + indent).ok_or(too_long)?;
    out.resize(out.len() + indent, b' ');
    // Tokens, copying the runs of plain bytes between them whole (all
    // the codes are below 0x0d).
    let mut b = Vec::with_capacity((rest.len() + 64).min(room));
    let mut i = 0;
    while i < rest.len() {
        let j = rest[i..]
            .iter()
            .position(|&c| c < 0x0d)
            .map_or(rest.len(), |p| p + i);
        b.extend_from_slice(&rest[i..j]);
        let Some(&c) = rest.get(j) else { break };
        match TOKENS.iter().find(|(code, _)| *code == c) {
            Some((_, t)) => b.extend_from_slice(t),
            None => b.push(c),
        }
        if b.len() > room {
            return Err(too_long);
        }
        i = j + 1;
    }
    if b.len() > room {
        return Err(too_long);
    }
    // Their limit is what is left of the budget; a refusal names the
    // budget given to the decoder.
    let budget = |e| match e {
        UnsqueezeError::TooLong { .. } => too_long,
        e => e,
    };
    let b = if b.contains(&CNODE) {
        unsqueeze_complete(&b, b" nodeset=\"", CNODE, room).map_err(budget)?
    } else {
        b
    };
    let b = if b.contains(&CCPU) {
        unsqueeze_complete(&b, b" cpuset=\"", CCPU, room).map_err(budget)?
    } else {
        b
    };
    let mut i = 0;
    while i < b.len() {
        let Some(g) = memchr::memchr(GP, &b[i..]) else {
            if out.len() + (b.len() - i) > limit {
                return Err(too_long);
            }
            out.extend_from_slice(&b[i..]);
            break;
        };
        if out.len() + g > limit {
            return Err(too_long);
        }
        out.extend_from_slice(&b[i..i + g]);
        i += g;
        let end = b[i..].iter().position(|&c| c == GP_END).ok_or(Corrupt)? + i;
        // Only the digits [`squeeze_line`] writes (no sign but `-`, no
        // leading zero): then the text of a sequence is never shorter than
        // the sequence, which the budget checks above rely on.
        let delta: i128 = core::str::from_utf8(&b[i + 1..end])
            .ok()
            .filter(|d| {
                let digits = d.strip_prefix('-').unwrap_or(d);
                digits.bytes().all(|c| c.is_ascii_digit())
                    && (digits == "0" && !d.starts_with('-')
                        || !digits.is_empty() && !digits.starts_with('0'))
            })
            .and_then(|d| d.parse().ok())
            .ok_or(Corrupt)?;
        let n = u64::try_from(*gp as i128 + delta).map_err(|_| Corrupt)?;
        *gp = n;
        let digits = n.checked_ilog10().map_or(1, |d| d as usize + 1);
        if out.len() + 21 + 2 * digits > limit {
            return Err(too_long);
        }
        // Written piece by piece: format! here was a noticeable part of
        // the time to get a node.
        out.extend_from_slice(b" gp_index=\"");
        push_decimal(out, n);
        out.extend_from_slice(b"\" id=\"obj");
        push_decimal(out, n);
        out.push(b'"');
        i = end + 1;
    }
    Ok(())
}

/// Why squeezed lines do not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsqueezeError {
    /// They are not the squeezed lines of any text (corrupt data).
    Corrupt,
    /// Their text would be longer than `budget` bytes: decoding stopped
    /// there.
    TooLong {
        /// The budget given to the decoder.
        budget: usize,
    },
}

impl std::fmt::Display for UnsqueezeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnsqueezeError::Corrupt => f.write_str("the squeezed lines do not decode"),
            UnsqueezeError::TooLong { budget } => {
                write!(f, "the decoded text would be longer than {budget} bytes")
            }
        }
    }
}

impl std::error::Error for UnsqueezeError {}

/// A decoder of squeezed lines given one at a time, with an output
/// budget: it refuses as soon as the text would pass it, so what it
/// allocates is bounded by the budget whatever the lines hold.
pub struct Unsqueezer {
    gp: u64,
    out: Vec<u8>,
    budget: usize,
    lines: usize,
}

impl Unsqueezer {
    /// A decoder whose text may be at most `budget` bytes; `capacity` is
    /// the size expected (what is reserved, never more than the budget).
    pub fn new(budget: usize, capacity: usize) -> Unsqueezer {
        Unsqueezer {
            gp: 0,
            out: Vec::with_capacity(capacity.min(budget)),
            budget,
            lines: 0,
        }
    }

    /// Decodes the next line.
    ///
    /// # Errors
    ///
    /// The line is not a squeezed line, or the text would pass the budget.
    pub fn push(&mut self, line: &[u8]) -> Result<(), UnsqueezeError> {
        if self.lines > 0 {
            if self.out.len() >= self.budget {
                return Err(UnsqueezeError::TooLong {
                    budget: self.budget,
                });
            }
            self.out.push(b'\n');
        }
        self.lines += 1;
        unsqueeze_line(line, &mut self.gp, &mut self.out, self.budget)
    }

    /// The text decoded so far.
    ///
    /// # Errors
    ///
    /// It is not UTF-8 (corrupt data).
    pub fn finish(self) -> Result<String, UnsqueezeError> {
        String::from_utf8(self.out).map_err(|_| UnsqueezeError::Corrupt)
    }
}

/// The text whose squeezed lines are `lines`, at most `budget` bytes.
///
/// # Errors
///
/// They are not the squeezed lines of any text, or the text would be
/// longer than `budget` (refused as soon as it is: nothing larger is
/// allocated).
pub fn unsqueeze_bounded<L: AsRef<[u8]>>(
    lines: &[L],
    budget: usize,
) -> Result<String, UnsqueezeError> {
    let squeezed: usize = lines.iter().map(|l| l.as_ref().len() + 1).sum();
    let mut u = Unsqueezer::new(budget, squeezed.saturating_mul(2));
    for l in lines {
        u.push(l.as_ref())?;
    }
    u.finish()
}

/// The squeezed lines of `text` (split at `\n`; the part after the last
/// newline, possibly empty, is the last line).
pub fn squeeze(text: &str) -> Vec<Vec<u8>> {
    let (joined, starts) = squeeze_joined(text);
    (0..starts.len())
        .map(|i| line_of(&joined, &starts, i).to_vec())
        .collect()
}

/// The squeezed lines of `text` joined by `\n` (a squeezed line holds
/// no `\n`), and where each line starts: one buffer rather than one
/// allocation per line.
pub fn squeeze_joined(text: &str) -> (Vec<u8>, Vec<usize>) {
    let mut gp = 0;
    let mut out = Vec::with_capacity(text.len());
    let mut starts = Vec::with_capacity(text.len() / 48 + 1);
    for (n, l) in text.as_bytes().split(|&b| b == b'\n').enumerate() {
        if n > 0 {
            out.push(b'\n');
        }
        starts.push(out.len());
        squeeze_line(l, &mut gp, &mut out);
    }
    (out, starts)
}

/// Line `i` of a [`squeeze_joined`] buffer.
pub fn line_of<'a>(joined: &'a [u8], starts: &[usize], i: usize) -> &'a [u8] {
    let end = starts.get(i + 1).map_or(joined.len(), |&e| e - 1);
    &joined[starts[i]..end]
}

/// The text whose squeezed lines are `lines`, or `None` if they are not
/// the squeezed lines of any text (corrupt data). Without a budget: for
/// lines this process squeezed; data read from a file goes through
/// [`unsqueeze_bounded`].
pub fn unsqueeze<L: AsRef<[u8]>>(lines: &[L]) -> Option<String> {
    unsqueeze_bounded(lines, usize::MAX).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DOC: &str = "<topology version=\"3.0\">\n  <object type=\"Core\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"8\" id=\"obj8\">\n    <info name=\"A\" value=\"b\"/>\n   <x gp_index=\"07\" id=\"obj7\" gp_index=\"3\" id=\"obj4\"/>\n\u{1}odd\n</topology>\n";

    #[test]
    fn squeezes_and_round_trips() {
        let s = squeeze(DOC);
        assert_eq!(unsqueeze(&s).unwrap(), DOC);
        let total: usize = s.iter().map(|l| l.len() + 1).sum();
        assert!(total < DOC.len());
        assert_eq!(s[1][0], INDENT + 1);
        assert!(s[1].contains(&CCPU) && s[1].contains(&CNODE) && s[1].contains(&GP));
        assert_eq!(s[3][0], RAW);
    }

    #[test]
    fn corrupt_lines_are_refused() {
        assert!(unsqueeze(&[b"\x10abc".to_vec()]).is_none());
        assert!(unsqueeze(&[b"\x80\x04zz\x05".to_vec()]).is_none());
        assert!(unsqueeze(&[b"\x80\x02".to_vec()]).is_none());
        assert!(unsqueeze(&[b"\x80\x04-5\x05".to_vec()]).is_none());
    }

    #[test]
    fn doubling_markers_are_refused_at_once() {
        // Each marker once copied everything after ` cpuset="`, earlier
        // copies included: 40 markers made 2^40 times the line.
        for (open, marker) in [(&b" cpuset=\""[..], CCPU), (&b" nodeset=\""[..], CNODE)] {
            let mut line = b"\x80<object".to_vec();
            line.extend_from_slice(open);
            line.extend_from_slice(b"0x1\"");
            line.extend(std::iter::repeat_n(marker, 40));
            assert_eq!(
                unsqueeze_bounded(&[line], usize::MAX),
                Err(UnsqueezeError::Corrupt)
            );
        }
    }

    #[test]
    fn a_value_ending_like_an_opening_round_trips() {
        // The value is ` cpuset=`: the text before the marker ends with an
        // opening, which the decoder once took for the value's.
        for t in [
            " cpuset=\" cpuset=\" complete_cpuset=\" cpuset=\"",
            " nodeset=\"a cpuset=\" complete_nodeset=\"a cpuset=\"\"x\" complete_cpuset=\"x\"",
        ] {
            assert_eq!(unsqueeze(&squeeze(t)).unwrap(), t);
        }
    }

    #[test]
    fn the_budget_stops_decoding() {
        let s = squeeze(DOC);
        assert_eq!(unsqueeze_bounded(&s, DOC.len()).unwrap(), DOC);
        assert_eq!(
            unsqueeze_bounded(&s, DOC.len() - 1),
            Err(UnsqueezeError::TooLong {
                budget: DOC.len() - 1
            })
        );
        // Refused while expanding a marker on a line after the first: the
        // error names the budget given, not what was left of it.
        let t = "\n<object type=\" nodeset=\"\" complete_nodeset=\"\"";
        assert_eq!(
            unsqueeze_bounded(&squeeze(t), t.len() - 1),
            Err(UnsqueezeError::TooLong {
                budget: t.len() - 1
            })
        );
        // One byte is 252 spaces of indentation: refused before they are
        // written.
        let lines = vec![vec![0xfe_u8]; 1000];
        assert_eq!(
            unsqueeze_bounded(&lines, 10_000),
            Err(UnsqueezeError::TooLong { budget: 10_000 })
        );
        let mut u = Unsqueezer::new(3, 1 << 30);
        assert!(
            u.out.capacity() < 1 << 20,
            "the capacity is capped by the budget"
        );
        assert_eq!(u.push(b"\x01abc"), Ok(()));
        assert_eq!(u.push(b"\x80"), Err(UnsqueezeError::TooLong { budget: 3 }));
    }

    /// A piece of a squeezed line, heavy in what the decoder expands.
    fn piece() -> impl Strategy<Value = &'static [u8]> {
        prop_oneof![
            Just(&b" cpuset=\""[..]),
            Just(&b" nodeset=\""[..]),
            Just(&b"\""[..]),
            Just(&[CCPU][..]),
            Just(&[CNODE][..]),
            Just(&b"\x04-3\x05"[..]),
            Just(&b"\x0418446744073709551615\x05"[..]),
            Just(&b"\x040\x05"[..]),
            Just(&[0x06u8][..]),
            Just(&[0x0bu8][..]),
            Just(&b"x"[..]),
            Just(&b"_"[..]),
        ]
    }

    proptest! {
        #[test]
        fn decoding_is_linear_and_within_its_budget(
            lines in proptest::collection::vec(
                (prop_oneof![Just(RAW), 0x80u8..=0xff],
                 proptest::collection::vec(piece(), 0..24)),
                0..12),
            budget in 0usize..6000,
        ) {
            let lines: Vec<Vec<u8>> = lines
                .into_iter()
                .map(|(first, pieces)| {
                    let mut l = vec![first];
                    l.extend(pieces.concat());
                    l
                })
                .collect();
            let squeezed: usize = lines.iter().map(|l| l.len() + 1).sum();
            if let Ok(t) = unsqueeze_bounded(&lines, usize::MAX) {
                // At most 252 spaces for one byte; every other code less.
                prop_assert!(t.len() <= 256 * squeezed, "{} from {squeezed}", t.len());
                // Any budget at least its length gives it, any other refuses.
                let b = unsqueeze_bounded(&lines, budget);
                if budget >= t.len() {
                    prop_assert_eq!(b.unwrap(), t);
                } else {
                    prop_assert_eq!(b, Err(UnsqueezeError::TooLong { budget }));
                }
            } else if let Ok(t) = unsqueeze_bounded(&lines, budget) {
                prop_assert!(t.len() <= budget);
            }
        }

        #[test]
        fn any_text_round_trips(parts in proptest::collection::vec(prop_oneof![
            Just(" cpuset=\"0x1\""), Just(" complete_cpuset=\"0x1\""), Just(" nodeset=\"\""),
            Just(" complete_nodeset=\"\""), Just(" gp_index=\"12\""), Just(" id=\"obj12\""),
            Just(" gp_index=\"0\" id=\"obj0\""), Just("<object type=\""), Just("<info name=\""),
            Just("\" value=\""), Just("\n"), Just("  "), Just(" "), Just("\u{2}"), Just("\""),
            Just("é"), Just("x"), Just("\u{7}"), Just("\u{b}"), Just("<page_type size=\""), Just("\" count=\""),
            Just(" cpuset="), Just(" nodeset="), Just("=\""),
        ], 0..60)) {
            let text: String = parts.concat();
            let s = squeeze(&text);
            prop_assert_eq!(unsqueeze_bounded(&s, text.len()).unwrap(), text.clone());
            if !text.is_empty() {
                prop_assert_eq!(
                    unsqueeze_bounded(&s, text.len() - 1),
                    Err(UnsqueezeError::TooLong { budget: text.len() - 1 })
                );
            }
        }
    }
}
