//! A single file holding many topologies (one per node of a cluster), with
//! random access to any one of them.
//!
//! # How it is made
//!
//! Each topology is kept as its canonical XML document (what `wloc ls --of
//! xml` writes), squeezed ([`crate::squeeze`]). Nodes are taken in name
//! order, so the file does not depend on the order they were given in.
//! A node becomes a *reference* unless one of the references already
//! chosen is similar enough (a MinHash sketch of its lines picks the
//! candidates, a Myers line diff decides): then only its line diff
//! against that reference is kept. References are compressed together
//! with zstd in groups of at most [`REF_GROUP`] bytes; node diffs, sorted
//! by reference, in blocks of at most [`BLOCK`] bytes, with a zstd
//! dictionary trained on the diffs themselves when there are enough of
//! them. Getting one node reads the index, one reference group and one
//! block.
//!
//! # Layout (version 1, little-endian)
//!
//! | offset | size | what |
//! |---|---|---|
//! | 0 | 8 | `WLOCSTOR` |
//! | 8 | 4 | format version (1) |
//! | 12 | 4 | size of the index once decompressed |
//! | 16 | 8 | offset of the index (a zstd frame) |
//! | 24 | 4 | size of the index frame |
//! | 28 | 4 | CRC-32 of the index frame |
//! | 32 | | dictionary, reference groups and blocks (zstd frames with checksums) |
//!
//! The index (LEB128 integers): the dictionary's offset and size; for each
//! reference group its offset, frame size and size decompressed; for each
//! reference its group, offset and size in the group; the same for blocks
//! as for groups; then for each node, in name order: its name (size and
//! UTF-8 bytes), reference, block, offset and size of its diff in the
//! block, size and CRC-32 of its document. A node's diff is a list of
//! changes: number of changes, then for each the number of reference
//! lines kept before it, of lines removed, of lines added, and the added
//! lines, each ended by `\n`.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

use crate::linediff::{self, Hunk};
use crate::squeeze;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"WLOCSTOR";
/// The format version written and read.
pub const VERSION: u32 = 1;
const HEADER: usize = 32;
/// Largest reference group, decompressed.
pub const REF_GROUP: usize = 256 * 1024;
/// Largest block of node diffs, decompressed.
pub const BLOCK: usize = 32 * 1024;
const LEVEL: i32 = 19;
/// A node whose diff changes more than this fraction of its lines
/// becomes a reference.
const NEW_REF_FRACTION: f64 = 0.3;
const SKETCH: usize = 64;
/// Node entries per frame of the index.
const CHUNK: usize = 128;
/// Largest dictionary for the blocks.
const DICT_MAX: usize = 16 * 1024;

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
fn encode_diff(hunks: &[Hunk<Vec<u8>>]) -> Vec<u8> {
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

/// The squeezed lines of a node from its reference's and its diff.
fn decode_diff(reference: &[&[u8]], diff: &[u8]) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut r = Reader {
        data: diff,
        at: 0,
        what: "node diff",
    };
    let n = r.count()?;
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(reference.len() + 8);
    let mut at = 0usize;
    for _ in 0..n {
        let keep = r.size()?;
        let del = r.size()?;
        let add = r.count()?;
        let end = at
            .checked_add(keep)
            .and_then(|x| x.checked_add(del))
            .filter(|&e| e <= reference.len())
            .ok_or_else(|| corrupt("a node diff goes past the end of its reference"))?;
        out.extend(reference[at..at + keep].iter().map(|l| l.to_vec()));
        for _ in 0..add {
            let rest = &r.data[r.at..];
            let len = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| corrupt("a line of a node diff is not ended"))?;
            out.push(rest[..len].to_vec());
            r.at += len + 1;
        }
        at = end;
    }
    if r.at != diff.len() {
        return Err(corrupt("a node diff has trailing bytes"));
    }
    out.extend(reference[at..].iter().map(|l| l.to_vec()));
    Ok(out)
}

// ------------------------------------------------------------ similarity

