use super::*;
use proptest::prelude::*;

const PORTS: &str = "\
DR path slid 0; dlid 0; 0 -> new Channel Adapter {0002c90300000010} portnum 1 lid 0-0 \"\"
DR path slid 0; dlid 0; 0,1 -> new Switch {0008f10500000001} portnum 0 lid 0-0 \"\"
DR path slid 0; dlid 0; 0,1,2 -> new Channel Adapter {0002c90300000020} portnum 1 lid 0-0 \"\"
DR path slid 0; dlid 0; 0,1,3 -> known Channel Adapter {0002c90300000020} portnum 2 lid 0-0 \"\"
CA     5  1 0x0002c90300000011 4x QDR - SW     1  1 0x0008f10500000001 ( 'alpha HCA-1' - 'leaf one' )
SW     1  1 0x0008f10500000001 4x QDR - CA     5  1 0x0002c90300000011 ( 'leaf one' - 'alpha HCA-1' )
SW     1  2 0x0008f10500000001 4x FDR10 - CA     6  1 0x0002c90300000021 ( 'leaf one' - 'beta HCA-1' )
SW     1  3 0x0008f10500000001 12x EDR - CA     7  2 0x0002c90300000022 ( 'leaf one' - 'beta HCA-1' )
SW     1  4 0x0008f10500000001 4x ???                                    'leaf one'
";

#[test]
fn ports_report() {
    let s = parse_ports_report("fe80:0000:0000:0000", PORTS).unwrap();
    assert_eq!(s.links.len(), 3);
    let sw: Vec<_> = s
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Switch)
        .collect();
    assert_eq!(sw.len(), 1);
    assert_eq!(sw[0].ports.len(), 4);
    assert_eq!(sw[0].port(4).unwrap().speed, None);
    // Both ports of beta's adapter are one node, known by its node GUID.
    let cas: Vec<_> = s.nodes.iter().filter(|n| n.kind == NodeKind::Ca).collect();
    assert_eq!(cas.len(), 2);
    let beta = cas.iter().find(|n| n.description == "beta HCA-1").unwrap();
    assert_eq!(beta.guid, 0x0002c90300000020);
    assert_eq!(beta.ports.len(), 2);
    assert_eq!(beta.port(2).unwrap().guid, 0x0002c90300000022);
    let l = s.links.iter().find(|l| l.width == Some(12)).unwrap();
    assert_eq!(l.b.node, 0x0002c90300000020);
    // alpha's own node GUID is not reachable from a switch: port GUID.
    assert!(cas.iter().any(|n| n.guid == 0x0002c90300000011));
}

#[test]
fn rates() {
    assert_eq!(data_gbps(Some(4), Some(Speed::Qdr)), 32.0);
    assert_eq!(data_gbps(Some(4), Some(Speed::Sdr)), 8.0);
    assert_eq!(data_gbps(Some(1), Some(Speed::Ddr)), 4.0);
    assert_eq!(data_gbps(Some(4), Some(Speed::Fdr10)), 40.0);
    assert!((data_gbps(Some(4), Some(Speed::Fdr)) - 54.545).abs() < 0.01);
    assert_eq!(data_gbps(Some(4), Some(Speed::Edr)), 100.0);
    assert_eq!(data_gbps(Some(4), Some(Speed::Hdr)), 200.0);
    assert_eq!(data_gbps(Some(4), Some(Speed::Ndr)), 400.0);
    assert_eq!(data_gbps(Some(12), Some(Speed::Xdr)), 2400.0);
    assert_eq!(data_gbps(Some(4), None), 0.0);
}

/// Written from the description of the topology file in rdma-core's
/// ibnetdiscover(8): a switch block, two adapter blocks.
pub const TOPOLOGY: &str = "\
#
# Topology file: generated on Tue Jun  5 14:15:10 2007
#
# Max of 3 hops discovered
# Initiated from node 0008f10403960558 port 0008f10403960559

vendid=0x8f1
devid=0x5a06
sysimgguid=0x5442ba00003000
switchguid=0x5442ba00003080(5442ba00003080)
Switch  24 \"S-005442ba00003080\"         # \"ISR9024 Voltaire\" base port 0 lid 6 lmc 0
[22]    \"H-0008f10403961354\"[1](8f10403961355)         # \"MT23108 InfiniHost Mellanox Technologies\" lid 4 4xSDR
[10]    \"S-0008f10400410015\"[1]         # \"SW-6IB4 Voltaire\" lid 3 4xSDR
[8]     \"H-0008f10403960558\"[2](8f1040396055a)         # \"MT23108 InfiniHost Mellanox Technologies\" lid 14 4xSDR

vendid=0x8f1
devid=0x5a05
switchguid=0x8f10400410015(8f10400410015)
Switch  8 \"S-0008f10400410015\"          # \"SW-6IB4 Voltaire\" base port 0 lid 3 lmc 0
[6]     \"H-0008f10403960984\"[1](8f10403960985)         # \"MT23108 InfiniHost Mellanox Technologies\" lid 16 4xSDR
[1]     \"S-005442ba00003080\"[10]                # \"ISR9024 Voltaire\" lid 6 1xSDR

