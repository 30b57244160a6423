//! `OMP_PLACES` and `OMP_PROC_BIND`.

use crate::error::{ParseError, ParseErrorKind, Setting};
use crate::machine::HwType;
use crate::proclist::{MAX_ENTRIES, MAX_PROC_ID};

/// A parsed `OMP_PLACES` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacesSpec {
    /// An abstract name (`threads`, `cores`, `ll_caches`, `numa_domains`,
    /// `sockets`, ...), with an optional number of places.
    Abstract {
        /// The level each place is an object of.
        level: HwType,
        /// Use only the first places.
        count: Option<usize>,
    },
    /// An explicit list of places, each a list of OS procs.
    Explicit(Vec<Vec<u32>>),
}

/// The thread affinity policy of `OMP_PROC_BIND` (its first value; the
/// others apply to nested parallel regions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcBind {
    /// Threads are not bound.
    False,
    /// Threads are bound; the distribution is `close`, as libgomp does.
    True,
    /// Every thread on the primary thread's place (`primary`, or `master`).
    Primary,
    /// Threads on consecutive places from the primary thread's one.
    Close,
    /// Threads spread over the places: the places are split into one
    /// partition per thread and each thread gets the first place of its own.
    Spread,
}

impl ProcBind {
    /// Parses `OMP_PROC_BIND`: a comma-separated list of `false`, `true`,
    /// `primary`, `master`, `close` and `spread`; the first value is returned.
    pub fn parse(value: &str) -> Result<Self, ParseError> {
        let setting = Setting::OmpProcBind;
        if value.trim().is_empty() {
            return Err(ParseError::new(setting, value, ParseErrorKind::Empty));
        }
        let mut first = None;
        for tok in value.split(',') {
            let b = match tok.trim().to_ascii_lowercase().as_str() {
                "false" => ProcBind::False,
                "true" => ProcBind::True,
                "primary" | "master" => ProcBind::Primary,
                "close" => ProcBind::Close,
                "spread" => ProcBind::Spread,
                _ => {
                    return Err(ParseError::new(
                        setting,
                        tok,
                        ParseErrorKind::UnknownKeyword,
                    ));
                }
            };
            first.get_or_insert(b);
        }
        Ok(first.unwrap_or(ProcBind::False))
    }
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, kind: ParseErrorKind) -> ParseError {
        let rest = &self.s[self.pos.min(self.s.len())..];
        let end = rest
            .find([',', '}'])
            .map_or(rest.len(), |e| e.max(1).min(rest.len()));
        let tok = if rest.is_empty() {
            self.s
        } else {
            &rest[..end]
        };
        ParseError::new(Setting::OmpPlaces, tok, kind)
    }
    fn skip_ws(&mut self) {
        while self.s[self.pos..].starts_with(char::is_whitespace) {
            self.pos += 1;
        }
    }
    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.s[self.pos..].starts_with(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn number(&mut self, signed: bool) -> Result<i64, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let b = self.s.as_bytes();
        if signed && self.pos < b.len() && (b[self.pos] == b'-' || b[self.pos] == b'+') {
            self.pos += 1;
        }
        let digits = self.pos;
        while self.pos < b.len() && b[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        if self.pos == digits || self.pos - digits > 9 {
            self.pos = start;
            return Err(self.err(ParseErrorKind::BadNumber));
        }
        Ok(self.s[start..self.pos].parse::<i64>().unwrap_or(0))
    }
    /// `num [: len [: stride]]`
    fn interval(&mut self) -> Result<(i64, i64, i64), ParseError> {
        let start = self.number(false)?;
        let (mut len, mut stride) = (1, 1);
        if self.eat(':') {
            len = self.number(false)?;
            if self.eat(':') {
                stride = self.number(true)?;
            }
        }
        Ok((start, len, stride))
    }
    fn res_list(&mut self) -> Result<Vec<u32>, ParseError> {
        let mut inc: Vec<u32> = Vec::new();
        let mut exc: Vec<u32> = Vec::new();
        loop {
            let item_start = self.pos;
            let neg = self.eat('!');
            let (start, len, stride) = self.interval()?;
            if neg && (len != 1 || stride != 1) {
                self.pos = item_start;
                return Err(self.err(ParseErrorKind::Syntax("an excluded proc takes no interval")));
            }
            if len == 0 {
                self.pos = item_start;
                return Err(self.err(ParseErrorKind::Syntax(
                    "an interval needs a length of at least 1",
                )));
            }
            if inc.len() + len as usize > MAX_ENTRIES {
                self.pos = item_start;
                return Err(self.err(ParseErrorKind::BadNumber));
            }
            for k in 0..len {
                let v = start + k * stride;
                if !(0..=MAX_PROC_ID as i64).contains(&v) {
                    self.pos = item_start;
                    return Err(self.err(ParseErrorKind::BadRange));
                }
                let target = if neg { &mut exc } else { &mut inc };
                if !target.contains(&(v as u32)) {
                    target.push(v as u32);
                }
            }
            if !self.eat(',') {
                break;
            }
        }
        inc.retain(|v| !exc.contains(v));
        Ok(inc)
    }
}

