//! Component manifests: what a component says it is and what it asks for.
//!
//! A manifest is TOML text in a custom section named `wloc:manifest` of the
//! component itself, so that a signature over the file covers it:
//!
//! ```toml
//! name = "acme-nic"
//! version = "1.2.0"
//! kind = "discovery"          # or "annotation"
//! description = "Acme NIC ports"
//!
//! [capabilities]
//! files = ["/sys/class/net"]  # read-only roots
//! cpuid = false
//! config = ["acme.*"]          # settings it reads (`*` and `?` allowed)
//! ```
//!
//! [`inspect`] reads the manifest, the signature section and the
//! component's imports and exports (with `wasmparser`), without compiling
//! anything.  A manifest only *asks*; the admin's policy decides what is
//! granted (see [`crate::policy`] and [`crate::grant`]).

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use wasm_encoder::Section;

/// Name of the custom section holding the manifest.
pub const MANIFEST_SECTION: &str = "wloc:manifest";

/// Name of the custom section holding the signature (see
/// [`crate::signing`], which re-exports it).
pub const SIGNATURE_SECTION: &str = "wloc:signature";

/// Longest manifest accepted, in bytes.
const MAX_MANIFEST_BYTES: usize = 64 << 10;

/// What a component does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Finds objects (`discovery-backend` world).
    Discovery,
    /// Adds infos and measurements to a topology (`annotation-backend` world).
    Annotation,
    /// Reads a network fabric (`fabric-reader` world of `wloc:fabric@0.2.0`,
    /// or of `wloc:backend@0.1.0`).
    Fabric,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Discovery => "discovery",
            Kind::Annotation => "annotation",
            Kind::Fabric => "fabric",
        })
    }
}

/// Capabilities a component asks for, or that it is granted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Absolute paths of the read-only file roots.
    #[serde(default)]
    pub files: Vec<String>,
    /// The `cpuid` import.
    #[serde(default)]
    pub cpuid: bool,
    /// Names (or `*`/`?` patterns) of the settings it reads.
    #[serde(default)]
    pub config: Vec<String>,
}

impl Capabilities {
    /// A short human-readable summary (`files=/sys,/proc cpuid config=*`).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.files.is_empty() {
            parts.push(format!("files={}", self.files.join(",")));
        }
        if self.cpuid {
            parts.push("cpuid".into());
        }
        if !self.config.is_empty() {
            parts.push(format!("config={}", self.config.join(",")));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" ")
        }
    }

    /// Whether a setting's name is one of these.
    pub fn config_allows(&self, key: &str) -> bool {
        self.config
            .iter()
            .any(|p| crate::text::wildcard_match(p, key))
    }
}

/// A component's manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Its name: lower-case letters, digits, `-`, `_` and `.`, at most 64.
    pub name: String,
    /// Its version (free text, at most 64 bytes).
    pub version: String,
    /// What it does.
    pub kind: Kind,
    /// One line about it.
    #[serde(default)]
    pub description: String,
    /// What it asks for.
    #[serde(default)]
    pub capabilities: Capabilities,
}

/// Whether a component name is acceptable (it names files and policy
/// entries, and is shown on terminals).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
        && !name.starts_with(['-', '.'])
        && name != "stop"
}

impl Manifest {
    /// Parses and checks manifest text.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = toml::from_str(text).map_err(|e| format!("invalid manifest: {e}"))?;
        m.check()?;
        Ok(m)
    }

    /// Checks the fields.
    pub fn check(&self) -> Result<(), String> {
        if !valid_name(&self.name) {
            return Err(format!(
                "invalid manifest: name {:?} (lower-case letters, digits, '-', '_' and '.', at most 64, not \"stop\")",
                crate::text::sanitize(&self.name, 80)
            ));
        }
        if self.version.is_empty()
            || self.version.len() > 64
            || self
                .version
                .chars()
                .any(|c| c.is_control() || c.is_whitespace())
        {
            return Err("invalid manifest: version must be 1 to 64 printable characters".into());
        }
        if self.description.len() > 1024 {
            return Err("invalid manifest: description longer than 1024 bytes".into());
        }
        for f in &self.capabilities.files {
            check_root(f).map_err(|e| format!("invalid manifest: {e}"))?;
        }
        for k in &self.capabilities.config {
            if k.is_empty() || k.len() > 256 || k.chars().any(char::is_control) {
                return Err(format!("invalid manifest: config key {k:?}"));
            }
        }
        Ok(())
    }

    /// The manifest as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

