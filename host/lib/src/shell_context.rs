//! Where each `{{…}}` template of a shell command line lands. A value is
//! shell-quoted when filled in, which keeps it one word *outside* quotes;
//! inside `'…'` or `"…"` the quotes it brings end the surrounding ones, and
//! in an unquoted here-document `$(…)` runs whatever quotes surround it.
//! So a template may only stand outside quotes and here-documents, and a
//! command line with one elsewhere is refused at load, saying where and
//! what to write instead. The same holds inside backquotes, `$(…)`,
//! `$((…))` and `((…))` (whose text the shell parses again, or evaluates
//! as arithmetic, which runs `$(…)` in array subscripts) and after a `#`
//! that starts a comment (a newline in the value ends it). A template
//! handed to a command that reads its argument as code (`eval`, `sh -c`,
//! `source`, `python -c`, `node -e`) is refused too: quoting cannot
//! protect a value that is parsed twice.

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
    // What each open parenthesis opened: a substitution or arithmetic
    // (with the quoting outside it), or a plain subshell (`None`).
    let mut nested: Vec<Option<(&'static str, Quoting)>> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"{{") {
            if let Some((inside, _)) = nested.iter().rev().flatten().next() {
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
        match (quoting, bytes[at]) {
            (Quoting::None | Quoting::Double, b'`') => {
                at = backquoted(line, at + 1)?;
                continue;
            }
            (Quoting::None | Quoting::Double, b'$') if bytes[at..].starts_with(b"$((") => {
                nested.push(Some(("an arithmetic expansion `$((…))`", quoting)));
                nested.push(None);
                quoting = Quoting::None;
                at += 3;
                continue;
            }
            (Quoting::None | Quoting::Double, b'$') if bytes[at..].starts_with(b"$(") => {
                nested.push(Some(("a command substitution `$(…)`", quoting)));
                quoting = Quoting::None;
                at += 2;
                continue;
            }
            (Quoting::None, b'(') if bytes[at..].starts_with(b"((") && word_start(bytes, at) => {
                nested.push(Some(("an arithmetic command `((…))`", Quoting::None)));
                nested.push(None);
                at += 2;
                continue;
            }
            (Quoting::None, b'(') => nested.push(None),
            (Quoting::None, b')') => {
                if let Some(Some((_, outside))) = nested.pop() {
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

/// The first command among `words` (a simple command, a program and its
/// arguments) that reads a template's value as code: `eval`, `source`,
/// a shell's `-c`, an interpreter's `-c`/`-e`; none when no template is
/// handed to one.
pub(crate) fn reparser(words: &[String]) -> Option<String> {
    let templated = |w: &String| w.contains("{{");
    let base = |w: &String| w.rsplit('/').next().unwrap_or(w).to_owned();
    // A shell anywhere in the line (`xargs sh -c`, `find -exec bash -c`,
    // `su -c`) with a `-c` among its short options (`-lc`), then a
    // template: its value is a script.
    let runs_script = |w: &[String]| {
        ["sh", "bash", "dash", "zsh", "ksh", "su", "runuser"].contains(&base(&w[0]).as_str())
            && w[1].starts_with('-')
            && !w[1].starts_with("--")
            && w[1].contains('c')
            && templated(&w[2])
    };
    if let Some(shell) = words.windows(3).find(|w| runs_script(w)) {
        return Some(format!("`{} {}`", base(&shell[0]), shell[1]));
    }
    let mut rest = words.iter().skip_while(|w| {
        (w.contains('=') && !w.starts_with('-'))
            || ["env", "exec", "command", "nohup", "time"].contains(&w.as_str())
    });
    let program = rest.next()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    let args: Vec<&String> = rest.collect();
    let after = |flags: &[&str]| {
        args.windows(2)
            .any(|pair| flags.contains(&pair[0].as_str()) && templated(pair[1]))
    };
    let by = match name {
        "eval" | "source" | "." if args.iter().any(|a| templated(a)) => name.to_owned(),
        // The remote side runs its arguments as a shell command line.
        "ssh" if args.iter().any(|a| templated(a)) => "`ssh` (a remote shell)".to_owned(),
        "node" | "deno" | "bun" | "perl" | "ruby" if after(&["-e", "--eval", "-p"]) => {
            format!("`{name} -e`")
        }
        _ if name.starts_with("python") && after(&["-c"]) => format!("`{name} -c`"),
        _ => return None,
    };
    Some(by)
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
    fn a_template_handed_to_eval_or_sh_c_is_named() {
        let words = |line: &str| shlex::split(line).unwrap();
        assert_eq!(
            reparser(&words("eval {{tool_args.command}}")).as_deref(),
            Some("eval")
        );
        assert_eq!(
            reparser(&words("sh -c {{tool_args.command}}")).as_deref(),
            Some("`sh -c`")
        );
        assert_eq!(
            reparser(&words("FOO=1 python3 -c {{tool_name}}")).as_deref(),
            Some("`python3 -c`")
        );
        assert_eq!(
            reparser(&words("sh -c 'echo \"$1\"' _ {{tool_name}}")),
            None
        );
        assert_eq!(reparser(&words("echo {{tool_name}}")), None);
        for line in [
            "bash -lc {{tool_args.command}}",
            "xargs sh -c {{tool_args.command}}",
            "find . -exec bash -c {{tool_args.command}} ;",
            "su -c {{tool_args.command}} nobody",
            "ssh host {{tool_args.command}}",
        ] {
            assert!(reparser(&words(line)).is_some(), "{line}");
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
        ] {
            assert!(check(line).is_ok(), "{line}");
        }
    }
}
