//! DMI identification infos of the machine.

use wloc_core::object::Info;

use crate::ctx::{Ctx, truncate};

/// hwloc's DMI files of `/sys/class/dmi/id`, with the info name each gives
/// the root object.
pub const DMI_FILES: [(&str, &str); 18] = [
    ("product_name", "DMIProductName"),
    ("product_version", "DMIProductVersion"),
    ("product_serial", "DMIProductSerial"),
    ("product_uuid", "DMIProductUUID"),
    ("board_vendor", "DMIBoardVendor"),
    ("board_name", "DMIBoardName"),
    ("board_version", "DMIBoardVersion"),
    ("board_serial", "DMIBoardSerial"),
    ("board_asset_tag", "DMIBoardAssetTag"),
    ("chassis_vendor", "DMIChassisVendor"),
    ("chassis_type", "DMIChassisType"),
    ("chassis_version", "DMIChassisVersion"),
    ("chassis_serial", "DMIChassisSerial"),
    ("chassis_asset_tag", "DMIChassisAssetTag"),
    ("bios_vendor", "DMIBIOSVendor"),
    ("bios_version", "DMIBIOSVersion"),
    ("bios_date", "DMIBIOSDate"),
    ("sys_vendor", "DMISysVendor"),
];

/// Where the DMI files are looked for, in order (`/sys/class/dmi/id`
/// links to the first).
pub const DMI_FOLDERS: [&str; 2] = ["/sys/devices/virtual/dmi/id", "/sys/class/dmi/id"];

impl Ctx<'_> {
    /// `DMI*` infos of the root object, from `/sys/class/dmi/id`.
    pub(crate) fn dmi_id_infos(&mut self) {
        let Some(dir) = DMI_FOLDERS.into_iter().find(|d| self.fs.list(d).is_some()) else {
            return;
        };
        let paths: Vec<String> = DMI_FILES
            .iter()
            .map(|(f, _)| format!("{dir}/{f}"))
            .collect();
        let res = self.read_batch(&paths);
        let root = self.topo.root_mut();
        for ((_, name), b) in DMI_FILES.iter().zip(res) {
            let Some(b) = b else { continue };
            // hwloc reads at most 63 bytes and ignores empty files.
            let b = &b[..b.len().min(63)];
            if b.is_empty() || b[0] == 0 {
                continue;
            }
            let line = crate::parse::first_line(b);
            root.infos.push(Info {
                name: (*name).into(),
                value: truncate(&line, 63),
            });
        }
    }
}
