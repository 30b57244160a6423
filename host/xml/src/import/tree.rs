//! A compact, read-only element tree for the importer.
//!
//! Two builders fill the same [`Document`]:
//!
//! - [`Document::parse_fast`] tokenises with quick-xml straight into two flat
//!   arrays (nodes and attributes, values borrowed from the input unless they
//!   hold an entity).  It accepts only a strict subset of XML — the subset
//!   that hwloc and wloc write: simple ASCII names, no namespaces, comments,
//!   processing instructions, CDATA, character references or DTD internal
//!   subsets, no carriage returns in values — and answers `None` for
//!   anything else, well-formed or not.
//! - [`Document::from_roxmltree`] copies the tree of the reference parser
//!   (roxmltree), which decides everything `parse_fast` declines: errors
//!   (with their exact messages and positions), hwloc 1.x documents and the
//!   rare constructs outside the subset.
//!
//! So the accepted language and the error messages are those of roxmltree
//! by construction: the fast builder only ever gives a tree for documents
//! roxmltree reads the same way (same element and attribute positions, same
//! values), which the property tests of this module check against it.
//!
//! The node API mirrors the part of roxmltree's the importer uses.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

const NONE: u32 = u32::MAX;

enum Kind<'input> {
    Element {
        name: &'input str,
        attrs: (u32, u32),
    },
    Text(Cow<'input, str>),
}

struct NodeData<'input> {
    kind: Kind<'input>,
    /// Byte offset of the node in the document (`<` of an element).
    start: usize,
    first_child: u32,
    next_sibling: u32,
}

struct AttrData<'input> {
    name: &'input str,
    value: Cow<'input, str>,
    /// Byte offset of the attribute's name in the document.
    start: usize,
}

/// A parsed document: its root element and the input text (for positions).
pub(super) struct Document<'input> {
    text: &'input str,
    nodes: Vec<NodeData<'input>>,
    attrs: Vec<AttrData<'input>>,
}

/// A node (element or text) of a [`Document`].
#[derive(Clone, Copy)]
pub(super) struct Node<'a, 'input> {
    doc: &'a Document<'input>,
    id: u32,
}

/// An attribute of an element.
#[derive(Clone, Copy)]
pub(super) struct Attribute<'a, 'input> {
    data: &'a AttrData<'input>,
}

/// What [`Node::tag_name`] returns (roxmltree's shape, without namespaces).
pub(super) struct TagName<'a>(&'a str);

impl<'a> TagName<'a> {
    /// The element's name (empty for text nodes).
    pub(super) fn name(&self) -> &'a str {
        self.0
    }
}

/// A line/column position, as roxmltree's `TextPos`.
pub(super) struct TextPos {
    pub(super) row: u32,
    pub(super) col: u32,
}

impl<'input> Document<'input> {
    /// The document element.
    pub(super) fn root_element(&self) -> Node<'_, 'input> {
        Node { doc: self, id: 0 }
    }

    /// Line and column (1-based, columns in characters) of a byte offset,
    /// computed as roxmltree does.
    pub(super) fn text_pos_at(&self, pos: usize) -> TextPos {
        let b = self.text.as_bytes();
        let pos = pos.min(b.len());
        let row = 1 + b[..pos].iter().filter(|&&c| c == b'\n').count() as u32;
        let line_start = b[..pos]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let col = 1 + self.text[line_start..pos].chars().count() as u32;
        TextPos { row, col }
    }

