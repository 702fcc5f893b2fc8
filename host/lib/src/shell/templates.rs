//! What a command does with a `{{…}}` template standing outside quotes. A
//! value filled in is one shell word: safe as data, unsafe wherever a
//! command reads that word again as code, as a script or module to run,
//! as arithmetic or as a variable's name (whose subscript runs `$(…)`).

use super::{Read, ReadAs, commands, simple_commands};

/// The first command of the shell line `line` that reads a template's
/// value as more than data, said in a few words (`` `sh -c` ``); `None`
/// when none does. Quoting is [`super::check_quoting`]'s to check.
pub(crate) fn reread_in_line(line: &str) -> Option<String> {
    let templated = has_template(line);
    simple_commands(line).iter().find_map(|simple| {
        let words = simple.words.as_ref()?;
        reread_in_words(words, simple.conditional, templated)
    })
}

/// The same for a program and its arguments run without a shell.
pub(crate) fn reread_in_argv(argv: &[String]) -> Option<String> {
    reread_in_words(argv, false, argv.iter().any(|a| has_template(a)))
}

fn reread_in_words(words: &[String], conditional: bool, templated: bool) -> Option<String> {
    commands(words, conditional).iter().find_map(|command| {
        if has_template(command.program) {
            return Some("the shell as the program to run".to_owned());
        }
        command.reads.iter().find_map(|read| match read.what {
            ReadAs::Stdin(_) if templated => Some(format!(
                "{} (which reads its standard input as code, where a value may flow)",
                read.by
            )),
            ReadAs::Stdin(_) => None,
            _ if has_template(&read.text) => Some(said(read)),
            _ => None,
        })
    })
}

fn has_template(text: &str) -> bool {
    text.contains("{{")
}

