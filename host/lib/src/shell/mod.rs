//! The one reader of shell command lines. It cuts a line into simple
//! commands, splits each into words, peels the wrappers (`nice`, `env`,
//! `sudo`, `xargs`, `find -exec`) and says what every command reads as
//! more than data: code (`sh -c`, `python3 -Ic`, `perl -ne`, `awk`), a
//! script, a module, arithmetic (`let`, `[[ a -eq b ]]`) or a variable's
//! name (`printf -v`). Template checks ([`templates`]), trust's pins and
//! `runs` all read through it, so they cannot disagree. It reads; it
//! never runs anything.

mod decode;
pub(crate) mod lexicon;
mod quoting;
pub(crate) mod templates;

pub(crate) use decode::{Command, Read, ReadAs, commands};
pub(crate) use quoting::check as check_quoting;

/// One simple command of a line: its text, its words (`None` when the
/// text cannot be split into words: an unclosed quote), and whether it
/// stands inside `[[ … ]]`.
#[derive(Debug)]
pub(crate) struct Simple {
    /// Its text.
    pub(crate) text: String,
    /// Its words, unquoted.
    pub(crate) words: Option<Vec<String>>,
    /// Whether it stands inside `[[ … ]]` (cut there by `&&` or `||`).
    pub(crate) conditional: bool,
}

/// The simple commands of `line`.
pub(crate) fn simple_commands(line: &str) -> Vec<Simple> {
    let mut inside = false;
    segments(line)
        .into_iter()
        .map(|text| {
            let words = shlex::split(&text);
            let (first, last) = words.as_ref().map_or((None, None), |w| {
                (w.first().map(String::as_str), w.last().map(String::as_str))
            });
            let conditional = inside || first == Some("[[");
            inside = conditional && last != Some("]]");
            Simple {
                text,
                words,
                conditional,
            }
        })
        .collect()
}

/// `line` cut into simple commands at unquoted `;`, `&`, `|`, newlines,
/// parentheses and backquotes (a substitution is a command too).
fn segments(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in line.chars() {
        if escaped {
            escaped = false;
            current.push(c);
            continue;
        }
        match c {
            '\\' if !single => {
                escaped = true;
                current.push(c);
            }
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' if !single && !double => {
                out.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().trim_end_matches('$').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}
