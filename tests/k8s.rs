//! `wloc k8s nrt`: the NodeResourceTopology object of every conformance
//! XML case, validated against the v1alpha2 CRD's OpenAPI v3 schema
//! (`tests/data/noderesourcetopology-v1alpha2.schema.json`), its YAML
//! and JSON forms the same object, and its zones adding up to the
//! topology `wloc ls --of json --disallowed` shows.

use crate::common;

use serde_json::{Map, Value};

/// The CRD's quantity pattern, the one `pattern` of the schema.
const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/// `[0-9]+(\.[0-9]*)?|\.[0-9]+` at the start of `s`: the rest.
fn number(s: &str) -> Option<&str> {
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let d = digits(s);
    if d > 0 {
        let rest = &s[d..];
        match rest.strip_prefix('.') {
            Some(r) => Some(&r[digits(r)..]),
            None => Some(rest),
        }
    } else {
        let r = s.strip_prefix('.')?;
        let d = digits(r);
        (d > 0).then(|| &r[d..])
    }
}

/// Whether `s` matches [`QUANTITY_PATTERN`], by hand (no regex crate).
fn is_quantity(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let Some(rest) = number(s) else {
        return false;
    };
    match rest {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        r => match r.strip_prefix(['e', 'E']) {
            Some(e) => {
                let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                number(e) == Some("")
            }
            None => false,
        },
    }
}

