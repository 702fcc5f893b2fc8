//! What files a command hook runs, as far as trust can know them: the
//! scripts its command line names (after the project variables are
//! expanded, across `;`, `&&`, `|`, `cd`), the scripts the common runners
//! read (`sh x`, `python3 -m pkg`, `node x`, `source x`, `make`,
//! `npm run x`), and the local files those scripts source or import.
//! Trust records these files, so that changing any of them untrusts the
//! project. What it cannot know (a variable it cannot expand, a package
//! runner) is said, so that `trust` can show it.
//!
//! It reads; it never runs anything. Start at [`Runs::of_shell`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::http;

/// The most files followed from one hook (`MAX_RUN_FILES`).
const MAX_RUN_FILES: usize = 256;

/// How deep sourced and imported files are followed.
const MAX_DEPTH: usize = 8;

/// The largest script read to find what it sources or imports.
const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// What a command runs: the files trust pins, and what it cannot pin.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Runs {
    /// Existing files the command runs or reads as code.
    pub(crate) files: BTreeSet<PathBuf>,
    /// What runs code trust cannot pin, each said in a few words.
    pub(crate) unpinned: Vec<String>,
    /// The text of each file followed (as far as [`MAX_SCRIPT_BYTES`]),
    /// for whoever looks for more in them (the variables a script reads).
    pub(crate) texts: Vec<String>,
}

/// Where a command line is read: its directory, the project, and the
/// variables it is known to have.
struct Place<'a> {
    dir: PathBuf,
    project: &'a Path,
    env: &'a [(String, String)],
}

impl Runs {
    /// What the shell command `line` runs, started in `dir`, in `project`,
    /// with the hook's own `env`.
    pub(crate) fn of_shell(
        line: &str,
        dir: &Path,
        project: &Path,
        env: &[(String, String)],
    ) -> Self {
        Self::from(dir, project, env, |runs, place| runs.shell(line, place, 0))
    }

    /// What the program and arguments `argv` run (no shell reads them).
    pub(crate) fn of_argv(
        argv: &[String],
        dir: &Path,
        project: &Path,
        env: &[(String, String)],
    ) -> Self {
        Self::from(dir, project, env, |runs, place| runs.words(argv, place, 0))
    }

    /// What `read` finds from `dir`, with the files it names followed.
    fn from(
        dir: &Path,
        project: &Path,
        env: &[(String, String)],
        read: impl FnOnce(&mut Self, &mut Place<'_>),
    ) -> Self {
        let mut runs = Self::default();
        // Resolved once: every file found is checked against it.
        let project = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_owned());
        let mut place = Place {
            dir: dir.to_owned(),
            project: &project,
            env,
        };
        read(&mut runs, &mut place);
        runs.follow(&project);
        runs
    }

    fn unpinned(&mut self, what: String) {
        if !self.unpinned.contains(&what) {
            self.unpinned.push(what);
        }
    }

    /// Each simple command of a shell line.
    fn shell(&mut self, line: &str, place: &mut Place<'_>, depth: usize) {
        if depth > MAX_DEPTH {
            self.unpinned(format!("`{}` nests too deep to follow", short(line)));
            return;
        }
        for segment in segments(line) {
            match shlex::split(&segment) {
                Some(words) => self.words(&words, place, depth),
                None => self.unpinned(format!("`{}` cannot be split into words", short(&segment))),
            }
        }
    }

