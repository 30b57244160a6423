//! PCI class names as hwloc gives them (`hwloc_pci_class_string`), for
//! the console output and the C library alike.

/// hwloc's name for a PCI class (`hwloc_pci_class_string`): `Ethernet`,
/// `SATA`, `VGA`, ... or `Other`.
#[doc(alias = "hwloc_pci_class_string")]
pub fn class_string(class_id: u16) -> &'static str {
    let [base, sub] = class_id.to_be_bytes();
    let specific = match (base, sub) {
        (0x00, 0x01) => Some("VGA"),
        (0x01, 0x00) => Some("SCSI"),
        (0x01, 0x01) => Some("IDE"),
        (0x01, 0x02) => Some("Floppy"),
        (0x01, 0x03) => Some("IPI"),
        (0x01, 0x04) => Some("RAID"),
        (0x01, 0x05) => Some("ATA"),
        (0x01, 0x06) => Some("SATA"),
        (0x01, 0x07) => Some("SAS"),
        (0x01, 0x08) => Some("NVMExp"),
        (0x02, 0x00) => Some("Ethernet"),
        (0x02, 0x01) => Some("TokenRing"),
        (0x02, 0x02) => Some("FDDI"),
        (0x02, 0x03) => Some("ATM"),
        (0x02, 0x04) => Some("ISDN"),
        (0x02, 0x05) => Some("WorldFip"),
        (0x02, 0x06) => Some("PICMG"),
        (0x02, 0x07) => Some("InfiniBand"),
        (0x02, 0x08) => Some("Fabric"),
        (0x03, 0x00) => Some("VGA"),
        (0x03, 0x01) => Some("XGA"),
        (0x03, 0x02) => Some("3D"),
        (0x04, 0x00) => Some("MultimediaVideo"),
        (0x04, 0x01) => Some("MultimediaAudio"),
        (0x04, 0x02) => Some("Telephony"),
        (0x04, 0x03) => Some("AudioDevice"),
        (0x05, 0x00) => Some("RAM"),
        (0x05, 0x01) => Some("Flash"),
        (0x05, 0x02) => Some("CXLMem"),
        (0x06, 0x00) => Some("HostBridge"),
        (0x06, 0x01) => Some("ISABridge"),
        (0x06, 0x02) => Some("EISABridge"),
        (0x06, 0x03) => Some("MicroChannelBridge"),
        (0x06, 0x04) => Some("PCIBridge"),
        (0x06, 0x05) => Some("PCMCIABridge"),
        (0x06, 0x06) => Some("NubusBridge"),
        (0x06, 0x07) => Some("CardBusBridge"),
        (0x06, 0x08) => Some("RACEwayBridge"),
        (0x06, 0x09) => Some("SemiTransparentPCIBridge"),
        (0x06, 0x0a) => Some("InfiniBandPCIHostBridge"),
        (0x07, 0x00) => Some("Serial"),
        (0x07, 0x01) => Some("Parallel"),
        (0x07, 0x02) => Some("MultiportSerial"),
        (0x07, 0x03) => Some("Model"),
        (0x07, 0x04) => Some("GPIB"),
        (0x07, 0x05) => Some("SmartCard"),
        (0x08, 0x00) => Some("PIC"),
        (0x08, 0x01) => Some("DMA"),
        (0x08, 0x02) => Some("Timer"),
        (0x08, 0x03) => Some("RTC"),
        (0x08, 0x04) => Some("PCIHotPlug"),
        (0x08, 0x05) => Some("SDHost"),
        (0x08, 0x06) => Some("IOMMU"),
        (0x09, 0x00) => Some("Keyboard"),
        (0x09, 0x01) => Some("DigitizerPen"),
        (0x09, 0x02) => Some("Mouse"),
        // Sic: hwloc spells it this way.
        (0x09, 0x03) => Some("Scanern"),
        (0x09, 0x04) => Some("Gameport"),
        (0x0b, 0x00) => Some("386"),
        (0x0b, 0x01) => Some("486"),
        (0x0b, 0x02) => Some("Pentium"),
        (0x0b, 0x10) => Some("Alpha"),
        (0x0b, 0x20) => Some("PowerPC"),
        (0x0b, 0x30) => Some("MIPS"),
        (0x0b, 0x40) => Some("Co-Processor"),
        (0x0c, 0x00) => Some("FireWire"),
        (0x0c, 0x01) => Some("ACCESS"),
        (0x0c, 0x02) => Some("SSA"),
        (0x0c, 0x03) => Some("USB"),
        (0x0c, 0x04) => Some("FibreChannel"),
        (0x0c, 0x05) => Some("SMBus"),
        (0x0c, 0x06) => Some("InfiniBand"),
        (0x0c, 0x07) => Some("IPMI-SMIC"),
        (0x0c, 0x08) => Some("SERCOS"),
        (0x0c, 0x09) => Some("CANBUS"),
        (0x0d, 0x00) => Some("IRDA"),
        (0x0d, 0x01) => Some("ConsumerIR"),
        (0x0d, 0x10) => Some("RF"),
        (0x0d, 0x11) => Some("Bluetooth"),
        (0x0d, 0x12) => Some("Broadband"),
        (0x0d, 0x20) => Some("802.1a"),
        (0x0d, 0x21) => Some("802.1b"),
        (0x0e, 0x00) => Some("I2O"),
        _ => None,
    };
    if let Some(s) = specific {
        return s;
    }
    match base {
        0x01 => "Storage",
        0x02 => "Network",
        0x03 => "Display",
        0x04 => "Multimedia",
        0x05 => "Memory",
        0x06 => "Bridge",
        0x07 => "Communication",
        0x08 => "SystemPeripheral",
        0x09 => "Input",
        0x0a => "DockingStation",
        0x0b => "Processor",
        0x0c => "SerialBus",
        0x0d => "Wireless",
        0x0e => "Intelligent",
        0x0f => "Satellite",
        0x10 => "Encryption",
        0x11 => "SignalProcessing",
        0x12 => "ProcessingAccelerator",
        0x13 => "Instrumentation",
        0x40 => "Co-Processor",
        _ => "Other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_follow_hwloc() {
        assert_eq!(class_string(0x0200), "Ethernet");
        assert_eq!(class_string(0x0280), "Network");
        assert_eq!(class_string(0x0001), "VGA");
        assert_eq!(class_string(0x0002), "Other");
        assert_eq!(class_string(0x0903), "Scanern");
        assert_eq!(class_string(0x0b40), "Co-Processor");
        assert_eq!(class_string(0x4012), "Co-Processor");
        assert_eq!(class_string(0x1234), "ProcessingAccelerator");
        assert_eq!(class_string(0x2034), "Other");
    }
}
