//! One simple command, read: the program after its wrappers, and every
//! word it hands to something that reads it as more than data (code, a
//! script, a module, arithmetic, a variable's name). `find -exec` and
//! `xargs` commands are read as commands of their own.

use std::borrow::Cow;

use super::lexicon::{self, Lang, Options};

/// What a word is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadAs {
    /// Code in a language (`sh -c CODE`, `eval WORDS`, `awk PROGRAM`).
    Code(Lang),
    /// A command line for a shell on another machine (`ssh host CMD`).
    RemoteShell,
    /// A script file, run (`sh x.sh`, `source x`, `awk -f x`).
    Script(Lang),
    /// A module, loaded by name (`python3 -m pkg`, `node -r ./x`).
    Module(Lang),
    /// Arithmetic (`let`, `declare -i`, `[[ a -eq b ]]`), which runs the
    /// `$(…)` of an array subscript.
    Arithmetic,
    /// A variable's name (`read NAME`, `printf -v NAME`), whose subscript
    /// runs as arithmetic.
    VariableName,
    /// Its standard input, read as code (`sh` with no script, `python3 -`).
    Stdin(Lang),
}

/// A word (or words, joined) read as more than data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Read<'w> {
    /// What it is read as.
    pub(crate) what: ReadAs,
    /// The word (`eval`'s and `ssh`'s words joined by spaces).
    pub(crate) text: Cow<'w, str>,
    /// Who reads it, for a message: "`sh -c`", "`python3 -c`", "eval".
    pub(crate) by: String,
}

/// One command: the program and its arguments, after the `NAME=value`
/// words before it.
#[derive(Debug)]
pub(crate) struct Command<'w> {
    /// The `NAME=value` words before the program.
    pub(crate) assignments: Vec<&'w str>,
    /// The program, as written (empty when there are only assignments).
    pub(crate) program: &'w str,
    /// Its file name (`python3` for `/usr/bin/python3`).
    pub(crate) name: &'w str,
    /// Its arguments.
    pub(crate) args: &'w [String],
    /// What of them it reads as more than data.
    pub(crate) reads: Vec<Read<'w>>,
}

/// The most wrappers and nested commands read within one simple command.
const MAX_NESTING: usize = 16;

/// The commands of one simple command's `words`: wrappers (`nice`, `env`,
/// `sudo`) and what they run, each its own [`Command`]. `conditional`:
/// the words stand inside `[[ … ]]`.
pub(crate) fn commands(words: &[String], conditional: bool) -> Vec<Command<'_>> {
    let mut out = Vec::new();
    if conditional || words.first().is_some_and(|w| w == "[[") {
        out.push(Command {
            assignments: Vec::new(),
            program: "[[",
            name: "[[",
            args: words,
            reads: conditional_reads(words),
        });
    } else {
        read_into(words, &mut out, 0);
    }
    out
}

/// The file name of `program`.
fn file_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether `word` is `NAME=value`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| is_name(name))
}

/// A shell variable's name.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn read_into<'w>(words: &'w [String], out: &mut Vec<Command<'w>>, depth: usize) {
    if depth > MAX_NESTING {
        return;
    }
    let split = words
        .iter()
        .position(|w| !is_assignment(w))
        .unwrap_or(words.len());
    let assignments = words[..split].iter().map(String::as_str).collect();
    let Some((program, args)) = words[split..].split_first() else {
        out.push(Command {
            assignments,
            program: "",
            name: "",
            args: &[],
            reads: Vec::new(),
        });
        return;
    };
    let name = file_name(program);
    let mut reads = Vec::new();
    let wrapper = lexicon::wrapper_of(name).or_else(|| lexicon::runuser_wrapper(name, args));
    let inner = if let Some(wrapper) = wrapper {
        Some(wrapped(&wrapper, name, args, &mut reads))
    } else if let Some((_, verb)) = lexicon::RUNNERS.iter().find(|(n, _)| *n == name) {
        (args.first().is_some_and(|a| a == verb)).then(|| {
            let rest = &args[1..];
            &rest[rest
                .iter()
                .position(|a| !a.starts_with('-'))
                .unwrap_or(rest.len())..]
        })
    } else {
        reads_of(name, args, &mut reads);
        None
    };
    out.push(Command {
        assignments,
        program,
        name,
        args,
        reads,
    });
    if let Some(inner) = inner {
        read_into(inner, out, depth + 1);
    }
    if name == "find" {
        for inner in find_commands(args) {
            read_into(inner, out, depth + 1);
        }
    }
}

