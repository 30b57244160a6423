//! The `KMP_AFFINITY` string: `[<modifier>,...]<type>[,<permute>][,<offset>]`.

use crate::error::{ParseError, ParseErrorKind, Setting};
use crate::machine::HwType;
use crate::proclist::{ProcEntry, parse_kmp_proclist};

/// The affinity types of `KMP_AFFINITY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AffinityType {
    /// Threads are not bound (the topology is still modelled).
    None,
    /// Thread n+1 as close as possible to thread n.
    Compact,
    /// Threads spread as evenly as possible over the machine.
    Scatter,
    /// Like scatter over cores, with consecutive threads on the same core when cores are shared.
    Balanced,
    /// Threads bound to the entries of `proclist=`.
    Explicit,
    /// No affinity at all: threads keep the initial mask.
    Disabled,
    /// Deprecated: `compact` whose single integer is an offset.
    Logical,
    /// Deprecated: `compact,1` (threads on consecutive cores) whose single integer is an offset.
    Physical,
}

impl AffinityType {
    fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "none" => AffinityType::None,
            "compact" => AffinityType::Compact,
            "scatter" => AffinityType::Scatter,
            "balanced" => AffinityType::Balanced,
            "explicit" => AffinityType::Explicit,
            "disabled" => AffinityType::Disabled,
            "logical" => AffinityType::Logical,
            "physical" => AffinityType::Physical,
            _ => return None,
        })
    }

    /// The keyword of the type.
    pub fn name(self) -> &'static str {
        match self {
            AffinityType::None => "none",
            AffinityType::Compact => "compact",
            AffinityType::Scatter => "scatter",
            AffinityType::Balanced => "balanced",
            AffinityType::Explicit => "explicit",
            AffinityType::Disabled => "disabled",
            AffinityType::Logical => "logical",
            AffinityType::Physical => "physical",
        }
    }
}

/// How far a thread may float: a level of the topology map, or all the
/// procs of one CPU kind on hybrid machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// All procs below one object of this level (`fine`/`thread` is one proc).
    Level(HwType),
    /// All procs of the same core type (hybrid machines).
    CoreType,
    /// All procs of the same core efficiency (hybrid machines).
    CoreEfficiency,
}

impl Granularity {
    /// Parses a `granularity=` specifier.
    pub fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "core_type" => Granularity::CoreType,
            "core_efficiency" | "core_eff" => Granularity::CoreEfficiency,
            w => Granularity::Level(HwType::from_keyword(w)?),
        })
    }

    /// The specifier's keyword.
    pub fn name(self) -> &'static str {
        match self {
            Granularity::Level(t) => t.keyword(),
            Granularity::CoreType => "core_type",
            Granularity::CoreEfficiency => "core_efficiency",
        }
    }
}

/// A parsed `KMP_AFFINITY` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KmpAffinity {
    /// The affinity type (`none` when only modifiers were given).
    pub kind: AffinityType,
    /// Levels of the map moved to the least significant place when sorting (compact, scatter).
    pub permute: u32,
    /// Starting position of the thread assignment.
    pub offset: u32,
    /// Granularity; `None` means the default, `core`.
    pub granularity: Option<Granularity>,
    /// Entries of `proclist=[...]`.
    pub proclist: Option<Vec<ProcEntry>>,
    /// Print the topology map and the bindings.
    pub verbose: bool,
    /// Restrict to the initial affinity mask (the default).
    pub respect: bool,
    /// Print warnings (the default).
    pub warnings: bool,
    /// Reset the primary thread's mask after parallel regions (no effect on placement).
    pub reset: bool,
    /// One mask per OS proc, so threads may share a granule (the default); `noduplicates` keeps one per granule.
    pub duplicates: bool,
    /// Modifiers that were ignored (conflicting with an earlier one), as warnings.
    pub warnings_text: Vec<String>,
}

impl Default for KmpAffinity {
    fn default() -> Self {
        KmpAffinity {
            kind: AffinityType::None,
            permute: 0,
            offset: 0,
            granularity: None,
            proclist: None,
            verbose: false,
            respect: true,
            warnings: true,
            reset: false,
            duplicates: true,
            warnings_text: Vec::new(),
        }
    }
}

