//! A single file holding many topologies (one per node of a cluster), with
//! random access to any one of them.
//!
//! # How it is made
//!
//! Each topology is kept as its canonical XML document (what `wloc ls --of
//! xml` writes), squeezed ([`crate::squeeze`]). Nodes are taken in name
//! order, so the file does not depend on the order they were given in (nor
//! on the number of threads that prepared them). A node becomes a
//! *reference* unless one of the references already chosen is similar
//! enough (a MinHash sketch of its lines picks the candidates, a line diff
//! decides): then only its line diff against that reference is kept; diffs
//! are always against a reference, never against another diff, so getting
//! a node never follows a chain. References are compressed together with
//! zstd in groups of at most [`REF_GROUP`] bytes; nodes, in name order, in
//! blocks of at most [`BLOCK`] bytes (a table of the block's nodes, then
//! their diffs), with a zstd dictionary trained on the diffs when there
//! are enough of them. Getting one node reads the index, one block and one
//! reference group: what it decompresses is bounded by those sizes
//! whatever the number of nodes.
//!
//! # Layout (version 2, little-endian)
//!
//! | offset | size | what |
//! |---|---|---|
//! | 0 | 8 | `WLOCSTOR` |
//! | 8 | 4 | format version (2) |
//! | 12 | 4 | size of the index once decompressed |
//! | 16 | 8 | offset of the index (a zstd frame) |
//! | 24 | 4 | size of the index frame |
//! | 28 | 4 | CRC-32 of the index frame |
//! | 32 | | dictionary, reference groups and blocks (zstd frames) |
//!
//! The index (LEB128 integers): the dictionary's offset, size and CRC-32;
//! for each reference group its offset, frame size, size decompressed and
//! CRC-32 of the decompressed bytes; for each reference its group, offset
//! and size in the group and the size of its XML document; for each block
//! the name of its first node (size and UTF-8 bytes), its number of nodes,
//! the reference group it uses as dictionary (0: none, else group + 1) and
//! its frame as for groups. A block, decompressed, lists its nodes in name
//! order, each as: bytes its name shares with the previous name of the
//! block, size and bytes of the rest of the name, reference, size of its
//! diff, and its document's size minus its reference's (zigzag); then the
//! nodes' diffs one after the other. A node's diff is a list of changes:
//! number of changes, then for each the number of reference lines kept
//! before it, of lines removed, of lines added, and the added lines, each
//! ended by `\n`. Every byte of the file is covered by a CRC-32 (the
//! index frame's in the header, every other frame's decompressed bytes in
//! the index), so a damaged store gives an error, never a wrong document.
//!
//! Version 1 stores (per-node index chunks and CRC-32s) are refused with
//! an error saying so: pack the topologies again.
//!
//! # Reading a store anyone may have made
//!
//! The checksums catch damage, not a hostile writer, so every size read
//! from the file is bounded before it is used: a frame by [`MAX_FRAME`]
//! and by [`FRAME_SLACK`] plus [`FRAME_RATIO`] per compressed byte, a
//! document by [`MAX_DOCUMENT`] and by [`DOC_RATIO`] per squeezed byte
//! plus [`DOC_SLACK`] (before decoding it, then as the decoder's output
//! budget), a name by [`MAX_NAME`] (the block table is read one name at
//! a time), a listing by [`LIST_SLACK`] plus [`LIST_RATIO`] per byte of
//! the file, and every count by the bytes left to hold it. Errors quote at
//! most 200 bytes of a name.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::linediff::{self, Hunk};
use crate::squeeze;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"WLOCSTOR";
/// The format version written and read.
pub const VERSION: u32 = 2;
const HEADER: usize = 32;
/// Largest reference group, decompressed.
pub const REF_GROUP: usize = 128 * 1024;
/// Largest block of nodes, decompressed.
pub const BLOCK: usize = 32 * 1024;
/// zstd level of the reference groups and the index: few bytes, read
/// once per get.
const LEVEL: i32 = 19;
/// zstd level of the blocks, chosen by measurement: on the generated
/// 10,000-node cluster level 15 makes a store 0.8% larger than level 19
/// (on the 21-node corpus 0.2%) in about two thirds of the time; levels
/// 12 and below are 10% larger.
const BLOCK_LEVEL: i32 = 15;
/// A node whose diff changes more than this fraction of its lines
/// becomes a reference.
const NEW_REF_FRACTION: f64 = 0.3;
/// The most steps of Myers' algorithm spent on one line diff while
/// packing (a few milliseconds): a count, so that the same inputs give the
/// same store on any machine and under any load.
const PACK_DIFF_WORK: u64 = 1 << 22;
const SKETCH: usize = 64;
/// Largest dictionary for the blocks.
const DICT_MAX: usize = 16 * 1024;
/// Largest frame, decompressed: a reader allocates a frame's declared
/// size before decompressing it, so a damaged or hostile index must not
/// be able to ask for more. A reference group or block only exceeds
/// [`REF_GROUP`] or [`BLOCK`] to hold one large topology; 256 MiB is far
/// above the XML of the largest machines.
pub const MAX_FRAME: usize = 256 << 20;
/// A frame may hold at most this many bytes, decompressed, plus
/// [`FRAME_RATIO`] per byte of its compressed form: zstd can make a frame
/// tens of thousands of times smaller than its content, so a small file
/// could otherwise declare (and hold) [`MAX_FRAME`]-sized frames. Real
/// frames stay far inside (the largest ratio measured on the corpora, a
/// group of near-identical references, is below 100).
pub const FRAME_SLACK: usize = 1 << 20;
/// See [`FRAME_SLACK`].
pub const FRAME_RATIO: usize = 1024;
/// Largest document a store holds (and a reader accepts to decode).
pub const MAX_DOCUMENT: usize = 256 << 20;
/// A document is at most this many bytes per byte of its squeezed lines
/// (reference and diff), plus [`DOC_SLACK`]: checked before it is decoded,
/// so that squeezed lines cannot declare more text than they may hold.
/// The squeeze saves indentation, attribute names and repeated sets; on
/// canonical documents it divides by about 2, by 35 at most on lines
/// indented as deep as it encodes.
pub const DOC_RATIO: usize = 64;
/// See [`DOC_RATIO`].
pub const DOC_SLACK: usize = 64 << 10;
/// Longest node name, in bytes (names are file names; a store refuses
/// longer ones when packed and when read).
pub const MAX_NAME: usize = 1024;
/// [`Store::entries`] holds the names and entries of the whole store: at
/// most this many bytes plus [`LIST_RATIO`] per byte of the file. Names
/// share their first bytes with the previous name in a block, so without
/// a bound a small block could expand into gigabytes of names.
pub const LIST_SLACK: usize = 64 << 20;
/// See [`LIST_SLACK`].
pub const LIST_RATIO: usize = 64;
/// Longest part of a name or value quoted in an error message.
const QUOTE_MAX: usize = 200;
/// The dictionary is this fraction of the diff bytes it is trained on,
/// chosen by measurement: 1/100 made the generated 500-node set 418x
/// smaller (1/20: 345x, 1/50: 413x, 1/200: 381x) and the 10,000-node set
/// 540x (1/20 and 1/50: 534x, 1/200: 524x).
const DICT_FRACTION: usize = 100;
/// Most diff bytes the dictionary is trained on (evenly spaced samples):
/// training on everything costs time without a better dictionary.
const DICT_TRAIN: usize = 1 << 20;

/// What went wrong reading or writing a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

fn corrupt(what: impl fmt::Display) -> StoreError {
    StoreError(format!("corrupt topology store: {what}"))
}

/// `s` for an error message: at most [`QUOTE_MAX`] bytes of it (cut at a
/// character boundary, `...` marking the cut), so that a message about a
/// hostile name stays short.
pub fn quote(s: &str) -> std::borrow::Cow<'_, str> {
    if s.len() <= QUOTE_MAX {
        return s.into();
    }
    let mut end = QUOTE_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len()).into()
}

/// Whether a frame of `len` bytes in the file may hold `raw` bytes (see
/// [`FRAME_SLACK`]).
fn frame_fits(raw: usize, len: usize) -> bool {
    raw <= MAX_FRAME && raw <= FRAME_SLACK.saturating_add(FRAME_RATIO.saturating_mul(len))
}