/// The command a wrapper runs: what follows its options and operands.
/// The code its own flags take (`env -S`, `flock -c`) goes to `reads`.
fn wrapped<'w>(
    wrapper: &lexicon::Wrapper,
    name: &str,
    args: &'w [String],
    reads: &mut Vec<Read<'w>>,
) -> &'w [String] {
    let mut at = 0;
    let mut operands = wrapper.operands;
    while at < args.len() {
        let arg = args[at].as_str();
        let (flag, inline) = split_long(arg);
        if arg == "--" {
            at += 1;
            break;
        }
        if wrapper.code.contains(&flag) {
            if let Some(code) = value(args, &mut at, inline) {
                reads.push(Read {
                    what: ReadAs::Code(Lang::Shell),
                    text: code,
                    by: format!("`{name} {flag}`"),
                });
            }
        } else if wrapper.takes_arg.contains(&flag) {
            if inline.is_none() {
                at += 1;
            }
        } else if arg.starts_with('-') && arg.len() > 1 {
            // A flag of its own.
        } else if wrapper.assignments && is_assignment(arg) {
            break;
        } else if operands > 0 {
            operands -= 1;
        } else {
            break;
        }
        at += 1;
    }
    &args[at.min(args.len())..]
}

/// `--flag=value` as (`--flag`, `value`); anything else whole.
fn split_long(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((flag, value)) if arg.starts_with("--") => (flag, Some(value)),
        _ => (arg, None),
    }
}

/// A flag's value: `inline` when it had one, else the next word (and `at`
/// moves onto it).
fn value<'w>(args: &'w [String], at: &mut usize, inline: Option<&'w str>) -> Option<Cow<'w, str>> {
    match inline {
        Some(v) => Some(Cow::Borrowed(v)),
        None => {
            *at += 1;
            args.get(*at).map(|w| Cow::Borrowed(w.as_str()))
        }
    }
}

/// The commands of `find`'s `-exec … ;` actions.
fn find_commands(args: &[String]) -> Vec<&[String]> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < args.len() {
        if lexicon::FIND_RUNS.contains(&args[at].as_str()) {
            let start = at + 1;
            let end = args[start..]
                .iter()
                .position(|a| a == ";" || a == "+")
                .map_or(args.len(), |n| start + n);
            found.push(&args[start..end]);
            at = end;
        }
        at += 1;
    }
    found
}

/// `words` as one command line.
fn joined(words: &[String]) -> Cow<'_, str> {
    match words {
        [one] => Cow::Borrowed(one.as_str()),
        _ => Cow::Owned(words.join(" ")),
    }
}

/// A program that reads a command line again (`eval`, `watch`, `su -c`):
/// with `flags`, the code is their argument; without, all its operands.
fn reparsed<'w>(name: &str, flags: Option<&[&str]>, args: &'w [String], reads: &mut Vec<Read<'w>>) {
    let Some(flags) = flags else {
        let rest = if name == "watch" {
            let rest = skip_options(args, lexicon::WATCH_TAKES_ARG);
            if args[..args.len() - rest.len()]
                .iter()
                .any(|a| a == "-x" || a == "--exec")
            {
                return;
            }
            rest
        } else {
            args
        };
        if !rest.is_empty() {
            reads.push(Read {
                what: ReadAs::Code(Lang::Shell),
                text: joined(rest),
                by: format!("`{name}`"),
            });
        }
        return;
    };
    let mut at = 0;
    while at < args.len() && args[at] != "--" {
        let (flag, inline) = split_long(&args[at]);
        if flags.contains(&flag)
            && let Some(code) = value(args, &mut at, inline)
        {
            reads.push(Read {
                what: ReadAs::Code(Lang::Shell),
                text: code,
                by: format!("`{name} {flag}`"),
            });
        }
        at += 1;
    }
}

