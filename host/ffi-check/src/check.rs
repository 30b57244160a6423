//! The two checks: exported functions through the guard, C structures
//! against the header.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Exported functions seen.
    pub functions: usize,
    /// `#[repr(C)]` structures and unions compared with a header.
    pub structures: usize,
    /// Every broken rule, one line each.
    pub problems: Vec<Problem>,
}

/// A broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// An exported function whose body is not `guard(..)` or `entry!(..)`.
    Unguarded {
        /// The source file.
        file: PathBuf,
        /// The function.
        function: String,
        /// Whether it takes a topology (then only `entry!` will do).
        takes_topology: bool,
    },
    /// Modules of the source folder that import each other in a circle
    /// (through `crate::` paths outside test code).
    Cycle {
        /// The modules, the first repeated at the end.
        modules: Vec<String>,
    },
    /// A `#[repr(C)]` type whose fields differ from the header's.
    Fields {
        /// The source file.
        file: PathBuf,
        /// The structure or union.
        name: String,
        /// The Rust fields, as C names.
        rust: Vec<String>,
        /// The header's fields.
        header: Vec<String>,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Unguarded {
                file,
                function,
                takes_topology,
            } => write!(
                f,
                "{}: fn {function}: exported without the entry guard (its body must be {})",
                file.display(),
                if *takes_topology {
                    "entry!(..), as it takes a topology"
                } else {
                    "guard(..) or entry!(..)"
                }
            ),
            Problem::Cycle { modules } => {
                write!(
                    f,
                    "modules import each other in a circle: {}",
                    modules.join(" -> ")
                )
            }
            Problem::Fields {
                file,
                name,
                rust,
                header,
            } => write!(
                f,
                "{}: {name}: fields [{}] differ from the header's [{}]",
                file.display(),
                rust.join(", "),
                header.join(", ")
            ),
        }
    }
}

