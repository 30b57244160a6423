//! The limits of one run of a component: what the policy sets (see
//! [`crate::policy::LimitSettings`]) and what the runtime enforces.

use std::time::Duration;

/// Limits of one run.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock time before the component is interrupted.
    pub deadline: Duration,
    /// Fuel (about one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Linear memory, in bytes.
    pub memory_bytes: usize,
    /// Table elements.
    pub table_elements: usize,
    /// Core instances (and memories) a component may create.
    pub instances: usize,
    /// Objects returned.
    pub max_objects: usize,
    /// 64-bit words in one returned set (1 << 16 words).  Whatever this
    /// says, no set holds an index at or above
    /// `wloc_core::bitmap::MAX_SET_BITS` (2^20).
    pub max_bitmap_words: usize,
    /// Bytes of data returned, all included.
    pub max_returned_bytes: u64,
    /// Bytes of one returned string.
    pub max_string_bytes: usize,
    /// Infos of one object.
    pub max_infos: usize,
    /// Infos of a whole record (all objects, CPU kinds and the topology;
    /// for an annotation record, the infos it adds).
    pub max_total_infos: usize,
    /// Misc objects an annotation record adds.
    pub max_annotation_misc: usize,
    /// Bytes of file contents (and listed names and link targets) read in
    /// one run; charged while reading, so this is also what the host holds
    /// of a run's file data, plus one file per reading thread.
    pub max_read_bytes: u64,
    /// Files read, names listed and paths matched in one run.
    pub max_read_entries: u64,
    /// Bytes of one file.
    pub max_file_bytes: u32,
    /// File operations in one run (files read, directories listed, ...).
    pub max_file_ops: u64,
    /// Paths in one `read-many` call.
    pub max_paths_per_call: usize,
    /// Log messages shown per run.
    pub max_log_messages: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(10),
            fuel: 20_000_000_000,
            memory_bytes: 256 << 20,
            table_elements: 100_000,
            instances: 16,
            max_objects: 1 << 18,
            max_bitmap_words: 1 << 16,
            max_returned_bytes: 256 << 20,
            max_string_bytes: 64 << 10,
            max_infos: 4096,
            max_total_infos: 1 << 18,
            max_annotation_misc: 1 << 16,
            max_read_bytes: 256 << 20,
            max_read_entries: 1 << 22,
            max_file_bytes: 1 << 20,
            max_file_ops: 1 << 20,
            max_paths_per_call: 1 << 16,
            max_log_messages: 100,
        }
    }
}
