use super::*;

const PORTS: &str = "\
CA     5  1 0x0002c90300000011 4x QDR - SW     1  1 0x00000000000000aa ( 'alpha HCA-1' - 'leaf <one>' )
CA     6  1 0x0002c90300000021 4x QDR - SW     1  2 0x00000000000000aa ( 'beta HCA-1' - 'leaf <one>' )
CA     7  1 0x0002c90300000031 4x QDR - SW     2  1 0x00000000000000bb ( 'gamma HCA-1' - 'leaf \"two\"' )
SW     1  5 0x00000000000000aa 4x QDR - SW     3  1 0x00000000000000cc ( 'leaf <one>' - 'spine' )
SW     1  6 0x00000000000000aa 4x QDR - SW     3  2 0x00000000000000cc ( 'leaf <one>' - 'spine' )
SW     2  5 0x00000000000000bb 4x DDR - SW     3  3 0x00000000000000cc ( 'leaf \"two\"' - 'spine' )
";

fn fabric() -> Fabric {
    let s = wloc_ib::parse_ports_report("fe80:0000:0000:0000", PORTS).unwrap();
    Fabric::build(vec![s], vec![]).unwrap()
}

#[test]
fn counts_rates_and_queries() {
    let f = fabric();
    let s = &f.summary()[0];
    assert_eq!(
        (s.switches, s.adapters, s.hosts, s.cables, s.edges),
        (3, 3, 0, 6, 5)
    );
    let g = &f.subnets[0];
    let (a, c) = (g.by_guid[&0xaa], g.by_guid[&0xcc]);
    let e = g.graph.find_edge(a, c).unwrap();
    assert_eq!(g.graph[e].cables.len(), 2);
    assert_eq!(g.graph[e].gbps(), 64.0);
    let alpha = f.host("alpha").unwrap();
    let gamma = f.host("gamma").unwrap();
    let r = f.path(alpha, gamma).unwrap();
    assert!(!r.from_tables);
    assert_eq!(r.nodes.len(), 5);
    let near: Vec<_> = f
        .near(alpha, 2)
        .into_iter()
        .map(|(d, h)| (d, f.hosts[h].name.clone()))
        .collect();
    assert_eq!(near, vec![(2, "beta".to_string())]);
    assert_eq!(f.near(alpha, 4).len(), 2);
    assert_eq!(f.hosts_under(0xaa).unwrap(), vec!["alpha", "beta"]);
    let lv = f.switch_levels(0);
    assert_eq!(lv.iter().map(|x| x.1).collect::<Vec<_>>(), vec![1, 1, 2]);
    assert!(f.local(alpha, gamma).unwrap_err().contains("no topology"));
}

#[test]
fn routes_from_tables_and_loops() {
    let mut s = wloc_ib::parse_ports_report("x", PORTS).unwrap();
    let table = |sw: u64, lid: u32, e: &[(u32, u32)]| wloc_ib::RouteTable {
        switch: sw,
        lid,
        entries: e
            .iter()
            .enumerate()
            .map(|(i, &(lid, port))| wloc_ib::RouteEntry {
                lid,
                port,
                dest: None,
                line: i + 4,
            })
            .collect(),
    };
    s.routes = vec![
        table(0xaa, 1, &[(5, 1), (6, 2), (7, 5)]),
        table(0xcc, 3, &[(5, 1), (6, 1), (7, 3)]),
        table(0xbb, 2, &[(5, 5), (6, 5), (7, 1)]),
    ];
    let f = Fabric::build(vec![s.clone()], vec![]).unwrap();
    assert_eq!(f.check_routes().unwrap(), 6);
    let r = f
        .path(f.host("alpha").unwrap(), f.host("gamma").unwrap())
        .unwrap();
    assert!(r.from_tables);
    assert_eq!(r.ports, vec![1, 5, 3, 1]);
    // A loop: the spine sends LID 7 back to leaf one, which sends it up.
    s.routes[1] = table(0xcc, 3, &[(5, 1), (6, 1), (7, 1)]);
    let f = Fabric::build(vec![s], vec![]).unwrap();
    let e = f.check_routes().unwrap_err();
    assert!(e.contains("loops"), "{e}");
}

#[test]
fn exports_are_well_formed() {
    let f = fabric();
    for x in [export::graphml(&f), export::gexf(&f), export::svg(&f)] {
        let d = roxmltree::Document::parse(&x).unwrap();
        assert!(d.descendants().count() > 10);
    }
    let g = export::graphml(&f);
    let d = roxmltree::Document::parse(&g).unwrap();
    assert_eq!(
        d.descendants().filter(|n| n.has_tag_name("node")).count(),
        6
    );
    assert_eq!(
        d.descendants().filter(|n| n.has_tag_name("edge")).count(),
        5
    );
    assert!(g.contains("leaf &lt;one&gt;"));
    let dot = export::dot(&f);
    assert!(dot.contains("leaf \\\"two\\\""));
    assert!(dot.contains("64 Gb/s"));
    let j = export::json(&f);
    assert_eq!(j["subnets"][0]["edges"].as_array().unwrap().len(), 5);
}