/// What program `name` reads of `args` as more than data.
fn reads_of<'w>(name: &str, args: &'w [String], reads: &mut Vec<Read<'w>>) {
    let word = |what: ReadAs, text: &'w str, by: String| Read {
        what,
        text: Cow::Borrowed(text),
        by,
    };
    if let Some((lang, options)) = lexicon::interpreter(name) {
        return interpreter(lang, options, name, args, reads);
    }
    if let Some((_, flags)) = lexicon::REPARSERS.iter().find(|(n, _)| *n == name) {
        return reparsed(name, *flags, args, reads);
    }
    match name {
        "ssh" => {
            let rest = skip_options(args, lexicon::SSH_TAKES_ARG);
            if rest.len() > 1 {
                reads.push(Read {
                    what: ReadAs::RemoteShell,
                    text: joined(&rest[1..]),
                    by: "`ssh` (a remote shell)".to_owned(),
                });
            }
        }
        "trap" => {
            if let Some(code) = args.iter().find(|a| !a.starts_with('-')) {
                reads.push(word(ReadAs::Code(Lang::Shell), code, "`trap`".to_owned()));
            }
        }
        "source" | "." => {
            if let Some(file) = args.first() {
                reads.push(word(ReadAs::Script(Lang::Shell), file, name.to_owned()));
            }
        }
        "let" => {
            for arg in args {
                reads.push(word(ReadAs::Arithmetic, arg, "`let`".to_owned()));
            }
        }
        "printf" => {
            if args.first().is_some_and(|a| a == "-v")
                && let Some(variable) = args.get(1)
            {
                reads.push(word(
                    ReadAs::VariableName,
                    variable,
                    "`printf -v`".to_owned(),
                ));
            }
        }
        "test" | "[" => test_reads(args, name, reads),
        _ if lexicon::DECLARERS.contains(&name) => declared(name, args, reads),
        _ if lexicon::NAMERS.contains(&name) => named(name, args, reads),
        _ => {}
    }
}

/// `args` after the leading options (and the arguments of `takes_arg`).
fn skip_options<'w>(args: &'w [String], takes_arg: &[&str]) -> &'w [String] {
    let mut at = 0;
    while at < args.len() {
        let arg = args[at].as_str();
        if arg == "--" {
            return &args[at + 1..];
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if takes_arg.contains(&arg) {
            at += 1;
        }
        at += 1;
    }
    &args[at.min(args.len())..]
}

/// `test -v NAME` (and `[ -v NAME ]`).
fn test_reads<'w>(args: &'w [String], name: &str, reads: &mut Vec<Read<'w>>) {
    for pair in args.windows(2) {
        if pair[0] == "-v" {
            reads.push(Read {
                what: ReadAs::VariableName,
                text: Cow::Borrowed(&pair[1]),
                by: format!("`{name} -v`"),
            });
        }
    }
}

/// The words of a `[[ … ]]`: with an arithmetic operator, every operand
/// is arithmetic; after `-v`, a variable's name.
fn conditional_reads(words: &[String]) -> Vec<Read<'_>> {
    let mut reads = Vec::new();
    test_reads(words, "[[", &mut reads);
    if words
        .iter()
        .any(|w| lexicon::ARITHMETIC_TESTS.contains(&w.as_str()))
    {
        for word in words {
            let operator = word.starts_with('-') && word.len() <= 3;
            if !operator && !["[[", "]]", "!", "(", ")"].contains(&word.as_str()) {
                reads.push(Read {
                    what: ReadAs::Arithmetic,
                    text: Cow::Borrowed(word),
                    by: "`[[ … -eq … ]]` (arithmetic)".to_owned(),
                });
            }
        }
    }
    reads
}

/// `declare`, `typeset`, `local`, `export`, `readonly`: each operand's
/// name; with `-i`, `-a` or `-A`, the whole operand (its value is
/// evaluated).
fn declared<'w>(name: &str, args: &'w [String], reads: &mut Vec<Read<'w>>) {
    let mut evaluates = None;
    for arg in args {
        if let Some(flags) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+')) {
            if let Some(flag) = flags.chars().find(|c| matches!(c, 'i' | 'a' | 'A')) {
                evaluates = Some(flag);
            }
            continue;
        }
        let variable = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
        reads.push(Read {
            what: ReadAs::VariableName,
            text: Cow::Borrowed(variable),
            by: format!("`{name}`"),
        });
        if let Some(flag) = evaluates {
            reads.push(Read {
                what: ReadAs::Arithmetic,
                text: Cow::Borrowed(arg),
                by: format!("`{name} -{flag}`"),
            });
        }
    }
}

