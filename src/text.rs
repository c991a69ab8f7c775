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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_a_character_boundary() {
        assert_eq!(bounded("héllo", 2), "h…");
        assert_eq!(bounded("abc", 5), "abc");
    }
}
