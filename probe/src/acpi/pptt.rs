//! PPTT: the Processor Properties Topology Table, which ARM servers (and
//! others) use to describe packages, clusters, cores, threads and their
//! caches.
//!
//! The table is a forest of processor hierarchy nodes (type 0) linked by
//! their parent's offset in the table; leaves are the processors, named
//! by their ACPI processor UID (as in the MADT).  A node lists private
//! resources, among them cache structures (type 1), each linking to the
//! next level of cache.  The reader checks every link: a parent, resource
//! or next-level offset that is not the start of a structure of the
//! right type, or a chain that loops, is an [`AcpiError::Invalid`].

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use super::sdt::{AcpiError, Checksum, Reader, SdtHeader, Signature, parse_table, walk_subtables};

/// Offset of the first structure.
const ENTRIES: usize = 36;

/// Processor hierarchy node flags (ACPI 6.3 and later).
pub mod node_flags {
    /// The node is the boundary of a physical package.
    pub const PHYSICAL_PACKAGE: u32 = 1 << 0;
    /// The ACPI processor ID of the node is valid (always for a
    /// processor; for a container, when it names one).
    pub const ID_VALID: u32 = 1 << 1;
    /// The processor is a thread of a core (revision 2).
    pub const IS_THREAD: u32 = 1 << 2;
    /// The node is a leaf: a processor (revision 2).
    pub const LEAF: u32 = 1 << 3;
    /// Every child of the node is identical (revision 2).
    pub const IDENTICAL: u32 = 1 << 4;
}

/// Cache structure flags: which fields are valid.
pub mod cache_flags {
    /// The size field is valid.
    pub const SIZE: u32 = 1 << 0;
    /// The number of sets is valid.
    pub const SETS: u32 = 1 << 1;
    /// The associativity is valid.
    pub const ASSOCIATIVITY: u32 = 1 << 2;
    /// The allocation type (in the attributes) is valid.
    pub const ALLOCATION: u32 = 1 << 3;
    /// The cache type (in the attributes) is valid.
    pub const TYPE: u32 = 1 << 4;
    /// The write policy (in the attributes) is valid.
    pub const WRITE_POLICY: u32 = 1 << 5;
    /// The line size is valid.
    pub const LINE_SIZE: u32 = 1 << 6;
    /// The cache ID is valid (revision 3, ACPI 6.4).
    pub const CACHE_ID: u32 = 1 << 7;
}

/// A processor hierarchy node (type 0): a package, a cluster, a core or
/// a thread, or any other level of processor containers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PpttProcessor {
    /// Offset of the structure in the table (what others refer to).
    pub offset: u32,
    /// Raw flags (see [`node_flags`]).
    pub flags: u32,
    /// Offset of the parent node, `None` for a root.
    pub parent: Option<u32>,
    /// ACPI processor ID: a processor's UID for a leaf, or the
    /// container's id when [`node_flags::ID_VALID`] is set.
    pub acpi_processor_id: u32,
    /// Offsets of the private resources (caches, among others).
    pub resources: Vec<u32>,
}

impl PpttProcessor {
    /// Whether the node is a physical package.
    pub fn is_physical_package(&self) -> bool {
        self.flags & node_flags::PHYSICAL_PACKAGE != 0
    }
    /// Whether its ACPI processor ID is valid.
    pub fn id_valid(&self) -> bool {
        self.flags & node_flags::ID_VALID != 0
    }
    /// Whether the processor is a thread.
    pub fn is_thread(&self) -> bool {
        self.flags & node_flags::IS_THREAD != 0
    }
    /// Whether the node says it is a leaf.
    pub fn leaf_flag(&self) -> bool {
        self.flags & node_flags::LEAF != 0
    }
    /// Whether the node's children are identical.
    pub fn identical(&self) -> bool {
        self.flags & node_flags::IDENTICAL != 0
    }
}

/// What a cache holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PpttCacheType {
    /// Data only.
    Data,
    /// Instructions only.
    Instruction,
    /// Both.
    Unified,
}

/// A cache type structure (type 1).  Fields whose valid flag is clear
/// are `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PpttCache {
    /// Offset of the structure in the table.
    pub offset: u32,
    /// Raw flags (see [`cache_flags`]).
    pub flags: u32,
    /// Offset of the next level of cache, if any.
    pub next_level: Option<u32>,
    /// Size in bytes.
    pub size: Option<u32>,
    /// Number of sets.
    pub sets: Option<u32>,
    /// Ways of associativity.
    pub associativity: Option<u8>,
    /// Data, instruction or unified.
    pub cache_type: Option<PpttCacheType>,
    /// Whether it is write-through (`Some(false)`: write-back).
    pub write_through: Option<bool>,
    /// Line size in bytes.
    pub line_size: Option<u16>,
    /// Cache ID (revision 3 tables with 28-byte structures).
    pub cache_id: Option<u32>,
}

/// A cache of one processor, found by walking from its leaf node up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PpttCpuCache<'a> {
    /// Its level, counted as Linux counts it: along the next-level chain,
    /// continuing above the deepest level found at lower nodes.
    pub level: u32,
    /// The cache structure.
    pub cache: &'a PpttCache,
    /// Offset of the processor node that lists it (the processors that
    /// reach it through the same node share it).
    pub node: u32,
}

