//! MADT (`APIC`): the processors of the machine: their APIC ids (x86) or
//! their GIC CPU interfaces with MPIDRs (ARM).

use alloc::collections::BTreeSet;
use alloc::vec::Vec;

use super::sdt::{AcpiError, Checksum, Reader, SdtHeader, Signature, parse_table, walk_subtables};

/// Offset of the first interrupt controller structure.
const ENTRIES: usize = 44;

/// One processor listed in the MADT (a Processor Local APIC, type 0, or a
/// Processor Local x2APIC, type 9, structure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadtProcessor {
    /// ACPI processor UID (matches the processor objects of the namespace).
    pub uid: u32,
    /// The local APIC id (8 bits for type 0 entries, 32 for x2APIC ones).
    pub apic_id: u32,
    /// Flags bit 0: the processor is ready to use.
    pub enabled: bool,
    /// Flags bit 1: a disabled processor can be brought online later
    /// (meaningful from MADT revision 5, ACPI 6.3, on).
    pub online_capable: bool,
    /// Whether the entry is an x2APIC one (type 9).
    pub x2apic: bool,
}

impl MadtProcessor {
    /// The processor of a type 0 or type 9 entry, from its UID, APIC id
    /// and flags (bit 0 enabled, bit 1 online-capable).
    fn from_entry(uid: u32, apic_id: u32, flags: u32, x2apic: bool) -> Self {
        MadtProcessor {
            uid,
            apic_id,
            enabled: flags & 1 != 0,
            online_capable: flags & 2 != 0,
            x2apic,
        }
    }
}

/// One processor of an ARM machine: a GIC CPU interface (GICC, type
/// 0x0B) structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadtGicc {
    /// ACPI processor UID (what the SRAT and PPTT refer to).
    pub uid: u32,
    /// The GIC's CPU interface number.
    pub cpu_interface: u32,
    /// The processor's MPIDR (affinity fields Aff3..Aff0).
    pub mpidr: u64,
    /// Flags bit 0: the processor is ready to use.
    pub enabled: bool,
    /// Flags bit 3: a disabled processor can be brought online later
    /// (ACPI 6.5).
    pub online_capable: bool,
}

/// The MPIDR bits that identify a processor (Aff3 and Aff2..Aff0), as
/// Linux's `MPIDR_HWID_BITMASK`.
pub const MPIDR_HWID_MASK: u64 = 0xff_00ff_ffff;

/// The parsed MADT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Madt {
    /// The table header.
    pub header: SdtHeader,
    /// Physical address of the local APIC registers.
    pub local_apic_address: u32,
    /// MADT flags (bit 0: the machine also has dual 8259 PICs).
    pub flags: u32,
    /// Processors in table order.  Entries with the "no processor" APIC
    /// ids (0xff for type 0, 0xffffffff for type 9) are left out, and so
    /// is an entry repeating an APIC id already listed.
    pub processors: Vec<MadtProcessor>,
    /// ARM processors (GICC structures) in table order.  An entry whose
    /// MPIDR has bits outside [`MPIDR_HWID_MASK`] or repeats an MPIDR or
    /// a UID already listed is left out, as Linux leaves it out.
    pub giccs: Vec<MadtGicc>,
}

impl Madt {
    /// Parses a MADT, verifying its checksum.
    pub fn parse(bytes: &[u8]) -> Result<Madt, AcpiError> {
        Madt::parse_with(bytes, Checksum::Verify)
    }

    /// Parses a MADT, verifying its checksum or not.
    pub fn parse_with(bytes: &[u8], checksum: Checksum) -> Result<Madt, AcpiError> {
        let (header, body) = parse_table(bytes, Some(Signature::MADT), checksum)?;
        let r = Reader::new(Signature::MADT, body);
        let local_apic_address = r.u32(36)?;
        let flags = r.u32(40)?;
        let mut processors: Vec<MadtProcessor> = Vec::new();
        let mut giccs: Vec<MadtGicc> = Vec::new();
        let (mut mpidrs, mut uids) = (BTreeSet::new(), BTreeSet::new());
        walk_subtables(
            &r,
            ENTRIES,
            2,
            |r, off| Ok(r.u8(off + 1)?.into()),
            |off, len| {
                let p = match r.u8(off)? {
                    0 => {
                        r.need(off, len, 8, "a local APIC entry needs 8 bytes")?;
                        let apic_id = r.u8(off + 3)?;
                        if apic_id == 0xff {
                            return Ok(());
                        }
                        let f = r.u32(off + 4)?;
                        MadtProcessor::from_entry(r.u8(off + 2)?.into(), apic_id.into(), f, false)
                    }
                    9 => {
                        r.need(off, len, 16, "an x2APIC entry needs 16 bytes")?;
                        let apic_id = r.u32(off + 4)?;
                        if apic_id == u32::MAX {
                            return Ok(());
                        }
                        let f = r.u32(off + 8)?;
                        MadtProcessor::from_entry(r.u32(off + 12)?, apic_id, f, true)
                    }
                    0x0b => {
                        // ACPI 5.1 entries have 76 bytes (MPIDR included);
                        // ACPI 5.0's 40-byte form has no MPIDR.
                        r.need(off, len, 76, "a GICC entry needs 76 bytes")?;
                        let f = r.u32(off + 12)?;
                        let g = MadtGicc {
                            uid: r.u32(off + 8)?,
                            cpu_interface: r.u32(off + 4)?,
                            mpidr: r.u64(off + 68)?,
                            enabled: f & 1 != 0,
                            online_capable: f & 8 != 0,
                        };
                        // Sets, not a scan: a MADT may list millions.
                        let dup = mpidrs.contains(&g.mpidr) || uids.contains(&g.uid);
                        if g.mpidr & !MPIDR_HWID_MASK == 0 && !dup {
                            mpidrs.insert(g.mpidr);
                            uids.insert(g.uid);
                            giccs.push(g);
                        }
                        return Ok(());
                    }
                    _ => return Ok(()),
                };
                if !processors.iter().any(|q| q.apic_id == p.apic_id) {
                    processors.push(p);
                }
                Ok(())
            },
        )?;
        Ok(Madt {
            header,
            local_apic_address,
            flags,
            processors,
            giccs,
        })
    }

    /// Whether a processor can run now or later, as Linux decides: it is
    /// enabled, or it is online-capable in a MADT of revision 5 or more.
    pub fn is_usable(&self, p: &MadtProcessor) -> bool {
        p.enabled || (self.header.revision >= 5 && p.online_capable)
    }

    /// Whether an ARM processor can run now or later, as Linux decides:
    /// it is enabled or online-capable.
    pub fn is_gicc_usable(&self, g: &MadtGicc) -> bool {
        g.enabled || g.online_capable
    }

    /// The GICC structure with this ACPI processor UID.
    pub fn gicc_by_uid(&self, uid: u32) -> Option<&MadtGicc> {
        self.giccs.iter().find(|g| g.uid == uid)
    }

    /// APIC ids of the enabled processors, in table order.
    pub fn enabled_apic_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.processors
            .iter()
            .filter(|p| p.enabled)
            .map(|p| p.apic_id)
    }

    /// Whether `apic_id` is an enabled processor.
    pub fn is_enabled(&self, apic_id: u32) -> bool {
        self.processors
            .iter()
            .any(|p| p.apic_id == apic_id && p.enabled)
    }
}
