//! Text cut to a byte budget, for messages that come from guests or
//! databases and must not grow a record without bound.

/// Cuts `s` to at most `max` bytes on a character boundary, marking the
/// cut.
pub fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    format!("{}…", prefix(s, max))
}

/// The longest start of `s` of at most `max` bytes that ends on a
/// character boundary (no mark).
pub fn prefix(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Cuts `s` so that, written as a JSON string, its content takes at most
/// `max` bytes (a quote is two, a control character up to six): a cap on
/// what a record holds, whatever characters a guest chose.
pub fn bounded_json(s: &str, max: usize) -> String {
    const MORE: &str = "…";
    let escaped = |c: char| match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    };
    // Where the text is cut if it must be: the last place that leaves
    // room for the mark.
    let room = max.saturating_sub(MORE.len());
    let (mut used, mut fits) = (0, None);
    for (i, c) in s.char_indices() {
        let n = escaped(c);
        if used + n > room && fits.is_none() {
            fits = Some(i);
        }
        if used + n > max {
            let kept = &s[..fits.unwrap_or(i)];
            return if max < MORE.len() {
                String::new()
            } else {
                format!("{kept}{MORE}")
            };
        }
        used += n;
    }
    s.to_owned()
}

/// What a caught panic said, as far as it said it in text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let said = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic with no message");
    bounded(said, 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_a_character_boundary() {
        assert_eq!(bounded("héllo", 2), "h…");
        assert_eq!(bounded("abc", 5), "abc");
    }

    #[test]
    fn a_json_cut_counts_what_escaping_adds() {
        let written = |s: &str| serde_json::to_string(s).unwrap().len() - 2;
        for (s, max) in [
            ("abc", 3),
            ("abcdef", 5),
            ("\"\"\"\"\"\"", 7),
            ("\u{1}\u{1}\u{1}\u{1}", 13),
            ("héllo wörld", 6),
            ("", 0),
            ("ab", 0),
        ] {
            let cut = bounded_json(s, max);
            assert!(written(&cut) <= max, "{s:?} to {max}: {cut:?}");
            assert!(s.starts_with(cut.trim_end_matches('…')), "{s:?}: {cut:?}");
            assert_eq!(cut == s, written(s) <= max, "{s:?} to {max}");
        }
        assert_eq!(bounded_json("abcdef", 5), "ab…");
        assert_eq!(bounded_json("\"abc", 4), "…");
    }

    #[test]
    fn a_panics_message_is_read_whatever_its_type() {
        let caught = |f: fn()| std::panic::catch_unwind(f).unwrap_err();
        assert_eq!(panic_message(caught(|| panic!("plain")).as_ref()), "plain");
        assert_eq!(panic_message(caught(|| panic!("{}", 7)).as_ref()), "7");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(5u8)).unwrap_err();
        assert_eq!(panic_message(other.as_ref()), "a panic with no message");
    }
}