/// Who reads a word, and as what.
fn said(read: &Read<'_>) -> String {
    let by = &read.by;
    match read.what {
        ReadAs::Code(_) | ReadAs::RemoteShell => by.clone(),
        ReadAs::Script(_) => format!("{by} (as the script it runs)"),
        ReadAs::Module(_) => format!("{by} (as the module it loads)"),
        ReadAs::Arithmetic => format!("{by} (as arithmetic, which runs `$(…)` in a subscript)"),
        ReadAs::VariableName => format!("{by} (as a variable's name, whose subscript runs)"),
        ReadAs::Stdin(_) => format!("{by} (as its standard input)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form of reading a template's value again the reader knows,
    /// and what it names as the reader.
    const REREAD: &[(&str, &str)] = &[
        ("eval {{x}}", "`eval`"),
        ("builtin eval {{x}}", "`eval`"),
        ("command eval {{x}}", "`eval`"),
        ("sh -c {{x}}", "`sh -c`"),
        ("sh -e -c {{x}}", "`sh -c`"),
        ("sh -c -- {{x}}", "`sh -c`"),
        ("bash -o errexit -c {{x}}", "`bash -c`"),
        ("bash -lc {{x}}", "`bash -lc`"),
        ("bash +x -ec {{x}}", "`bash -ec`"),
        ("busybox sh -c {{x}}", "`sh -c`"),
        ("fish --command={{x}}", "`fish --command`"),
        ("env -S {{x}}", "`env -S`"),
        ("env -i PATH=/bin sh -c {{x}}", "`sh -c`"),
        ("nice python3 -c {{x}}", "`python3 -c`"),
        ("nice -n 5 python3 -c {{x}}", "`python3 -c`"),
        ("timeout 5 bash -c {{x}}", "`bash -c`"),
        ("sudo -u nobody sh -c {{x}}", "`sh -c`"),
        ("FOO=1 python3 -c {{x}}", "`python3 -c`"),
        ("python3 -Ic {{x}}", "`python3 -Ic`"),
        ("python3 -c{{x}}", "`python3 -c{{x}}`"),
        (
            "python3.12 -m {{x}}",
            "`python3.12 -m` (as the module it loads)",
        ),
        ("python3 {{x}}", "`python3` (as the script it runs)"),
        ("node -e {{x}}", "`node -e`"),
        ("node --eval={{x}}", "`node --eval`"),
        ("node -pe {{x}}", "`node -pe`"),
        ("node -r {{x}} app.js", "`node -r` (as the module it loads)"),
        ("deno eval {{x}}", "`deno eval`"),
        ("perl -e {{x}}", "`perl -e`"),
        ("perl -E {{x}}", "`perl -E`"),
        ("perl -ne {{x}} file", "`perl -ne`"),
        ("perl -lne {{x}}", "`perl -lne`"),
        (
            "perl -M{{x}} -e 1",
            "`perl -M{{x}}` (as the module it loads)",
        ),
        ("ruby -e {{x}}", "`ruby -e`"),
        ("php -r {{x}}", "`php -r`"),
        ("awk {{x}} file", "`awk`"),
        ("awk -F , {{x}}", "`awk`"),
        ("gawk -f {{x}}", "`gawk -f` (as the script it runs)"),
        ("gawk -l {{x}} 1", "`gawk -l` (as the module it loads)"),
        ("sed {{x}} file", "`sed`"),
        ("sed -n -e {{x}}", "`sed -e`"),
        ("source {{x}}", "source (as the script it runs)"),
        (". {{x}}", ". (as the script it runs)"),
        ("xargs sh -c {{x}}", "`sh -c`"),
        ("xargs -I % sh -c {{x}}", "`sh -c`"),
        ("find . -exec bash -c {{x}} ;", "`bash -c`"),
        ("su -c {{x}} nobody", "`su -c`"),
        ("runuser -u nobody -- sh -c {{x}}", "`sh -c`"),
        ("script -q -c {{x}} /dev/null", "`script -c`"),
        ("flock /tmp/l -c {{x}}", "`flock -c`"),
        ("watch -n 1 {{x}}", "`watch`"),
        ("ssh host {{x}}", "`ssh` (a remote shell)"),
        ("ssh -p 22 host ls {{x}}", "`ssh` (a remote shell)"),
        ("trap {{x}} EXIT", "`trap`"),
        ("uv run python -c {{x}}", "`python -c`"),
        (
            "let {{x}}",
            "`let` (as arithmetic, which runs `$(…)` in a subscript)",
        ),
        (
            "let n={{x}}+1",
            "`let` (as arithmetic, which runs `$(…)` in a subscript)",
        ),
        (
            "declare -i n={{x}}",
            "`declare -i` (as arithmetic, which runs `$(…)` in a subscript)",
        ),
        (
            "declare {{x}}",
            "`declare` (as a variable's name, whose subscript runs)",
        ),
        (
            "local -a a={{x}}",
            "`local -a` (as arithmetic, which runs `$(…)` in a subscript)",
        ),
        (
            "printf -v {{x}} %s a",
            "`printf -v` (as a variable's name, whose subscript runs)",
        ),
        (
            "read {{x}}",
            "`read` (as a variable's name, whose subscript runs)",
        ),
        (
            "read -r -a {{x}}",
            "`read -a` (as a variable's name, whose subscript runs)",
        ),
        (
            "unset {{x}}",
            "`unset` (as a variable's name, whose subscript runs)",
        ),
        ("mapfile -C {{x}} lines", "`mapfile -C`"),
        (
            "[ -v {{x}} ]",
            "`[ -v` (as a variable's name, whose subscript runs)",
        ),
        (
            "[[ {{x}} -eq 1 ]]",
            "`[[ … -eq … ]]` (arithmetic) (as arithmetic, which runs `$(…)` in a subscript)",
        ),
        (
            "[[ -n y && {{x}} -gt 1 ]] && echo big",
            "`[[ … -eq … ]]` (arithmetic) (as arithmetic, which runs `$(…)` in a subscript)",
        ),
        ("{{x}} --help", "the shell as the program to run"),
        (
            "echo {{x}} | sh",
            "`sh` (which reads its standard input as code, where a value may flow)",
        ),
        (
            "echo {{x}} | python3 -",
            "`python3` (which reads its standard input as code, where a value may flow)",
        ),
    ];

    /// Forms where a template's value stays data.
    const DATA: &[&str] = &[
        "echo {{x}}",
        "printf '%s\\n' {{x}}",
        "sh -c 'echo \"$1\"' _ {{x}}",
        "bash -c 'printf %s \"$1\"' sh {{x}}",
        "python3 -c 'import sys; print(sys.argv[1])' {{x}}",
        "node -e 'console.log(process.argv[1])' {{x}}",
        "perl -ne 'print' {{x}}",
        "awk '{print}' {{x}}",
        "sed -e 's/a/b/' {{x}}",
        "grep -q -- {{x}} log",
        "jq -n --arg v {{x}} '$v'",
        "timeout 5 grep {{x}} log",
        "env A={{x}} ./check.sh",
        "declare n={{x}}",
        "[[ {{x}} == *.rs ]]",
        "[ {{x}} -eq 1 ]",
        "python3 --version; echo {{x}}",
        "ssh host",
        "echo {{x}} >> log",
    ];

    #[test]
    fn every_form_of_rereading_a_template_has_its_verdict() {
        for (line, by) in REREAD {
            assert_eq!(reread_in_line(line).as_deref(), Some(*by), "{line}");
        }
        for line in DATA {
            assert_eq!(reread_in_line(line), None, "{line}");
        }
    }

    #[test]
    fn an_argument_list_is_read_as_one_command() {
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            reread_in_argv(&argv(&["bash", "-o", "errexit", "-c", "{{x}}"])).as_deref(),
            Some("`bash -c`")
        );
        assert_eq!(
            reread_in_argv(&argv(&["sh", "-c", "echo \"$1\"", "_", "{{x}}"])),
            None
        );
    }
}