/// The largest document `squeezed` bytes of squeezed lines may declare
/// (see [`DOC_RATIO`]).
fn doc_limit(squeezed: usize) -> usize {
    DOC_RATIO
        .saturating_mul(squeezed)
        .saturating_add(DOC_SLACK)
        .min(MAX_DOCUMENT)
}

// ------------------------------------------------------------ encoding

fn put(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A bounds-checked reader of LEB128 integers and byte strings.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn num(&mut self) -> Result<u64, StoreError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let &b = self
                .data
                .get(self.at)
                .ok_or_else(|| corrupt(format!("the {} ends early", self.what)))?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt(format!(
            "a number of the {} is too long",
            self.what
        )))
    }

    fn size(&mut self) -> Result<usize, StoreError> {
        let v = self.num()?;
        usize::try_from(v)
            .ok()
            .filter(|&v| v <= 1 << 40)
            .ok_or_else(|| corrupt(format!("a size of the {} is too large ({v})", self.what)))
    }

    fn crc(&mut self) -> Result<u32, StoreError> {
        u32::try_from(self.num()?)
            .map_err(|_| corrupt(format!("a checksum of the {} is too large", self.what)))
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| corrupt(format!("the {} ends early", self.what)))?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// A count of items that take at least one byte each.
    fn count(&mut self) -> Result<usize, StoreError> {
        let n = self.size()?;
        if n > self.data.len() - self.at.min(self.data.len()) {
            return Err(corrupt(format!(
                "a count of the {} is too large ({n})",
                self.what
            )));
        }
        Ok(n)
    }
}

/// A node's diff against its reference, squeezed lines.
fn encode_diff(hunks: &[Hunk<&[u8]>]) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, hunks.len() as u64);
    let mut at = 0;
    for h in hunks {
        put(&mut out, (h.old_start - at) as u64);
        put(&mut out, h.old.len() as u64);
        put(&mut out, h.new.len() as u64);
        for l in &h.new {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        at = h.old_start + h.old.len();
    }
    out
}

/// Decodes the squeezed lines of a node, from its reference's (`\n`
/// separated) and its diff, into `out` one line at a time: nothing is
/// held per line, so what a get allocates is the document (bounded by
/// the decoder's budget), whatever the number of lines.
fn decode_into(
    reference: &[u8],
    diff: &[u8],
    out: &mut squeeze::Unsqueezer,
) -> Result<(), StoreError> {
    let mut r = Reader {
        data: diff,
        at: 0,
        what: "node diff",
    };
    let mut old = reference.split(|&b| b == b'\n');
    let past = || corrupt("a node diff goes past the end of its reference");
    let n = r.count()?;
    for _ in 0..n {
        let keep = r.size()?;
        let del = r.size()?;
        let add = r.count()?;
        // (Each loop ends at the end of the reference at the latest.)
        for _ in 0..keep {
            push_line(out, old.next().ok_or_else(past)?)?;
        }
        for _ in 0..del {
            old.next().ok_or_else(past)?;
        }
        for _ in 0..add {
            let rest = &r.data[r.at..];
            let len = memchr::memchr(b'\n', rest)
                .ok_or_else(|| corrupt("a line of a node diff is not ended"))?;
            push_line(out, &rest[..len])?;
            r.at += len + 1;
        }
    }
    if r.at != diff.len() {
        return Err(corrupt("a node diff has trailing bytes"));
    }
    for line in old {
        push_line(out, line)?;
    }
    Ok(())
}

fn push_line(out: &mut squeeze::Unsqueezer, line: &[u8]) -> Result<(), StoreError> {
    out.push(line).map_err(|e| match e {
        squeeze::UnsqueezeError::Corrupt => corrupt("a document does not decode"),
        squeeze::UnsqueezeError::TooLong { budget } => corrupt(format!(
            "a document is longer than its recorded size ({budget} bytes)"
        )),
    })
}

// ------------------------------------------------------------ similarity

fn line_hash(data: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(data);
    h.finish()
}

/// The SKETCH smallest distinct line hashes (bottom-k MinHash).
fn sketch(p: &Prepared) -> Vec<u64> {
    let mut h: Vec<u64> = (0..p.lines()).map(|i| line_hash(p.line(i))).collect();
    h.sort_unstable();
    h.dedup();
    h.truncate(SKETCH);
    h
}

/// Estimated Jaccard similarity of two line sets from their sketches.
fn similarity(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut seen, mut both) = (0, 0, 0, 0);
    while seen < SKETCH && (i < a.len() || j < b.len()) {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => i += 1,
            (Some(_), None) => i += 1,
            _ => j += 1,
        }
        seen += 1;
    }
    if seen == 0 {
        1.0
    } else {
        both as f64 / seen as f64
    }
}

// ------------------------------------------------------------ packing

/// Counts of what [`pack`] made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Nodes (topologies) in the store.
    pub nodes: usize,
    /// Nodes kept whole, that others are diffed against.
    pub references: usize,
    /// Nodes identical to their reference.
    pub identical: usize,
    /// Blocks of nodes (each one zstd frame).
    pub blocks: usize,
    /// The zstd dictionary trained on the diffs (0 without one).
    pub dictionary_bytes: usize,
    /// Compressed references.
    pub reference_bytes: usize,
    /// Compressed blocks (node tables and diffs).
    pub diff_bytes: usize,
    /// The whole file.
    pub bytes: usize,
}

/// What is computed of each document before references are chosen
/// ([`prepare`]): its squeezed lines, size, CRC-32 and sketch. Preparing
/// is the costly part of packing and each document is prepared on its
/// own, so callers can do it on many threads as they load documents.
pub struct Prepared {
    /// Squeezed lines joined by `\n`.
    joined: Vec<u8>,
    starts: Vec<usize>,
    len: usize,
    crc: u32,
    sketch: Vec<u64>,
}

impl Prepared {
    fn lines(&self) -> usize {
        self.starts.len()
    }

    fn line(&self, i: usize) -> &[u8] {
        squeeze::line_of(&self.joined, &self.starts, i)
    }

    fn all_lines(&self) -> Vec<&[u8]> {
        (0..self.lines()).map(|i| self.line(i)).collect()
    }
}

/// Prepares the canonical XML document `text` for [`pack_prepared`].
pub fn prepare(text: &str) -> Prepared {
    let (joined, starts) = squeeze::squeeze_joined(text);
    let mut p = Prepared {
        joined,
        starts,
        len: text.len(),
        crc: crc32fast::hash(text.as_bytes()),
        sketch: Vec::new(),
    };
    p.sketch = sketch(&p);
    p
}

/// `f` over `items` on all CPUs, results in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    let per = items.len().div_ceil(workers).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(per)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker thread panicked"))
            .collect()
    })
}

/// The diff of two documents with as many lines, line by line, when few
/// lines differ: the common case of nodes of one cluster, found in
/// linear time (Myers is kept for the others).
fn positional_diff<'a>(
    old: &Prepared,
    new: &'a Prepared,
    limit: usize,
) -> Option<Vec<Hunk<&'a [u8]>>> {
    if old.lines() != new.lines() {
        return None;
    }
    let mut hunks: Vec<Hunk<&[u8]>> = Vec::new();
    let mut changed = 0;
    for i in 0..new.lines() {
        let (a, b) = (old.line(i), new.line(i));
        if a == b {
            continue;
        }
        changed += 1;
        if changed > limit {
            return None;
        }
        match hunks.last_mut() {
            Some(h) if h.old_start + h.old.len() == i => {
                h.old.push(&[]);
                h.new.push(b);
            }
            _ => hunks.push(Hunk {
                old_start: i,
                new_start: i,
                // Only the number of old lines is written.
                old: vec![&[]],
                new: vec![b],
            }),
        }
    }
    Some(hunks)
}

/// A diff of squeezed lines (only the number of old lines is kept).
type Diff<'a> = Vec<Hunk<&'a [u8]>>;

fn cost(hunks: &[Hunk<&[u8]>]) -> usize {
    hunks.iter().map(|h| h.old.len() + h.new.len()).sum()
}