fn fnv(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The SKETCH smallest distinct line hashes (bottom-k MinHash).
fn sketch(lines: &[Vec<u8>]) -> Vec<u64> {
    let mut h: Vec<u64> = lines.iter().map(|l| fnv(l)).collect();
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
    pub nodes: usize,
    pub references: usize,
    /// Nodes identical to their reference.
    pub identical: usize,
    pub blocks: usize,
    pub dictionary_bytes: usize,
    /// Compressed references.
    pub reference_bytes: usize,
    /// Compressed node diffs.
    pub diff_bytes: usize,
    /// The whole file.
    pub bytes: usize,
}

struct Node {
    name: String,
    len: usize,
    crc: u32,
    reference: usize,
    diff: Vec<u8>,
}

/// A diff of squeezed lines.
type Diff = Vec<Hunk<Vec<u8>>>;

/// What is computed of each node before references are chosen.
struct Prepared {
    lines: Vec<Vec<u8>>,
    len: usize,
    crc: u32,
    whole: u64,
    sketch: Vec<u64>,
}

fn prepare(text: &str) -> Prepared {
    let lines = squeeze::squeeze(text);
    let sketch = sketch(&lines);
    Prepared {
        len: text.len(),
        crc: crc32fast::hash(text.as_bytes()),
        whole: fnv(text.as_bytes()),
        lines,
        sketch,
    }
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
fn positional_diff(old: &[Vec<u8>], new: &[Vec<u8>], limit: usize) -> Option<Vec<Hunk<Vec<u8>>>> {
    if old.len() != new.len() {
        return None;
    }
    let mut hunks: Vec<Hunk<Vec<u8>>> = Vec::new();
    let mut changed = 0;
    for (i, (a, b)) in old.iter().zip(new).enumerate() {
        if a == b {
            continue;
        }
        changed += 1;
        if changed > limit {
            return None;
        }
        match hunks.last_mut() {
            Some(h) if h.old_start + h.old.len() == i => {
                h.old.push(a.clone());
                h.new.push(b.clone());
            }
            _ => hunks.push(Hunk {
                old_start: i,
                new_start: i,
                old: vec![a.clone()],
                new: vec![b.clone()],
            }),
        }
    }
    Some(hunks)
}

/// Builds a store of `nodes` (name, canonical XML document); `progress`
/// is called with the number of nodes done.
///
/// # Errors
///
/// Two nodes with the same name, or a compression failure.
pub fn pack(
    mut nodes: Vec<(String, String)>,
    mut progress: impl FnMut(usize),
) -> Result<(Vec<u8>, PackStats), StoreError> {
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = nodes.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(StoreError(format!("two topologies are named '{}'", w[0].0)));
    }
    let prepared = par_map(&nodes, |(_, text)| prepare(text));
    // (node index of the reference, its sketch)
    let mut refs: Vec<usize> = Vec::new();
    let mut by_text: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut out_nodes: Vec<Node> = Vec::with_capacity(nodes.len());
    let mut stats = PackStats {
        nodes: nodes.len(),
        ..PackStats::default()
    };
    for (done, ((name, _), p)) in nodes.iter().zip(&prepared).enumerate() {
        let node = |reference, diff| Node {
            name: name.clone(),
            len: p.len,
            crc: p.crc,
            reference,
            diff,
        };
        // Identical to a reference: an empty diff.
        if let Some(&r) = by_text
            .get(&p.whole)
            .and_then(|c| c.iter().find(|&&r| prepared[refs[r]].lines == p.lines))
        {
            stats.identical += 1;
            out_nodes.push(node(r, encode_diff(&[])));
            progress(done + 1);
            continue;
        }
        let mut cand: Vec<(f64, usize)> = refs
            .iter()
            .enumerate()
            .map(|(i, &r)| (similarity(&p.sketch, &prepared[r].sketch), i))
            .filter(|&(s, _)| s > 0.2)
            .collect();
        cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let limit = (p.lines.len() as f64 * NEW_REF_FRACTION) as usize;
        // (reference, cost in lines, hunks)
        let mut best: Option<(usize, usize, Diff)> = None;
        if let Some(&(_, r)) = cand.first() {
            if let Some(h) = positional_diff(&prepared[refs[r]].lines, &p.lines, limit) {
                let cost = h.iter().map(|h| h.old.len() + h.new.len()).sum();
                best = Some((r, cost, h));
            }
        }
        if best.is_none() {
            for &(_, r) in cand.iter().take(3) {
                let hunks = linediff::diff(
                    &prepared[refs[r]].lines,
                    &p.lines,
                    Duration::from_millis(20),
                );
                let cost: usize = hunks.iter().map(|h| h.old.len() + h.new.len()).sum();
                if best.as_ref().is_none_or(|b| cost < b.1) {
                    best = Some((r, cost, hunks));
                }
            }
        }
        match best {
            Some((r, cost, hunks)) if cost <= limit => out_nodes.push(node(r, encode_diff(&hunks))),
            _ => {
                by_text.entry(p.whole).or_default().push(refs.len());
                refs.push(done);
                out_nodes.push(node(refs.len() - 1, encode_diff(&[])));
            }
        }
        progress(done + 1);
    }
    stats.references = refs.len();

    let mut file = vec![0u8; HEADER];
    let mut index = Vec::new();
    let frame = |data: &[u8], dict: &[u8]| -> Result<Vec<u8>, StoreError> {
        let mut c = zstd::bulk::Compressor::with_dictionary(LEVEL, dict)
            .map_err(|e| StoreError(format!("zstd: {e}")))?;
        c.include_checksum(true)
            .map_err(|e| StoreError(format!("zstd: {e}")))?;
        c.compress(data)
            .map_err(|e| StoreError(format!("zstd: {e}")))
    };
    let frames = |parts: &[Vec<u8>], dict: &[u8]| -> Result<Vec<Vec<u8>>, StoreError> {
        par_map(parts, |p| frame(p, dict)).into_iter().collect()
    };

    // Dictionary for the blocks, trained on the non-empty diffs.
    let samples: Vec<&[u8]> = out_nodes
        .iter()
        .filter(|n| n.diff.len() > 1)
        .map(|n| n.diff.as_slice())
        .collect();
    let total: usize = samples.iter().map(|s| s.len()).sum();
    let dict = if samples.len() >= 64 && total >= 16 * 1024 {
        zstd::dict::from_samples(&samples, (total / 20).clamp(4096, DICT_MAX)).unwrap_or_default()
    } else {
        Vec::new()
    };
    stats.dictionary_bytes = dict.len();
    put(&mut index, file.len() as u64);
    put(&mut index, dict.len() as u64);
    file.extend_from_slice(&dict);

    // Reference groups.
    let mut groups: Vec<Vec<u8>> = vec![Vec::new()];
    let mut ref_places = Vec::new();
    for &r in &refs {
        let raw = prepared[r].lines.join(&b'\n');
        if !groups.last().unwrap().is_empty()
            && groups.last().unwrap().len() + raw.len() > REF_GROUP
        {
            groups.push(Vec::new());
        }
        let gi = groups.len() - 1;
        let g = &mut groups[gi];
        ref_places.push((gi, g.len(), raw.len()));
        g.extend_from_slice(&raw);
    }
    put(&mut index, groups.len() as u64);
    for (g, f) in groups.iter().zip(frames(&groups, &[])?) {
        stats.reference_bytes += f.len();
        put(&mut index, file.len() as u64);
        put(&mut index, f.len() as u64);
        put(&mut index, g.len() as u64);
        file.extend_from_slice(&f);
    }
    put(&mut index, ref_places.len() as u64);
    for &(g, at, len) in &ref_places {
        put(&mut index, g as u64);
        put(&mut index, at as u64);
        put(&mut index, len as u64);
    }

    // Blocks of diffs, by reference then name.
    let mut order: Vec<usize> = (0..out_nodes.len()).collect();
    order.sort_by(|&a, &b| {
        (out_nodes[a].reference, &out_nodes[a].name)
            .cmp(&(out_nodes[b].reference, &out_nodes[b].name))
    });
    let mut blocks: Vec<Vec<u8>> = vec![Vec::new()];
    let mut places = vec![(0usize, 0usize); out_nodes.len()];
    for &i in &order {
        let d = &out_nodes[i].diff;
        if !blocks.last().unwrap().is_empty() && blocks.last().unwrap().len() + d.len() > BLOCK {
            blocks.push(Vec::new());
        }
        let bi = blocks.len() - 1;
        let b = &mut blocks[bi];
        places[i] = (bi, b.len());
        b.extend_from_slice(d);
    }
    stats.blocks = blocks.len();
    // Without a trained dictionary (few nodes), a block is compressed
    // with its first node's reference group as a raw dictionary: the
    // lines of a diff are much like those of its reference.
    let block_dicts: Vec<Option<usize>> = (0..blocks.len())
        .map(|b| {
            let first = order.iter().find(|&&i| places[i].0 == b)?;
            dict.is_empty()
                .then(|| ref_places[out_nodes[*first].reference].0)
        })
        .collect();
    let jobs: Vec<(usize, Option<usize>)> = block_dicts.iter().copied().enumerate().collect();
    let compressed: Result<Vec<Vec<u8>>, StoreError> = par_map(&jobs, |&(b, g)| {
        frame(
            &blocks[b],
            g.map_or(dict.as_slice(), |g| groups[g].as_slice()),
        )
    })
    .into_iter()
    .collect();
    put(&mut index, blocks.len() as u64);
    for ((b, f), g) in blocks.iter().zip(compressed?).zip(&block_dicts) {
        stats.diff_bytes += f.len();
        put(&mut index, file.len() as u64);
        put(&mut index, f.len() as u64);
        put(&mut index, b.len() as u64);
        put(&mut index, g.map_or(0, |g| g as u64 + 1));
        file.extend_from_slice(&f);
    }

    // Chunks of node entries, in name order, each its own frame.
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for (k, (n, &(block, at))) in out_nodes.iter().zip(&places).enumerate() {
        if k % CHUNK == 0 {
            chunks.push(Vec::new());
        }
        let c = chunks.last_mut().unwrap();
        put(c, n.name.len() as u64);
        c.extend_from_slice(n.name.as_bytes());
        put(c, n.reference as u64);
        put(c, block as u64);
        put(c, at as u64);
        put(c, n.diff.len() as u64);
        put(c, n.len as u64);
        put(c, u64::from(n.crc));
    }
    put(&mut index, chunks.len() as u64);
    for (k, (c, f)) in chunks.iter().zip(frames(&chunks, &[])?).enumerate() {
        let first = &out_nodes[k * CHUNK].name;
        put(&mut index, first.len() as u64);
        index.extend_from_slice(first.as_bytes());
        put(&mut index, file.len() as u64);
        put(&mut index, f.len() as u64);
        put(&mut index, c.len() as u64);
        put(&mut index, (out_nodes.len() - k * CHUNK).min(CHUNK) as u64);
        file.extend_from_slice(&f);
    }
    let f = frame(&index, &[])?;
    let index_at = file.len();
    file.extend_from_slice(&f);
    file[0..8].copy_from_slice(MAGIC);
    file[8..12].copy_from_slice(&VERSION.to_le_bytes());
    file[12..16].copy_from_slice(&(index.len() as u32).to_le_bytes());
    file[16..24].copy_from_slice(&(index_at as u64).to_le_bytes());
    file[24..28].copy_from_slice(&(f.len() as u32).to_le_bytes());
    file[28..32].copy_from_slice(&crc32fast::hash(&f).to_le_bytes());
    stats.bytes = file.len();
    Ok((file, stats))
}

// ------------------------------------------------------------ reading

/// Where the bytes of a store come from: a file read piece by piece
/// (so that getting one node reads only what it needs) or memory.
pub enum Source {
    File(File),
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
}

#[derive(Clone, Copy, Debug)]
struct Place {
    group: usize,
    at: usize,
    len: usize,
}

/// A frame of node entries and the first name in it.
#[derive(Clone, Debug)]
struct Chunk {
    first: String,
    frame: Frame,
    count: usize,
}

/// One node of a store, as its index lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    /// The size of its XML document.
    pub size: usize,
    /// The reference it is stored against.
    pub reference: usize,
    block: usize,
    at: usize,
    len: usize,
    crc: u32,
}