/// Checks `v` against the OpenAPI v3 `schema` (the keywords the CRD
/// uses: type, format int64, properties, required, items, anyOf,
/// pattern, enum, additionalProperties); errors name the path.  Fields
/// the schema does not list are also errors: Kubernetes would prune
/// them silently.  An unknown keyword fails the test, so the checker
/// never skips what the schema says.
fn validate(v: &Value, schema: &Value, path: &str, errors: &mut Vec<String>) {
    let s = schema.as_object().expect("a schema is an object");
    for k in s.keys() {
        assert!(
            [
                "$comment",
                "type",
                "format",
                "properties",
                "required",
                "items",
                "anyOf",
                "pattern",
                "enum",
                "additionalProperties",
                "x-kubernetes-int-or-string",
            ]
            .contains(&k.as_str()),
            "schema keyword {k} at {path} not handled"
        );
    }
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "number" => v.is_number(),
            other => panic!("type {other} not handled"),
        };
        if !ok {
            errors.push(format!("{path}: not of type {t}: {v}"));
            return;
        }
    }
    if s.get("format").and_then(Value::as_str) == Some("int64") && !v.is_i64() {
        errors.push(format!("{path}: not an int64: {v}"));
    }
    if let Some(alts) = s.get("anyOf").and_then(Value::as_array) {
        let fits = alts.iter().any(|a| {
            let mut e = Vec::new();
            validate(v, a, path, &mut e);
            e.is_empty()
        });
        if !fits {
            errors.push(format!("{path}: matches none of anyOf: {v}"));
        }
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        assert_eq!(p, QUANTITY_PATTERN, "only the quantity pattern is handled");
        if let Some(text) = v.as_str()
            && !is_quantity(text)
        {
            errors.push(format!("{path}: {text:?} is not a quantity"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        errors.push(format!("{path}: {v} not in enum {e:?}"));
    }
    if let Some(items) = s.get("items") {
        for (i, item) in v.as_array().into_iter().flatten().enumerate() {
            validate(item, items, &format!("{path}[{i}]"), errors);
        }
    }
    if let Some(obj) = v.as_object() {
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().expect("required names");
            if !obj.contains_key(r) {
                errors.push(format!("{path}: required field {r} missing"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, fv) in obj {
            let sub = format!("{path}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => validate(fv, ps, &sub, errors),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{sub}: not allowed")),
                    Some(a @ Value::Object(_)) => validate(fv, a, &sub, errors),
                    // No properties listed (metadata): anything goes.
                    _ if props.is_none() => {}
                    _ => errors.push(format!("{sub}: not in the schema (would be pruned)")),
                },
            }
        }
    }
}

/// The YAML `wloc k8s nrt` writes, read back: block mappings and
/// sequences (`- ` items at their key's indentation or deeper),
/// double-quoted strings (JSON escapes), integers and `[]`.
fn read_yaml(text: &str) -> Value {
    let lines: Vec<(usize, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (l.len() - l.trim_start().len(), l.trim_start().to_string()))
        .collect();
    let mut lines = lines;
    let mut i = 0;
    let v = block(&mut lines, &mut i, 0);
    assert_eq!(i, lines.len(), "YAML left unread at line {i}");
    v
}

fn scalar(s: &str) -> Value {
    if s == "[]" {
        Value::Array(Vec::new())
    } else if s.starts_with('"') {
        Value::String(serde_json::from_str(s).expect("a double-quoted scalar"))
    } else {
        Value::Number(s.parse::<i64>().expect("an integer").into())
    }
}

fn block(lines: &mut [(usize, String)], i: &mut usize, indent: usize) -> Value {
    if lines[*i].1.starts_with("- ") {
        let mut items = Vec::new();
        while *i < lines.len() && lines[*i].0 == indent && lines[*i].1.starts_with("- ") {
            let rest = lines[*i].1[2..].to_string();
            lines[*i] = (indent + 2, rest);
            items.push(mapping(lines, i, indent + 2));
        }
        Value::Array(items)
    } else {
        mapping(lines, i, indent)
    }
}

fn mapping(lines: &mut [(usize, String)], i: &mut usize, indent: usize) -> Value {
    let mut m = Map::new();
    while *i < lines.len() && lines[*i].0 == indent && !lines[*i].1.starts_with("- ") {
        let line = lines[*i].1.clone();
        let (k, rest) = line.split_once(':').expect("key: value");
        let rest = rest.trim();
        *i += 1;
        let v = if rest.is_empty() {
            let (next, content) = (lines[*i].0, &lines[*i].1);
            assert!(next > indent || (next == indent && content.starts_with("- ")));
            block(lines, i, next)
        } else {
            scalar(rest)
        };
        assert!(m.insert(k.to_string(), v).is_none(), "key {k} twice");
    }
    Value::Object(m)
}

/// The objects of `wloc ls --of json` (every array of typed objects).
fn objects<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(o) => {
            if o.contains_key("type") && o.contains_key("gp_index") {
                out.push(v);
            }
            o.values().for_each(|c| objects(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| objects(c, out)),
        _ => {}
    }
}

/// The indexes an hwloc bitmap string (`0xffffffff,0x0000000f`) holds.
fn bits(set: &str) -> Vec<u32> {
    let words: Vec<&str> = set.split(',').collect();
    let mut out = Vec::new();
    for (k, w) in words.iter().rev().enumerate() {
        let hex = w.trim().trim_start_matches("0x");
        let w = if hex.is_empty() {
            0
        } else {
            u32::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("bitmap {set:?}"))
        };
        out.extend(
            (0..32)
                .filter(|b| w >> b & 1 == 1)
                .map(|b| k as u32 * 32 + b),
        );
    }
    out
}

/// A memory quantity as bytes.
fn bytes(q: &str) -> u64 {
    let units = [
        ("Ki", 10),
        ("Mi", 20),
        ("Gi", 30),
        ("Ti", 40),
        ("Pi", 50),
        ("Ei", 60),
    ];
    for (u, shift) in units {
        if let Some(n) = q.strip_suffix(u) {
            return n.parse::<u64>().expect("integer") << shift;
        }
    }
    q.parse().expect("integer bytes")
}

fn stdout_of(args: &[&str]) -> String {
    let o = common::run_wloc(args);
    assert!(
        o.status.success(),
        "wloc {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// The CRD's schema fixture.
fn crd_schema() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(
            common::workspace().join("tests/data/noderesourcetopology-v1alpha2.schema.json"),
        )
        .expect("schema fixture"),
    )
    .expect("schema JSON")
}