/// Builds a store of `nodes` (name, canonical XML document); `progress`
/// is called with the number of nodes done.
///
/// # Errors
///
/// Two nodes with the same name, or a compression failure.
pub fn pack(
    nodes: Vec<(String, String)>,
    progress: impl FnMut(usize),
) -> Result<(Vec<u8>, PackStats), StoreError> {
    let prepared = par_map(&nodes, |(_, text)| prepare(text));
    pack_prepared(
        nodes.into_iter().map(|(n, _)| n).zip(prepared).collect(),
        progress,
    )
}

/// [`pack`] of documents already prepared (the same file for the same
/// documents).
///
/// # Errors
///
/// As [`pack`].
pub fn pack_prepared(
    mut nodes: Vec<(String, Prepared)>,
    mut progress: impl FnMut(usize),
) -> Result<(Vec<u8>, PackStats), StoreError> {
    check_nodes(&mut nodes)?;
    let (refs, chosen, identical) = choose_references(&nodes, &mut progress);
    let mut stats = PackStats {
        nodes: nodes.len(),
        references: refs.len(),
        identical,
        ..PackStats::default()
    };
    let mut out = Output {
        file: vec![0u8; HEADER],
        index: Vec::new(),
    };
    let dict = train_dictionary(&chosen);
    stats.dictionary_bytes = dict.len();
    out.put_dictionary(&dict);
    let (groups, ref_places) = group_references(&nodes, &refs)?;
    stats.reference_bytes = out.put_reference_groups(&groups, &ref_places)?;
    let blocks = node_blocks(&nodes, &chosen, &ref_places);
    stats.blocks = blocks.len();
    // Without a trained dictionary (few nodes), a block is compressed
    // with its first node's reference group as a raw dictionary: the
    // lines of a diff are much like those of its reference.
    let block_dicts: Vec<Option<usize>> = blocks
        .iter()
        .map(|&(first, _, _)| dict.is_empty().then(|| ref_places[chosen[first].0].0))
        .collect();
    stats.diff_bytes = out.put_blocks(&nodes, &blocks, &block_dicts, &groups, &dict)?;
    let file = out.finish()?;
    stats.bytes = file.len();
    Ok((file, stats))
}

/// Sorts the nodes by name and refuses, first, what a reader refuses:
/// two nodes of one name, a name longer than [`MAX_NAME`], a document
/// too large for its squeezed size.  Separate because it is the only
/// phase that fails on the input rather than on its size once packed.
fn check_nodes(nodes: &mut [(String, Prepared)]) -> Result<(), StoreError> {
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = nodes.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(StoreError(format!(
            "two topologies are named '{}'",
            quote(&w[0].0)
        )));
    }
    for (name, p) in nodes.iter() {
        if name.len() > MAX_NAME {
            return Err(StoreError(format!(
                "the topology name '{}' is longer than {MAX_NAME} bytes",
                quote(name)
            )));
        }
        if p.len > doc_limit(p.joined.len()) {
            return Err(StoreError(format!(
                "the topology '{}' is too large for the store ({} bytes; at most {MAX_DOCUMENT}, and {DOC_RATIO} per byte once squeezed)",
                quote(name),
                p.len
            )));
        }
    }
    Ok(())
}

/// A node's reference (an index into the references) and encoded diff.
type Choice = (usize, Vec<u8>);

/// Chooses, in name order, each node's reference and diff: an identical
/// reference (an empty diff), else the cheapest diff against a similar
/// reference if it is small enough, else the node becomes a reference.
/// Returns the node indices of the references, each node's reference (an
/// index into them) and encoded diff, and the count of nodes identical
/// to their reference.  Separate because it is the whole of the choice;
/// the later phases only lay out what it chose.
fn choose_references(
    nodes: &[(String, Prepared)],
    progress: &mut impl FnMut(usize),
) -> (Vec<usize>, Vec<Choice>, usize) {
    let mut refs: Vec<usize> = Vec::new();
    let mut by_text: HashMap<(u32, usize), Vec<usize>> = HashMap::new();
    let mut chosen: Vec<Choice> = Vec::with_capacity(nodes.len());
    let mut identical = 0;
    for (done, (_, p)) in nodes.iter().enumerate() {
        // Identical to a reference: an empty diff.
        if let Some(&r) = by_text
            .get(&(p.crc, p.len))
            .and_then(|c| c.iter().find(|&&r| nodes[refs[r]].1.joined == p.joined))
        {
            identical += 1;
            chosen.push((r, encode_diff(&[])));
            progress(done + 1);
            continue;
        }
        let limit = (p.lines() as f64 * NEW_REF_FRACTION) as usize;
        match best_diff(nodes, &refs, p, limit) {
            Some((r, c, hunks)) if c <= limit => chosen.push((r, encode_diff(&hunks))),
            _ => {
                by_text.entry((p.crc, p.len)).or_default().push(refs.len());
                refs.push(done);
                chosen.push((refs.len() - 1, encode_diff(&[])));
            }
        }
        progress(done + 1);
    }
    (refs, chosen, identical)
}

/// The cheapest diff found of `p` against the references most like it:
/// (reference, cost in lines, hunks).  A line-by-line diff against the
/// most similar one first, then Myers against the three most similar,
/// the next ones only while no diff within `limit` is found.  Separate
/// because it is the costly search of the choice.
fn best_diff<'a>(
    nodes: &'a [(String, Prepared)],
    refs: &[usize],
    p: &'a Prepared,
    limit: usize,
) -> Option<(usize, usize, Diff<'a>)> {
    let mut cand: Vec<(f64, usize)> = refs
        .iter()
        .enumerate()
        .map(|(i, &r)| (similarity(&p.sketch, &nodes[r].1.sketch), i))
        .filter(|&(s, _)| s > 0.2)
        .collect();
    cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    if let Some(&(_, r)) = cand.first()
        && let Some(h) = positional_diff(&nodes[refs[r]].1, p, limit)
    {
        return Some((r, cost(&h), h));
    }
    let mut best: Option<(usize, usize, Diff)> = None;
    let new = p.all_lines();
    for &(_, r) in cand.iter().take(3) {
        let old = nodes[refs[r]].1.all_lines();
        let hunks = linediff::diff(&old, &new, PACK_DIFF_WORK);
        let c = cost(&hunks);
        if best.as_ref().is_none_or(|b| c < b.1) {
            // The hunks borrow `new` (lines of `p`) and `old`;
            // only their new lines and counts are kept.
            let hunks = hunks
                .into_iter()
                .map(|h| Hunk {
                    old_start: h.old_start,
                    new_start: h.new_start,
                    old: vec![&[][..]; h.old.len()],
                    new: h.new,
                })
                .collect();
            best = Some((r, c, hunks));
        }
        if c <= limit {
            break;
        }
    }
    best
}

/// One zstd frame of `data`, compressed at `level` with the dictionary
/// `dict` (raw content or trained; empty for none).
fn zstd_frame(data: &[u8], dict: &[u8], level: i32) -> Result<Vec<u8>, StoreError> {
    let mut c = zstd::bulk::Compressor::with_dictionary(level, dict)
        .map_err(|e| StoreError(format!("zstd: {e}")))?;
    c.compress(data)
        .map_err(|e| StoreError(format!("zstd: {e}")))
}

/// The dictionary for the blocks, trained on evenly spaced non-empty
/// diffs; empty when there are too few to train on.  Separate because
/// whether there is one decides how blocks are compressed.
fn train_dictionary(chosen: &[Choice]) -> Vec<u8> {
    let samples: Vec<&[u8]> = chosen
        .iter()
        .filter(|(_, d)| d.len() > 1)
        .map(|(_, d)| d.as_slice())
        .collect();
    let total: usize = samples.iter().map(|s| s.len()).sum();
    if samples.len() >= 64 && total >= 16 * 1024 {
        let step = total.div_ceil(DICT_TRAIN).max(1);
        let train: Vec<&[u8]> = samples.iter().step_by(step).copied().collect();
        let train_total: usize = train.iter().map(|s| s.len()).sum();
        zstd::dict::from_samples(&train, (train_total / DICT_FRACTION).clamp(1024, DICT_MAX))
            .unwrap_or_default()
    } else {
        Vec::new()
    }
}

