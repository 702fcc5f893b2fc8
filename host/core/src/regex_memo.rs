//! Regular expressions from hook files, compiled once per process.
//!
//! A long-running host (the `hook` daemon) builds its engine from the hook
//! files again for every event, and compiling a pattern is most of that
//! work: `^sudo ` alone took 14 % of the daemon's time per request
//! (`docs/benchmarks.md`), and the audit log's redactor compiles seven more
//! each time it is opened. A compiled [`Regex`] depends on its pattern and
//! nothing else, so a memo keyed by the pattern text can never be stale.
//!
//! Patterns come from hook files a cloned repository writes, so what they
//! may cost is bounded twice: one pattern compiles to at most
//! [`MAX_REGEX_BYTES`], and while hook files are read ([`with_regex_budget`])
//! the patterns compiled anew may take at most a budget together, each
//! counted at the size limit it compiled within (a pattern already kept
//! costs nothing). Past either limit a pattern is refused with
//! `CompiledTooBig`, which [`crate::regex_error`] names.

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

/// The most one pattern may compile to (`MAX_REGEX_BYTES`; the `regex`
/// crate's own default is 10 MiB).
pub const MAX_REGEX_BYTES: usize = 4 * 1024 * 1024;

/// What the patterns of one reading of the hook files may compile to
/// together (`MAX_REGEX_BUDGET_BYTES`).
pub const MAX_REGEX_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// The size limits a pattern is tried within, smallest first: a pattern
/// counts against the budget as the limit it fitted.
const TIERS: [usize; 3] = [16 * 1024, MAX_KEPT_SIZE, MAX_REGEX_BYTES];

thread_local! {
    /// The budget left on this thread, while hook files are read.
    static BUDGET: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Run `read` with a budget of [`MAX_REGEX_BUDGET_BYTES`] for the
/// patterns it compiles on this thread (hook files are read on one
/// thread); outside, only [`MAX_REGEX_BYTES`] per pattern applies.
pub fn with_regex_budget<T>(read: impl FnOnce() -> T) -> T {
    /// Puts the thread's budget back as it was, a panic in `read` too (a
    /// daemon worker outlives a request that panicked).
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BUDGET.with(|b| b.replace(Some(MAX_REGEX_BUDGET_BYTES))));
    read()
}

/// The most a new pattern may compile to now: [`MAX_REGEX_BYTES`], or
/// less when less of this thread's budget is left (in which case a
/// refusal names the budget).
fn room() -> (usize, usize) {
    match BUDGET.with(std::cell::Cell::get) {
        Some(left) if left < MAX_REGEX_BYTES => (left, MAX_REGEX_BUDGET_BYTES),
        _ => (MAX_REGEX_BYTES, MAX_REGEX_BYTES),
    }
}

/// Take `cost` from this thread's budget, if one is running.
fn charge(cost: usize) -> Result<(), regex::Error> {
    BUDGET.with(|b| match b.get() {
        Some(left) if left < cost => Err(regex::Error::CompiledTooBig(MAX_REGEX_BUDGET_BYTES)),
        Some(left) => {
            b.set(Some(left - cost));
            Ok(())
        }
        None => Ok(()),
    })
}

/// `pattern` compiled within the smallest tier it fits, and that tier;
/// tiers past the room left are not tried (a spent budget costs no
/// compile at all).
fn compile_tiered(pattern: &str) -> Result<(Regex, usize), regex::Error> {
    let (room, limit) = room();
    for tier in TIERS.into_iter().filter(|tier| *tier <= room) {
        match RegexBuilder::new(pattern).size_limit(tier).build() {
            Ok(regex) => return Ok((regex, tier)),
            Err(regex::Error::CompiledTooBig(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Err(regex::Error::CompiledTooBig(limit))
}

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
        if pattern.len() <= MAX_PATTERN_LEN
            && let Some(regex) = self.kept().get(pattern)
        {
            return Ok(regex.clone());
        }
        let (regex, tier) = compile_tiered(pattern)?;
        charge(tier)?;
        if pattern.len() > MAX_PATTERN_LEN || tier > MAX_KEPT_SIZE {
            return Ok(regex);
        }
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
    fn hundreds_of_hostile_patterns_meet_the_budget_not_the_allocator() {
        let memo = RegexMemo::default();
        // Each a new pattern that compiles past the kept size.
        let refused = with_regex_budget(|| {
            (0..1000).find_map(|i| memo.compile(&format!(r"\w{{40}}{i}")).err())
        });
        let refused = refused.expect("the budget ran out before 1000 patterns");
        assert!(
            matches!(
                refused,
                regex::Error::CompiledTooBig(MAX_REGEX_BUDGET_BYTES)
            ),
            "{refused}"
        );
        assert!(crate::regex_error(&refused).contains("MAX_REGEX_BUDGET_BYTES"));
        // Outside a budget, one pattern is still bounded on its own.
        let huge = memo.compile(r"\w{2000}").unwrap_err();
        assert!(
            crate::regex_error(&huge).contains("MAX_REGEX_BYTES"),
            "{huge}"
        );
    }

    #[test]
    fn the_process_memo_compiles_like_regex_new() {
        assert!(compile_regex("^a+$").unwrap().is_match("aaa"));
        assert!(compile_regex("(").is_err());
    }
}