/// Prefix of a file root that names mount points rather than a path:
/// `mounts:cgroup2,cgroup` grants the folders where the described
/// system's mount table mounts filesystems of those types (the host reads
/// the table when it opens the grant).
pub const MOUNTS_PREFIX: &str = "mounts:";

/// The filesystem types a `mounts:TYPE,...` root names, or `None` for a
/// path.
pub fn mount_types(root: &str) -> Option<Vec<&str>> {
    root.strip_prefix(MOUNTS_PREFIX)
        .map(|t| t.split(',').collect())
}

/// Checks a file root: absolute, normalised, no `..`, no control
/// characters; or `mounts:` and filesystem type names.
pub fn check_root(root: &str) -> Result<(), String> {
    if let Some(types) = mount_types(root) {
        let valid = |t: &str| {
            !t.is_empty()
                && t.len() <= 64
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        };
        if !types.iter().all(|t| valid(t)) {
            return Err(format!(
                "file root {:?}: mounts: takes filesystem type names separated by commas",
                crate::text::sanitize(root, 80)
            ));
        }
        return Ok(());
    }
    if !root.starts_with('/') {
        return Err(format!("file root {root:?} is not an absolute path"));
    }
    if root.chars().any(char::is_control) {
        return Err(format!("file root {root:?} holds control characters"));
    }
    if root != "/" && (root.ends_with('/') || root.contains("//")) {
        return Err(format!("file root {root:?} is not normalised"));
    }
    if root.split('/').any(|c| c == ".." || c == ".") {
        return Err(format!("file root {root:?} holds '.' or '..'"));
    }
    Ok(())
}

/// Whether file root `inner` is `outer` or below it (a `mounts:` root is
/// within itself and within `/` only).
pub fn root_within(inner: &str, outer: &str) -> bool {
    if mount_types(inner).is_some() || mount_types(outer).is_some() {
        return inner == outer || outer == "/";
    }
    outer == "/"
        || inner == outer
        || (inner.starts_with(outer) && inner.as_bytes().get(outer.len()) == Some(&b'/'))
}

/// What [`inspect`] found in a component's bytes.
#[derive(Clone, Debug, Default)]
pub struct Inspection {
    /// The manifest, if there is one (an invalid one is an error).
    pub manifest: Option<Manifest>,
    /// Names of the component's imports (`wloc:backend/files@0.1.0`, ...).
    pub imports: Vec<String>,
    /// Names of its exports (`discover`, ...).
    pub exports: Vec<String>,
    /// Payload of the signature section and the byte range of the whole
    /// section (from its id byte to its end, the end of the file), if
    /// there is one.
    pub signature: Option<(Vec<u8>, Range<usize>)>,
}