type Cached = Option<(usize, std::rc::Rc<Vec<u8>>)>;

/// An open store.
pub struct Store {
    source: Source,
    dict: Vec<u8>,
    groups: Vec<Frame>,
    refs: Vec<Place>,
    blocks: Vec<Frame>,
    /// The reference group each block uses as its dictionary, if any.
    block_dicts: Vec<Option<usize>>,
    chunks: Vec<Chunk>,
    /// The last group, block and chunk decompressed, for reading many nodes.
    cache: [Cached; 3],
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

fn decompress(data: &[u8], raw: usize, dict: &[u8], what: &str) -> Result<Vec<u8>, StoreError> {
    let mut d = zstd::bulk::Decompressor::with_dictionary(dict)
        .map_err(|e| corrupt(format!("zstd: {e}")))?;
    let out = d
        .decompress(data, raw)
        .map_err(|e| corrupt(format!("{what} does not decompress: {e}")))?;
    if out.len() != raw {
        return Err(corrupt(format!(
            "{what} decompresses to {} bytes, not {raw}",
            out.len()
        )));
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Kind {
    Group = 0,
    Block = 1,
    Chunk = 2,
}

impl Store {
    /// Opens the store in the file at `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or is not a store of a supported version,
    /// or its index is corrupt.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let f = File::open(path)
            .map_err(|e| StoreError(format!("cannot open '{}': {e}", path.display())))?;
        let len = f
            .metadata()
            .map_err(|e| StoreError(format!("cannot read '{}': {e}", path.display())))?
            .len();
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
        if version != VERSION {
            return Err(StoreError(format!(
                "version {version} of the wloc topology store format is not supported (only {VERSION})"
            )));
        }
        let raw = u32_at(12) as usize;
        let at = u64::from_le_bytes(h[16..24].try_into().unwrap());
        let len = u32_at(24) as usize;
        if at.checked_add(len as u64).is_none_or(|e| e > file_len) {
            return Err(corrupt("the index lies past the end of the file"));
        }
        let frame = source.read(at, len)?;
        if crc32fast::hash(&frame) != u32_at(28) {
            return Err(corrupt("the index does not match its checksum"));
        }
        let index = decompress(&frame, raw, &[], "the index")?;
        let mut r = Reader {
            data: &index,
            at: 0,
            what: "index",
        };
        let in_file = |f: Frame| {
            if f.at.checked_add(f.len as u64).is_none_or(|e| e > file_len) {
                Err(corrupt("a frame lies past the end of the file"))
            } else {
                Ok(f)
            }
        };
        let frame_at = |r: &mut Reader| -> Result<Frame, StoreError> {
            in_file(Frame {
                at: r.num()?,
                len: r.size()?,
                raw: r.size()?,
            })
        };
        let dict_at = r.num()?;
        let dict_len = r.size()?;
        in_file(Frame {
            at: dict_at,
            len: dict_len,
            raw: 0,
        })?;
        let dict = source.read(dict_at, dict_len)?;
        let frames = |r: &mut Reader| -> Result<Vec<Frame>, StoreError> {
            let n = r.count()?;
            (0..n).map(|_| frame_at(r)).collect()
        };
        let groups = frames(&mut r)?;
        let n = r.count()?;
        let mut refs = Vec::with_capacity(n);
        for _ in 0..n {
            let p = Place {
                group: r.size()?,
                at: r.size()?,
                len: r.size()?,
            };
            if groups.get(p.group).is_none_or(|g| p.at + p.len > g.raw) {
                return Err(corrupt("a reference lies outside its group"));
            }
            refs.push(p);
        }
        let n = r.count()?;
        let mut blocks = Vec::with_capacity(n);
        let mut block_dicts = Vec::with_capacity(n);
        for _ in 0..n {
            blocks.push(frame_at(&mut r)?);
            let g = r.size()?;
            if g > groups.len() {
                return Err(corrupt("a block names a missing reference group"));
            }
            block_dicts.push(g.checked_sub(1));
        }
        let n = r.count()?;
        let mut chunks: Vec<Chunk> = Vec::with_capacity(n);
        for _ in 0..n {
            let len = r.size()?;
            let first = std::str::from_utf8(r.bytes(len)?)
                .map_err(|_| corrupt("a node name is not UTF-8"))?
                .to_string();
            let frame = frame_at(&mut r)?;
            let count = r.size()?;
            if count == 0 || count > frame.raw {
                return Err(corrupt("a chunk of the index has a wrong count"));
            }
            if chunks.last().is_some_and(|c| c.first >= first) {
                return Err(corrupt("the node names are not in order"));
            }
            chunks.push(Chunk {
                first,
                frame,
                count,
            });
        }
        if r.at != index.len() {
            return Err(corrupt("the index has trailing bytes"));
        }
        Ok(Store {
            source,
            dict,
            groups,
            refs,
            blocks,
            block_dicts,
            chunks,
            cache: [None, None, None],
        })
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.count).sum()
    }

    /// Whether the store holds no node.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The number of references.
    pub fn references(&self) -> usize {
        self.refs.len()
    }

    fn chunk(&mut self, i: usize) -> Result<Vec<Entry>, StoreError> {
        let data = self.frame(Kind::Chunk, i)?;
        let c = &self.chunks[i];
        let next = self.chunks.get(i + 1).map(|c| c.first.as_str());
        let mut r = Reader {
            data: &data,
            at: 0,
            what: "index",
        };
        let mut entries: Vec<Entry> = Vec::with_capacity(c.count);
        for _ in 0..c.count {
            let len = r.size()?;
            let name = std::str::from_utf8(r.bytes(len)?)
                .map_err(|_| corrupt("a node name is not UTF-8"))?
                .to_string();
            let e = Entry {
                name,
                reference: r.size()?,
                block: r.size()?,
                at: r.size()?,
                len: r.size()?,
                size: r.size()?,
                crc: u32::try_from(r.num()?).map_err(|_| corrupt("a checksum is too large"))?,
            };
            if e.reference >= self.refs.len() {
                return Err(corrupt(format!(
                    "node '{}' names a missing reference",
                    e.name
                )));
            }
            if self
                .blocks
                .get(e.block)
                .is_none_or(|b| e.at + e.len > b.raw)
            {
                return Err(corrupt(format!("node '{}' lies outside its block", e.name)));
            }
            let first = entries.is_empty();
            if (first && e.name != c.first)
                || entries.last().is_some_and(|p| p.name >= e.name)
                || next.is_some_and(|n| e.name.as_str() >= n)
            {
                return Err(corrupt("the node names are not in order"));
            }
            entries.push(e);
        }
        if r.at != data.len() {
            return Err(corrupt("a chunk of the index has trailing bytes"));
        }
        Ok(entries)
    }

    /// Every node, in name order.
    ///
    /// # Errors
    ///
    /// A corrupt index.
    pub fn entries(&mut self) -> Result<Vec<Entry>, StoreError> {
        let mut all = Vec::with_capacity(self.len());
        for i in 0..self.chunks.len() {
            all.extend(self.chunk(i)?);
        }
        Ok(all)
    }

    /// The entry of the node `name` (or `name` without its `.xml`).
    ///
    /// # Errors
    ///
    /// A corrupt index.
    pub fn find(&mut self, name: &str) -> Result<Option<Entry>, StoreError> {
        for n in [name.to_string(), format!("{name}.xml")] {
            // The last chunk whose first name is not after `n`.
            let i = self
                .chunks
                .partition_point(|c| c.first.as_str() <= n.as_str());
            if i == 0 {
                continue;
            }
            if let Some(e) = self.chunk(i - 1)?.into_iter().find(|e| e.name == n) {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    fn frame(&mut self, kind: Kind, i: usize) -> Result<std::rc::Rc<Vec<u8>>, StoreError> {
        if let Some((c, data)) = &self.cache[kind as usize] {
            if *c == i {
                return Ok(data.clone());
            }
        }
        let group_dict = match kind {
            Kind::Block => match self.block_dicts[i] {
                Some(g) => Some(self.frame(Kind::Group, g)?),
                None => None,
            },
            _ => None,
        };
        let (f, what, dict): (Frame, &str, &[u8]) = match kind {
            Kind::Group => (self.groups[i], "a group of references", &[]),
            Kind::Block => (
                self.blocks[i],
                "a block of node diffs",
                group_dict
                    .as_deref()
                    .map_or(self.dict.as_slice(), |g| g.as_slice()),
            ),
            Kind::Chunk => (self.chunks[i].frame, "a chunk of the index", &[]),
        };
        let bytes = self.source.read(f.at, f.len)?;
        let data = std::rc::Rc::new(decompress(&bytes, f.raw, dict, what)?);
        self.cache[kind as usize] = Some((i, data.clone()));
        Ok(data)
    }

    /// The canonical XML document of the node `name`.
    ///
    /// # Errors
    ///
    /// No such node, or corrupt data (the document is checked against
    /// its recorded size and CRC-32).
    pub fn get(&mut self, name: &str) -> Result<String, StoreError> {
        let e = self
            .find(name)?
            .ok_or_else(|| StoreError(format!("no topology named '{name}' in the store")))?;
        self.get_entry(&e)
    }

    /// The canonical XML document of the node of `e` (from
    /// [`Store::entries`]).
    ///
    /// # Errors
    ///
    /// Corrupt data.
    pub fn get_entry(&mut self, e: &Entry) -> Result<String, StoreError> {
        let p = self.refs[e.reference];
        let group = self.frame(Kind::Group, p.group)?;
        let block = self.frame(Kind::Block, e.block)?;
        let reference: Vec<&[u8]> = group[p.at..p.at + p.len].split(|&b| b == b'\n').collect();
        let lines = decode_diff(&reference, &block[e.at..e.at + e.len])?;
        let text = squeeze::unsqueeze(&lines)
            .ok_or_else(|| corrupt(format!("the document of '{}' does not decode", e.name)))?;
        if text.len() != e.size || crc32fast::hash(text.as_bytes()) != e.crc {
            return Err(corrupt(format!(
                "the document of '{}' does not match its checksum",
                e.name
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
        assert!(s
            .get("nope")
            .unwrap_err()
            .0
            .contains("no topology named 'nope'"));
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
        assert!(Store::from_bytes(b"hello".to_vec())
            .unwrap_err()
            .0
            .contains("not a wloc topology store"));
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