    fn push(&mut self, kind: Kind<'input>, start: usize, parent: u32, last: &mut [u32]) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(NodeData {
            kind,
            start,
            first_child: NONE,
            next_sibling: NONE,
        });
        if parent != NONE {
            let prev = last[parent as usize];
            if prev == NONE {
                self.nodes[parent as usize].first_child = id;
            } else {
                self.nodes[prev as usize].next_sibling = id;
            }
            last[parent as usize] = id;
        }
        id
    }

    /// Copies a document read by roxmltree (comments and processing
    /// instructions, which the importer never looks at, are left out).
    pub(super) fn from_roxmltree<'a>(doc: &'a roxmltree::Document<'input>) -> Document<'a>
    where
        'input: 'a,
    {
        let mut out = Document {
            text: doc.input_text(),
            nodes: Vec::new(),
            attrs: Vec::new(),
        };
        let mut last = Vec::new();
        // (roxmltree node, our parent id), depth first in document order.
        let mut stack = vec![(doc.root_element(), NONE)];
        while let Some((n, parent)) = stack.pop() {
            let kind = if n.is_element() {
                let first = out.attrs.len() as u32;
                for a in n.attributes() {
                    out.attrs.push(AttrData {
                        name: a.name(),
                        value: Cow::Borrowed(a.value()),
                        start: a.range().start,
                    });
                }
                Kind::Element {
                    name: n.tag_name().name(),
                    attrs: (first, out.attrs.len() as u32),
                }
            } else if let Some(t) = n.text().filter(|_| n.is_text()) {
                Kind::Text(Cow::Borrowed(t))
            } else {
                continue;
            };
            last.push(NONE);
            let id = out.push(kind, n.range().start, parent, &mut last);
            let kids: Vec<_> = n.children().collect();
            stack.extend(kids.into_iter().rev().map(|c| (c, id)));
        }
        out
    }

    /// Reads `text` with quick-xml when it stays within the subset described
    /// in the module documentation, with elements nested at most
    /// `max_depth` deep and a `<topology version=...>` document element;
    /// `None` otherwise (the caller then uses the reference parser).
    pub(super) fn parse_fast(text: &'input str, max_depth: usize) -> Option<Self> {
        if !plain_chars(text.as_bytes()) {
            return None;
        }
        let mut doc = Document {
            text,
            // About one element per 60 bytes in hwloc documents, text nodes
            // included: a first guess that saves most regrowth.
            nodes: Vec::with_capacity(text.len() / 64 + 4),
            attrs: Vec::with_capacity(text.len() / 24 + 4),
        };
        let mut last: Vec<u32> = Vec::with_capacity(doc.nodes.capacity());
        let mut open: Vec<(u32, &'input str)> = Vec::with_capacity(16);
        let mut reader = Reader::from_str(text);
        let cfg = reader.config_mut();
        cfg.check_end_names = true;
        cfg.expand_empty_elements = false;
        cfg.trim_text(false);
        let mut seen_root = false;
        let mut seen_doctype = false;
        loop {
            let ev = reader.read_event().ok()?;
            match ev {
                Event::Start(ref e) | Event::Empty(ref e) => {
                    let parent = match open.last() {
                        Some(&(id, _)) => id,
                        None if seen_root => return None,
                        None => NONE,
                    };
                    let name = str_of(text, e.name().as_ref())?;
                    if !simple_name(name) {
                        return None;
                    }
                    // The name follows the `<`.
                    let start = offset(text, name) - 1;
                    let first = doc.attrs.len() as u32;
                    scan_attrs(text, e, &mut doc.attrs)?;
                    let attrs = (first, doc.attrs.len() as u32);
                    if parent == NONE {
                        // hwloc 1.x documents and other document elements
                        // take the reference path.
                        seen_root = true;
                        let has_version = doc.attrs[first as usize..]
                            .iter()
                            .any(|a| a.name == "version");
                        if name != "topology" || !has_version {
                            return None;
                        }
                    }
                    last.push(NONE);
                    let id = doc.push(Kind::Element { name, attrs }, start, parent, &mut last);
                    if matches!(ev, Event::Start(_)) {
                        if open.len() >= max_depth {
                            return None;
                        }
                        open.push((id, name));
                    }
                }
                Event::End(ref e) => {
                    let (_, name) = open.pop()?;
                    // check_end_names compares the names; keep our own check
                    // so that the tree never depends on that setting.
                    if e.name().as_ref() != name.as_bytes() {
                        return None;
                    }
                }
                Event::Text(ref e) => {
                    let raw = str_of(text, e)?;
                    match open.last() {
                        None => {
                            // Only blanks outside the document element.
                            if !raw.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n')) {
                                return None;
                            }
                        }
                        Some(&(parent, _)) => {
                            if raw.contains("]]>") {
                                return None;
                            }
                            let value = unescape(raw)?;
                            last.push(NONE);
                            let start = offset(text, raw);
                            doc.push(Kind::Text(value), start, parent, &mut last);
                        }
                    }
                }
                Event::Decl(_) => {
                    let end = reader.buffer_position() as usize;
                    if !KNOWN_DECLS.contains(&&text[..end]) {
                        return None;
                    }
                }
                Event::DocType(ref e) => {
                    // quick-xml strips `!DOCTYPE` (in any case) and blanks:
                    // check them in the input.
                    let content = str_of(text, e)?;
                    let before = &text[..offset(text, content)];
                    if seen_doctype
                        || seen_root
                        || !before.ends_with("<!DOCTYPE ")
                        || !simple_doctype(content)
                    {
                        return None;
                    }
                    seen_doctype = true;
                }
                Event::Eof => {
                    return (seen_root && open.is_empty()).then_some(doc);
                }
                Event::CData(_) | Event::Comment(_) | Event::PI(_) => return None,
            }
        }
    }
}

