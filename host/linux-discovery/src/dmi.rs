//! Memory modules from the SMBIOS tables (`/sys/firmware/dmi/entries/17-*`),
//! as Misc objects below the root.

use wloc_core::object::Info;
use wloc_core::{ObjType, Object};

use crate::ctx::Ctx;

/// Most memory device entries read.
const MAX_ENTRIES: u32 = 4096;

const FORM_FACTORS: [&str; 16] = [
    "Other",
    "Unknown",
    "SIMM",
    "SIP",
    "Chip",
    "DIP",
    "ZIP",
    "Proprietary Card",
    "DIMM",
    "TSOP",
    "Row Of Chips",
    "RIMM",
    "SODIMM",
    "SRIMM",
    "FB-DIMM",
    "Die",
];

const MEMORY_TYPES: [&str; 36] = [
    "Other",
    "Unknown",
    "DRAM",
    "EDRAM",
    "VRAM",
    "SRAM",
    "RAM",
    "ROM",
    "Flash",
    "EEPROM",
    "FEPROM",
    "EPROM",
    "CDRAM",
    "3DRAM",
    "SDRAM",
    "SGRAM",
    "RDRAM",
    "DDR",
    "DDR2",
    "DDR2 FB-DIMM",
    "Reserved",
    "Reserved",
    "Reserved",
    "DDR3",
    "FBD2",
    "DDR4",
    "LPDDR",
    "LPDDR2",
    "LPDDR3",
    "LPDDR4",
    "Logical non-volatile device",
    "HBM",
    "HBM2",
    "DDR5",
    "LPDDR5",
    "HBM3",
];

/// Whether a DMI string is worth reporting (not empty, not only spaces).
fn useful(s: &str) -> bool {
    !s.is_empty() && !s.bytes().all(|b| b == b' ')
}

/// The infos of one SMBIOS type-17 (memory device) entry, or `None` for an
/// empty slot or an entry too short to use.
pub(crate) fn memory_device_infos(raw: &[u8]) -> Option<Vec<Info>> {
    // hwloc reads a 32-byte header and needs the 27 bytes of SMBIOS 2.3.
    if raw.len() < 32 || (raw[1] as usize) < 27 {
        return None;
    }
    let length = raw[1] as usize;
    let mut infos: Vec<Info> = Vec::new();
    let mut found = false;
    let push = |infos: &mut Vec<Info>, n: &str, v: &str| {
        infos.push(Info {
            name: n.into(),
            value: v.into(),
        })
    };
    let strings = raw.get(length..).unwrap_or(&[]);
    for (i, s) in strings.split(|&b| b == 0).enumerate() {
        let num = (i + 1) as u8;
        if s.is_empty() || i >= 255 {
            break;
        }
        let s = String::from_utf8_lossy(&s[..s.len().min(255)]).into_owned();
        let name = if num == raw[23] {
            found |= useful(&s);
            "Vendor"
        } else if num == raw[24] {
            found |= useful(&s);
            "SerialNumber"
        } else if num == raw[25] {
            found |= useful(&s);
            "AssetTag"
        } else if num == raw[26] {
            found |= useful(&s);
            "PartNumber"
        } else if num == raw[16] {
            "DeviceLocation"
        } else if num == raw[17] {
            "BankLocation"
        } else {
            break;
        };
        if useful(&s) {
            push(&mut infos, name, &s);
        }
    }
    if !found {
        return None;
    }
    let ff = raw[14] as usize;
    if (1..=FORM_FACTORS.len()).contains(&ff) {
        push(&mut infos, "FormFactor", FORM_FACTORS[ff - 1]);
    }
    let mt = raw[18] as usize;
    if (1..=MEMORY_TYPES.len()).contains(&mt) {
        push(&mut infos, "Type", MEMORY_TYPES[mt - 1]);
    }
    let code = u16::from_le_bytes([raw[12], raw[13]]);
    if code != 0xffff {
        let kib: u64 = if length >= 32 && code == 0x7fff {
            (u32::from_le_bytes([raw[28], raw[29], raw[30], raw[31]]) & 0x7fff_ffff) as u64 * 1024
        } else if code & 0x8000 != 0 {
            (code & 0x7fff) as u64
        } else {
            (code & 0x7fff) as u64 * 1024
        };
        push(&mut infos, "Size", &format!("{kib}KiB"));
    }
    if length >= 28 && raw[27] != 0 {
        push(&mut infos, "Rank", &(raw[27] & 0x0f).to_string());
    }
    Some(infos)
}

impl Ctx<'_> {
    pub(crate) fn dmi_memory_modules(&mut self) {
        for i in 0..MAX_ENTRIES {
            let Some(raw) = self.read(&format!("/sys/firmware/dmi/entries/17-{i}/raw")) else {
                break;
            };
            if raw.len() < 32 || raw[1] < 27 {
                break;
            }
            let Some(infos) = memory_device_infos(&raw) else {
                continue;
            };
            let mut misc = Object::new(ObjType::Misc, Some(i));
            misc.subtype = Some("MemoryModule".into());
            misc.infos = infos;
            let root = self.topo.root();
            // The root takes Misc children: this cannot be refused.
            let _ = self.topo.insert_by_parent(root, misc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(strings: &[&str], size: u16) -> Vec<u8> {
        let mut raw = vec![0u8; 34];
        raw[0] = 17;
        raw[1] = 34;
        raw[12..14].copy_from_slice(&size.to_le_bytes());
        raw[14] = 9; // DIMM
        raw[16] = 1;
        raw[17] = 2;
        raw[18] = 26; // DDR4
        raw[23] = 3;
        raw[24] = 4;
        raw[27] = 2;
        for s in strings {
            raw.extend_from_slice(s.as_bytes());
            raw.push(0);
        }
        raw.push(0);
        raw
    }

    #[test]
    fn parses_memory_devices() {
        let raw = entry(&["DIMM_A1", "BANK 0", "Samsung", "1234"], 16384);
        let infos = memory_device_infos(&raw).unwrap();
        let get = |n: &str| infos.iter().find(|i| i.name == n).map(|i| i.value.as_str());
        assert_eq!(get("Vendor"), Some("Samsung"));
        assert_eq!(get("DeviceLocation"), Some("DIMM_A1"));
        assert_eq!(get("FormFactor"), Some("DIMM"));
        assert_eq!(get("Type"), Some("DDR4"));
        assert_eq!(get("Size"), Some("16777216KiB"));
        assert_eq!(get("Rank"), Some("2"));
        // Empty slot: only locations.
        assert!(memory_device_infos(&entry(&["DIMM_A2", "BANK 1", " ", " "], 0)).is_none());
        // Truncated entries.
        assert!(memory_device_infos(&[17, 40, 0]).is_none());
        let mut short = entry(&[], 0);
        short[1] = 10;
        assert!(memory_device_infos(&short).is_none());
    }
}