/// Where a reference is: (group, offset in it, squeezed length, size of
/// the document).
type RefPlace = (usize, usize, usize, usize);

/// The references' squeezed documents in groups of about [`REF_GROUP`]
/// bytes (each one frame), and where each reference is.  Separate
/// because both the group frames and the node tables (sizes relative to
/// the reference's) read it.
///
/// # Errors
///
/// A group larger than [`MAX_FRAME`].
fn group_references(
    nodes: &[(String, Prepared)],
    refs: &[usize],
) -> Result<(Vec<Vec<u8>>, Vec<RefPlace>), StoreError> {
    let mut groups: Vec<Vec<u8>> = vec![Vec::new()];
    let mut ref_places = Vec::new();
    for &r in refs {
        let raw = &nodes[r].1.joined;
        if !groups.last().unwrap().is_empty()
            && groups.last().unwrap().len() + raw.len() > REF_GROUP
        {
            groups.push(Vec::new());
        }
        let gi = groups.len() - 1;
        let g = &mut groups[gi];
        ref_places.push((gi, g.len(), raw.len(), nodes[r].1.len));
        g.extend_from_slice(raw);
    }
    if groups.iter().any(|g| g.len() > MAX_FRAME) {
        return Err(StoreError(format!(
            "a topology is too large for the store (more than {} MiB once squeezed)",
            MAX_FRAME >> 20
        )));
    }
    Ok((groups, ref_places))
}

/// A block of nodes: its first node, its node table and its diffs.
type NodeBlock = (usize, Vec<u8>, Vec<u8>);

/// The blocks of nodes in name order, each up to about [`BLOCK`] bytes:
/// per node its name (sharing a prefix with the previous one in the
/// block), reference, diff length and size relative to its reference's,
/// then the diffs.  Separate because it is the node table's encoding.
fn node_blocks(
    nodes: &[(String, Prepared)],
    chosen: &[Choice],
    ref_places: &[RefPlace],
) -> Vec<NodeBlock> {
    let mut blocks: Vec<NodeBlock> = Vec::new();
    for (i, ((name, p), (r, diff))) in nodes.iter().zip(chosen).enumerate() {
        let full = blocks
            .last()
            .is_none_or(|(_, t, d)| t.len() + d.len() + diff.len() + name.len() + 16 > BLOCK);
        if full {
            blocks.push((i, Vec::new(), Vec::new()));
        }
        let (first, table, diffs) = blocks.last_mut().unwrap();
        let prev = if *first == i {
            ""
        } else {
            nodes[i - 1].0.as_str()
        };
        let shared = prev
            .bytes()
            .zip(name.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        put(table, shared as u64);
        put(table, (name.len() - shared) as u64);
        table.extend_from_slice(&name.as_bytes()[shared..]);
        put(table, *r as u64);
        put(table, diff.len() as u64);
        put(table, zigzag(p.len as i64 - ref_places[*r].3 as i64));
        diffs.extend_from_slice(diff);
    }
    blocks
}

/// The file being written and its index (compressed last, after the
/// frames it locates).
struct Output {
    file: Vec<u8>,
    index: Vec<u8>,
}

impl Output {
    /// Appends the dictionary (stored raw) and its index entry.
    fn put_dictionary(&mut self, dict: &[u8]) {
        put(&mut self.index, self.file.len() as u64);
        put(&mut self.index, dict.len() as u64);
        put(&mut self.index, u64::from(crc32fast::hash(dict)));
        self.file.extend_from_slice(dict);
    }

    /// Compresses and appends the reference groups, indexes them and the
    /// references' places; returns the compressed bytes.
    fn put_reference_groups(
        &mut self,
        groups: &[Vec<u8>],
        ref_places: &[RefPlace],
    ) -> Result<usize, StoreError> {
        let compressed: Result<Vec<Vec<u8>>, StoreError> =
            par_map(groups, |g| zstd_frame(g, &[], LEVEL))
                .into_iter()
                .collect();
        let mut bytes = 0;
        put(&mut self.index, groups.len() as u64);
        for (g, f) in groups.iter().zip(compressed?) {
            bytes += f.len();
            put(&mut self.index, self.file.len() as u64);
            put(&mut self.index, f.len() as u64);
            put(&mut self.index, g.len() as u64);
            put(&mut self.index, u64::from(crc32fast::hash(g)));
            self.file.extend_from_slice(&f);
        }
        put(&mut self.index, ref_places.len() as u64);
        for &(g, at, len, size) in ref_places {
            put(&mut self.index, g as u64);
            put(&mut self.index, at as u64);
            put(&mut self.index, len as u64);
            put(&mut self.index, size as u64);
        }
        Ok(bytes)
    }

    /// Compresses and appends the blocks of nodes, each with the trained
    /// dictionary or its reference group (`block_dicts`), and indexes
    /// them; returns the compressed bytes.
    ///
    /// # Errors
    ///
    /// A block larger than [`MAX_FRAME`], or a compression failure.
    fn put_blocks(
        &mut self,
        nodes: &[(String, Prepared)],
        blocks: &[NodeBlock],
        block_dicts: &[Option<usize>],
        groups: &[Vec<u8>],
        dict: &[u8],
    ) -> Result<usize, StoreError> {
        let raws: Vec<Vec<u8>> = blocks
            .iter()
            .map(|(_, t, d)| [t.as_slice(), d.as_slice()].concat())
            .collect();
        if raws.iter().any(|r| r.len() > MAX_FRAME) {
            return Err(StoreError(format!(
                "a topology's diff is too large for the store (more than {} MiB)",
                MAX_FRAME >> 20
            )));
        }
        let jobs: Vec<usize> = (0..raws.len()).collect();
        let compressed: Result<Vec<Vec<u8>>, StoreError> = par_map(&jobs, |&b| {
            zstd_frame(
                &raws[b],
                block_dicts[b].map_or(dict, |g| groups[g].as_slice()),
                BLOCK_LEVEL,
            )
        })
        .into_iter()
        .collect();
        let mut bytes = 0;
        put(&mut self.index, blocks.len() as u64);
        for (k, (raw, f)) in raws.iter().zip(compressed?).enumerate() {
            let first = &nodes[blocks[k].0].0;
            let count = blocks.get(k + 1).map_or(nodes.len(), |b| b.0) - blocks[k].0;
            bytes += f.len();
            put(&mut self.index, first.len() as u64);
            self.index.extend_from_slice(first.as_bytes());
            put(&mut self.index, count as u64);
            put(&mut self.index, block_dicts[k].map_or(0, |g| g as u64 + 1));
            put(&mut self.index, self.file.len() as u64);
            put(&mut self.index, f.len() as u64);
            put(&mut self.index, raw.len() as u64);
            put(&mut self.index, u64::from(crc32fast::hash(raw)));
            self.file.extend_from_slice(&f);
        }
        Ok(bytes)
    }

    /// Compresses and appends the index and fills the header.
    fn finish(mut self) -> Result<Vec<u8>, StoreError> {
        let f = zstd_frame(&self.index, &[], LEVEL)?;
        append_index(&mut self.file, &self.index, &f);
        Ok(self.file)
    }
}

/// Appends the compressed index `frame` of `index` to `file` and fills
/// the header at its start: magic, version, index length, place, frame
/// length and CRC.
fn append_index(file: &mut Vec<u8>, index: &[u8], frame: &[u8]) {
    let index_at = file.len();
    file.extend_from_slice(frame);
    file[0..8].copy_from_slice(MAGIC);
    file[8..12].copy_from_slice(&VERSION.to_le_bytes());
    file[12..16].copy_from_slice(&(index.len() as u32).to_le_bytes());
    file[16..24].copy_from_slice(&(index_at as u64).to_le_bytes());
    file[24..28].copy_from_slice(&(frame.len() as u32).to_le_bytes());
    file[28..32].copy_from_slice(&crc32fast::hash(frame).to_le_bytes());
}

// ------------------------------------------------------------ reading

/// Where the bytes of a store come from: a file read piece by piece
/// (so that getting one node reads only what it needs) or memory.
pub enum Source {
    /// An open store file, read at the offsets the index gives.
    File(File),
    /// The whole store, already in memory.
    Memory(Vec<u8>),
}

impl Source {
    fn read(&self, at: u64, len: usize) -> Result<Vec<u8>, StoreError> {
        match self {
            Source::File(f) => {
                let mut buf = vec![0u8; len];
                f.read_exact_at(&mut buf, at)
                    .map_err(|e| corrupt(format!("cannot read {len} bytes at offset {at}: {e}")))?;
                Ok(buf)
            }
            Source::Memory(m) => usize::try_from(at)
                .ok()
                .and_then(|a| m.get(a..a.checked_add(len)?))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| {
                    corrupt(format!(
                        "{len} bytes at offset {at} lie past the end of the file"
                    ))
                }),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    at: u64,
    len: usize,
    raw: usize,
    crc: u32,
}

#[derive(Clone, Copy, Debug)]
struct Place {
    group: usize,
    at: usize,
    len: usize,
    /// The size of the reference's XML document.
    size: usize,
}

/// A block of nodes: the first name in it, how many, its frame.
#[derive(Clone, Debug)]
struct Block {
    first: String,
    count: usize,
    /// The reference group it uses as its dictionary, if any.
    group_dict: Option<usize>,
    frame: Frame,
}

/// A node's fields as its block's table gives them.
#[derive(Clone, Copy)]
struct Row {
    size: usize,
    reference: usize,
    at: usize,
    len: usize,
}

/// One node of a store, as its index lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The node's name.
    pub name: String,
    /// The size of its XML document.
    pub size: usize,
    /// The reference it is stored against.
    pub reference: usize,
    block: usize,
    /// Where its diff is in the block, decompressed.
    at: usize,
    len: usize,
}

type Cached = Option<(usize, std::rc::Rc<Vec<u8>>)>;

/// An open store.
pub struct Store {
    source: Source,
    /// The file's size, which bounds what listing it may expand.
    file_len: u64,
    dict: Vec<u8>,
    groups: Vec<Frame>,
    refs: Vec<Place>,
    blocks: Vec<Block>,
    /// The last group and block decompressed, for reading many nodes.
    cache: [Cached; 2],
    /// Decompression contexts: without dictionary, with the blocks'.
    plain: zstd::bulk::Decompressor<'static>,
    with_dict: Option<zstd::bulk::Decompressor<'static>>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("nodes", &self.len())
            .field("references", &self.refs.len())
            .field("blocks", &self.blocks.len())
            .finish()
    }
}