/// XML declarations of the fast subset (hwloc's and common variants).
const KNOWN_DECLS: [&str; 4] = [
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
    "<?xml version=\"1.0\"?>",
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
    "<?xml version='1.0' encoding='UTF-8'?>",
];

/// The text of an event's bytes, which quick-xml slices out of `text`.
fn str_of<'i>(text: &'i str, bytes: &[u8]) -> Option<&'i str> {
    // quick-xml hands out sub-slices of the input: recover them as &str of
    // the input (no copy, no UTF-8 re-check).  A slice that is not part of
    // the input cannot lie inside it (live allocations do not overlap), so
    // it falls outside the range and gives `None`.
    let base = text.as_ptr() as usize;
    let p = bytes.as_ptr() as usize;
    let off = p.checked_sub(base)?;
    text.get(off..off + bytes.len())
}

/// Byte offset in `text` of `part`, a slice of it.
fn offset(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// Whether every byte is allowed in the fast subset: no control characters
/// but tab and line feed (carriage returns need XML's end-of-line
/// normalisation), and no byte 0xEF, which starts U+FFFE/U+FFFF (not XML
/// characters) as well as harmless characters: those documents take the
/// reference path.
fn plain_chars(b: &[u8]) -> bool {
    // Branch-free per chunk so that the compiler vectorises the scan.
    b.chunks(64).all(|chunk| {
        let mut bad = false;
        for &c in chunk {
            bad |= (c < 0x20 && c != b'\t' && c != b'\n') | (c == 0xEF);
        }
        !bad
    })
}

/// `[A-Za-z_][A-Za-z0-9_.-]*`: names every XML parser reads alike (no
/// namespace prefix).
fn simple_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// `name` or `name SYSTEM "literal"`, what follows `<!DOCTYPE ` in the
/// fast subset (no internal subset, single spaces).
fn simple_doctype(content: &str) -> bool {
    let mut words = content.split(' ');
    let ok_literal = |s: &str| {
        s.len() >= 2
            && s.starts_with('"')
            && s.ends_with('"')
            && !s[1..s.len() - 1].contains(['"', '<', '>', '[', ']', '&', '%'])
    };
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some(name), None, None, None) => simple_name(name),
        (Some(name), Some("SYSTEM"), Some(lit), None) => simple_name(name) && ok_literal(lit),
        _ => false,
    }
}

/// Expands the predefined entities; `None` for character references,
/// carriage returns or anything quick-xml refuses.
fn unescape(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.contains('&') {
        return Some(Cow::Borrowed(raw));
    }
    if raw.contains("&#") {
        return None;
    }
    quick_xml::escape::unescape(raw).ok()
}