/// Splits at commas outside brackets and braces.
fn split_top(setting: Setting, s: &str) -> Result<Vec<&str>, ParseError> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(ParseError::new(
                        setting,
                        &s[start..],
                        ParseErrorKind::Unbalanced,
                    ));
                }
            }
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(ParseError::new(
            setting,
            &s[start..],
            ParseErrorKind::Unbalanced,
        ));
    }
    out.push(&s[start..]);
    Ok(out)
}

/// Sets a boolean modifier unless an earlier one already did (the first wins).
fn set_once(slot: &mut Option<bool>, v: bool, tok: &str, warnings: &mut Vec<String>) {
    if slot.is_some() {
        warnings.push(format!(
            "KMP_AFFINITY: parameter has been specified already, ignoring \"{tok}\"."
        ));
    } else {
        *slot = Some(v);
    }
}

impl KmpAffinity {
    /// Parses a `KMP_AFFINITY` value.  Modifiers are read left to right and
    /// a modifier conflicting with an earlier one is ignored (with a
    /// warning in [`warnings_text`](Self::warnings_text)).
    pub fn parse(value: &str) -> Result<Self, ParseError> {
        let setting = Setting::KmpAffinity;
        if value.trim().is_empty() {
            return Err(ParseError::new(setting, value, ParseErrorKind::Empty));
        }
        let mut a = KmpAffinity::default();
        let mut kind: Option<AffinityType> = None;
        let mut params: Vec<(u32, &str)> = Vec::new();
        let (mut verbose, mut respect, mut warnings, mut reset, mut dups) =
            (None, None, None, None, None);
        let mut w = Vec::new();
        for raw in split_top(setting, value)? {
            let tok = raw.trim();
            if tok.is_empty() {
                return Err(ParseError::new(
                    setting,
                    value,
                    ParseErrorKind::Syntax("empty item"),
                ));
            }
            let lower = tok.to_ascii_lowercase();
            if lower.bytes().all(|b| b.is_ascii_digit()) {
                if kind.is_none() {
                    return Err(ParseError::new(
                        setting,
                        tok,
                        ParseErrorKind::ParamsBeforeType,
                    ));
                }
                let v = lower
                    .parse::<u32>()
                    .map_err(|_| ParseError::new(setting, tok, ParseErrorKind::BadNumber))?;
                params.push((v, tok));
                continue;
            }
            if let Some((key, val)) = lower.split_once('=') {
                match key.trim() {
                    "granularity" | "gran" => {
                        let g = Granularity::parse(val.trim()).ok_or_else(|| {
                            ParseError::new(setting, tok, ParseErrorKind::UnknownGranularity)
                        })?;
                        if a.granularity.is_some() {
                            w.push(format!("KMP_AFFINITY: parameter has been specified already, ignoring \"{tok}\"."));
                        } else {
                            a.granularity = Some(g);
                        }
                    }
                    "proclist" => {
                        let v = val.trim();
                        let inner = v
                            .strip_prefix('[')
                            .and_then(|v| v.strip_suffix(']'))
                            .ok_or_else(|| {
                                ParseError::new(
                                    setting,
                                    tok,
                                    ParseErrorKind::Syntax("proclist needs [...]"),
                                )
                            })?;
                        let list = parse_kmp_proclist(inner)?;
                        if a.proclist.is_some() {
                            w.push(format!("KMP_AFFINITY: parameter has been specified already, ignoring \"{tok}\"."));
                        } else {
                            a.proclist = Some(list);
                        }
                    }
                    _ => {
                        return Err(ParseError::new(
                            setting,
                            tok,
                            ParseErrorKind::UnknownKeyword,
                        ));
                    }
                }
                continue;
            }
            match lower.as_str() {
                "verbose" => set_once(&mut verbose, true, tok, &mut w),
                "noverbose" => set_once(&mut verbose, false, tok, &mut w),
                "respect" => set_once(&mut respect, true, tok, &mut w),
                "norespect" => set_once(&mut respect, false, tok, &mut w),
                "warnings" => set_once(&mut warnings, true, tok, &mut w),
                "nowarnings" => set_once(&mut warnings, false, tok, &mut w),
                "reset" => set_once(&mut reset, true, tok, &mut w),
                "noreset" => set_once(&mut reset, false, tok, &mut w),
                "duplicates" | "dups" => set_once(&mut dups, true, tok, &mut w),
                "noduplicates" | "nodups" => set_once(&mut dups, false, tok, &mut w),
                word => match AffinityType::parse(word) {
                    Some(t) if kind.is_none() => kind = Some(t),
                    Some(_) => w.push(format!(
                        "KMP_AFFINITY: parameter has been specified already, ignoring \"{tok}\"."
                    )),
                    None => {
                        return Err(ParseError::new(
                            setting,
                            tok,
                            ParseErrorKind::UnknownKeyword,
                        ));
                    }
                },
            }
        }
        a.verbose = verbose.unwrap_or(false);
        a.respect = respect.unwrap_or(true);
        a.warnings = warnings.unwrap_or(true);
        a.reset = reset.unwrap_or(false);
        a.duplicates = dups.unwrap_or(true);
        a.kind = match (kind, &a.proclist) {
            (Some(k), _) => k,
            // A proclist without a type means explicit, as the runtime does.
            (None, Some(_)) => AffinityType::Explicit,
            (None, None) => AffinityType::None,
        };
        let max_params = match a.kind {
            AffinityType::Compact | AffinityType::Scatter => 2,
            AffinityType::Logical | AffinityType::Physical => 1,
            _ => 0,
        };
        if let Some((_, tok)) = params.get(max_params) {
            let kind = if max_params == 0 {
                ParseErrorKind::ParamsNotAllowed
            } else {
                ParseErrorKind::TooManyParams
            };
            return Err(ParseError::new(setting, tok, kind));
        }
        match a.kind {
            AffinityType::Logical | AffinityType::Physical => {
                a.offset = params.first().map_or(0, |p| p.0);
            }
            _ => {
                a.permute = params.first().map_or(0, |p| p.0);
                a.offset = params.get(1).map_or(0, |p| p.0);
            }
        }
        if a.kind == AffinityType::Explicit && a.proclist.is_none() {
            return Err(ParseError::new(
                setting,
                value,
                ParseErrorKind::MissingProclist,
            ));
        }
        if a.kind != AffinityType::Explicit && a.proclist.is_some() {
            w.push("KMP_AFFINITY: proclist specified without \"explicit\" affinity type, proclist ignored.".into());
            a.proclist = None;
        }
        a.warnings_text = w;
        Ok(a)
    }

