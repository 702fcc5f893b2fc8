//! Regular expressions from hook files, compiled once per process.
//!
//! A long-running host (the `hook` daemon) builds its engine from the hook
//! files again for every event, and compiling a pattern is most of that
//! work: `^sudo ` alone took 14 % of the daemon's time per request
//! (`docs/benchmarks.md`), and the audit log's redactor compiles four more
//! each time it is opened. A compiled [`Regex`] depends on its pattern and
//! nothing else, so a memo keyed by the pattern text can never be stale.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use regex::{Regex, RegexBuilder};

/// Patterns kept compiled; past it the memo starts over.
const MAX_PATTERNS: usize = 64;

/// Longer patterns are compiled each time, never kept.
const MAX_PATTERN_LEN: usize = 4096;

/// The most a kept pattern's compiled program may take (the `regex`
/// crate's own limit is 10 MiB). A hook file from a cloned repository is
/// read (if not run) by the daemon: bigger patterns are compiled for each
/// use and dropped, so no file can make the daemon keep large automata.
const MAX_KEPT_SIZE: usize = 256 * 1024;

static COMPILED: LazyLock<Mutex<HashMap<String, Regex>>> = LazyLock::new(Mutex::default);

/// `pattern` compiled, from the memo when this process compiled it before.
/// A clone of a [`Regex`] shares its automata.
///
/// # Errors
/// When the pattern does not parse, or is too big to compile.
pub fn compile_regex(pattern: &str) -> Result<Regex, regex::Error> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Regex::new(pattern);
    }
    if let Some(regex) = memo().get(pattern) {
        return Ok(regex.clone());
    }
    let regex = match RegexBuilder::new(pattern).size_limit(MAX_KEPT_SIZE).build() {
        Ok(regex) => regex,
        Err(regex::Error::CompiledTooBig(_)) => return Regex::new(pattern),
        Err(e) => return Err(e),
    };
    let mut memo = memo();
    if memo.len() >= MAX_PATTERNS {
        memo.clear();
    }
    memo.insert(pattern.to_owned(), regex.clone());
    Ok(regex)
}

fn memo() -> std::sync::MutexGuard<'static, HashMap<String, Regex>> {
    COMPILED.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_kept_after_its_first_compile_and_a_bad_one_is_not() {
        let first = compile_regex("^memo-test [0-9]+$").unwrap();
        let again = compile_regex("^memo-test [0-9]+$").unwrap();
        assert!(again.is_match("memo-test 42") && !again.is_match("memo-test x"));
        assert_eq!(first.as_str(), again.as_str());
        assert!(memo().contains_key("^memo-test [0-9]+$"));
        assert!(compile_regex("(unclosed").is_err());
        assert!(!memo().contains_key("(unclosed"));
    }

    #[test]
    fn a_hostile_pattern_too_big_for_the_memo_is_compiled_but_not_kept() {
        // Within the regex crate's own limit, far beyond the memo's.
        let big = r"\w{40}";
        let regex = compile_regex(big).unwrap();
        assert!(regex.is_match(&"é".repeat(40)));
        assert!(!memo().contains_key(big));
    }

    #[test]
    fn long_patterns_are_compiled_but_never_kept() {
        let long = format!("^{}$", "a".repeat(MAX_PATTERN_LEN));
        assert!(
            compile_regex(&long)
                .unwrap()
                .is_match(&long[1..long.len() - 1])
        );
        assert!(!memo().contains_key(&long));
    }
}