/// Why a run could not check.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read.
    Read(PathBuf, std::io::Error),
    /// A source file is not Rust syn can parse.
    Parse(PathBuf, syn::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            Error::Parse(p, e) => write!(f, "cannot parse {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for Error {}

/// Checks the Rust files under `src` (a folder or one file) against the
/// C headers `headers` (files, or folders searched for `.h` files).
pub fn run(src: &Path, headers: &[PathBuf]) -> Result<Report, Error> {
    let mut header_text = String::new();
    for h in headers {
        for f in files(h, "h")? {
            header_text.push_str(&read(&f)?);
            header_text.push('\n');
        }
    }
    let c = CHeader::parse(&header_text);
    let mut report = Report::default();
    let mut graph = Vec::new();
    for f in files(src, "rs")? {
        let file = syn::parse_file(&read(&f)?).map_err(|e| Error::Parse(f.clone(), e))?;
        check_file(&f, &file, &c, &mut report);
        let module = f
            .strip_prefix(src)
            .unwrap_or(&f)
            .with_extension("")
            .to_string_lossy()
            .replace('/', "::");
        graph.push((module, crate_imports(&file)));
    }
    report.problems.extend(cycles(&graph));
    Ok(report)
}

/// The first path segment after `crate::` of every path in non-test code
/// of `file`, macro bodies (`entry!(..)`) included: the modules it uses.
pub fn crate_imports(file: &syn::File) -> std::collections::BTreeSet<String> {
    let mut v = Imports::default();
    v.visit_file(file);
    v.found
}

#[derive(Default)]
struct Imports {
    found: std::collections::BTreeSet<String>,
}

impl<'ast> Visit<'ast> for Imports {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if is_test(&u.attrs) {
            return;
        }
        if let syn::UseTree::Path(p) = &u.tree
            && p.ident == "crate"
        {
            let mut names = Vec::new();
            use_tree_heads(&p.tree, &mut names);
            self.found.extend(names);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let mut s = p.segments.iter();
        if let (Some(first), Some(second)) = (s.next(), s.next())
            && first.ident == "crate"
        {
            self.found.insert(second.ident.to_string());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro bodies are tokens to syn: read `crate :: name` in them.
        let text = m.tokens.to_string();
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in words.windows(3) {
            if (w[0] == "crate" || w[0] == "$crate") && w[1] == "::" {
                let name: String = w[2]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    self.found.insert(name);
                }
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// The first names of a `use crate::{..}` tree.
fn use_tree_heads(t: &syn::UseTree, out: &mut Vec<String>) {
    match t {
        syn::UseTree::Path(p) => out.push(p.ident.to_string()),
        syn::UseTree::Name(n) => out.push(n.ident.to_string()),
        syn::UseTree::Rename(r) => out.push(r.ident.to_string()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|i| use_tree_heads(i, out)),
        syn::UseTree::Glob(_) => {}
    }
}

/// The circles among modules (each file a module; the crate root, `lib`,
/// declares the others and is left out; names that are no module, such as
/// a macro or function of the root, are ignored).
pub fn cycles(graph: &[(String, std::collections::BTreeSet<String>)]) -> Vec<Problem> {
    let modules: HashMap<&str, Vec<&str>> = graph
        .iter()
        .filter(|(m, _)| m != "lib")
        .map(|(m, deps)| {
            let deps = deps
                .iter()
                .map(String::as_str)
                .filter(|d| *d != m && graph.iter().any(|(o, _)| o == d && o != "lib"))
                .collect();
            (m.as_str(), deps)
        })
        .collect();
    let mut names: Vec<&str> = modules.keys().copied().collect();
    names.sort_unstable();
    // Depth-first search; a module met again on the current path closes
    // a circle.
    let mut state: HashMap<&str, u8> = HashMap::new();
    let mut found = Vec::new();
    fn visit<'a>(
        m: &'a str,
        modules: &HashMap<&'a str, Vec<&'a str>>,
        state: &mut HashMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
        found: &mut Vec<Problem>,
    ) {
        state.insert(m, 1);
        path.push(m);
        for &d in &modules[m] {
            match state.get(d) {
                Some(1) => {
                    let at = path.iter().position(|p| *p == d).unwrap_or(0);
                    let mut c: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
                    c.push(d.to_string());
                    found.push(Problem::Cycle { modules: c });
                }
                None => visit(d, modules, state, path, found),
                _ => {}
            }
        }
        path.pop();
        state.insert(m, 2);
    }
    for m in names {
        if !state.contains_key(m) {
            visit(m, &modules, &mut state, &mut Vec::new(), &mut found);
        }
    }
    found
}

/// Checks one parsed Rust file.
pub fn check_file(path: &Path, file: &syn::File, c: &CHeader, report: &mut Report) {
    let mut v = Visitor { path, c, report };
    v.visit_file(file);
}

fn read(p: &Path) -> Result<String, Error> {
    std::fs::read_to_string(p).map_err(|e| Error::Read(p.to_owned(), e))
}

/// `p` itself, or the files ending in `.ext` below the folder `p`, sorted.
fn files(p: &Path, ext: &str) -> Result<Vec<PathBuf>, Error> {
    if !p.is_dir() {
        return Ok(vec![p.to_owned()]);
    }
    let mut out = Vec::new();
    let mut todo = vec![p.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| Error::Read(d.clone(), e))? {
            let e = e.map_err(|e| Error::Read(d.clone(), e))?;
            let path = e.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|x| x == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

struct Visitor<'a> {
    path: &'a Path,
    c: &'a CHeader,
    report: &'a mut Report,
}

/// Whether `attrs` hold `#[cfg(test)]` (test code exports nothing).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

/// Whether `attrs` hold `#[no_mangle]` or `#[unsafe(no_mangle)]`.
fn is_no_mangle(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("no_mangle")
            || (a.path().is_ident("unsafe")
                && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "no_mangle"))
    })
}

/// Whether `attrs` hold `#[repr(C)]` (possibly among other hints).
fn is_repr_c(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let mut c = false;
        if a.path().is_ident("repr") {
            let _ = a.parse_nested_meta(|m| {
                c |= m.path.is_ident("C");
                Ok(())
            });
        }
        c
    })
}

/// The last segment of a path.
fn last_ident(p: &syn::Path) -> Option<String> {
    p.segments.last().map(|s| s.ident.to_string())
}

/// Whether a function takes a topology handle it uses (an argument of
/// type `hwloc_topology_t` whose name does not start with `_`).
fn takes_topology(sig: &syn::Signature) -> bool {
    sig.inputs.iter().any(|a| {
        let syn::FnArg::Typed(t) = a else {
            return false;
        };
        let used = match &*t.pat {
            syn::Pat::Ident(i) => !i.ident.to_string().starts_with('_'),
            _ => true,
        };
        let handle = match &*t.ty {
            syn::Type::Path(p) => last_ident(&p.path).as_deref() == Some("hwloc_topology_t"),
            _ => false,
        };
        used && handle
    })
}

/// Whether a function body is one call of the guard helper: `guard(..)`
/// (any path ending so; only if `plain_guard`) or `entry!(..)`.
fn is_guarded(block: &syn::Block, plain_guard: bool) -> bool {
    let [stmt] = block.stmts.as_slice() else {
        return false;
    };
    match stmt {
        syn::Stmt::Expr(e, None) => match e {
            syn::Expr::Call(call) => match &*call.func {
                syn::Expr::Path(p) => {
                    plain_guard && last_ident(&p.path).as_deref() == Some("guard")
                }
                _ => false,
            },
            syn::Expr::Macro(m) => last_ident(&m.mac.path).as_deref() == Some("entry"),
            _ => false,
        },
        syn::Stmt::Macro(m) => last_ident(&m.mac.path).as_deref() == Some("entry"),
        _ => false,
    }
}

/// A Rust field's C name: a trailing `_` (Rust keywords) dropped.
fn c_name(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_suffix('_').unwrap_or(&s).to_string()
}

impl Visitor<'_> {
    fn fields(&mut self, name: &syn::Ident, attrs: &[syn::Attribute], fields: Vec<String>) {
        if !is_repr_c(attrs) {
            return;
        }
        let name = name.to_string();
        let Some(header) = self.c.types.get(&name) else {
            // A Rust name for an anonymous C type, or wloc's own.
            return;
        };
        self.report.structures += 1;
        if !same_fields(&fields, header) {
            self.report.problems.push(Problem::Fields {
                file: self.path.to_owned(),
                name,
                rust: fields,
                header: header.iter().map(|f| f.name.clone()).collect(),
            });
        }
    }
}