/// `read`, `unset`, `mapfile`: the operands are variables' names (and
/// `mapfile -C` runs its callback).
fn named<'w>(name: &str, args: &'w [String], reads: &mut Vec<Read<'w>>) {
    const TAKES_ARG: &[&str] = &["-d", "-n", "-N", "-p", "-t", "-u", "-i", "-O", "-s", "-c"];
    let mut at = 0;
    while at < args.len() {
        let arg = args[at].as_str();
        if arg == "-a" || arg == "-C" {
            at += 1;
            if let Some(next) = args.get(at) {
                let what = if arg == "-C" {
                    ReadAs::Code(Lang::Shell)
                } else {
                    ReadAs::VariableName
                };
                reads.push(Read {
                    what,
                    text: Cow::Borrowed(next),
                    by: format!("`{name} {arg}`"),
                });
            }
        } else if TAKES_ARG.contains(&arg) {
            at += 1;
        } else if !arg.starts_with('-') {
            reads.push(Read {
                what: ReadAs::VariableName,
                text: Cow::Borrowed(arg),
                by: format!("`{name}`"),
            });
        }
        at += 1;
    }
}

/// The interpreter being read: its language, its options' table, and
/// the name it was called by.
#[derive(Clone, Copy)]
struct Interpreter<'a> {
    lang: Lang,
    options: &'a Options,
    name: &'a str,
}

/// What an interpreter's options said: a shell's `-c` (the code is then
/// its first operand), that a flag gave the code or the script (operands
/// are then arguments), that it reads standard input, or that it only
/// informs (`--version`).
#[derive(Default)]
struct Given {
    code_flag: Option<String>,
    gave: bool,
    stdin: bool,
    informational: bool,
}

/// One read by interpreter `name`, given by `flag` (or by position).
fn push_read<'w>(
    reads: &mut Vec<Read<'w>>,
    what: ReadAs,
    text: Cow<'w, str>,
    name: &str,
    flag: &str,
) {
    let by = if flag.is_empty() {
        format!("`{name}`")
    } else {
        format!("`{name} {flag}`")
    };
    reads.push(Read { what, text, by });
}

/// An interpreter's options and operands: its code, script, modules, or
/// standard input.
fn interpreter<'w>(
    lang: Lang,
    options: &Options,
    name: &str,
    args: &'w [String],
    reads: &mut Vec<Read<'w>>,
) {
    let it = Interpreter {
        lang,
        options,
        name,
    };
    let mut given = Given::default();
    let mut at = 0;
    while at < args.len() {
        let arg = args[at].as_str();
        if arg == "--" {
            at += 1;
            break;
        }
        if arg == "-" {
            given.stdin = true;
            break;
        }
        let shell_plus = lang == Lang::Shell && arg.starts_with('+');
        if !(arg.starts_with('-') || shell_plus) {
            break;
        }
        option(it, args, &mut at, &mut given, reads);
        at += 1;
    }
    let operands = args.get(at.min(args.len())..).unwrap_or_default();
    operands_read(it, operands, given, reads);
}

/// The option at `args[*at]` (moving `at` past the words it takes).
fn option<'w>(
    it: Interpreter<'_>,
    args: &'w [String],
    at: &mut usize,
    given: &mut Given,
    reads: &mut Vec<Read<'w>>,
) {
    let Interpreter {
        lang,
        options,
        name,
    } = it;
    let arg = args[*at].as_str();
    let (flag, inline) = split_long(arg);
    given.informational |= matches!(flag, "--version" | "-V" | "--help" | "-h" | "-v");
    if options.code.contains(&flag) {
        if options.code_is_operand {
            given.code_flag = Some(flag.to_owned());
        } else if let Some(code) = value(args, at, inline) {
            push_read(reads, ReadAs::Code(lang), code, name, flag);
            given.gave = true;
        }
    } else if options.script.contains(&flag) {
        if let Some(file) = value(args, at, inline) {
            push_read(reads, ReadAs::Script(lang), file, name, flag);
            given.gave |= !options.code_is_operand;
        }
    } else if options.module.contains(&flag) {
        if let Some(module) = value(args, at, inline) {
            push_read(reads, ReadAs::Module(lang), module, name, flag);
            given.gave |= lang == Lang::Python;
        }
    } else if options.takes_arg.contains(&flag) {
        if inline.is_none() {
            *at += 1;
        }
    } else if !arg.starts_with("--") {
        cluster(it, args, at, given, reads);
    }
}

