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
/// use and dropped (twice: the first attempt stops at this limit), so no
/// file can make the daemon keep large automata.
const MAX_KEPT_SIZE: usize = 256 * 1024;

/// The process's memo.
static PROCESS: LazyLock<RegexMemo> = LazyLock::new(RegexMemo::default);

/// `pattern` compiled, from the process's memo when this process compiled
/// it before. A clone of a [`Regex`] shares its automata.
///
/// # Errors
/// When the pattern does not parse, or is too big to compile.
pub fn compile_regex(pattern: &str) -> Result<Regex, regex::Error> {
    PROCESS.compile(pattern)
}

/// Compiled patterns by their text, bounded (see the constants above).
#[derive(Default)]
struct RegexMemo(Mutex<HashMap<String, Regex>>);

impl RegexMemo {
    fn compile(&self, pattern: &str) -> Result<Regex, regex::Error> {
        if pattern.len() > MAX_PATTERN_LEN {
            return Regex::new(pattern);
        }
        if let Some(regex) = self.kept().get(pattern) {
            return Ok(regex.clone());
        }
        let regex = match RegexBuilder::new(pattern).size_limit(MAX_KEPT_SIZE).build() {
            Ok(regex) => regex,
            Err(regex::Error::CompiledTooBig(_)) => return Regex::new(pattern),
            Err(e) => return Err(e),
        };
        let mut kept = self.kept();
        if kept.len() >= MAX_PATTERNS {
            kept.clear();
        }
        kept.insert(pattern.to_owned(), regex.clone());
        Ok(regex)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, Regex>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each test has a memo of its own: the process's is shared with every
    // other test compiling regexes in parallel, and may start over.

    #[test]
    fn a_pattern_is_kept_after_its_first_compile_and_a_bad_one_is_not() {
        let memo = RegexMemo::default();
        memo.compile("^memo-test [0-9]+$").unwrap();
        assert!(memo.kept().contains_key("^memo-test [0-9]+$"));
        let again = memo.compile("^memo-test [0-9]+$").unwrap();
        assert!(again.is_match("memo-test 42") && !again.is_match("memo-test x"));
        assert!(memo.compile("(unclosed").is_err());
        assert_eq!(memo.kept().len(), 1);
    }

    #[test]
    fn a_full_memo_starts_over() {
        let memo = RegexMemo::default();
        for i in 0..=MAX_PATTERNS {
            memo.compile(&format!("^{i}$")).unwrap();
        }
        assert_eq!(
            memo.kept().len(),
            1,
            "the last pattern, after a fresh start"
        );
    }

    #[test]
    fn a_hostile_pattern_too_big_for_the_memo_is_compiled_but_not_kept() {
        let memo = RegexMemo::default();
        // Within the regex crate's own limit, far beyond the memo's.
        let big = r"\w{40}";
        let regex = memo.compile(big).unwrap();
        assert!(regex.is_match(&"é".repeat(40)));
        let long = format!("^{}$", "a".repeat(MAX_PATTERN_LEN));
        assert!(
            memo.compile(&long)
                .unwrap()
                .is_match(&long[1..long.len() - 1])
        );
        assert!(memo.kept().is_empty());
    }

    #[test]
    fn the_process_memo_compiles_like_regex_new() {
        assert!(compile_regex("^a+$").unwrap().is_match("aaa"));
        assert!(compile_regex("(").is_err());
    }
}