    /// One simple command, as words.
    fn words(&mut self, words: &[String], place: &mut Place<'_>, depth: usize) {
        let words: Vec<String> = words.iter().map(|w| expand(w, place)).collect();
        // Every word naming a file may be a script it reads.
        for word in &words {
            self.local(place, word);
        }
        let mut rest = words.as_slice();
        while let Some((first, tail)) = rest.split_first() {
            if let Some((name, _)) = first.split_once('=').filter(|(n, _)| is_name(n)) {
                if super::kind::loads_code(name) {
                    self.unpinned(format!("sets `{name}`, which loads code"));
                }
                rest = tail;
            } else if WRAPPERS.contains(&first.as_str()) || first.starts_with('-') {
                rest = tail;
            } else {
                break;
            }
        }
        let Some((program, args)) = rest.split_first() else {
            return;
        };
        if program.contains('$') || program.contains('`') {
            self.unpinned(format!("runs `{}`, which names a variable", short(program)));
            return;
        }
        let name = Path::new(program.as_str())
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        match name {
            "cd" | "pushd" => {
                if let Some(dir) = args
                    .first()
                    .map(|d| place.dir.join(d))
                    .filter(|d| d.is_dir())
                {
                    place.dir = dir;
                }
            }
            "source" | "." => {
                if let Some(file) = args.first() {
                    self.script(place, file);
                }
            }
            "sh" | "bash" | "dash" | "zsh" | "ksh" => self.interpreter(args, place, depth, &["-c"]),
            "node" | "deno" | "bun" | "ruby" | "perl" | "php" | "tsx" | "ts-node" => {
                self.interpreter(args, place, depth, &["-e", "--eval", "-p", "--print"]);
            }
            "make" | "gmake" => self.make(args, place),
            "npm" | "pnpm" | "yarn" => self.package_script(name, args, place, depth),
            "npx" | "pnpx" | "bunx" => {
                self.unpinned(format!("`{name}` runs a package trust cannot see"));
            }
            _ if name.starts_with("python") => self.python(args, place),
            _ if program.contains('/') => self.script(place, program),
            _ => {}
        }
    }

    /// A file named by `word`, when it exists inside the project.
    fn local(&mut self, place: &Place<'_>, word: &str) -> Option<PathBuf> {
        if word.is_empty() || self.files.len() >= MAX_RUN_FILES {
            return None;
        }
        // Without `.` components: `d/./y.sh` is `d/y.sh`.
        let path: PathBuf = place.dir.join(word).components().collect();
        is_file_inside(&path, place.project).then(|| {
            self.files.insert(path.clone());
            path
        })
    }

    /// A script the command runs: pinned if it is in the project.
    fn script(&mut self, place: &Place<'_>, word: &str) {
        if self.local(place, word).is_none() && word.contains('/') {
            let path = place.dir.join(word);
            if !path.starts_with(place.project) {
                return;
            }
            self.unpinned(format!("runs `{}`, which is not there yet", short(word)));
        }
    }