/// The parsed PPTT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pptt {
    /// The table header.
    pub header: SdtHeader,
    /// Processor hierarchy nodes, in table order.
    pub processors: Vec<PpttProcessor>,
    /// Cache structures, in table order.
    pub caches: Vec<PpttCache>,
    proc_at: BTreeMap<u32, usize>,
    cache_at: BTreeMap<u32, usize>,
    /// Offsets of the nodes some node names as parent.
    parents: BTreeSet<u32>,
    /// The first leaf of each ACPI processor ID, in table order.
    leaves: BTreeMap<u32, usize>,
}

/// Deepest cache level followed along next-level links (Linux's arm64
/// `MAX_CACHE_LEVEL` is 7); deeper levels are not looked at, which also
/// bounds the walks of hostile tables.
pub const MAX_CACHE_LEVEL: u32 = 8;

impl Pptt {
    /// Parses a PPTT, verifying its checksum.
    pub fn parse(bytes: &[u8]) -> Result<Pptt, AcpiError> {
        Pptt::parse_with(bytes, Checksum::Verify)
    }

    /// Parses a PPTT, verifying its checksum or not.
    pub fn parse_with(bytes: &[u8], checksum: Checksum) -> Result<Pptt, AcpiError> {
        let (header, body) = parse_table(bytes, Some(Signature::PPTT), checksum)?;
        let r = Reader::new(Signature::PPTT, body);
        let mut processors = Vec::new();
        let mut caches = Vec::new();
        let mut starts = BTreeMap::new();
        walk_subtables(
            &r,
            ENTRIES,
            2,
            |r, off| Ok(r.u8(off + 1)?.into()),
            |off, len| {
                // Offsets fit in u32: the table length is a u32.
                let offset = off as u32;
                let ty = r.u8(off)?;
                starts.insert(offset, ty);
                match ty {
                    0 => {
                        r.need(off, len, 20, "a processor hierarchy node needs 20 bytes")?;
                        let n = r.u32(off + 16)?;
                        let fits = (n as usize)
                            .checked_mul(4)
                            .and_then(|b| b.checked_add(20))
                            .is_some_and(|need| need <= len);
                        if !fits {
                            return Err(r.bad_length(
                                off,
                                len as u64,
                                "too short for the private resources it lists",
                            ));
                        }
                        let resources = (0..n as usize)
                            .map(|i| r.u32(off + 20 + 4 * i))
                            .collect::<Result<Vec<_>, _>>()?;
                        let parent = r.u32(off + 8)?;
                        processors.push(PpttProcessor {
                            offset,
                            flags: r.u32(off + 4)?,
                            parent: (parent != 0).then_some(parent),
                            acpi_processor_id: r.u32(off + 12)?,
                            resources,
                        });
                    }
                    1 => {
                        r.need(off, len, 24, "a cache type structure needs 24 bytes")?;
                        let flags = r.u32(off + 4)?;
                        let valid = |f: u32| flags & f != 0;
                        let attrs = r.u8(off + 21)?;
                        let next = r.u32(off + 8)?;
                        caches.push(PpttCache {
                            offset,
                            flags,
                            next_level: (next != 0).then_some(next),
                            size: valid(cache_flags::SIZE)
                                .then(|| r.u32(off + 12))
                                .transpose()?,
                            sets: valid(cache_flags::SETS)
                                .then(|| r.u32(off + 16))
                                .transpose()?,
                            associativity: valid(cache_flags::ASSOCIATIVITY)
                                .then(|| r.u8(off + 20))
                                .transpose()?,
                            cache_type: valid(cache_flags::TYPE).then_some(
                                match (attrs >> 2) & 3 {
                                    0 => PpttCacheType::Data,
                                    1 => PpttCacheType::Instruction,
                                    _ => PpttCacheType::Unified,
                                },
                            ),
                            write_through: valid(cache_flags::WRITE_POLICY)
                                .then_some(attrs & 0x10 != 0),
                            line_size: valid(cache_flags::LINE_SIZE)
                                .then(|| r.u16(off + 22))
                                .transpose()?,
                            cache_id: (valid(cache_flags::CACHE_ID) && len >= 28)
                                .then(|| r.u32(off + 24))
                                .transpose()?,
                        });
                    }
                    // ID structures (type 2, removed in ACPI 6.3) and
                    // types defined later carry nothing used here.
                    _ => {}
                }
                Ok(())
            },
        )?;
        let proc_at: BTreeMap<u32, usize> = processors
            .iter()
            .enumerate()
            .map(|(i, p)| (p.offset, i))
            .collect();
        let cache_at: BTreeMap<u32, usize> = caches
            .iter()
            .enumerate()
            .map(|(i, c)| (c.offset, i))
            .collect();
        // Every link points at the start of a structure of the right type.
        for p in &processors {
            let at = p.offset as usize;
            if let Some(parent) = p.parent
                && !proc_at.contains_key(&parent)
            {
                return Err(r.invalid(
                    at + 8,
                    "the parent is not a processor hierarchy node of the table",
                ));
            }
            for (i, res) in p.resources.iter().enumerate() {
                if !starts.contains_key(res) {
                    return Err(r.invalid(
                        at + 20 + 4 * i,
                        "a private resource is not a structure of the table",
                    ));
                }
            }
        }
        for c in &caches {
            if let Some(next) = c.next_level
                && !cache_at.contains_key(&next)
            {
                return Err(r.invalid(
                    c.offset as usize + 8,
                    "the next level of cache is not a cache structure of the table",
                ));
            }
        }
        let parents: BTreeSet<u32> = processors.iter().filter_map(|p| p.parent).collect();
        let mut pptt = Pptt {
            header,
            processors,
            caches,
            proc_at,
            cache_at,
            parents,
            leaves: BTreeMap::new(),
        };
        let mut leaves = BTreeMap::new();
        for (i, p) in pptt.processors.iter().enumerate() {
            if pptt.is_leaf(p) {
                leaves.entry(p.acpi_processor_id).or_insert(i);
            }
        }
        pptt.leaves = leaves;
        // No chain loops (walks below rely on it).
        for p in &pptt.processors {
            let mut steps = 0;
            let mut cur = p.parent;
            while let Some(o) = cur {
                steps += 1;
                if steps > pptt.processors.len() {
                    return Err(r.invalid(p.offset as usize + 8, "the chain of parents loops"));
                }
                cur = pptt.processor_at(o).and_then(|q| q.parent);
            }
        }
        for c in &pptt.caches {
            let mut steps = 0;
            let mut cur = c.next_level;
            while let Some(o) = cur {
                steps += 1;
                if steps > pptt.caches.len() {
                    return Err(r.invalid(
                        c.offset as usize + 8,
                        "the chain of next-level caches loops",
                    ));
                }
                cur = pptt.cache_at(o).and_then(|q| q.next_level);
            }
        }
        Ok(pptt)
    }

