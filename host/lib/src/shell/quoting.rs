//! Where each `{{…}}` template of a shell command line lands. A value is
//! shell-quoted when filled in, which keeps it one word *outside* quotes;
//! inside `'…'` or `"…"` the quotes it brings end the surrounding ones, and
//! in an unquoted here-document `$(…)` runs whatever quotes surround it.
//! So a template may only stand outside quotes and here-documents, and a
//! command line with one elsewhere is refused at load, saying where and
//! what to write instead. The same holds inside backquotes, `$(…)`,
//! `$((…))` and `((…))` (whose text the shell parses again, or evaluates
//! as arithmetic, which runs `$(…)` in array subscripts) and after a `#`
//! that starts a comment (a newline in the value ends it), and inside
//! `${…}` (whose offsets and subscripts are arithmetic). What a command
//! does with a template standing outside quotes is the reader's to say
//! (`super::templates`).

use crate::handlers::setup::SetupError;

/// What surrounds a point of the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    None,
    Single,
    Double,
}

/// `Ok` when every `{{` of `line` stands outside quotes and
/// here-documents.
///
/// # Errors
/// [`SetupError::QuotedTemplate`] for the first one that does not, with
/// its byte offset.
pub(crate) fn check(line: &str) -> Result<(), SetupError> {
    let bytes = line.as_bytes();
    let mut quoting = Quoting::None;
    let mut pending: Vec<String> = Vec::new();
    // What each open bracket opened: a substitution, an expansion or
    // arithmetic (with the quoting outside it), or a plain subshell
    // (`None`); and the byte that closes it.
    let mut nested: Vec<(Option<(&'static str, Quoting)>, u8)> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"{{") {
            if let Some((inside, _)) = nested.iter().rev().find_map(|(opened, _)| *opened) {
                return Err(refused(at, inside));
            }
            if quoting != Quoting::None {
                let inside = if quoting == Quoting::Single {
                    "single quotes"
                } else {
                    "double quotes"
                };
                return Err(refused(at, inside));
            }
        }
        if let Some((what, len, closer, doubled)) = opening(bytes, at, quoting) {
            nested.push((Some((what, quoting)), closer));
            if doubled {
                nested.push((None, b')'));
            }
            quoting = Quoting::None;
            at += len;
            continue;
        }
        match (quoting, bytes[at]) {
            (Quoting::None | Quoting::Double, b'`') => {
                at = backquoted(line, at + 1)?;
                continue;
            }
            (Quoting::None, b'(') => nested.push((None, b')')),
            (Quoting::None, closer @ (b')' | b'}'))
                if nested.last().is_some_and(|(_, c)| *c == closer) =>
            {
                if let Some((Some((_, outside)), _)) = nested.pop() {
                    quoting = outside;
                }
            }
            (Quoting::None, b'#') if word_start(bytes, at) => {
                let end = line[at..].find('\n').map_or(line.len(), |n| at + n);
                if let Some(offset) = line[at..end].find("{{") {
                    return Err(refused(at + offset, "a comment"));
                }
                at = end;
                continue;
            }
            (Quoting::None | Quoting::Double, b'\\') => at += 1,
            (Quoting::None, b'\'') => quoting = Quoting::Single,
            (Quoting::Single, b'\'') | (Quoting::Double, b'"') => quoting = Quoting::None,
            (Quoting::None, b'"') => quoting = Quoting::Double,
            (Quoting::None, b'<')
                if bytes[at..].starts_with(b"<<") && !bytes[at..].starts_with(b"<<<") =>
            {
                let (delimiter, end) = heredoc_delimiter(line, at + 2);
                pending.push(delimiter);
                at = end;
                continue;
            }
            (Quoting::None, b'\n') if !pending.is_empty() => {
                at = skip_bodies(line, at + 1, &mut pending)?;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    Ok(())
}

/// The substitution, expansion or arithmetic opening at `at`, with
/// `quoting` outside it: what it is, how many bytes open it, the byte that
/// closes it, and whether a plain bracket opens with it (`$((`, `((`).
fn opening(bytes: &[u8], at: usize, quoting: Quoting) -> Option<(&'static str, usize, u8, bool)> {
    let rest = &bytes[at..];
    if quoting == Quoting::Single {
        return None;
    }
    if rest.starts_with(b"$((") {
        Some(("an arithmetic expansion `$((…))`", 3, b')', true))
    } else if rest.starts_with(b"$(") {
        Some(("a command substitution `$(…)`", 2, b')', false))
    } else if rest.starts_with(b"${") {
        Some(("a parameter expansion `${…}`", 2, b'}', false))
    } else if quoting == Quoting::None && rest.starts_with(b"((") && word_start(bytes, at) {
        Some(("an arithmetic command `((…))`", 2, b')', true))
    } else {
        None
    }
}

/// The delimiter word after `<<` (or `<<-`) at `from`, unquoted, and where
/// it ends.
fn heredoc_delimiter(line: &str, from: usize) -> (String, usize) {
    let rest = &line[from..];
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let skipped = line.len() - from - rest.len();
    let trimmed = rest.trim_start_matches([' ', '\t']);
    let start = from + skipped + (rest.len() - trimmed.len());
    let word_len = trimmed
        .find(|c: char| c.is_whitespace() || ";|&<>()".contains(c))
        .unwrap_or(trimmed.len());
    let word = trimmed[..word_len].replace(['\'', '"', '\\'], "");
    (word, start + word_len)
}

/// Skip the bodies of the pending here-documents, starting at `from` (the
/// line after their operators); a template in one is refused.
fn skip_bodies(line: &str, from: usize, pending: &mut Vec<String>) -> Result<usize, SetupError> {
    let mut at = from;
    for delimiter in pending.drain(..) {
        loop {
            if at >= line.len() {
                return Ok(line.len());
            }
            let end = line[at..].find('\n').map_or(line.len(), |n| at + n);
            let body_line = &line[at..end];
            if body_line.trim_start_matches('\t') == delimiter {
                at = end + 1;
                break;
            }
            if let Some(offset) = body_line.find("{{") {
                return Err(refused(at + offset, "a here-document"));
            }
            at = end + 1;
        }
    }
    Ok(at.min(line.len()))
}

/// Whether the byte at `at` starts a word (a `#` there starts a comment,
/// `((` an arithmetic command).
fn word_start(bytes: &[u8], at: usize) -> bool {
    at == 0 || b" \t\n;&|()".contains(&bytes[at - 1])
}

/// Skip a backquoted command substitution whose text starts at `from`;
/// where it ends. A template in it is refused.
fn backquoted(line: &str, from: usize) -> Result<usize, SetupError> {
    let bytes = line.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'`' => return Ok(at + 1),
            _ if bytes[at..].starts_with(b"{{") => return Err(refused(at, "backquotes")),
            _ => {}
        }
        at += 1;
    }
    Ok(line.len())
}

fn refused(at: usize, inside: &'static str) -> SetupError {
    SetupError::QuotedTemplate { at, inside }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h6_templates_inside_quotes_or_here_documents_are_refused_where_they_stand() {
        for (line, inside) in [
            (r#"echo "{{tool_args.command}}""#, "double quotes"),
            ("echo '{{tool_args.command}}'", "single quotes"),
            ("grep -q \"x {{tool_name}} y\" log", "double quotes"),
            (
                "cat <<EOF\nrun {{tool_args.command}}\nEOF",
                "a here-document",
            ),
            ("cat <<-'END' > f\n\t{{event}}\n\tEND", "a here-document"),
        ] {
            match check(line) {
                Err(SetupError::QuotedTemplate { inside: got, .. }) => {
                    assert_eq!(got, inside, "{line}");
                }
                other => panic!("{line}: {other:?}"),
            }
        }
        let err = check("echo 'a' \"{{tool_name}}\"").unwrap_err();
        assert!(err.to_string().contains("byte 10"), "{err}");
        assert!(err.to_string().contains("without quotes"), "{err}");
    }

    #[test]
    fn h6_templates_in_backquotes_substitutions_arithmetic_or_comments_are_refused() {
        for (line, inside) in [
            ("echo `cat {{tool_name}}`", "backquotes"),
            (
                "echo $(( {{tool_name}} + 1 ))",
                "an arithmetic expansion `$((…))`",
            ),
            (
                "(( {{tool_name}} > 1 )) && echo big",
                "an arithmetic command `((…))`",
            ),
            (
                "echo \"$( echo \" {{tool_name}} \" )\"",
                "a command substitution `$(…)`",
            ),
            (
                "x=$(basename {{tool_name}})",
                "a command substitution `$(…)`",
            ),
            ("ls # {{tool_name}}", "a comment"),
            ("echo ${x:{{tool_name}}}", "a parameter expansion `${…}`"),
            (
                "echo \"${a[{{tool_name}}]}\"",
                "a parameter expansion `${…}`",
            ),
        ] {
            match check(line) {
                Err(SetupError::QuotedTemplate { inside: got, .. }) => {
                    assert_eq!(got, inside, "{line}");
                }
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn templates_outside_quotes_pass_whatever_quotes_stand_elsewhere() {
        for line in [
            "echo {{tool_args.command}}",
            "printf '%s\\n' {{tool_name}} \"done\"",
            "echo \"it's\" {{tool_name}} 'a \"b\"'",
            "cat <<EOF > out\nplain text\nEOF\necho {{tool_name}}",
            "echo \\\"{{tool_name}}",
            "cat <<< {{tool_name}}",
            "echo $(date) {{tool_name}}",
            "echo a#b {{tool_name}}",
            "echo '#' {{tool_name}}",
            "( cd src && echo {{tool_name}} )",
            "echo \"$(date)\" {{tool_name}}",
            "echo ${HOME} {{tool_name}}",
            "{ echo a; } && echo {{tool_name}}",
        ] {
            assert!(check(line).is_ok(), "{line}");
        }
    }
}