    /// `sh`, `node` and the like: inline code (`inline` options) is read
    /// as a command line for shells; the first other argument is a script;
    /// `-r`/`--require`/`--import` name modules.
    fn interpreter(
        &mut self,
        args: &[String],
        place: &mut Place<'_>,
        depth: usize,
        inline: &[&str],
    ) {
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if inline.contains(&arg.as_str()) {
                if let Some(code) = args.next()
                    && inline == ["-c"]
                {
                    let mut inner = Place {
                        dir: place.dir.clone(),
                        project: place.project,
                        env: place.env,
                    };
                    self.shell(code, &mut inner, depth + 1);
                }
                return;
            }
            if matches!(arg.as_str(), "-r" | "--require" | "--import" | "--loader") {
                if let Some(module) = args.next() {
                    self.script(place, module);
                }
            } else if arg == "run" {
                // `deno run x`, `bun run x`.
            } else if !arg.starts_with('-') {
                self.script(place, arg);
                return;
            }
        }
    }

    /// `python3 x.py`, `python3 -m pkg.mod`.
    fn python(&mut self, args: &[String], place: &Place<'_>) {
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "-c" => return,
                "-m" => {
                    if let Some(module) = args.next() {
                        let found = python_module(&place.dir, module);
                        match found {
                            Some(file) => {
                                self.local(place, &file.to_string_lossy());
                                // The packages on the way are imported first.
                                let mut package = place.dir.clone();
                                for part in module.split('.') {
                                    package.push(part);
                                    let init = package.join("__init__.py");
                                    self.local(place, &init.to_string_lossy());
                                }
                            }
                            None => self.unpinned(format!(
                                "`python -m {}` runs an installed module",
                                short(module)
                            )),
                        }
                    }
                    return;
                }
                _ if arg.starts_with('-') => {}
                _ => return self.script(place, arg),
            }
        }
    }

    /// `make [-C dir] [-f file]`: the makefile, and what it includes.
    fn make(&mut self, args: &[String], place: &Place<'_>) {
        let mut dir = place.dir.clone();
        let mut file = None;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "-C" => dir = args.next().map_or(dir.clone(), |d| dir.join(d)),
                "-f" => file = args.next().cloned(),
                _ => {}
            }
        }
        let inner = Place {
            dir,
            project: place.project,
            env: place.env,
        };
        let names = match &file {
            Some(file) => vec![file.as_str()],
            None => vec!["GNUmakefile", "makefile", "Makefile"],
        };
        for name in names {
            self.local(&inner, name);
        }
    }

    /// `npm run x`, `npm test`, `yarn x`: `package.json`, and the script's
    /// own command line.
    fn package_script(&mut self, tool: &str, args: &[String], place: &mut Place<'_>, depth: usize) {
        let Some(manifest) = self.local(place, "package.json") else {
            return;
        };
        let args: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect();
        let script = match args.first().copied() {
            Some("run" | "run-script") => args.get(1).copied(),
            Some(name @ ("test" | "start" | "stop" | "restart")) => Some(name),
            Some(name) if tool == "yarn" && !name.starts_with('-') => Some(name),
            _ => None,
        };
        let Some(script) = script else {
            return;
        };
        // Within the bound every followed file has, and never a FIFO: a
        // repository's manifest is read as its scripts are.
        let line = wasm_hooks_core::read_regular_file(&manifest, MAX_SCRIPT_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|doc| doc.get("scripts")?.get(script)?.as_str().map(str::to_owned));
        if let Some(line) = line {
            self.shell(&line, place, depth + 1);
        }
    }

    /// The files the pinned scripts source or import, as far as they can
    /// be seen (the same directory tree, the usual spellings); `project`
    /// resolved.
    fn follow(&mut self, project: &Path) {
        let mut todo: Vec<(PathBuf, usize)> = self.files.iter().map(|f| (f.clone(), 0)).collect();
        while let Some((file, depth)) = todo.pop() {
            if depth >= MAX_DEPTH || self.files.len() >= MAX_RUN_FILES {
                continue;
            }
            let Ok(bytes) = wasm_hooks_core::read_regular_file(&file, MAX_SCRIPT_BYTES) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let dir = file.parent().unwrap_or(Path::new("."));
            for found in referenced(&file, &text, &[dir, project]) {
                let found: PathBuf = found.components().collect();
                if is_file_inside(&found, project) && self.files.insert(found.clone()) {
                    todo.push((found, depth + 1));
                }
            }
            self.texts.push(text);
        }
    }
}

/// Whether `path` is a regular file whose real path lies in `project`
/// (resolved).
fn is_file_inside(path: &Path, project: &Path) -> bool {
    // A stat first: most words (flags, arguments) name no file, and a
    // stat costs less than resolving the whole path.
    path.is_file()
        && path
            .canonicalize()
            .is_ok_and(|real| real.starts_with(project))
}

/// Words before the program that only change how it runs.
const WRAPPERS: &[&str] = &["env", "exec", "command", "builtin", "nohup", "time", "nice"];

