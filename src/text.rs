//! Text cut to a byte budget, for messages that come from guests or
//! databases and must not grow a record without bound.

/// Cuts `s` to at most `max` bytes on a character boundary.
pub fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
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
    fn a_panics_message_is_read_whatever_its_type() {
        let caught = |f: fn()| std::panic::catch_unwind(f).unwrap_err();
        assert_eq!(panic_message(caught(|| panic!("plain")).as_ref()), "plain");
        assert_eq!(panic_message(caught(|| panic!("{}", 7)).as_ref()), "7");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(5u8)).unwrap_err();
        assert_eq!(panic_message(other.as_ref()), "a panic with no message");
    }
}