/// Reads a component's manifest, signature section, imports and exports.
///
/// The manifest is looked for at the top level of the component (where
/// [`embed`] puts it) and in its core modules (where a `#[link_section]`
/// static of the guest ends up); two manifests are an error.  A signature
/// section must be the last section of the file, at its top level, the
/// only one, and its header (section id, size, name length) must be in
/// its shortest encoding: the signature section is then the one part of
/// a signed file that the signature does not cover, and it has only one
/// possible encoding of its payload (see [`crate::signing::component_digest`]).
pub fn inspect(wasm: &[u8]) -> Result<Inspection, String> {
    use wasmparser::{Encoding, Payload};
    let mut out = Inspection::default();
    let mut depth = 0usize;
    let mut saw_header = false;
    for_each_payload(wasm, |payload, start| {
        if let Some(sig) = &out.signature {
            // Only the end of the component may follow its signature.
            if !matches!(payload, Payload::End(_)) || depth != 0 {
                return Err(format!(
                    "the signature section (at byte {}) is not the last section",
                    sig.1.start
                ));
            }
        }
        match payload {
            Payload::Version { encoding, .. } => {
                if !saw_header && !matches!(encoding, Encoding::Component) {
                    return Err("a core WebAssembly module, not a component".into());
                }
                saw_header = true;
            }
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(r) if depth == 0 => {
                for imp in r {
                    let imp = imp.map_err(|e| format!("invalid import section: {e}"))?;
                    // Imported types (`use types.{discovery}` of a world)
                    // carry no capability.
                    if !matches!(imp.ty, wasmparser::ComponentTypeRef::Type(_)) {
                        out.imports.push(imp.name.name.to_string());
                    }
                }
            }
            Payload::ComponentExportSection(r) if depth == 0 => {
                for exp in r {
                    let exp = exp.map_err(|e| format!("invalid export section: {e}"))?;
                    out.exports.push(exp.name.name.to_string());
                }
            }
            Payload::CustomSection(c) if c.name() == MANIFEST_SECTION && depth <= 1 => {
                if out.manifest.is_some() {
                    return Err("two wloc:manifest sections".into());
                }
                if c.data().len() > MAX_MANIFEST_BYTES {
                    return Err(format!(
                        "the manifest is {} bytes (at most {MAX_MANIFEST_BYTES})",
                        c.data().len()
                    ));
                }
                let text = std::str::from_utf8(c.data())
                    .map_err(|_| "the manifest is not UTF-8 text".to_string())?;
                out.manifest = Some(Manifest::parse(text)?);
            }
            Payload::CustomSection(c) if c.name() == SIGNATURE_SECTION => {
                if depth != 0 {
                    return Err("a signature section inside a nested module".into());
                }
                let end = c.range().end;
                // The shortest encoding of this section; any other (a
                // padded LEB128 size or name length) would give the same
                // signed bytes another file digest.
                let mut canonical = Vec::with_capacity(end - start);
                append_custom_section(&mut canonical, SIGNATURE_SECTION, c.data());
                if wasm.get(start..end) != Some(&canonical[..]) {
                    return Err(format!(
                        "the signature section (at byte {start}) has a header that is not in its \
                         shortest encoding (padded LEB128 size or name length)"
                    ));
                }
                out.signature = Some((c.data().to_vec(), start..end));
            }
            _ => {}
        }
        Ok(())
    })?;
    if !saw_header {
        return Err("empty file".into());
    }
    Ok(out)
}