#[test]
fn nrt_objects_of_every_xml_case_follow_the_crd_schema() {
    common::wloc();
    let schema = crd_schema();
    let dir = common::conformance().join("xml");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("xml cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "only {} XML cases", cases.len());
    let mut bad = Vec::new();
    let (mut with_costs, mut multi_zone) = (0, 0);
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy().into_owned();
        let file = case.to_string_lossy().into_owned();
        let json = stdout_of(&["k8s", "nrt", "-i", &file, "--name", "n1", "--of", "json"]);
        let yaml = stdout_of(&["k8s", "nrt", "-i", &file, "--name", "n1"]);
        let nrt: Value = serde_json::from_str(&json).expect("JSON output");
        let mut errors = Vec::new();
        validate(&nrt, &schema, "", &mut errors);
        if nrt["apiVersion"] != "topology.node.k8s.io/v1alpha2"
            || nrt["kind"] != "NodeResourceTopology"
            || nrt["metadata"]["name"] != "n1"
        {
            errors.push("wrong apiVersion, kind or name".into());
        }
        if read_yaml(&yaml) != nrt {
            errors.push(format!("YAML and JSON differ:\n{yaml}\n{json}"));
        }
        // The topology as wloc ls shows it, disallowed objects included.
        let ls: Value = serde_json::from_str(&stdout_of(&[
            "ls",
            "-i",
            &file,
            "--of",
            "json",
            "--disallowed",
        ]))
        .expect("ls JSON");
        let mut objs = Vec::new();
        objects(&ls["root"], &mut objs);
        let count = |t: &str| objs.iter().filter(|o| o["type"] == t).count();
        let numa = count("NUMANode");
        // PUs with a local NUMA node: some recordings have PUs under no
        // NUMA node's cpuset, which belong to no zone.
        let node_pus: Vec<u32> = objs
            .iter()
            .filter(|o| o["type"] == "NUMANode")
            .flat_map(|o| bits(o["complete_cpuset"].as_str().unwrap_or("0x0")))
            .collect();
        let pus = objs
            .iter()
            .filter(|o| o["type"] == "PU")
            .filter(|o| {
                o["os_index"]
                    .as_u64()
                    .is_some_and(|p| node_pus.contains(&(p as u32)))
            })
            .count();
        let total = ls["root"]["total_memory"].as_u64().unwrap_or(0);
        let zones = nrt["zones"].as_array().cloned().unwrap_or_default();
        let res = |z: &Value, r: &str, f: &str| {
            z["resources"]
                .as_array()
                .and_then(|a| a.iter().find(|x| x["name"] == r))
                .and_then(|x| x[f].as_str())
                .map(str::to_string)
                .unwrap_or_default()
        };
        let cpus: u64 = zones
            .iter()
            .map(|z| res(z, "cpu", "capacity").parse::<u64>().unwrap())
            .sum();
        let mem: u64 = zones
            .iter()
            .map(|z| bytes(&res(z, "memory", "capacity")))
            .sum();
        if zones.len() != numa {
            errors.push(format!("{} zones for {numa} NUMA nodes", zones.len()));
        }
        if cpus != pus as u64 {
            errors.push(format!(
                "cpu capacities add to {cpus}, not the {pus} PUs of NUMA nodes"
            ));
        }
        if mem != total {
            errors.push(format!("memory capacities add to {mem}, not {total}"));
        }
        for z in &zones {
            for r in ["cpu", "memory"] {
                if res(z, r, "available") != res(z, r, "allocatable") {
                    errors.push(format!("{}: {r} available is not allocatable", z["name"]));
                }
            }
            if let Some(costs) = z["costs"].as_array()
                && costs.len() != zones.len()
            {
                errors.push(format!("{}: {} costs", z["name"], costs.len()));
            }
        }
        with_costs += usize::from(zones.iter().any(|z| z.get("costs").is_some()));
        multi_zone += usize::from(zones.len() > 1);
        if !errors.is_empty() {
            bad.push(format!("{name}: {}", errors.join("; ")));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(with_costs >= 1 && multi_zone >= 2, "too few NUMA cases");
    eprintln!(
        "{} cases: {multi_zone} with several zones, {with_costs} with costs",
        cases.len()
    );
}

/// The checker itself rejects what the CRD rejects.
#[test]
fn the_schema_checker_rejects_bad_objects() {
    let schema = crd_schema();
    let check = |v: Value| {
        let mut e = Vec::new();
        validate(&v, &schema, "", &mut e);
        e
    };
    let good = serde_json::json!({"zones": [{"name": "node-0", "type": "Node",
        "resources": [{"name": "cpu", "capacity": "4", "allocatable": 4, "available": "1.5Gi"}]}]});
    assert!(check(good).is_empty());
    assert!(!check(serde_json::json!({})).is_empty());
    assert!(!check(serde_json::json!({"zones": [{"name": "n"}]})).is_empty());
    assert!(!check(serde_json::json!({"zones": [{"name": "n", "type": "Node",
        "resources": [{"name": "cpu", "capacity": "4 cpus", "allocatable": "4", "available": "4"}]}]}))
    .is_empty());
    assert!(
        !check(serde_json::json!({"zones": [{"name": "n", "type": "Node",
        "costs": [{"name": "node-1", "value": "20"}]}]}))
        .is_empty()
    );
    assert!(!check(serde_json::json!({"zones": [], "extra": 1})).is_empty());
    for q in ["1", "1.5", ".5", "-2Ki", "100m", "1e3", "2E-1"] {
        assert!(is_quantity(q), "{q}");
    }
    for q in ["", "Ki", "1KI", "1.5.2", "1e", "1 Gi", "0x10"] {
        assert!(!is_quantity(q), "{q}");
    }
    let yaml = "a: \"x\\\"y\"\nb:\n- c: 1\n  d: []\n- c: 2\ne:\n  f: \"g\"\n";
    assert_eq!(
        read_yaml(yaml),
        serde_json::json!({"a": "x\"y", "b": [{"c": 1, "d": []}, {"c": 2}], "e": {"f": "g"}})
    );
}

/// Site infos recorded once with `wloc annotate` reach the scheduler
/// outputs that ask for them: NodeResourceTopology `attributes` (valid
/// against the CRD schema, the same in YAML and JSON) and the Slurm node
/// line's `Features=`; a missing info or one Slurm cannot take is a
/// named error.
#[test]
fn site_infos_reach_the_scheduler_outputs() {
    common::wloc();
    let schema = crd_schema();
    let tmp = common::TempDir::new("site-infos");
    let file = tmp.0.join("node.xml");
    let f = file.to_str().unwrap();
    stdout_of(&["ls", "-i", "pack:2 [numa] core:2 pu:2", "--of", "xml", f]);
    stdout_of(&["annotate", f, f, "root", "info", "Rack", "r12"]);
    stdout_of(&["annotate", f, f, "root", "info", "Chassis", "c3"]);
    let json = stdout_of(&[
        "k8s", "nrt", "-i", f, "--name", "n1", "--of", "json", "--info", "Rack", "--info",
        "Chassis",
    ]);
    let nrt: Value = serde_json::from_str(&json).unwrap();
    let mut errors = Vec::new();
    validate(&nrt, &schema, "", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        nrt["attributes"],
        serde_json::json!([{"name": "Rack", "value": "r12"}, {"name": "Chassis", "value": "c3"}])
    );
    let yaml = stdout_of(&[
        "k8s", "nrt", "-i", f, "--name", "n1", "--info", "Rack", "--info", "Chassis",
    ]);
    assert_eq!(read_yaml(&yaml), nrt);
    let line = stdout_of(&[
        "slurm", "node", "-i", f, "--name", "n1", "--info", "Rack", "--info", "Chassis",
    ]);
    assert!(line.trim_end().ends_with(" Features=r12,c3"), "{line}");
    // Without --info, the outputs are unchanged.
    assert!(!stdout_of(&["slurm", "node", "-i", f, "--name", "n1"]).contains("Features"));
    let missing = common::run_wloc(["slurm", "node", "-i", f, "--name", "n1", "--info", "Row"]);
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("no info Row on its root object"), "{err}");
    stdout_of(&["annotate", f, f, "root", "info", "Pdu", "a b"]);
    let bad = common::run_wloc(["slurm", "node", "-i", f, "--info", "Pdu"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot be a Slurm feature"));
}