/// A cluster of short options at `args[*at]`: `-Ic`, `-ne`, `-lc`,
/// `-Mstrict`.
fn cluster<'w>(
    it: Interpreter<'_>,
    args: &'w [String],
    at: &mut usize,
    given: &mut Given,
    reads: &mut Vec<Read<'w>>,
) {
    let Interpreter {
        lang,
        options,
        name,
    } = it;
    let arg = args[*at].as_str();
    let mut letters = arg.char_indices().skip(1).peekable();
    while let Some((pos, letter)) = letters.next() {
        let rest = if options.glued {
            &arg[pos + letter.len_utf8()..]
        } else {
            ""
        };
        let rest_or_next = |at: &mut usize| -> Option<Cow<'w, str>> {
            if rest.is_empty() {
                *at += 1;
                args.get(*at).map(|w| Cow::Borrowed(w.as_str()))
            } else {
                Some(Cow::Borrowed(rest))
            }
        };
        let what = if options.cluster_code.contains(&letter) {
            if options.code_is_operand {
                given.code_flag = Some(arg.to_owned());
                continue;
            }
            given.gave = true;
            ReadAs::Code(lang)
        } else if options.cluster_script.contains(&letter) {
            given.gave = true;
            ReadAs::Script(lang)
        } else if options.cluster_module.contains(&letter) {
            given.gave |= lang == Lang::Python;
            ReadAs::Module(lang)
        } else if options.cluster_arg.contains(&letter) {
            let _ = rest_or_next(at);
            return;
        } else if options.cluster_attached.contains(&letter) {
            return;
        } else if options.cluster_digits.contains(&letter) {
            while letters.next_if(|(_, c)| c.is_ascii_digit()).is_some() {}
            continue;
        } else {
            given.stdin |= options.cluster_stdin.contains(&letter);
            continue;
        };
        if let Some(text) = rest_or_next(at) {
            push_read(reads, what, text, name, arg);
        }
        return;
    }
}

/// What an interpreter reads of its operands, after what its options
/// `given`.
fn operands_read<'w>(
    it: Interpreter<'_>,
    mut operands: &'w [String],
    given: Given,
    reads: &mut Vec<Read<'w>>,
) {
    let Interpreter {
        lang,
        options,
        name,
    } = it;
    if let Some(flag) = given.code_flag {
        if let Some(code) = operands.first() {
            push_read(reads, ReadAs::Code(lang), Cow::Borrowed(code), name, &flag);
        }
        return;
    }
    if given.stdin && !given.gave {
        push_read(reads, ReadAs::Stdin(lang), Cow::Borrowed("-"), name, "");
        return;
    }
    if given.gave {
        return;
    }
    if lang == Lang::JavaScript {
        // `deno run x`, `bun run x`, `deno eval CODE`.
        match operands.first().map(String::as_str) {
            Some("run") => operands = &operands[1..],
            Some("eval") => {
                if let Some(code) = operands.get(1) {
                    push_read(reads, ReadAs::Code(lang), Cow::Borrowed(code), name, "eval");
                }
                return;
            }
            _ => {}
        }
    }
    match operands.first() {
        Some(first) if options.operand_is_code => {
            push_read(reads, ReadAs::Code(lang), Cow::Borrowed(first), name, "");
        }
        Some(first) => push_read(reads, ReadAs::Script(lang), Cow::Borrowed(first), name, ""),
        None if !given.informational && !matches!(lang, Lang::Awk | Lang::Sed) => {
            push_read(reads, ReadAs::Stdin(lang), Cow::Borrowed("-"), name, "");
        }
        None => {}
    }
}