/// Decompresses a frame with `d` (a decompression context is kept per
/// store: making one per frame was a noticeable part of a get).
fn decompress(
    d: &mut zstd::bulk::Decompressor<'static>,
    data: &[u8],
    f: &Frame,
    what: &str,
) -> Result<Vec<u8>, StoreError> {
    // The frame's own declared size must be the index's, before
    // anything is allocated for it.
    if zstd::zstd_safe::get_frame_content_size(data).ok() != Some(Some(f.raw as u64)) {
        return Err(corrupt(format!("{what} is not a frame of {} bytes", f.raw)));
    }
    let out = d
        .decompress(data, f.raw)
        .map_err(|e| corrupt(format!("{what} does not decompress: {e}")))?;
    if out.len() != f.raw {
        return Err(corrupt(format!(
            "{what} decompresses to {} bytes, not {}",
            out.len(),
            f.raw
        )));
    }
    if crc32fast::hash(&out) != f.crc {
        return Err(corrupt(format!("{what} does not match its checksum")));
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Kind {
    Group = 0,
    Block = 1,
}

impl Store {
    /// Opens the store in the file at `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or is not a store of a supported version,
    /// or its index is corrupt.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        // A regular file only: a FIFO or device is refused at once.
        let (f, len) = wloc_trust::file::open_regular(path, u64::MAX)
            .map_err(|e| StoreError(format!("cannot open '{}': {}", path.display(), e.reason())))?;
        Store::from_source(Source::File(f), len)
            .map_err(|e| StoreError(format!("'{}': {e}", path.display())))
    }

    /// Opens a store held in memory.
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    pub fn from_bytes(data: Vec<u8>) -> Result<Store, StoreError> {
        let len = data.len() as u64;
        Store::from_source(Source::Memory(data), len)
    }

    fn from_source(source: Source, file_len: u64) -> Result<Store, StoreError> {
        if file_len < HEADER as u64 {
            return Err(StoreError(format!(
                "not a wloc topology store (only {file_len} bytes)"
            )));
        }
        let h = source.read(0, HEADER)?;
        if &h[0..8] != MAGIC {
            return Err(StoreError(
                "not a wloc topology store (it does not start with WLOCSTOR)".into(),
            ));
        }
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
        let version = u32_at(8);
        if version == 1 {
            return Err(StoreError(format!(
                "version 1 of the wloc topology store format is no longer read (only {VERSION}): make the store again from the topologies (wloc compress-dir or wloc store pack)"
            )));
        }
        if version != VERSION {
            return Err(StoreError(format!(
                "version {version} of the wloc topology store format is not supported (only {VERSION})"
            )));
        }
        let raw = u32_at(12) as usize;
        if raw > MAX_FRAME {
            return Err(corrupt(format!(
                "the index says it holds {raw} bytes (at most {MAX_FRAME})"
            )));
        }
        let at = u64::from_le_bytes(h[16..24].try_into().unwrap());
        let len = u32_at(24) as usize;
        if at.checked_add(len as u64).is_none_or(|e| e > file_len) {
            return Err(corrupt("the index lies past the end of the file"));
        }
        if !frame_fits(raw, len) {
            return Err(corrupt(format!(
                "the index says it holds {raw} bytes in a frame of {len} (at most {FRAME_SLACK} plus {FRAME_RATIO} per byte)"
            )));
        }
        let frame = source.read(at, len)?;
        if crc32fast::hash(&frame) != u32_at(28) {
            return Err(corrupt("the index does not match its checksum"));
        }
        let index = zstd::bulk::decompress(&frame, raw)
            .map_err(|e| corrupt(format!("the index does not decompress: {e}")))?;
        if index.len() != raw {
            return Err(corrupt("the index does not decompress to its size"));
        }
        let mut r = Reader {
            data: &index,
            at: 0,
            what: "index",
        };
        let frame_at = |r: &mut Reader| -> Result<Frame, StoreError> {
            let f = Frame {
                at: r.num()?,
                len: r.size()?,
                raw: r.size()?,
                crc: r.crc()?,
            };
            if f.at.checked_add(f.len as u64).is_none_or(|e| e > file_len) {
                return Err(corrupt("a frame lies past the end of the file"));
            }
            if !frame_fits(f.raw, f.len) {
                return Err(corrupt(format!(
                    "a frame says it holds {} bytes in {} (at most {MAX_FRAME}, and {FRAME_SLACK} plus {FRAME_RATIO} per byte)",
                    f.raw, f.len
                )));
            }
            Ok(f)
        };
        let dict_at = r.num()?;
        let dict_len = r.size()?;
        let dict_crc = r.crc()?;
        if dict_at
            .checked_add(dict_len as u64)
            .is_none_or(|e| e > file_len)
        {
            return Err(corrupt("the dictionary lies past the end of the file"));
        }
        let dict = source.read(dict_at, dict_len)?;
        if crc32fast::hash(&dict) != dict_crc {
            return Err(corrupt("the dictionary does not match its checksum"));
        }
        let n = r.count()?;
        let groups = (0..n)
            .map(|_| frame_at(&mut r))
            .collect::<Result<Vec<_>, _>>()?;
        let n = r.count()?;
        let mut refs = Vec::with_capacity(n);
        for _ in 0..n {
            let p = Place {
                group: r.size()?,
                at: r.size()?,
                len: r.size()?,
                size: r.size()?,
            };
            if groups.get(p.group).is_none_or(|g| p.at + p.len > g.raw) {
                return Err(corrupt("a reference lies outside its group"));
            }
            refs.push(p);
        }
        let n = r.count()?;
        let mut blocks: Vec<Block> = Vec::with_capacity(n);
        for _ in 0..n {
            let len = r.size()?;
            if len > MAX_NAME {
                return Err(corrupt(format!(
                    "a node name of the index is longer than {MAX_NAME} bytes"
                )));
            }
            let first = std::str::from_utf8(r.bytes(len)?)
                .map_err(|_| corrupt("a node name is not UTF-8"))?
                .to_string();
            let count = r.size()?;
            let g = r.size()?;
            if g > groups.len() {
                return Err(corrupt("a block names a missing reference group"));
            }
            let frame = frame_at(&mut r)?;
            if count == 0 || count > frame.raw {
                return Err(corrupt("a block of the index has a wrong count"));
            }
            if blocks.last().is_some_and(|b| b.first >= first) {
                return Err(corrupt("the node names are not in order"));
            }
            blocks.push(Block {
                first,
                count,
                group_dict: g.checked_sub(1),
                frame,
            });
        }
        if r.at != index.len() {
            return Err(corrupt("the index has trailing bytes"));
        }
        Ok(Store {
            source,
            file_len,
            dict,
            groups,
            refs,
            blocks,
            cache: [None, None],
            plain: zstd::bulk::Decompressor::new().map_err(|e| corrupt(format!("zstd: {e}")))?,
            with_dict: None,
        })
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.blocks.iter().map(|b| b.count).sum()
    }

    /// Whether the store holds no node.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The number of references.
    pub fn references(&self) -> usize {
        self.refs.len()
    }

    /// Walks the table of block `i`, calling `row` for each node in
    /// order with its name and its fields (`at` counted from the end of
    /// the table), and returns the table's length. The name is one buffer
    /// rewritten in place (a node name is the previous one's first bytes
    /// and its own), so the walk holds one name at a time, at most
    /// [`MAX_NAME`] bytes, however the names share their bytes.
    fn walk_block(
        &mut self,
        i: usize,
        mut row: impl FnMut(&str, Row) -> Result<(), StoreError>,
    ) -> Result<usize, StoreError> {
        let data = self.frame(Kind::Block, i)?;
        let b = &self.blocks[i];
        let next = self.blocks.get(i + 1).map(|b| b.first.as_str());
        let mut r = Reader {
            data: &data,
            at: 0,
            what: "block table",
        };
        let mut name: Vec<u8> = Vec::new();
        let mut at = 0usize;
        for k in 0..b.count {
            let shared = r.size()?;
            let rest = r.size()?;
            if shared > name.len() {
                return Err(corrupt("a node name shares more than the previous name"));
            }
            if shared.saturating_add(rest) > MAX_NAME {
                return Err(corrupt(format!(
                    "a node name is longer than {MAX_NAME} bytes"
                )));
            }
            let tail = r.bytes(rest)?;
            // Both names start with the same `shared` bytes: the new one
            // comes after the previous one when its own bytes do.
            let in_order = k == 0 || tail > &name[shared..];
            name.truncate(shared);
            name.extend_from_slice(tail);
            let text =
                std::str::from_utf8(&name).map_err(|_| corrupt("a node name is not UTF-8"))?;
            let reference = r.size()?;
            let len = r.size()?;
            let delta = unzigzag(r.num()?);
            let p = self.refs.get(reference).ok_or_else(|| {
                corrupt(format!("node '{}' names a missing reference", quote(text)))
            })?;
            let size = i64::try_from(p.size)
                .ok()
                .and_then(|s| s.checked_add(delta))
                .and_then(|s| usize::try_from(s).ok())
                .ok_or_else(|| corrupt(format!("node '{}' has an impossible size", quote(text))))?;
            if (k == 0 && text != b.first) || !in_order || next.is_some_and(|n| text >= n) {
                return Err(corrupt("the node names are not in order"));
            }
            row(
                text,
                Row {
                    size,
                    reference,
                    at,
                    len,
                },
            )?;
            at = at
                .checked_add(len)
                .ok_or_else(|| corrupt("a node diff is too large"))?;
        }
        // The diffs follow the table.
        let table = r.at;
        if table.checked_add(at) != Some(data.len()) {
            return Err(corrupt("the diffs of a block do not fill it"));
        }
        Ok(table)
    }

    /// The nodes of block `i`, from its table, each charged (name and
    /// entry) to `budget`.
    fn block_entries(&mut self, i: usize, budget: &mut usize) -> Result<Vec<Entry>, StoreError> {
        let mut entries: Vec<Entry> = Vec::new();
        let limit = self.list_budget();
        let table = self.walk_block(i, |name, r| {
            *budget = budget
                .checked_sub(name.len() + std::mem::size_of::<Entry>())
                .ok_or_else(|| {
                    corrupt(format!(
                        "its node names and entries take more than {limit} bytes ({LIST_SLACK} plus {LIST_RATIO} per byte of the file)"
                    ))
                })?;
            entries.push(Entry {
                name: name.to_string(),
                size: r.size,
                reference: r.reference,
                block: i,
                at: r.at,
                len: r.len,
            });
            Ok(())
        })?;
        for e in &mut entries {
            e.at += table;
        }
        Ok(entries)
    }

    /// The most [`Store::entries`] may hold (see [`LIST_SLACK`]).
    fn list_budget(&self) -> usize {
        let per_byte = usize::try_from(self.file_len)
            .unwrap_or(usize::MAX)
            .saturating_mul(LIST_RATIO);
        LIST_SLACK.saturating_add(per_byte)
    }

    /// Every node, in name order.
    ///
    /// # Errors
    ///
    /// A corrupt store, or one whose names and entries would take more
    /// than [`LIST_SLACK`] plus [`LIST_RATIO`] bytes per byte of the file.
    pub fn entries(&mut self) -> Result<Vec<Entry>, StoreError> {
        let mut budget = self.list_budget();
        let mut all = Vec::new();
        for i in 0..self.blocks.len() {
            all.extend(self.block_entries(i, &mut budget)?);
        }
        Ok(all)
    }

    /// The entry of the node `name` (or `name` without its `.xml`).
    ///
    /// # Errors
    ///
    /// A corrupt store.
    pub fn find(&mut self, name: &str) -> Result<Option<Entry>, StoreError> {
        for n in [name.to_string(), format!("{name}.xml")] {
            // The last block whose first name is not after `n`.
            let i = self
                .blocks
                .partition_point(|b| b.first.as_str() <= n.as_str());
            if i == 0 {
                continue;
            }
            // Only the matching name is copied.
            let mut found = None;
            let table = self.walk_block(i - 1, |name, r| {
                if name == n {
                    found = Some(Entry {
                        name: name.to_string(),
                        size: r.size,
                        reference: r.reference,
                        block: i - 1,
                        at: r.at,
                        len: r.len,
                    });
                }
                Ok(())
            })?;
            if let Some(mut e) = found {
                e.at += table;
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    fn frame(&mut self, kind: Kind, i: usize) -> Result<std::rc::Rc<Vec<u8>>, StoreError> {
        if let Some((c, data)) = &self.cache[kind as usize]
            && *c == i
        {
            return Ok(data.clone());
        }
        let group_dict = match kind {
            Kind::Block => match self.blocks[i].group_dict {
                Some(g) => Some(self.frame(Kind::Group, g)?),
                None => None,
            },
            Kind::Group => None,
        };
        let (f, what, dict): (Frame, &str, &[u8]) = match kind {
            Kind::Group => (self.groups[i], "a group of references", &[]),
            Kind::Block => (
                self.blocks[i].frame,
                "a block of nodes",
                group_dict
                    .as_deref()
                    .map_or(self.dict.as_slice(), |g| g.as_slice()),
            ),
        };
        let bytes = self.source.read(f.at, f.len)?;
        let data = if dict.is_empty() {
            decompress(&mut self.plain, &bytes, &f, what)?
        } else if matches!(kind, Kind::Block) && self.blocks[i].group_dict.is_none() {
            if self.with_dict.is_none() {
                self.with_dict = Some(
                    zstd::bulk::Decompressor::with_dictionary(&self.dict)
                        .map_err(|e| corrupt(format!("the dictionary does not load: {e}")))?,
                );
            }
            decompress(self.with_dict.as_mut().unwrap(), &bytes, &f, what)?
        } else {
            let mut d = zstd::bulk::Decompressor::with_dictionary(dict)
                .map_err(|e| corrupt(format!("zstd: {e}")))?;
            decompress(&mut d, &bytes, &f, what)?
        };
        let data = std::rc::Rc::new(data);
        self.cache[kind as usize] = Some((i, data.clone()));
        Ok(data)
    }

    /// The canonical XML document of the node `name`.
    ///
    /// # Errors
    ///
    /// No such node, or corrupt data.
    pub fn get(&mut self, name: &str) -> Result<String, StoreError> {
        let e = self.find(name)?.ok_or_else(|| {
            StoreError(format!("no topology named '{}' in the store", quote(name)))
        })?;
        self.get_entry(&e)
    }

    /// The canonical XML document of the node of `e` (from
    /// [`Store::entries`]).
    ///
    /// # Errors
    ///
    /// Corrupt data.
    pub fn get_entry(&mut self, e: &Entry) -> Result<String, StoreError> {
        let p = *self.refs.get(e.reference).ok_or_else(|| {
            corrupt(format!(
                "node '{}' names a missing reference",
                quote(&e.name)
            ))
        })?;
        if e.block >= self.blocks.len() {
            return Err(corrupt(format!(
                "node '{}' names a missing block",
                quote(&e.name)
            )));
        }
        let group = self.frame(Kind::Group, p.group)?;
        let block = self.frame(Kind::Block, e.block)?;
        let diff = e
            .at
            .checked_add(e.len)
            .and_then(|end| block.get(e.at..end))
            .ok_or_else(|| corrupt(format!("node '{}' lies outside its block", quote(&e.name))))?;
        let reference =
            p.at.checked_add(p.len)
                .and_then(|end| group.get(p.at..end))
                .ok_or_else(|| {
                    corrupt(format!(
                        "node '{}' names a reference outside its group",
                        quote(&e.name)
                    ))
                })?;
        // The declared size is checked before anything is decoded, then
        // is the decoder's budget: it stops as soon as the text would be
        // longer.
        let squeezed = reference.len() + diff.len();
        if e.size > doc_limit(squeezed) {
            return Err(corrupt(format!(
                "node '{}' says its document holds {} bytes, more than {squeezed} squeezed bytes may hold ({})",
                quote(&e.name),
                e.size,
                doc_limit(squeezed)
            )));
        }
        let mut out = squeeze::Unsqueezer::new(e.size, e.size);
        decode_into(reference, diff, &mut out)
            .map_err(|err| StoreError(format!("{err} (node '{}')", quote(&e.name))))?;
        let text = out.finish().map_err(|_| {
            corrupt(format!(
                "the document of '{}' does not decode",
                quote(&e.name)
            ))
        })?;
        if text.len() != e.size {
            return Err(corrupt(format!(
                "the document of '{}' does not have its recorded size",
                quote(&e.name)
            )));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(host: &str, extra: &str) -> String {
        let mut s = String::from("<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n");
        for i in 0..40 {
            s.push_str(&format!(
                "  <object type=\"PU\" os_index=\"{i}\" cpuset=\"0x{i:x}\" complete_cpuset=\"0x{i:x}\" gp_index=\"{i}\" id=\"obj{i}\"/>\n"
            ));
        }
        s.push_str(extra);
        s.push_str(&format!(
            "  <info name=\"HostName\" value=\"{host}\"/>\n</topology>\n"
        ));
        s
    }

    fn sample() -> Vec<(String, String)> {
        let mut v: Vec<_> = (0..200)
            .map(|i| (format!("n{i:03}.xml"), doc(&format!("n{i:03}"), "")))
            .collect();
        v.push(("same.xml".into(), doc("x", "  <object type=\"Misc\"/>\n")));
        v.push(("other.xml".into(), "completely\ndifferent\n".into()));
        v.push(("extra.xml".into(), doc("x", "  <object type=\"Misc\"/>\n")));
        v
    }

    #[test]
    fn packs_and_gets_every_node_in_any_order() {
        let nodes = sample();
        let (bytes, stats) = pack(nodes.clone(), |_| {}).unwrap();
        assert_eq!(stats.nodes, nodes.len());
        assert_eq!(stats.references, 2);
        assert_eq!(stats.identical, 1);
        let mut rev = nodes.clone();
        rev.reverse();
        assert_eq!(pack(rev, |_| {}).unwrap().0, bytes, "independent of order");
        let mut s = Store::from_bytes(bytes).unwrap();
        assert_eq!(s.entries().unwrap().len(), nodes.len());
        assert_eq!(s.len(), nodes.len());
        for (name, text) in nodes.iter().rev() {
            assert_eq!(&s.get(name).unwrap(), text);
        }
        assert_eq!(s.get("n005").unwrap(), nodes[5].1);
        assert!(
            s.get("nope")
                .unwrap_err()
                .0
                .contains("no topology named 'nope'")
        );
    }

    #[test]
    fn many_blocks_with_a_trained_dictionary_read_back() {
        // Enough distinct diffs for a trained dictionary and many blocks.
        let nodes: Vec<(String, String)> = (0..1500u64)
            .map(|i| {
                let mut extra = String::new();
                for k in 0..6u64 {
                    let x = (i * 2_654_435_761 + k * 40_503).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    extra.push_str(&format!(
                        "  <info name=\"Address{k}\" value=\"{:016x}\"/>\n",
                        x
                    ));
                }
                if i % 50 == 7 {
                    extra.push_str("  <object type=\"Misc\" name=\"extra\"/>\n");
                }
                (
                    format!("node{i:05}.xml"),
                    doc(&format!("node{i:05}"), &extra),
                )
            })
            .collect();
        let (bytes, stats) = pack(nodes.clone(), |_| {}).unwrap();
        assert!(stats.blocks > 2, "{stats:?}");
        assert!(stats.dictionary_bytes > 0, "{stats:?}");
        let mut s = Store::from_bytes(bytes.clone()).unwrap();
        assert_eq!(s.len(), nodes.len());
        let entries = s.entries().unwrap();
        assert_eq!(entries.len(), nodes.len());
        for (e, (name, text)) in entries.iter().zip(&nodes) {
            assert_eq!(&e.name, name);
            assert_eq!(e.size, text.len());
        }
        // Every node, by name (block boundaries included), fresh or not.
        for (name, text) in nodes.iter().step_by(7) {
            assert_eq!(&s.get(name).unwrap(), text);
            let mut fresh = Store::from_bytes(bytes.clone()).unwrap();
            assert_eq!(&fresh.get(name).unwrap(), text);
        }
        let mut shuffled = nodes.clone();
        shuffled.sort_by_key(|(n, _)| crc32fast::hash(n.as_bytes()));
        assert_eq!(pack(shuffled, |_| {}).unwrap().0, bytes);
        // A damaged byte anywhere (dictionary, groups, blocks, index):
        // errors, never a wrong document.
        for i in (HEADER..bytes.len()).step_by(397) {
            let mut v = bytes.clone();
            v[i] ^= 0x41;
            if let Ok(mut s) = Store::from_bytes(v) {
                for (name, text) in nodes.iter().step_by(97) {
                    if let Ok(t) = s.get(name) {
                        assert_eq!(&t, text, "byte {i} damaged");
                    }
                }
            }
        }
    }

    #[test]
    fn version_1_stores_are_refused_clearly() {
        let (mut bytes, _) = pack(sample(), |_| {}).unwrap();
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        let e = Store::from_bytes(bytes).unwrap_err();
        assert!(
            e.0.contains("version 1") && e.0.contains("make the store again"),
            "{e}"
        );
    }

    #[test]
    fn huge_declared_sizes_are_refused_before_allocating() {
        let (mut bytes, _) = pack(sample(), |_| {}).unwrap();
        bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = Store::from_bytes(bytes).unwrap_err();
        assert!(e.0.contains("the index says it holds"), "{e}");
    }

    /// A store written field by field, as a hostile writer could: one
    /// reference group holding `reference` (a document of `ref_size`
    /// bytes, it says), one block of `count` nodes whose first is `first`
    /// holding `block` (the node table, then the diffs).
    fn handmade(reference: &[u8], ref_size: u64, first: &str, count: u64, block: &[u8]) -> Vec<u8> {
        let frame = |data: &[u8]| zstd::bulk::compress(data, 3).unwrap();
        let mut file = vec![0u8; HEADER];
        let mut index = Vec::new();
        // No dictionary.
        for v in [HEADER as u64, 0, 0] {
            put(&mut index, v);
        }
        // A frame's index entry: place, length, raw length and CRC.
        let entry = |file: &[u8], frame: &[u8], raw: &[u8]| {
            [
                file.len() as u64,
                frame.len() as u64,
                raw.len() as u64,
                u64::from(crc32fast::hash(raw)),
            ]
        };
        let g = frame(reference);
        let raw = reference.len() as u64;
        put(&mut index, 1);
        for v in entry(&file, &g, reference) {
            put(&mut index, v);
        }
        file.extend_from_slice(&g);
        for v in [1, 0, 0, raw, ref_size] {
            put(&mut index, v);
        }
        let b = frame(block);
        put(&mut index, 1);
        put(&mut index, first.len() as u64);
        index.extend_from_slice(first.as_bytes());
        put(&mut index, count);
        put(&mut index, 0);
        for v in entry(&file, &b, block) {
            put(&mut index, v);
        }
        file.extend_from_slice(&b);
        let f = frame(&index);
        append_index(&mut file, &index, &f);
        file
    }

    /// The table of one node `name` against reference 0, identical to it,
    /// and its empty diff.
    fn one_node(name: &str) -> Vec<u8> {
        let mut t = Vec::new();
        put(&mut t, 0);
        put(&mut t, name.len() as u64);
        t.extend_from_slice(name.as_bytes());
        for v in [0, 1, 0] {
            put(&mut t, v);
        }
        t.push(0);
        t
    }

    #[test]
    fn handmade_stores_read_like_packed_ones() {
        let text = "<topology>\n</topology>\n";
        let squeezed = squeeze::squeeze(text).join(&b'\n');
        let v = handmade(&squeezed, text.len() as u64, "n", 1, &one_node("n"));
        assert_eq!(Store::from_bytes(v).unwrap().get("n").unwrap(), text);
    }

    #[test]
    fn a_doubling_document_is_refused_before_it_grows() {
        // 40 markers, each of which once doubled the line: 2^40 times.
        let mut line = b"\x80<object cpuset=\"0x1\"".to_vec();
        line.extend(std::iter::repeat_n(0x02u8, 40));
        let t = std::time::Instant::now();
        // It says what the doubling would make: refused unread.
        let v = handmade(&line, 1 << 39, "n", 1, &one_node("n"));
        let e = Store::from_bytes(v).unwrap().get("n").unwrap_err();
        assert!(
            e.0.contains("says its document holds 549755813888 bytes"),
            "{e}"
        );
        // It says less: the decoder refuses the second marker.
        let v = handmade(&line, 4000, "n", 1, &one_node("n"));
        let e = Store::from_bytes(v).unwrap().get("n").unwrap_err();
        assert!(
            e.0.contains("does not decode") && e.0.contains("node 'n'"),
            "{e}"
        );
        // Lines of 252 spaces each, declared at the most they may hold:
        // read up to the declared size, then refused.
        let lines = vec![0xfe_u8; 4096];
        let lines: Vec<u8> = lines.iter().flat_map(|&b| [b, b'\n']).collect();
        let limit = doc_limit(lines.len());
        let v = handmade(&lines, limit as u64, "n", 1, &one_node("n"));
        let e = Store::from_bytes(v).unwrap().get("n").unwrap_err();
        assert!(e.0.contains("longer than its recorded size"), "{e}");
        assert!(t.elapsed().as_secs() < 2);
    }

    #[test]
    fn names_sharing_their_bytes_cost_one_name_at_a_time() {
        // Each name is the previous one and one more byte: 5,000 of them
        // are 12.5 MB of names from a block of 35 KB.
        let count = 5000u64;
        let mut table = Vec::new();
        for k in 0..count {
            for v in [k, 1] {
                put(&mut table, v);
            }
            table.push(b'a');
            for v in [0, 1, 0] {
                put(&mut table, v);
            }
        }
        table.extend(std::iter::repeat_n(0u8, count as usize));
        let text = "<topology/>";
        let squeezed = squeeze::squeeze(text).join(&b'\n');
        let v = handmade(&squeezed, text.len() as u64, "a", count, &table);
        let mut s = Store::from_bytes(v).unwrap();
        let e = s.entries().unwrap_err();
        assert!(e.0.contains("longer than 1024 bytes"), "{e}");
        let e = s.get(&"a".repeat(3)).unwrap_err();
        assert!(e.0.contains("longer than 1024 bytes"), "{e}");
        // Up to the longest name, the store reads.
        let mut table = Vec::new();
        for k in 0..MAX_NAME as u64 {
            for v in [k, 1] {
                put(&mut table, v);
            }
            table.push(b'a');
            for v in [0, 1, 0] {
                put(&mut table, v);
            }
        }
        table.extend(std::iter::repeat_n(0u8, MAX_NAME));
        let v = handmade(&squeezed, text.len() as u64, "a", MAX_NAME as u64, &table);
        let mut s = Store::from_bytes(v).unwrap();
        assert_eq!(s.entries().unwrap().len(), MAX_NAME);
        assert_eq!(s.get(&"a".repeat(MAX_NAME)).unwrap(), text);
        // The listing's budget is charged per name and entry.
        let mut budget = 100 * 1024;
        let e = s.block_entries(0, &mut budget).unwrap_err();
        assert!(e.0.contains("take more than"), "{e}");
    }

    #[test]
    fn frames_cannot_declare_much_more_than_they_hold() {
        // 64 MiB of one line of zeros is a frame of a few KB.
        let big = vec![b'0'; 64 << 20];
        let v = handmade(&big, 1, "n", 1, &one_node("n"));
        let e = Store::from_bytes(v).unwrap_err();
        assert!(e.0.contains("a frame says it holds 67108864 bytes"), "{e}");
        assert!(frame_fits(FRAME_SLACK, 0) && !frame_fits(FRAME_SLACK + 1, 0));
        assert!(frame_fits(MAX_FRAME, MAX_FRAME) && !frame_fits(MAX_FRAME + 1, MAX_FRAME));
    }

    #[test]
    fn the_writer_refuses_what_readers_refuse() {
        let e = pack(vec![("x".repeat(MAX_NAME + 1), "<a/>".into())], |_| {}).unwrap_err();
        assert!(
            e.0.contains("longer than 1024 bytes") && e.0.len() < 400,
            "{e}"
        );
        // Lines of 252 spaces squeeze 126 times.
        let deep = format!("{}x\n", " ".repeat(252)).repeat(10_000);
        let e = pack(vec![("n".into(), deep)], |_| {}).unwrap_err();
        assert!(e.0.contains("too large for the store"), "{e}");
    }

    #[test]
    fn quoted_names_are_short() {
        assert_eq!(quote("abc"), "abc");
        let long = "é".repeat(300);
        let q = quote(&long);
        assert!(q.len() < 230 && q.ends_with("(600 bytes)"), "{q}");
    }

    #[test]
    fn zigzag_round_trips() {
        for v in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        let e = pack(
            vec![("a".into(), "x".into()), ("a".into(), "y".into())],
            |_| {},
        )
        .unwrap_err();
        assert!(e.0.contains("two topologies are named 'a'"));
    }

    #[test]
    fn corrupt_stores_give_errors() {
        let (bytes, _) = pack(sample(), |_| {}).unwrap();
        assert!(
            Store::from_bytes(b"hello".to_vec())
                .unwrap_err()
                .0
                .contains("not a wloc topology store")
        );
        let mut v = bytes.clone();
        v[8] = 7;
        assert!(Store::from_bytes(v).unwrap_err().0.contains("version 7"));
        let mut v = bytes.clone();
        let n = v.len();
        v[n - 3] ^= 0xff;
        assert!(Store::from_bytes(v).unwrap_err().0.contains("checksum"));
        // Damage every byte of the body in turn: errors, never panics, and
        // never a wrong document.
        let nodes = sample();
        for i in (HEADER..bytes.len()).step_by(11) {
            let mut v = bytes.clone();
            v[i] ^= 0x5a;
            if let Ok(mut s) = Store::from_bytes(v) {
                for (name, text) in &nodes {
                    if let Ok(t) = s.get(name) {
                        assert_eq!(&t, text);
                    }
                }
            }
        }
    }
}