    /// The `GOMP_CPU_AFFINITY` equivalent: `granularity=fine,proclist=[list],explicit`.
    pub fn from_gomp(value: &str) -> Result<Self, ParseError> {
        Ok(KmpAffinity {
            kind: AffinityType::Explicit,
            granularity: Some(Granularity::Level(HwType::Thread)),
            proclist: Some(crate::proclist::parse_gomp(value)?),
            ..KmpAffinity::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let a = KmpAffinity::parse("compact").unwrap();
        assert_eq!(a.kind, AffinityType::Compact);
        assert!(a.respect && !a.verbose && a.warnings && a.duplicates);
        assert_eq!((a.permute, a.offset, a.granularity), (0, 0, None));
        assert_eq!(
            KmpAffinity::parse("verbose").unwrap().kind,
            AffinityType::None
        );
    }

    #[test]
    fn permute_offset_and_deprecated_types() {
        let a = KmpAffinity::parse("granularity=fine,compact,1,0").unwrap();
        assert_eq!((a.permute, a.offset), (1, 0));
        assert_eq!(a.granularity, Some(Granularity::Level(HwType::Thread)));
        let a = KmpAffinity::parse("scatter,2").unwrap();
        assert_eq!((a.permute, a.offset), (2, 0));
        let a = KmpAffinity::parse("logical,3").unwrap();
        assert_eq!((a.permute, a.offset), (0, 3));
        let e = KmpAffinity::parse("physical,1,2").unwrap_err();
        assert_eq!(
            (e.kind, e.token.as_str()),
            (ParseErrorKind::TooManyParams, "2")
        );
        let e = KmpAffinity::parse("compact,1,2,3").unwrap_err();
        assert_eq!(
            (e.kind, e.token.as_str()),
            (ParseErrorKind::TooManyParams, "3")
        );
        let e = KmpAffinity::parse("none,1").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::ParamsNotAllowed);
        let e = KmpAffinity::parse("1,compact").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::ParamsBeforeType);
    }