/// Whether Rust fields (as C names) are the header's, in order: equal, or
/// `outer_inner` for the one member `inner` of a nested C member `outer`.
fn same_fields(rust: &[String], header: &[CField]) -> bool {
    rust.len() == header.len()
        && rust.iter().zip(header).all(|(r, c)| {
            *r == c.name
                || matches!(c.nested.as_slice(), [m] if *r == format!("{}_{}", c.name, m.name))
        })
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_test(&f.attrs) || !is_no_mangle(&f.attrs) || f.sig.abi.is_none() {
            return;
        }
        self.report.functions += 1;
        let takes_topology = takes_topology(&f.sig);
        if !is_guarded(&f.block, !takes_topology) {
            self.report.problems.push(Problem::Unguarded {
                file: self.path.to_owned(),
                function: f.sig.ident.to_string(),
                takes_topology,
            });
        }
    }

    fn visit_item_struct(&mut self, s: &'ast syn::ItemStruct) {
        if matches!(s.vis, syn::Visibility::Public(_)) {
            let fields = s
                .fields
                .iter()
                .filter_map(|f| f.ident.as_ref().map(c_name))
                .collect();
            self.fields(&s.ident, &s.attrs, fields);
        }
    }

    fn visit_item_union(&mut self, u: &'ast syn::ItemUnion) {
        if matches!(u.vis, syn::Visibility::Public(_)) {
            let fields = u
                .fields
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref().map(c_name))
                .collect();
            self.fields(&u.ident, &u.attrs, fields);
        }
    }
}

/// A member of a C structure or union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CField {
    /// Its name.
    pub name: String,
    /// The members of the structure or union it is declared with, when
    /// that type's body is written in place (`union { .. } upstream;`).
    pub nested: Vec<CField>,
}

/// The structures and unions a header text defines, by tag
/// (`struct hwloc_obj { .. }` is `hwloc_obj`), nested ones included.
#[derive(Debug, Default)]
pub struct CHeader {
    /// Members of each tagged structure or union.
    pub types: HashMap<String, Vec<CField>>,
}

