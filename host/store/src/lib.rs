//! Many topologies: wloc's own topology diff (every difference between two
//! canonical XML documents, applied exactly or refused at the first change
//! that does not fit) and a single-file store of many topologies with
//! random access to any one of them.
//!
//! Both work on canonical documents, the XML that `wloc ls --of xml`
//! writes with the NUMA nodes' page types kept (`wloc_xml::export_canonical`): a topology is loaded and exported again before it is diffed or
//! stored, so that an exact round trip of the document is an exact round
//! trip of the topology.

pub mod linediff;
pub mod squeeze;
pub mod store;
pub mod topodiff;

pub use store::{PackStats, Prepared, Store, StoreError, pack, pack_prepared};