/// `line` cut into simple commands at unquoted `;`, `&`, `|`, newlines,
/// parentheses and backquotes (a substitution is a command too).
pub(crate) fn segments(line: &str) -> Vec<String> {
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

/// `word` with the variables it is known to have filled in: the project's
/// (`$CLAUDE_PROJECT_DIR` and the like) and the hook's own `env`.
fn expand(word: &str, place: &Place<'_>) -> String {
    http::ENV_REFERENCE
        .replace_all(word, |caps: &regex::Captures<'_>| {
            let name = http::referenced(caps);
            match name {
                "CLAUDE_PROJECT_DIR"
                | "GEMINI_PROJECT_DIR"
                | "PROJECT_DIR"
                | "PWD"
                | "WASM_HOOKS_WORKING_DIR" => place.project.to_string_lossy().into_owned(),
                _ => place
                    .env
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or_else(|| caps[0].to_owned(), |(_, v)| v.clone()),
            }
        })
        .into_owned()
}

/// A shell variable's name.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The file of module `module` (`pkg.tool`) below `dir`: `pkg/tool.py`,
/// or `pkg/tool/__main__.py`.
fn python_module(dir: &Path, module: &str) -> Option<PathBuf> {
    let path = module.replace('.', "/");
    [format!("{path}.py"), format!("{path}/__main__.py")]
        .into_iter()
        .map(|p| dir.join(p))
        .find(|p| p.is_file())
}

/// The local files `text` (the script `file`) sources or imports, by its
/// kind: shell `source`/`.`, Python `import`/`from`, JavaScript
/// `require`/`import`, make's `include`; looked for from each of `roots`
/// (the script's directory, then the project's: Python imports from
/// where it was started, shells source from the working directory).
fn referenced(file: &Path, text: &str, roots: &[&Path]) -> Vec<PathBuf> {
    static SHELL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^\s*(?:source|\.)\s+["']?([^\s"';&|]+)"#).expect("fixed")
    });
    static PYTHON: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?m)^\s*(?:from\s+(\.*[\w.]*)\s+import\s+\(?([\w, ]+)|import\s+([A-Za-z_][\w.]*))",
        )
        .expect("fixed")
    });
    static JS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?:require\(|import\(|from\s+|import\s+)\s*["'](\.{1,2}/[^"']+)["']"#)
            .expect("fixed")
    });
    static MAKE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\s*-?include\s+(.+)$").expect("fixed"));
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let first = text.lines().next().unwrap_or_default();
    let dir = roots.first().copied().unwrap_or(Path::new("."));
    let mut found = Vec::new();
    if ext == "py" || first.contains("python") {
        for caps in PYTHON.captures_iter(text) {
            let module = caps
                .get(1)
                .or_else(|| caps.get(3))
                .map_or("", |m| m.as_str());
            let names = caps.get(2).map_or("", |m| m.as_str());
            for root in roots {
                found.extend(python_imports(root, module, names));
            }
        }
    } else if matches!(ext, "js" | "mjs" | "cjs" | "ts" | "mts" | "cts") || first.contains("node") {
        for caps in JS.captures_iter(text) {
            let base = dir.join(&caps[1]);
            found.push(base.clone());
            for suffix in [
                ".js",
                ".mjs",
                ".cjs",
                ".ts",
                ".json",
                "/index.js",
                "/index.ts",
            ] {
                found.push(PathBuf::from(format!("{}{suffix}", base.display())));
            }
        }
    } else if name.eq_ignore_ascii_case("makefile") || name == "GNUmakefile" || ext == "mk" {
        for caps in MAKE.captures_iter(text) {
            found.extend(caps[1].split_whitespace().map(|f| dir.join(f)));
        }
    } else {
        for caps in SHELL.captures_iter(text) {
            found.extend(roots.iter().map(|root| root.join(&caps[1])));
        }
    }
    found
}

/// Where `from module import names` (or `import module`) may find local
/// files, from `root`: each package on the way, the module, and each name
/// (which may be a module of the package).
fn python_imports(root: &Path, module: &str, names: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut path = root.to_owned();
    for part in module.split('.').filter(|p| !p.is_empty()) {
        path.push(part);
        found.push(path.join("__init__.py"));
    }
    found.push(path.with_extension("py"));
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        found.push(path.join(format!("{name}.py")));
        found.push(path.join(name).join("__init__.py"));
    }
    found
}