/// Reads the attributes of a start tag into `out`, strictly: whitespace
/// before each, `name="value"` or `name='value'` with a simple name, no
/// `<` in values, no duplicates.  Written here rather than with quick-xml's
/// attribute iterator because the importer needs each attribute's offset
/// and the fast path must refuse what a validating parser refuses.
fn scan_attrs<'i>(text: &'i str, e: &BytesStart<'i>, out: &mut Vec<AttrData<'i>>) -> Option<()> {
    let s = str_of(text, e.attributes_raw())?;
    let at = s.as_ptr() as usize - text.as_ptr() as usize;
    let b = s.as_bytes();
    let first = out.len();
    let mut i = 0;
    loop {
        let ws_start = i;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n') {
            i += 1;
        }
        if i == b.len() {
            return Some(());
        }
        if i == ws_start {
            return None;
        }
        let name_start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b'-')) {
            i += 1;
        }
        let name = &s[name_start..i];
        if !simple_name(name) || name == "xmlns" {
            return None;
        }
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n') {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            return None;
        }
        i += 1;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n') {
            i += 1;
        }
        let quote = *b.get(i)?;
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        // One pass finds the closing quote and notes the bytes that need a
        // closer look (values are short: a plain loop beats memchr here).
        let vstart = i + 1;
        let (j, special) = value_end(b, vstart, quote)?;
        let raw = &s[vstart..j];
        i = j + 1;
        let value = if special {
            // Attribute-value normalisation turns tabs and newlines into
            // spaces; `<` is not allowed in values.
            if raw.bytes().any(|c| matches!(c, b'<' | b'\t' | b'\n')) {
                return None;
            }
            unescape(raw)?
        } else {
            Cow::Borrowed(raw)
        };
        // Many attributes (the duplicate check is quadratic) are left to
        // the reference path, which refuses them before parsing.
        if out.len() - first >= super::MAX_ATTRIBUTES || out[first..].iter().any(|a| a.name == name)
        {
            return None;
        }
        out.push(AttrData {
            name,
            value,
            start: at + name_start,
        });
    }
}

/// The offset of the `quote` closing a value that starts at `from`, and
/// whether the value holds a byte that needs a closer look (`<`, tab,
/// newline, `&`).  Kept out of line: inlined, its loop ran out of registers.
#[inline(never)]
fn value_end(b: &[u8], from: usize, quote: u8) -> Option<(usize, bool)> {
    let mut special = false;
    for (k, &c) in b.get(from..)?.iter().enumerate() {
        if c == quote {
            return Some((from + k, special));
        }
        special |= matches!(c, b'<' | b'\t' | b'\n' | b'&');
    }
    None
}

impl<'a, 'input> Node<'a, 'input> {
    fn data(&self) -> &'a NodeData<'input> {
        &self.doc.nodes[self.id as usize]
    }

    /// Whether this is an element.
    pub(super) fn is_element(&self) -> bool {
        matches!(self.data().kind, Kind::Element { .. })
    }

    /// Whether this is a text node.
    pub(super) fn is_text(&self) -> bool {
        matches!(self.data().kind, Kind::Text(_))
    }

    /// The element's name.
    pub(super) fn tag_name(&self) -> TagName<'a> {
        match &self.data().kind {
            Kind::Element { name, .. } => TagName(name),
            Kind::Text(_) => TagName(""),
        }
    }

    /// A text node's text, or an element's first child when it is text.
    pub(super) fn text(&self) -> Option<&'a str> {
        match &self.data().kind {
            Kind::Text(t) => Some(t),
            Kind::Element { .. } => self.children().next().and_then(|c| match &c.data().kind {
                Kind::Text(t) => Some(&**t),
                Kind::Element { .. } => None,
            }),
        }
    }

    /// Byte range of the node's start (only `start` is meaningful).
    pub(super) fn range(&self) -> std::ops::Range<usize> {
        let s = self.data().start;
        s..s
    }

    /// The child nodes, in document order.
    pub(super) fn children(&self) -> Children<'a, 'input> {
        Children {
            doc: self.doc,
            next: self.data().first_child,
        }
    }

    /// The element's attributes, in document order.
    pub(super) fn attributes(
        &self,
    ) -> impl Iterator<Item = Attribute<'a, 'input>> + Clone + use<'a, 'input> {
        let (a, b) = match self.data().kind {
            Kind::Element { attrs, .. } => attrs,
            Kind::Text(_) => (0, 0),
        };
        self.doc.attrs[a as usize..b as usize]
            .iter()
            .map(|data| Attribute { data })
    }

    /// The attribute called `name`.
    pub(super) fn attribute_node(&self, name: &str) -> Option<Attribute<'a, 'input>> {
        self.attributes().find(|a| a.name() == name)
    }
}

