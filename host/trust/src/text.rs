//! Text rules shared by the trust model and the host: how a component's
//! text is shown on a terminal, and how `*`/`?` patterns match names.

/// Makes a component's text safe for a terminal: control characters
/// (escape sequences included) and bidirectional or zero-width formatting
/// characters are shown escaped, and long text is cut.
pub fn sanitize(s: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i >= max_chars {
            out.push('…');
            break;
        }
        // Control characters (escape sequences) and the invisible
        // formatting ones that reorder or hide text on a terminal.
        let invisible = matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if (c.is_control() && c != '\t') || invisible {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Matches `*` (any run of characters) and `?` (one character).
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_escapes_what_a_terminal_would_act_on() {
        assert_eq!(super::sanitize("a\x1b[2Jb", 100), "a\\u{1b}[2Jb");
        assert_eq!(super::sanitize("x\u{202e}y", 100), "x\\u{202e}y");
        assert_eq!(super::sanitize("tab\tok é", 100), "tab\tok é");
        assert_eq!(super::sanitize("abcdef", 3), "abc…");
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("cpu*", "cpu12"));
        assert!(wildcard_match("cpu?", "cpu1"));
        assert!(!wildcard_match("cpu?", "cpu12"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("n*e*", "node0e"));
        assert!(!wildcard_match("node*", "cpu0"));
        assert!(wildcard_match("a*b*c", "aXbYbZc"));
    }
}
