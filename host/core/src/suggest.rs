//! "Did you mean …?" suggestions for near-miss names in hook files and on the
//! command line. Owns nothing but the distance rule.

/// The candidate nearest to `name`, if it is close enough to be a likely
/// typo: at most a third of the name's length in edits (at least 2), compared
/// without regard to case.
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = name.to_lowercase();
    let budget = (wanted.chars().count() / 3).max(2);
    candidates
        .map(|c| (strsim::damerau_levenshtein(&wanted, &c.to_lowercase()), c))
        .filter(|(distance, _)| *distance <= budget)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn close_names_are_suggested_and_far_ones_are_not() {
        let names = ["wasm", "command", "inline"];
        assert_eq!(nearest("wams", names.into_iter()), Some("wasm"));
        assert_eq!(nearest("Command", names.into_iter()), Some("command"));
        assert_eq!(nearest("http-endpoint", names.into_iter()), None);
    }
}