impl CHeader {
    /// Reads the definitions in `text` (comments and preprocessor lines
    /// are skipped; the first definition of a tag wins).
    pub fn parse(text: &str) -> CHeader {
        let text = strip_comments(text);
        let b = text.as_bytes();
        let mut types = HashMap::new();
        let mut i = 0;
        while i < b.len() {
            let at_word = i == 0 || !is_ident_byte(b[i - 1]);
            let kw = ["struct", "union"]
                .into_iter()
                .find(|k| at_word && text[i..].starts_with(k));
            let Some(kw) = kw else {
                i += 1;
                continue;
            };
            let mut j = i + kw.len();
            if j < b.len() && is_ident_byte(b[j]) {
                i = j;
                continue;
            }
            j = skip_ws(b, j);
            let tag_start = j;
            while j < b.len() && is_ident_byte(b[j]) {
                j += 1;
            }
            let tag = &text[tag_start..j];
            j = skip_ws(b, j);
            if !tag.is_empty()
                && j < b.len()
                && b[j] == b'{'
                && let Some(end) = matching(b, j)
            {
                types
                    .entry(tag.to_string())
                    .or_insert_with(|| members(&text[j + 1..end]));
            }
            i = j.max(i + 1);
        }
        CHeader { types }
    }
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn skip_ws(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    j
}

/// The index of the `}` closing the `{` at `open`.
fn matching(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` without comments and preprocessor lines.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |e| &r[e + 2..]);
            out.push(' ');
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |e| &r[e..]);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    // Preprocessor lines go; of `#if .. #else .. #endif` only the first
    // branch is kept (hwloc's alternatives declare one member twice).
    let mut kept = Vec::new();
    // Per open `#if`: whether this branch is skipped.
    let mut skipping: Vec<bool> = Vec::new();
    for l in out.lines() {
        let t = l.trim_start();
        let Some(d) = t.strip_prefix('#') else {
            if !skipping.contains(&true) {
                kept.push(l);
            }
            continue;
        };
        let d = d.trim_start();
        if d.starts_with("if") {
            skipping.push(false);
        } else if d.starts_with("el") {
            if let Some(s) = skipping.last_mut() {
                *s = true;
            }
        } else if d.starts_with("endif") {
            skipping.pop();
        }
    }
    kept.join("\n")
}

/// The members declared in a structure or union body.
fn members(body: &str) -> Vec<CField> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut k) = (0, 0);
    while k < b.len() {
        match b[k] {
            b'{' => {
                k = matching(b, k).unwrap_or(b.len() - 1) + 1;
                continue;
            }
            b';' => {
                declaration(&body[start..k], &mut out);
                start = k + 1;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// The members one declaration (up to its `;`) declares.
fn declaration(decl: &str, out: &mut Vec<CField>) {
    let b = decl.as_bytes();
    let (nested, declarators) = match decl.find('{') {
        Some(open) => {
            let close = matching(b, open).unwrap_or(b.len() - 1);
            (members(&decl[open + 1..close]), &decl[close + 1..])
        }
        None => (Vec::new(), decl),
    };
    // The declarators after the type: `a, b`, `*p`, `x[4]`, `(*f)(int)`.
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (k, c) in declarators.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&declarators[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&declarators[from..]);
    for (n, p) in parts.iter().enumerate() {
        if let Some(name) = declarator_name(p, n == 0 && nested.is_empty()) {
            out.push(CField {
                name,
                nested: nested.clone(),
            });
        }
    }
}

/// The name a declarator declares: `name` in `(*name)(..)`, else the last
/// identifier before any `[..]` or bit-field width. `with_type`: the text
/// starts with the member's type (the first declarator of a declaration
/// without a body).
fn declarator_name(d: &str, with_type: bool) -> Option<String> {
    let d = d.trim();
    if let Some(p) = d.find("(*") {
        let rest = &d[p + 2..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        return Some(rest[..end].to_string());
    }
    let d = d.split(['[', ':']).next()?.trim();
    let words: Vec<&str> = d
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    if with_type && words.len() < 2 {
        return None;
    }
    words.last().map(|w| w.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(f: &[CField]) -> Vec<&str> {
        f.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn header_members_nested_bodies_and_function_pointers() {
        let c = CHeader::parse(
            "#include <x.h>\n/* struct fake { int no; }; */\n\
             struct alt {\n#ifndef WIDE\n  short d;\n#else\n  int d;\n#endif\n  int e;\n};\n\
             struct hwloc_bridge_attr_s {\n  union {\n    struct hwloc_pcidev_attr_s pci;\n  } upstream; // up\n\
             int upstream_type;\n  unsigned char a, b;\n  unsigned depth:4;\n  char name[16];\n\
             int (*cb)(void *, int);\n  struct hwloc_obj **children;\n};\n\
             union hwloc_obj_attr_u { struct hwloc_numanode_attr_s { unsigned long local_memory; } numanode; };",
        );
        let b = &c.types["hwloc_bridge_attr_s"];
        assert_eq!(
            names(b),
            [
                "upstream",
                "upstream_type",
                "a",
                "b",
                "depth",
                "name",
                "cb",
                "children"
            ]
        );
        assert_eq!(names(&b[0].nested), ["pci"]);
        assert_eq!(names(&c.types["hwloc_obj_attr_u"]), ["numanode"]);
        assert_eq!(names(&c.types["hwloc_numanode_attr_s"]), ["local_memory"]);
        assert!(!c.types.contains_key("fake"));
        assert_eq!(names(&c.types["alt"]), ["d", "e"]);
    }

    #[test]
    fn module_circles_are_found_outside_test_code() {
        let a: syn::File = syn::parse_str(
            "use crate::b::x; fn f() { entry!(t, 0, |h| crate::c::y()) } \
             #[cfg(test)] mod tests { use crate::d::z; }",
        )
        .unwrap();
        let b: syn::File = syn::parse_str("fn g() { crate::a::f() }").unwrap();
        let graph = vec![
            ("a".to_string(), crate_imports(&a)),
            ("b".to_string(), crate_imports(&b)),
            ("c".to_string(), Default::default()),
            ("d".to_string(), crate_imports(&b)),
        ];
        assert_eq!(
            graph[0].1.iter().collect::<Vec<_>>(),
            ["b", "c"],
            "the test module's import is left out"
        );
        assert_eq!(
            cycles(&graph),
            [Problem::Cycle {
                modules: vec!["a".into(), "b".into(), "a".into()]
            }]
        );
        assert!(cycles(&graph[2..]).is_empty());
    }

    #[test]
    fn unguarded_exports_and_departing_structures_are_reported() {
        let c = CHeader::parse("struct s { int type; union { int pci; } up; int last; };");
        let src: syn::File = syn::parse_str(
            r#"
            #[no_mangle] pub unsafe extern "C" fn ok1(t: T) -> c_int { entry!(t, -1, |h| 0) }
            #[no_mangle] pub extern "C" fn ok2() -> c_int { crate::ffi::guard(0, || 1) }
            #[no_mangle] pub unsafe extern "C" fn bare(t: hwloc_topology_t) -> c_int { let x = 1; guard(0, || x) }
            #[no_mangle] pub unsafe extern "C" fn plain(t: hwloc_topology_t) -> c_int { guard(0, || 1) }
            #[no_mangle] pub unsafe extern "C" fn unused(_t: hwloc_topology_t) -> c_int { guard(0, || 1) }
            #[cfg(test)] mod tests { #[no_mangle] pub extern "C" fn in_test() {} }
            #[repr(C)] pub struct s { pub type_: c_int, pub up_pci: c_int, pub last: c_int }
            #[repr(C)] pub struct other { pub x: c_int }
            "#,
        )
        .unwrap();
        let mut r = Report::default();
        check_file(Path::new("a.rs"), &src, &c, &mut r);
        assert_eq!((r.functions, r.structures), (5, 1));
        assert_eq!(
            r.problems,
            [
                Problem::Unguarded {
                    file: "a.rs".into(),
                    function: "bare".into(),
                    takes_topology: true,
                },
                Problem::Unguarded {
                    file: "a.rs".into(),
                    function: "plain".into(),
                    takes_topology: true,
                }
            ]
        );
        let bad: syn::File =
            syn::parse_str("#[repr(C)] pub struct s { pub type_: c_int, pub last: c_int }")
                .unwrap();
        let mut r = Report::default();
        check_file(Path::new("b.rs"), &bad, &c, &mut r);
        assert_eq!(r.problems.len(), 1);
        assert!(r.problems[0].to_string().contains("s: fields [type, last]"));
    }
}
