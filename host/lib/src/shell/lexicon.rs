//! The words the shell reader knows: shells and their option forms,
//! interpreters and their code flags, wrappers that run the command after
//! them, and the builtins that evaluate a word as arithmetic or as a
//! variable name. Every reader of a command line (template checks, trust
//! pins, `runs`) takes its words from here.

/// The language a piece of code is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// A POSIX shell (or `fish`).
    Shell,
    /// Python (`python3`, `pypy3`).
    Python,
    /// JavaScript or TypeScript (`node`, `deno`, `bun`, `tsx`).
    JavaScript,
    /// Perl.
    Perl,
    /// Ruby.
    Ruby,
    /// PHP.
    Php,
    /// An `awk` program (`system()` runs commands).
    Awk,
    /// A `sed` script (GNU `e` runs commands).
    Sed,
}

/// How an interpreter reads its options: which flags take code, a script
/// or a module, which letters of a short-option cluster do (`-Ic`, `-ne`),
/// and what its first operand is.
pub(crate) struct Options {
    /// Flags whose argument is code (`-c`, `-e`, `--eval`).
    pub(crate) code: &'static [&'static str],
    /// Flags whose argument is a script file (`-f`, `--rcfile`).
    pub(crate) script: &'static [&'static str],
    /// Flags whose argument is a module to load (`-m`, `-r`, `-M`).
    pub(crate) module: &'static [&'static str],
    /// Other flags that take the next word (`-W arg`, `-o errexit`).
    pub(crate) takes_arg: &'static [&'static str],
    /// Letters of a cluster after which the rest (or the next word) is code.
    pub(crate) cluster_code: &'static [char],
    /// Letters of a cluster after which the rest (or the next word) is a
    /// script file.
    pub(crate) cluster_script: &'static [char],
    /// Letters of a cluster after which the rest (or the next word) is a
    /// module.
    pub(crate) cluster_module: &'static [char],
    /// Letters of a cluster after which the rest (or the next word) is
    /// some other argument.
    pub(crate) cluster_arg: &'static [char],
    /// Letters of a cluster after which the rest, and only the rest, is
    /// an argument (perl's `-i.bak`, `-l`, `-0777`).
    pub(crate) cluster_attached: &'static [char],
    /// Letters of a cluster followed by optional digits, after which the
    /// cluster goes on (perl's `-l`, `-0`: `-lne`, `-0777e`).
    pub(crate) cluster_digits: &'static [char],
    /// Letters of a cluster that make it read code from standard input
    /// (a shell's `-s`).
    pub(crate) cluster_stdin: &'static [char],
    /// Whether the first operand is code (`awk PROGRAM`) rather than a
    /// script file, when no flag gave code or a script.
    pub(crate) operand_is_code: bool,
    /// Whether a code flag makes the code the first operand rather than
    /// its own argument (a shell's `-c`: `sh -e -c -- CODE`).
    pub(crate) code_is_operand: bool,
    /// Whether a cluster letter's value may be glued to it (`-Mstrict`,
    /// `-cCODE`); when not, the value is always the next word (node's
    /// `-pe CODE`).
    pub(crate) glued: bool,
}

impl Options {
    /// No flag of any kind, the first operand a script, values glued or
    /// not: what each table below starts from.
    const NONE: Options = Options {
        code: &[],
        script: &[],
        module: &[],
        takes_arg: &[],
        cluster_code: &[],
        cluster_script: &[],
        cluster_module: &[],
        cluster_arg: &[],
        cluster_attached: &[],
        cluster_digits: &[],
        cluster_stdin: &[],
        operand_is_code: false,
        code_is_operand: false,
        glued: true,
    };
}

const SHELL: Options = Options {
    code: &["-c"],
    script: &["--rcfile", "--init-file"],
    takes_arg: &["-o", "+o", "-O", "+O"],
    cluster_code: &['c'],
    cluster_stdin: &['s'],
    code_is_operand: true,
    ..Options::NONE
};

const FISH: Options = Options {
    code: &["-c", "--command", "-C", "--init-command"],
    takes_arg: &["-d", "--debug", "-o", "--debug-output", "--features"],
    cluster_code: &['c', 'C'],
    ..Options::NONE
};