    /// The processor hierarchy node at this offset.
    pub fn processor_at(&self, offset: u32) -> Option<&PpttProcessor> {
        self.proc_at.get(&offset).map(|&i| &self.processors[i])
    }

    /// The cache structure at this offset.
    pub fn cache_at(&self, offset: u32) -> Option<&PpttCache> {
        self.cache_at.get(&offset).map(|&i| &self.caches[i])
    }

    /// Whether a node is a leaf as Linux decides: its leaf flag in a
    /// revision 2+ table, or no node names it as parent.
    pub fn is_leaf(&self, node: &PpttProcessor) -> bool {
        (self.header.revision >= 2 && node.leaf_flag()) || !self.parents.contains(&node.offset)
    }

    /// The leaf node of the processor with this ACPI processor UID.
    pub fn leaf_for_uid(&self, uid: u32) -> Option<&PpttProcessor> {
        self.leaves.get(&uid).map(|&i| &self.processors[i])
    }

    /// A node and its ancestors, nearest first.
    pub fn ancestors<'a>(
        &'a self,
        node: &'a PpttProcessor,
    ) -> impl Iterator<Item = &'a PpttProcessor> + 'a {
        // Parse rejected loops, so the walk ends.
        core::iter::successors(Some(node), move |n| {
            n.parent.and_then(|p| self.processor_at(p))
        })
    }

    /// The caches of a processor, by walking from its leaf node up as
    /// Linux does (`acpi_find_cache_node`): a node's private caches start
    /// one level above the deepest level found below it and go up along
    /// their next-level links.  Caches without a valid type are counted
    /// as a level but not listed.  When a level and type is found twice
    /// the nearest wins.  Levels above [`MAX_CACHE_LEVEL`] are left out.  Sorted by level, then data, instruction, unified.
    pub fn caches_of<'a>(&'a self, leaf: &'a PpttProcessor) -> Vec<PpttCpuCache<'a>> {
        let mut out: Vec<PpttCpuCache<'a>> = Vec::new();
        let mut base = 0u32;
        for node in self.ancestors(leaf) {
            if base >= MAX_CACHE_LEVEL {
                break;
            }
            let mut deepest = base;
            for &res in &node.resources {
                let mut level = base;
                let mut cur = self.cache_at(res);
                while let Some(c) = cur {
                    level += 1;
                    if level > MAX_CACHE_LEVEL {
                        break;
                    }
                    if let Some(t) = c.cache_type {
                        let seen = out
                            .iter()
                            .any(|o| o.level == level && o.cache.cache_type == Some(t));
                        if !seen {
                            out.push(PpttCpuCache {
                                level,
                                cache: c,
                                node: node.offset,
                            });
                        }
                    }
                    cur = c.next_level.and_then(|n| self.cache_at(n));
                }
                deepest = deepest.max(level);
            }
            base = deepest;
        }
        let rank = |t: Option<PpttCacheType>| match t {
            Some(PpttCacheType::Data) => 0,
            Some(PpttCacheType::Instruction) => 1,
            _ => 2,
        };
        out.sort_by_key(|c| (c.level, rank(c.cache.cache_type)));
        out
    }
}