/// Parses `OMP_PLACES`: an abstract name with an optional count
/// (`cores(4)`), or an explicit list of places such as `{0,1},{2,3}`,
/// `{0:4}:4:4` (four places of four procs, four apart) or `{0:8},!{4}`.
pub fn parse_places(value: &str) -> Result<PlacesSpec, ParseError> {
    let setting = Setting::OmpPlaces;
    let v = value.trim();
    if v.is_empty() {
        return Err(ParseError::new(setting, value, ParseErrorKind::Empty));
    }
    if v.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let (name, count) =
            match v.split_once('(') {
                Some((n, rest)) => {
                    let c = rest
                        .strip_suffix(')')
                        .ok_or_else(|| ParseError::new(setting, v, ParseErrorKind::Unbalanced))?;
                    let c: usize =
                        c.trim().parse().ok().filter(|&c| c > 0).ok_or_else(|| {
                            ParseError::new(setting, c, ParseErrorKind::BadNumber)
                        })?;
                    (n.trim(), Some(c))
                }
                None => (v, None),
            };
        let lower = name.to_ascii_lowercase();
        let level = lower
            .strip_suffix('s')
            .and_then(|single| match single {
                "thread" => Some(HwType::Thread),
                "core" => Some(HwType::Core),
                "ll_cache" => Some(HwType::Llc),
                "numa_domain" => Some(HwType::Numa),
                "socket" => Some(HwType::Socket),
                "die" => Some(HwType::Die),
                "tile" => Some(HwType::Tile),
                "module" => Some(HwType::Module),
                "l1_cache" => Some(HwType::L1),
                "l2_cache" => Some(HwType::L2),
                "l3_cache" => Some(HwType::L3),
                _ => None,
            })
            .ok_or_else(|| ParseError::new(setting, name, ParseErrorKind::UnknownKeyword))?;
        return Ok(PlacesSpec::Abstract { level, count });
    }
    let mut p = Parser { s: v, pos: 0 };
    let mut places: Vec<Vec<u32>> = Vec::new();
    let mut excluded: Vec<Vec<u32>> = Vec::new();
    loop {
        let item_start = p.pos;
        let neg = p.eat('!');
        if !p.eat('{') {
            return Err(p.err(ParseErrorKind::Syntax("expected a place {...}")));
        }
        let place = p.res_list()?;
        if !p.eat('}') {
            return Err(p.err(ParseErrorKind::Unbalanced));
        }
        let (mut count, mut stride) = (1i64, 1i64);
        if p.eat(':') {
            count = p.number(false)?;
            if p.eat(':') {
                stride = p.number(true)?;
            }
            if count == 0 || neg {
                p.pos = item_start;
                return Err(p.err(ParseErrorKind::Syntax("bad place interval")));
            }
        }
        for k in 0..count {
            let mut shifted = Vec::with_capacity(place.len());
            for &id in &place {
                let v = id as i64 + k * stride;
                if !(0..=MAX_PROC_ID as i64).contains(&v) {
                    p.pos = item_start;
                    return Err(p.err(ParseErrorKind::BadRange));
                }
                shifted.push(v as u32);
            }
            if neg {
                excluded.push(shifted);
            } else {
                places.push(shifted);
            }
            if places.len() > MAX_ENTRIES {
                return Err(p.err(ParseErrorKind::BadNumber));
            }
        }
        if p.eat(',') {
            continue;
        }
        p.skip_ws();
        if p.pos != v.len() {
            return Err(p.err(ParseErrorKind::Syntax("expected a comma")));
        }
        break;
    }
    let norm = |v: &Vec<u32>| {
        let mut s = v.clone();
        s.sort_unstable();
        s
    };
    let excluded: Vec<Vec<u32>> = excluded.iter().map(norm).collect();
    places.retain(|pl| !excluded.contains(&norm(pl)));
    Ok(PlacesSpec::Explicit(places))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explicit(s: &str) -> Vec<Vec<u32>> {
        match parse_places(s).unwrap() {
            PlacesSpec::Explicit(p) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn abstract_names() {
        assert_eq!(
            parse_places("cores").unwrap(),
            PlacesSpec::Abstract {
                level: HwType::Core,
                count: None
            }
        );
        assert_eq!(
            parse_places(" sockets(2) ").unwrap(),
            PlacesSpec::Abstract {
                level: HwType::Socket,
                count: Some(2)
            }
        );
        for (n, l) in [
            ("threads", HwType::Thread),
            ("ll_caches", HwType::Llc),
            ("numa_domains", HwType::Numa),
        ] {
            assert_eq!(
                parse_places(n).unwrap(),
                PlacesSpec::Abstract {
                    level: l,
                    count: None
                }
            );
        }
        assert_eq!(
            parse_places("cores(0)").unwrap_err().kind,
            ParseErrorKind::BadNumber
        );
        assert_eq!(
            parse_places("cores(2").unwrap_err().kind,
            ParseErrorKind::Unbalanced
        );
        let e = parse_places("corez").unwrap_err();
        assert_eq!(
            (e.kind, e.token.as_str()),
            (ParseErrorKind::UnknownKeyword, "corez")
        );
    }

    #[test]
    fn explicit_lists() {
        assert_eq!(explicit("{0,1},{2,3}"), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(explicit("{0:4}"), vec![vec![0, 1, 2, 3]]);
        assert_eq!(explicit("{0:4:2}"), vec![vec![0, 2, 4, 6]]);
        assert_eq!(
            explicit("{0:2}:3:4"),
            vec![vec![0, 1], vec![4, 5], vec![8, 9]]
        );
        assert_eq!(explicit("{0:4,!2}"), vec![vec![0, 1, 3]]);
        assert_eq!(explicit("{0},{1},{2},!{1}"), vec![vec![0], vec![2]]);
        assert_eq!(explicit(" { 6 : 3 : -2 } "), vec![vec![6, 4, 2]]);
    }

    #[test]
    fn explicit_errors() {
        assert_eq!(
            parse_places("{0,1").unwrap_err().kind,
            ParseErrorKind::Unbalanced
        );
        assert_eq!(parse_places("{0,a}").unwrap_err().token, "a");
        assert_eq!(
            parse_places("{2:3:-2}").unwrap_err().kind,
            ParseErrorKind::BadRange
        );
        assert_eq!(
            parse_places("{0}{1}").unwrap_err().kind,
            ParseErrorKind::Syntax("expected a comma")
        );
        assert_eq!(
            parse_places("0,1").unwrap_err().kind,
            ParseErrorKind::Syntax("expected a place {...}")
        );
        assert!(parse_places("{0:0}").is_err());
        assert!(parse_places("{0}:0").is_err());
        assert!(parse_places("{0:99999999999}").is_err());
    }

    #[test]
    fn proc_bind() {
        assert_eq!(ProcBind::parse("spread,close").unwrap(), ProcBind::Spread);
        assert_eq!(ProcBind::parse("MASTER").unwrap(), ProcBind::Primary);
        assert_eq!(ProcBind::parse("primary").unwrap(), ProcBind::Primary);
        assert_eq!(ProcBind::parse("true").unwrap(), ProcBind::True);
        assert_eq!(ProcBind::parse("false").unwrap(), ProcBind::False);
        let e = ProcBind::parse("close,sprad").unwrap_err();
        assert_eq!(
            (e.kind, e.token.as_str()),
            (ParseErrorKind::UnknownKeyword, "sprad")
        );
    }
}