const PYTHON: Options = Options {
    code: &["-c"],
    module: &["-m"],
    takes_arg: &["-W", "-X", "--check-hash-based-pycs"],
    cluster_code: &['c'],
    cluster_module: &['m'],
    cluster_arg: &['W', 'X'],
    ..Options::NONE
};

const JAVASCRIPT: Options = Options {
    code: &["-e", "--eval", "-p", "--print"],
    module: &[
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "--preload",
    ],
    takes_arg: &["--input-type", "-C", "--conditions", "--env-file"],
    cluster_code: &['e', 'p'],
    cluster_module: &['r'],
    cluster_arg: &['C'],
    glued: false,
    ..Options::NONE
};

const PERL: Options = Options {
    code: &["-e", "-E"],
    module: &["-M", "-m"],
    takes_arg: &["-I"],
    cluster_code: &['e', 'E'],
    cluster_module: &['M', 'm'],
    cluster_arg: &['I'],
    cluster_attached: &['i', 'F', 'x', 'C', 'd', 'D'],
    cluster_digits: &['l', '0'],
    ..Options::NONE
};

const RUBY: Options = Options {
    code: &["-e"],
    module: &["-r"],
    takes_arg: &["-I", "-C"],
    cluster_code: &['e'],
    cluster_module: &['r'],
    cluster_arg: &['I', 'C'],
    cluster_attached: &['E', 'x', 'F', 'i', 'K'],
    cluster_digits: &['0', 'T', 'W'],
    ..Options::NONE
};

const PHP: Options = Options {
    code: &["-r", "-B", "-R", "-E"],
    script: &["-f"],
    takes_arg: &["-c", "-d", "-z"],
    cluster_script: &['f'],
    cluster_arg: &['c', 'd', 'z'],
    ..Options::NONE
};

const AWK: Options = Options {
    code: &["-e", "--source"],
    script: &["-f", "--file", "-i", "--include", "-E", "--exec"],
    module: &["-l", "--load"],
    takes_arg: &["-F", "-v", "--field-separator", "--assign"],
    cluster_code: &['e'],
    cluster_script: &['f', 'i', 'E'],
    cluster_module: &['l'],
    cluster_arg: &['F', 'v'],
    operand_is_code: true,
    ..Options::NONE
};

const SED: Options = Options {
    code: &["-e", "--expression"],
    script: &["-f", "--file"],
    takes_arg: &["-l", "--line-length"],
    cluster_code: &['e'],
    cluster_script: &['f'],
    cluster_arg: &['l'],
    cluster_attached: &['i'],
    operand_is_code: true,
    ..Options::NONE
};

/// The language `name` (a program's file name) runs, with how it reads
/// its options; `None` for a program that is no interpreter.
pub(crate) fn interpreter(name: &str) -> Option<(Lang, &'static Options)> {
    let python = |n: &str| {
        ["python", "pypy"].iter().any(|p| {
            n.strip_prefix(p)
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
    };
    let found = match name {
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "yash" | "posh" => {
            (Lang::Shell, &SHELL)
        }
        "fish" => (Lang::Shell, &FISH),
        _ if python(name) => (Lang::Python, &PYTHON),
        "node" | "nodejs" | "deno" | "bun" | "tsx" | "ts-node" => (Lang::JavaScript, &JAVASCRIPT),
        _ if name == "perl" || name.strip_prefix("perl5").is_some() => (Lang::Perl, &PERL),
        "ruby" => (Lang::Ruby, &RUBY),
        "php" => (Lang::Php, &PHP),
        "awk" | "gawk" | "mawk" | "nawk" => (Lang::Awk, &AWK),
        "sed" | "gsed" => (Lang::Sed, &SED),
        _ => return None,
    };
    Some(found)
}

/// A program that runs the command after it (`nice`, `env`, `sudo`,
/// `timeout 5`), with how its own options read.
pub(crate) struct Wrapper {
    /// Its flags that take the next word.
    pub(crate) takes_arg: &'static [&'static str],
    /// Its flags whose argument is a shell command line (`env -S`).
    pub(crate) code: &'static [&'static str],
    /// How many operands of its own come before the command
    /// (`timeout DURATION`, `flock FILE`).
    pub(crate) operands: usize,
    /// Whether `NAME=value` words before the command set its variables
    /// (`env A=1 cmd`).
    pub(crate) assignments: bool,
}