/// Calls `f` on every payload of `wasm`, with the offset where its bytes
/// start (a section's id byte), nested modules and components included,
/// as `Parser::parse_all` yields them, except that code sections are
/// stepped over whole: nothing here looks into function bodies.  A nested
/// module or component must end where its section says it does.
fn for_each_payload(
    wasm: &[u8],
    mut f: impl FnMut(wasmparser::Payload<'_>, usize) -> Result<(), String>,
) -> Result<(), String> {
    use wasmparser::{Chunk, Parser, Payload};
    let invalid =
        |e: wasmparser::BinaryReaderError| format!("not a valid WebAssembly component: {e}");
    let mut data = wasm;
    // Enclosing parsers, each with the offset where the nested module or
    // component it is reading declared its end.
    let mut stack: Vec<(Parser, usize)> = Vec::new();
    let mut cur = Parser::new(0);
    loop {
        let start = wasm.len() - data.len();
        let (payload, consumed) = match cur.parse(data, true).map_err(invalid)? {
            Chunk::Parsed { payload, consumed } => (payload, consumed),
            // `eof` is true: the parser has all the bytes there are.
            Chunk::NeedMoreData(_) => {
                return Err("not a valid WebAssembly component: truncated".into());
            }
        };
        data = &data[consumed..];
        let mut done = false;
        match &payload {
            Payload::ModuleSection {
                parser,
                unchecked_range,
            }
            | Payload::ComponentSection {
                parser,
                unchecked_range,
            } => {
                stack.push((cur.clone(), unchecked_range.end));
                cur = parser.clone();
            }
            Payload::CodeSectionStart { size, .. } => {
                let size = *size as usize;
                if size > data.len() {
                    return Err(
                        "not a valid WebAssembly component: a code section runs past the end"
                            .into(),
                    );
                }
                cur.skip_section();
                data = &data[size..];
            }
            Payload::End(offset) => match stack.pop() {
                // The parser ends a nested module where the bytes end, even
                // before its declared size: a truncated file.
                Some((_, declared_end)) if *offset != declared_end => {
                    return Err(format!(
                        "not a valid WebAssembly component: a nested module or component ends at byte {offset}, \
                         before its declared end at byte {declared_end} (truncated?)"
                    ));
                }
                Some((p, _)) => cur = p,
                None => done = true,
            },
            _ => {}
        }
        f(payload, start)?;
        if done {
            return Ok(());
        }
    }
}

/// Appends a custom section to a component (custom sections may come
/// anywhere in a component, and the last place never shifts the others).
pub fn append_custom_section(wasm: &mut Vec<u8>, name: &str, data: &[u8]) {
    wasm_encoder::CustomSection {
        name: name.into(),
        data: data.into(),
    }
    .append_to(wasm);
}

/// Returns the component with `manifest` embedded, replacing any manifest
/// section at its top level.  Refuses a signed component (embedding would
/// break the signature; sign after embedding).
pub fn embed(wasm: &[u8], manifest: &Manifest) -> Result<Vec<u8>, String> {
    manifest.check()?;
    let found = inspect(wasm)?;
    if found.signature.is_some() {
        return Err("the component is signed: embed the manifest first, then sign".into());
    }
    let mut out = strip_top_level(wasm, MANIFEST_SECTION)?;
    append_custom_section(&mut out, MANIFEST_SECTION, manifest.to_toml().as_bytes());
    Ok(out)
}

/// The component without its top-level custom sections named `name`.
fn strip_top_level(wasm: &[u8], name: &str) -> Result<Vec<u8>, String> {
    use wasmparser::{Parser, Payload};
    let mut cut: Vec<Range<usize>> = Vec::new();
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(|e| format!("not a valid WebAssembly component: {e}"))? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::CustomSection(c) if depth == 0 && c.name() == name => {
                // The range covers the name and data; the section starts
                // with its id byte and a LEB128 size just before.
                let content = c.range();
                let start = section_start(wasm, &content).ok_or("malformed custom section")?;
                cut.push(start..content.end);
            }
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(wasm.len());
    let mut at = 0;
    for r in cut {
        out.extend_from_slice(&wasm[at..r.start]);
        at = r.end;
    }
    out.extend_from_slice(&wasm[at..]);
    Ok(out)
}

/// The offset of the id byte of a custom section whose content (name and
/// data) covers `content`: walks back over the LEB128 size, which must
/// equal the content's length.
fn section_start(wasm: &[u8], content: &Range<usize>) -> Option<usize> {
    // A size takes 1 to 5 bytes; the id byte 0 comes before it.
    for len in 1..=5usize {
        let id = content.start.checked_sub(len + 1)?;
        let leb = &wasm[id + 1..content.start];
        if wasm[id] != 0 || leb[len - 1] & 0x80 != 0 || leb[..len - 1].iter().any(|b| b & 0x80 == 0)
        {
            continue;
        }
        let size = leb.iter().enumerate().fold(0usize, |acc, (i, b)| {
            acc | (((b & 0x7f) as usize) << (7 * i))
        });
        if size == content.len() {
            return Some(id);
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Capabilities of these roots, CPUID access and settings.
    pub(crate) fn caps(files: &[&str], cpuid: bool, config: &[&str]) -> Capabilities {
        Capabilities {
            files: files.iter().map(|s| s.to_string()).collect(),
            cpuid,
            config: config.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The smallest component: magic and the component layer version.
    pub(crate) const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    pub(crate) fn sample() -> Manifest {
        Manifest::parse(
            r#"
name = "acme-nic"
version = "1.0"
kind = "discovery"
[capabilities]
files = ["/sys/class/net"]
config = ["acme.*"]
"#,
        )
        .unwrap()
    }

    #[test]
    fn parses_and_checks_manifests() {
        let m = sample();
        assert_eq!(m.kind, Kind::Discovery);
        let f = Manifest::parse("name = \"x\"\nversion = \"1\"\nkind = \"fabric\"").unwrap();
        assert_eq!(f.kind, Kind::Fabric);
        assert!(m.capabilities.config_allows("acme.speed"));
        assert!(!m.capabilities.config_allows("other"));
        for bad in [
            "name = \"Bad Name\"\nversion = \"1\"\nkind = \"discovery\"",
            "name = \"stop\"\nversion = \"1\"\nkind = \"discovery\"",
            "name = \"x\"\nversion = \"1\"\nkind = \"router\"",
            "name = \"x\"\nversion = \"1\"\nkind = \"discovery\"\nextra = 1",
            "name = \"x\"\nversion = \"1\"\nkind = \"discovery\"\n[capabilities]\nfiles = [\"sys\"]",
            "name = \"x\"\nversion = \"1\"\nkind = \"discovery\"\n[capabilities]\nfiles = [\"/sys/../etc\"]",
            "name = \"x\"\nversion = \"1\"\nkind = \"discovery\"\n[capabilities]\nsockets = true",
        ] {
            assert!(Manifest::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn roots_nest_by_components() {
        assert!(root_within("/sys/class", "/sys"));
        assert!(root_within("/sys", "/sys"));
        assert!(root_within("/etc", "/"));
        assert!(!root_within("/sysfoo", "/sys"));
        assert!(!root_within("/sys", "/sys/class"));
        // Mount-point roots are granted by name, or by `/`.
        let m = "mounts:cgroup2,cgroup";
        assert!(check_root(m).is_ok());
        assert!(root_within(m, m));
        assert!(root_within(m, "/"));
        assert!(!root_within(m, "/sys"));
        assert!(!root_within("/sys", m));
        assert!(!root_within("mounts:cgroup2", m));
        for bad in [
            "mounts:",
            "mounts:a,,b",
            "mounts:a/b",
            "mounts:../x",
            "mounts:a b",
        ] {
            assert!(check_root(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn embeds_and_reads_back() {
        let m = sample();
        let w = embed(EMPTY_COMPONENT, &m).unwrap();
        let i = inspect(&w).unwrap();
        assert_eq!(i.manifest.as_ref(), Some(&m));
        // Embedding again replaces rather than duplicates.
        let mut m2 = m.clone();
        m2.version = "2.0".into();
        let w2 = embed(&w, &m2).unwrap();
        assert_eq!(inspect(&w2).unwrap().manifest, Some(m2));
        assert_eq!(w2.len(), w.len());
    }

    /// A component with one core module holding a function, and `manifest`
    /// as a custom section of that module, after its code.
    pub(crate) fn component_with_code(manifest: &Manifest) -> Vec<u8> {
        use wasm_encoder::{
            CodeSection, Component, CustomSection, Function, FunctionSection, Module,
            ModuleSection, TypeSection,
        };
        let mut types = TypeSection::new();
        types.ty().function([], []);
        let mut funcs = FunctionSection::new();
        funcs.function(0);
        let mut body = Function::new([]);
        body.instructions().end();
        let mut code = CodeSection::new();
        code.function(&body);
        let text = manifest.to_toml();
        let mut module = Module::new();
        module
            .section(&types)
            .section(&funcs)
            .section(&code)
            .section(&CustomSection {
                name: MANIFEST_SECTION.into(),
                data: text.as_bytes().into(),
            });
        let mut component = Component::new();
        component.section(&ModuleSection(&module));
        component.finish()
    }

    #[test]
    fn reads_a_manifest_after_code_and_refuses_every_truncation() {
        let w = component_with_code(&sample());
        assert_eq!(inspect(&w).unwrap().manifest, Some(sample()));
        // Code sections are stepped over, not read: cutting the bytes
        // anywhere, inside the code section included, is an error, except
        // right after the header, which leaves a valid empty component.
        for len in 0..w.len() {
            match inspect(&w[..len]) {
                Ok(i) => assert!(len == 8 && i.manifest.is_none(), "cut at {len}"),
                Err(e) => assert!(!e.is_empty()),
            }
        }
    }

    #[test]
    fn refuses_bad_bytes() {
        assert!(inspect(b"").is_err());
        assert!(inspect(b"\0asm\x01\0\0\0").unwrap_err().contains("core"));
        assert!(inspect(b"not wasm at all").is_err());
        let mut w = EMPTY_COMPONENT.to_vec();
        append_custom_section(&mut w, MANIFEST_SECTION, b"name = 3");
        assert!(inspect(&w).unwrap_err().contains("invalid manifest"));
        let mut w = EMPTY_COMPONENT.to_vec();
        let text = sample().to_toml();
        append_custom_section(&mut w, MANIFEST_SECTION, text.as_bytes());
        append_custom_section(&mut w, MANIFEST_SECTION, text.as_bytes());
        assert!(inspect(&w).unwrap_err().contains("two"));
    }
}