vendid=0x2c9
devid=0x5a44
caguid=0x8f10403960558
Ca      2 \"H-0008f10403960558\"          # \"MT23108 InfiniHost Mellanox Technologies\"
[2](8f1040396055a)      \"S-005442ba00003080\"[8]          # lid 14 lmc 0 \"ISR9024 Voltaire\" lid 6 4xSDR
";

#[test]
fn topology_file() {
    assert_eq!(detect(TOPOLOGY), Some(Format::TopologyFile));
    let s = parse_topology_file("t", TOPOLOGY).unwrap();
    // Cables: 22, 10 (seen twice), 8 (seen twice), 6.
    assert_eq!(s.links.len(), 4);
    assert_eq!(
        s.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .count(),
        2
    );
    assert_eq!(s.nodes.iter().filter(|n| n.kind == NodeKind::Ca).count(), 3);
    let ca = s
        .nodes
        .iter()
        .find(|n| n.guid == 0x0008f10403960558)
        .unwrap();
    let p = ca.port(2).unwrap();
    assert_eq!((p.guid, p.lid), (0x8f1040396055a, 14));
    let sw = s
        .nodes
        .iter()
        .find(|n| n.guid == 0x005442ba00003080)
        .unwrap();
    assert_eq!(sw.port(22).unwrap().lid, 6);
    assert_eq!(sw.description, "ISR9024 Voltaire");
}

#[test]
fn topology_file_conflicting_cable() {
    let bad = TOPOLOGY.replace(
        "[1]     \"S-005442ba00003080\"[10]",
        "[1]     \"S-005442ba00003080\"[11]",
    );
    let e = parse_topology_file("t", &bad).unwrap_err();
    assert_eq!(e.line, 21, "{e}");
    assert!(e.message.contains("cabled"), "{e}");
}

const ROUTE: &str = "\
Unicast lids [0x0-0x7] of switch Lid 1 guid 0x0008f10500000001 (leaf one):
  Lid  Out   Destination
       Port     Info 
0x0001 000 : (Switch portguid 0x0008f10500000001: 'leaf one')
0x0005 001 : (Channel Adapter portguid 0x0002c90300000011: 'alpha HCA-1')
0x0006 002 : (Channel Adapter portguid 0x0002c90300000021: 'beta HCA-1')
3 valid lids dumped 
";

#[test]
fn ibroute() {
    let t = parse_ibroute(ROUTE).unwrap();
    assert_eq!((t.switch, t.lid), (0x0008f10500000001, 1));
    assert_eq!(t.entries.len(), 3);
    assert_eq!(t.entries[1].line, 5);
    assert_eq!(t.entries[2].dest, Some(0x0002c90300000021));
    // Truncated: the trailer does not match.
    let cut: String = ROUTE
        .lines()
        .filter(|l| !l.starts_with("0x0006"))
        .collect::<Vec<_>>()
        .join("\n");
    let e = parse_ibroute(&cut).unwrap_err();
    assert!(e.message.contains("truncated"), "{e}");
    assert_eq!(e.line, 6);
    let e = parse_ibroute(&ROUTE.replace("0x0006 002", "0x0006 abc")).unwrap_err();
    assert_eq!(e.line, 6);
}

#[test]
fn ibroute_ending_with_the_tools_error_keeps_its_entries() {
    for error in [
        "ibroute: iberror: failed: dump tables: linear forwarding table get failed",
        "/usr/sbin/ibroute: iberror: failed: dump tables: linear forwarding table get failed",
    ] {
        // The tool stops after the entries it read: no trailer.
        let text = ROUTE.replace("3 valid lids dumped \n", &format!("{error}\n"));
        let (t, stop) = parse_ibroute_partial(&text).unwrap();
        assert_eq!(t.entries.len(), 3);
        assert_eq!(t.entries[2].lid, 6);
        let stop = stop.expect("the stop is reported");
        assert_eq!(stop.line, 7);
        assert!(stop.message.contains("3 entries"), "{stop}");
        assert!(
            stop.message.contains("linear forwarding table get failed"),
            "{stop}"
        );
        // The strict parser refuses it, naming the same line.
        assert_eq!(parse_ibroute(&text).unwrap_err().line, 7);
        let (subnets, w) = read_files(&[
            ("ib-subnet-s.txt".into(), PORTS.into()),
            ("ibroute-s-1.txt".into(), text.clone()),
        ])
        .unwrap();
        assert_eq!(subnets[0].routes.len(), 1, "the table is kept");
        assert_eq!(subnets[0].routes[0].entries.len(), 3);
        assert_eq!(w.len(), 1, "one warning");
        assert!(
            w[0].to_string()
                .starts_with("ibroute-s-1.txt:7: the dump stops"),
            "{}",
            w[0]
        );
        assert!(!w[0].to_string().contains("left out"), "{}", w[0]);
    }
    // Only the error: no table at all.
    assert!(parse_ibroute_partial("ibroute: iberror: failed: x\n").is_err());
    // A program that merely ends in `ibroute` is not the tool's error.
    assert!(!is_iberror("myibroute: iberror: x"));
    assert!(is_iberror("/opt/x/ibroute: iberror: failed"));
    // A table truncated without the tool's error is still left out.
    let cut = ROUTE.replace(
        "0x0006 002 : (Channel Adapter portguid 0x0002c90300000021: 'beta HCA-1')\n",
        "",
    );
    let (subnets, w) = read_files(&[
        ("ib-subnet-s.txt".into(), PORTS.into()),
        ("ibroute-s-1.txt".into(), cut),
    ])
    .unwrap();
    assert!(subnets[0].routes.is_empty());
    assert!(
        w[0].to_string()
            .ends_with("this forwarding table is left out"),
        "{}",
        w[0]
    );
}