/// Iterator over a node's children.
#[derive(Clone)]
pub(super) struct Children<'a, 'input> {
    doc: &'a Document<'input>,
    next: u32,
}

impl<'a, 'input> Iterator for Children<'a, 'input> {
    type Item = Node<'a, 'input>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next == NONE {
            return None;
        }
        let n = Node {
            doc: self.doc,
            id: self.next,
        };
        self.next = self.doc.nodes[self.next as usize].next_sibling;
        Some(n)
    }
}

impl<'a, 'input> Attribute<'a, 'input> {
    /// The attribute's name.
    pub(super) fn name(&self) -> &'input str {
        self.data.name
    }

    /// The attribute's value, entities expanded.
    pub(super) fn value(&self) -> &'a str {
        &self.data.value
    }

    /// Byte range of the attribute's start (only `start` is meaningful).
    pub(super) fn range(&self) -> std::ops::Range<usize> {
        self.data.start..self.data.start
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use wloc_core::{Topology, TypeFilter};

    use super::Document;
    use crate::tests::conformance_dir;
    use crate::{XmlVersion, export, import_str_reference, import_str_with_warnings};

    fn keep_all() -> Topology {
        let mut t = Topology::new();
        t.set_all_types_filter(TypeFilter::KeepAll);
        t.set_io_types_filter(TypeFilter::KeepAll);
        t
    }

    /// The fast and the reference path agree: same topology and warnings,
    /// or the same error (message and position).
    fn agree(text: &str) -> Result<(), String> {
        let fast = import_str_with_warnings(text, keep_all());
        let slow = import_str_reference(text, keep_all());
        match (fast, slow) {
            (Ok((a, wa)), Ok((b, wb))) => {
                for v in [XmlVersion::V3, XmlVersion::V2] {
                    if export(&a, v) != export(&b, v) {
                        return Err(format!("different topologies ({v:?})"));
                    }
                }
                if wa != wb {
                    return Err(format!("different warnings: {wa:?} / {wb:?}"));
                }
                Ok(())
            }
            (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
            (a, b) => Err(format!(
                "fast {:?} / reference {:?}",
                a.map(|(_, w)| w),
                b.map(|(_, w)| w)
            )),
        }
    }

    fn conformance(dir: &str) -> Vec<(String, String)> {
        let conformance = conformance_dir();
        let rd = std::fs::read_dir(format!("{conformance}/{dir}")).unwrap_or_else(|e| {
            panic!("{conformance}/{dir}: {e} (the recordings are in tests/data/conformance)")
        });
        let mut out: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "xml"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap();
                (p.display().to_string(), text)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn hwloc_documents_take_the_fast_path_with_the_same_result() {
        let mut fast = 0;
        for dir in ["xml", "linux", "x86"] {
            for (path, text) in conformance(dir) {
                let versioned = text.contains("<topology version=");
                let doc = Document::parse_fast(&text, super::super::MAX_ELEMENT_DEPTH);
                // hwloc 1.x documents (no version) keep the reference path.
                assert_eq!(doc.is_some(), versioned, "{path}");
                fast += usize::from(doc.is_some());
                agree(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
                // Our own exports too.
                if let Ok(t) = import_str_reference(&text, keep_all()) {
                    for v in [XmlVersion::V3, XmlVersion::V2] {
                        let s = export(&t.0, v);
                        assert!(Document::parse_fast(&s, 300).is_some(), "{path} {v:?}");
                    }
                }
            }
        }
        assert!(fast > 50, "only {fast} documents took the fast path");
    }

    #[test]
    fn constructs_outside_the_fast_subset_go_to_the_reference_parser() {
        let base =
            std::fs::read_to_string(format!("{}/xml/16amd64-4distances.xml", conformance_dir()))
                .unwrap();
        assert!(Document::parse_fast(&base, 300).is_some());
        let cases: Vec<String> = vec![
            base.replacen("<object", "<!-- c --><object", 1),
            base.replacen("<object", "<?pi x?><object", 1),
            base.replacen("<object", "<![CDATA[ ]]><object", 1),
            base.replacen("type=\"Machine\"", "type=\"&#77;achine\"", 1),
            base.replacen("type=\"Machine\"", "type=\"Machine\"\r", 1),
            base.replacen("type=\"Machine\"", "type=\"Mach\tine\"", 1),
            base.replacen("type=\"Machine\"", "type=\"Machine\" xmlns=\"x\"", 1),
            base.replacen("<object", "<a:object", 1),
            base.replacen("<topology", "\u{feff}<topology", 1),
            base.replacen(
                "<topology",
                "<!DOCTYPE topology [<!ENTITY e \"x\">]>\n<topology",
                1,
            ),
            base.replacen("type=\"Machine\"", "type=\"Ma<chine\"", 1),
            base.replacen("type=\"Machine\" ", "type=\"Machine\"", 1),
            base.replacen("type=\"Machine\"", "type=Machine", 1),
            base.replacen("type=\"Machine\"", "type=\"Machine\" type=\"Machine\"", 1),
            base.replacen("<object", "\u{1}<object", 1),
            base.replacen("</topology>", "</topology>x", 1),
            base.replacen("</topology>", "</topology><topology/>", 1),
            base.replacen("</object>", "</objec>", 1),
            base.replacen("</topology>", "", 1),
            base.replacen("version=\"3.0\"", "", 1),
            base.replacen("<object", "<info name=\"a\" value=\"&bad;\"/><object", 1),
            base.replacen(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                "<?xml version=\"1.1\"?>",
                1,
            ),
        ];
        for (i, text) in cases.iter().enumerate() {
            assert!(text != &base, "case {i} changed nothing");
            assert!(Document::parse_fast(text, 300).is_none(), "case {i}");
            agree(text).unwrap_or_else(|e| panic!("case {i}: {e}"));
        }
        // Entities and blanks inside the subset stay on the fast path.
        let ok = base.replacen(
            "<object",
            "<info name=\"a&amp;b\" value=\"&lt;&gt;&quot;&apos;\"/><object",
            1,
        );
        assert!(Document::parse_fast(&ok, 300).is_some());
        agree(&ok).unwrap();
    }

    /// Pieces of XML syntax that mutations insert.
    const TOKENS: [&str; 28] = [
        "<",
        ">",
        "/>",
        "</object>",
        "<object type=\"PU\" os_index=\"0\">",
        "\"",
        "'",
        "=",
        " x=\"1\"",
        "&",
        "&amp;",
        "&#65;",
        "&lt;",
        "<!-- c -->",
        "<![CDATA[x]]>",
        "\r",
        "\t",
        "\n",
        "]]>",
        "a:b",
        "xmlns=\"u\"",
        "<?p?>",
        "\u{fffe}",
        "\u{1}",
        "é",
        "<info name=\"n\" value=\"v\"/>",
        "<!DOCTYPE topology>",
        "0x1",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Damaged documents give the same verdict on both paths.
        #[test]
        fn mutated_documents_agree_with_the_reference_parser(
            file in 0usize..3,
            edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..3, 0usize..TOKENS.len(), 0usize..24), 1..4),
        ) {
            let name = ["16amd64-4distances.xml", "8intel64-4n2t-memattrs.xml", "cxlmem+dax.v3.xml"][file];
            let mut text = std::fs::read_to_string(format!("{}/xml/{name}", conformance_dir())).unwrap();
            for (at, op, tok, len) in edits {
                let mut pos = at.index(text.len() + 1);
                while !text.is_char_boundary(pos) {
                    pos -= 1;
                }
                match op {
                    0 => text.insert_str(pos, TOKENS[tok]),
                    1 => {
                        let mut end = (pos + len).min(text.len());
                        while !text.is_char_boundary(end) {
                            end -= 1;
                        }
                        text.replace_range(pos..end, "");
                    }
                    _ => {
                        let mut end = (pos + 1).min(text.len());
                        while !text.is_char_boundary(end) {
                            end += 1;
                        }
                        text.replace_range(pos..end, TOKENS[tok]);
                    }
                }
            }
            if let Err(e) = agree(&text) {
                prop_assert!(false, "{e}\n{text}");
            }
        }
    }
}
