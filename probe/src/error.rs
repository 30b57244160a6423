//! Errors of CPUID and ACPI discovery.

use core::fmt;

use wloc_core::TopologyError;

use crate::acpi::AcpiError;
use crate::dump::DumpError;

/// Why CPUID or ACPI discovery failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    /// A CPUID dump could not be read.
    Dump(DumpError),
    /// The source has no PU at all.
    NoPu,
    /// The source gives an OS index that is too large or used twice.
    BadOsIndex {
        /// The PU (position in the source).
        pu: usize,
        /// Its OS index.
        os_index: u32,
    },
    /// Two PUs report the same APIC id, so CPUID cannot tell them apart
    /// (hwloc ignores its x86 discovery in that case).
    DuplicateApicId {
        /// The first PU with that APIC id.
        first_pu: usize,
        /// The other PU with that APIC id.
        second_pu: usize,
        /// The APIC id both report.
        apic_id: u32,
    },
    /// The topology could not be completed.
    Topology(TopologyError),
    /// An ACPI table needed for discovery is invalid.
    Acpi(AcpiError),
    /// A usable processor of the MADT has no leaf node in the PPTT, so
    /// the table does not describe the machine (Linux then ignores it).
    NotInPptt {
        /// The processor's ACPI processor UID.
        uid: u32,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Dump(e) => write!(f, "{e}"),
            ProbeError::NoPu => f.write_str("the CPUID source has no processing unit"),
            ProbeError::BadOsIndex { pu, os_index } => write!(
                f,
                "PU #{pu} has OS index {os_index}, which is out of range or used by another PU"
            ),
            ProbeError::DuplicateApicId {
                first_pu,
                second_pu,
                apic_id,
            } => write!(
                f,
                "PUs #{first_pu} and #{second_pu} both report APIC id {apic_id:#x}; CPUID cannot describe this machine"
            ),
            ProbeError::Topology(e) => write!(f, "{e}"),
            ProbeError::Acpi(e) => write!(f, "{e}"),
            ProbeError::NotInPptt { uid } => write!(
                f,
                "the processor with ACPI UID {uid} has no leaf node in the PPTT"
            ),
        }
    }
}

impl core::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ProbeError::Dump(e) => Some(e),
            ProbeError::Acpi(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DumpError> for ProbeError {
    fn from(e: DumpError) -> Self {
        ProbeError::Dump(e)
    }
}

impl From<TopologyError> for ProbeError {
    fn from(e: TopologyError) -> Self {
        ProbeError::Topology(e)
    }
}

impl From<AcpiError> for ProbeError {
    fn from(e: AcpiError) -> Self {
        ProbeError::Acpi(e)
    }
}