#[test]
fn garbage_is_an_error_with_a_line() {
    let e = parse_ports_report("x", "CA 1 1 0x12 4x QDR\nCA x").unwrap_err();
    assert_eq!(e.line, 2);
    let e = parse_ports_report("x", &PORTS.replace("4x FDR10", "5x FDR10")).unwrap_err();
    assert_eq!(e.line, 7);
    assert!(e.message.contains("width"));
    let e = parse_ports_report("x", &PORTS.replace("12x EDR", "12x ZDR")).unwrap_err();
    assert!(e.message.contains("speed"), "{e}");
    let long = format!("CA 1 1 0x12 4x QDR '{}'", "a".repeat(300));
    assert!(
        parse_ports_report("x", &long)
            .unwrap_err()
            .message
            .contains("bytes long")
    );
    assert!(parse_ports_report("x", "").is_err());
    let (_, w) = read_files(&[
        ("ib-subnet-s.txt".into(), PORTS.into()),
        (
            "ibroute-s-1.txt".into(),
            ROUTE.replace("3 valid", "4 valid"),
        ),
    ])
    .unwrap();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].to_string().starts_with("ibroute-s-1.txt:7: "),
        "{}",
        w[0]
    );
    let e = read_files(&[("a.txt".into(), "hello".into())]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "a.txt:1: not a ports report, topology file or ibroute table"
    );
}

#[test]
fn subnet_names() {
    assert_eq!(
        subnet_of_file("x/ib-subnet-fe80:0000:0000:0001.txt"),
        "fe80:0000:0000:0001"
    );
    assert_eq!(
        subnet_of_file("ibroute-fe80:0000:0000:0001-142.txt"),
        "fe80:0000:0000:0001"
    );
}

fn speed_strategy() -> impl Strategy<Value = Option<Speed>> {
    prop_oneof![Just(None), (0usize..9).prop_map(|i| Some(SPEEDS[i]))]
}

proptest! {
    /// Any text: an answer or an error, never a panic.
    #[test]
    fn never_panics(s in "\\PC{0,400}") {
        let _ = parse_ports_report("x", &s);
        let _ = parse_topology_file("x", &s);
        let _ = parse_ibroute(&s);
    }

    /// Lines that look almost right: never a panic.
    #[test]
    fn mutated_lines_never_panic(cut in 0usize..PORTS.len(), junk in "[ -~]{0,12}") {
        let mut s = PORTS.to_string();
        let mut at = cut;
        while !s.is_char_boundary(at) { at -= 1; }
        s.insert_str(at, &junk);
        let _ = parse_ports_report("x", &s);
        let t = TOPOLOGY.get(..cut.min(TOPOLOGY.len())).unwrap_or("");
        let _ = parse_topology_file("x", &format!("{t}{junk}"));
    }

    /// A generated star (one switch, N adapters at random rates) is
    /// read back as written, from both directions of each cable.
    #[test]
    fn generated_report_round_trips(rates in proptest::collection::vec(((0usize..5), speed_strategy()), 1..40)) {
        let mut text = String::new();
        for (i, (w, s)) in rates.iter().enumerate() {
            let p = i + 1;
            let sp = s.map_or("???", |s| s.name());
            let w = WIDTHS[*w];
            text.push_str(&format!(
                "CA {} 1 0x{:016x} {w}x {sp} - SW 1 {p} 0x00000000000000aa ( 'h{i} HCA-1' - 'sw' )\n",
                p + 1, 0x1000 + i));
            text.push_str(&format!(
                "SW 1 {p} 0x00000000000000aa {w}x {sp} - CA {} 1 0x{:016x} ( 'sw' - 'h{i} HCA-1' )\n",
                p + 1, 0x1000 + i));
        }
        let s = parse_ports_report("x", &text).unwrap();
        prop_assert_eq!(s.links.len(), rates.len());
        prop_assert_eq!(s.nodes.len(), rates.len() + 1);
        for (i, (w, sp)) in rates.iter().enumerate() {
            let l = s.links.iter().find(|l| l.a.node == 0x1000 + i as u64).unwrap();
            prop_assert_eq!(l.width, Some(WIDTHS[*w]));
            prop_assert_eq!(l.speed, *sp);
        }
    }
}