/// `text` cut for a message.
fn short(text: &str) -> String {
    wasm_hooks_core::Shown(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_package_json_that_is_a_fifo_is_not_waited_on() {
        let dir = project(&[]);
        let manifest = dir.path().join("package.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&manifest)
            .status()
            .unwrap();
        assert!(made.success());
        // Opened as a plain read, this would wait forever for a writer.
        let runs = Runs::of_shell("npm run build", dir.path(), dir.path(), &[]);
        assert!(runs.files.is_empty(), "{:?}", runs.files);
    }

    fn pinned(dir: &Path, line: &str, env: &[(&str, &str)]) -> Vec<String> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Runs::of_shell(line, dir, dir, &env)
            .files
            .iter()
            .map(|f| {
                f.strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .trim_start_matches("./")
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn the_common_forms_of_running_a_script_are_pinned() {
        let dir = project(&[
            ("x.sh", "echo x"),
            ("d/y.sh", "echo y"),
            ("lib.sh", "f() { :; }"),
            (
                "uses-lib.sh",
                "#!/bin/sh\n. ./lib.sh\nsource \"helpers.sh\"\n",
            ),
            ("helpers.sh", "h() { :; }"),
            ("Makefile", "include rules.mk\nall:\n\t./x.sh\n"),
            ("rules.mk", "X = 1\n"),
            (
                "package.json",
                r#"{"scripts": {"check": "node tools/check.js"}}"#,
            ),
            (
                "tools/check.js",
                "const u = require('./util');\nimport('./late.mjs');",
            ),
            ("tools/util.js", "module.exports = 1;"),
            ("tools/late.mjs", "export default 1;"),
            ("pkg/tool.py", "from pkg import helper\nimport os\n"),
            ("pkg/__init__.py", ""),
            ("pkg/helper.py", "X = 1"),
            ("app.py", "import pkg.helper\n"),
        ]);
        let d = dir.path();
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            ("\"$CLAUDE_PROJECT_DIR\"/x.sh", &[], &["x.sh"]),
            ("${CLAUDE_PROJECT_DIR}/x.sh --fast", &[], &["x.sh"]),
            ("$SCRIPTS/x.sh", &[("SCRIPTS", ".")], &["x.sh"]),
            ("./x.sh; echo done", &[], &["x.sh"]),
            ("cd d && ./y.sh", &[], &["d/y.sh"]),
            ("make", &[], &["Makefile", "rules.mk"]),
            (
                "npm run check",
                &[],
                &[
                    "package.json",
                    "tools/check.js",
                    "tools/late.mjs",
                    "tools/util.js",
                ],
            ),
            (
                "bash uses-lib.sh",
                &[],
                &["helpers.sh", "lib.sh", "uses-lib.sh"],
            ),
            ("source ./lib.sh && f", &[], &["lib.sh"]),
            (
                "python3 -m pkg.tool",
                &[],
                &["pkg/__init__.py", "pkg/helper.py", "pkg/tool.py"],
            ),
            (
                "python3 app.py",
                &[],
                &["app.py", "pkg/__init__.py", "pkg/helper.py"],
            ),
            ("sh -c 'cd d; ./y.sh'", &[], &["d/y.sh"]),
        ];
        for (line, env, expected) in cases {
            let mut found = pinned(d, line, env);
            found.sort();
            assert_eq!(found, *expected, "{line}");
        }
    }

    #[test]
    fn what_cannot_be_pinned_is_said() {
        let dir = project(&[]);
        let says = |line: &str| Runs::of_shell(line, dir.path(), dir.path(), &[]).unpinned;
        assert!(says("$RUNNER check")[0].contains("names a variable"));
        assert!(says("npx some-tool")[0].contains("package"));
        assert!(says("BASH_ENV=./x.sh true")[0].contains("BASH_ENV"));
        assert!(says("python3 -m black .")[0].contains("installed module"));
        assert!(says("git status").is_empty());
    }
}