    #[test]
    fn first_conflicting_modifier_wins() {
        let a = KmpAffinity::parse("verbose,noverbose,scatter").unwrap();
        let b = KmpAffinity::parse("verbose,scatter").unwrap();
        assert_eq!(a.verbose, b.verbose);
        assert_eq!(a.kind, b.kind);
        assert_eq!(a.warnings_text.len(), 1);
        let a = KmpAffinity::parse("compact,granularity=core,granularity=fine").unwrap();
        assert_eq!(a.granularity, Some(Granularity::Level(HwType::Core)));
        let a = KmpAffinity::parse("norespect,respect,compact").unwrap();
        assert!(!a.respect);
    }

    #[test]
    fn granularities() {
        for (w, g) in [
            ("fine", Granularity::Level(HwType::Thread)),
            ("thread", Granularity::Level(HwType::Thread)),
            ("core", Granularity::Level(HwType::Core)),
            ("tile", Granularity::Level(HwType::Tile)),
            ("die", Granularity::Level(HwType::Die)),
            ("module", Granularity::Level(HwType::Module)),
            ("l1_cache", Granularity::Level(HwType::L1)),
            ("l2_cache", Granularity::Level(HwType::L2)),
            ("l3_cache", Granularity::Level(HwType::L3)),
            ("node", Granularity::Level(HwType::Numa)),
            ("numa_domain", Granularity::Level(HwType::Numa)),
            ("group", Granularity::Level(HwType::ProcGroup)),
            ("socket", Granularity::Level(HwType::Socket)),
            ("core_type", Granularity::CoreType),
            ("core_efficiency", Granularity::CoreEfficiency),
        ] {
            let a = KmpAffinity::parse(&format!("granularity={w},scatter")).unwrap();
            assert_eq!(a.granularity, Some(g), "{w}");
        }
        let e = KmpAffinity::parse("granularity=cor,scatter").unwrap_err();
        assert_eq!(
            (e.kind, e.token.as_str()),
            (ParseErrorKind::UnknownGranularity, "granularity=cor")
        );
    }

    #[test]
    fn proclists() {
        let a = KmpAffinity::parse("granularity=fine,proclist=[3,0,{1,2},{1,2}],explicit").unwrap();
        assert_eq!(a.kind, AffinityType::Explicit);
        assert_eq!(
            a.proclist.unwrap(),
            vec![vec![3], vec![0], vec![1, 2], vec![1, 2]]
        );
        assert_eq!(
            KmpAffinity::parse("proclist=[0,1]").unwrap().kind,
            AffinityType::Explicit
        );
        assert_eq!(
            KmpAffinity::parse("explicit").unwrap_err().kind,
            ParseErrorKind::MissingProclist
        );
        let a = KmpAffinity::parse("proclist=[0,1],scatter").unwrap();
        assert!(a.proclist.is_none() && a.warnings_text.len() == 1);
        assert_eq!(
            KmpAffinity::parse("proclist=[0,{1],explicit")
                .unwrap_err()
                .kind,
            ParseErrorKind::Unbalanced
        );
        assert_eq!(
            KmpAffinity::parse("proclist=0,explicit").unwrap_err().kind,
            ParseErrorKind::Syntax("proclist needs [...]")
        );
    }

    #[test]
    fn bad_words_are_named() {
        let e = KmpAffinity::parse("verbose,compactt").unwrap_err();
        assert_eq!(
            (e.kind.clone(), e.token.as_str()),
            (ParseErrorKind::UnknownKeyword, "compactt")
        );
        assert!(e.to_string().contains("\"compactt\""));
        assert_eq!(
            KmpAffinity::parse("").unwrap_err().kind,
            ParseErrorKind::Empty
        );
        assert_eq!(
            KmpAffinity::parse("compact,,1").unwrap_err().kind,
            ParseErrorKind::Syntax("empty item")
        );
        let g = KmpAffinity::from_gomp("3,0-2").unwrap();
        assert_eq!(g.proclist.unwrap().len(), 4);
    }
}