const fn wrapper(takes_arg: &'static [&'static str], operands: usize) -> Wrapper {
    Wrapper {
        takes_arg,
        code: &[],
        operands,
        assignments: false,
    }
}

/// The wrapper `name` is, if any.
/// `runuser -u USER [--] COMMAND…`: with `-u`, `runuser` runs its
/// operands as a command (like `sudo`), not through `-c`.
pub(crate) fn runuser_wrapper(name: &str, args: &[String]) -> Option<Wrapper> {
    let runs_operands = name == "runuser"
        && args
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| a == "-u" || a.starts_with("--user"));
    runs_operands.then(|| {
        wrapper(
            &[
                "-u",
                "--user",
                "-g",
                "--group",
                "-G",
                "--supp-group",
                "-w",
                "--whitelist-environment",
            ],
            0,
        )
    })
}

pub(crate) fn wrapper_of(name: &str) -> Option<Wrapper> {
    let found = match name {
        "env" => Wrapper {
            takes_arg: &["-u", "--unset", "-C", "--chdir"],
            code: &["-S", "--split-string"],
            operands: 0,
            assignments: true,
        },
        "exec" => wrapper(&["-a"], 0),
        "command" | "builtin" | "nohup" | "setsid" | "unbuffer" | "busybox" => wrapper(&[], 0),
        "time" => wrapper(&["-f", "--format", "-o", "--output"], 0),
        "nice" => wrapper(&["-n", "--adjustment"], 0),
        "ionice" => wrapper(&["-c", "--class", "-n", "--classdata"], 0),
        "stdbuf" => wrapper(&["-i", "-o", "-e"], 0),
        "timeout" => wrapper(&["-s", "--signal", "-k", "--kill-after"], 1),
        "chrt" => wrapper(&[], 1),
        "taskset" => wrapper(&[], 1),
        "sudo" => wrapper(
            &[
                "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
            ],
            0,
        ),
        "doas" => wrapper(&["-u", "-C"], 0),
        "xargs" => wrapper(
            &[
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "-d",
                "-E",
                "-a",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-lines",
                "--max-chars",
            ],
            0,
        ),
        "flock" => Wrapper {
            takes_arg: &["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"],
            code: &["-c", "--command"],
            operands: 1,
            assignments: false,
        },
        _ => return None,
    };
    Some(found)
}

/// Programs two words long that run the command after them (`uv run`,
/// `bundle exec`).
pub(crate) const RUNNERS: &[(&str, &str)] = &[
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("bundle", "exec"),
];

/// Programs that run a command line they are given as a string, and the
/// flags that give it (`su -c`, `script -c`); `None` for the ones that
/// read all their operands as one (`eval`, `watch`).
pub(crate) const REPARSERS: &[(&str, Option<&[&str]>)] = &[
    ("eval", None),
    ("watch", None),
    ("su", Some(&["-c", "--command"])),
    ("runuser", Some(&["-c", "--command"])),
    ("script", Some(&["-c", "--command"])),
];

/// `watch`'s flags that take the next word.
pub(crate) const WATCH_TAKES_ARG: &[&str] = &["-n", "--interval", "-q", "--equexit"];

/// `ssh`'s flags that take the next word (the operand after them is the
/// host; what follows is a command line for the remote shell).
pub(crate) const SSH_TAKES_ARG: &[&str] = &[
    "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q",
    "-R", "-S", "-W", "-w",
];

/// Builtins that set variables by name: a name with a subscript
/// (`a[$(cmd)]`) runs the subscript as arithmetic.
pub(crate) const DECLARERS: &[&str] = &["declare", "typeset", "local", "export", "readonly"];

/// Builtins whose operands are variable names (`read NAME`, `unset NAME`).
pub(crate) const NAMERS: &[&str] = &["read", "unset", "mapfile", "readarray"];

/// The `[[ … ]]` operators whose operands are evaluated as arithmetic.
pub(crate) const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// `find`'s actions that run the command after them, up to `;` or `+`.
pub(crate) const FIND_RUNS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// Package runners: they run a package trust cannot see.
pub(crate) const PACKAGE_RUNNERS: &[&str] = &["npx", "pnpx", "bunx", "uvx", "pipx"];
