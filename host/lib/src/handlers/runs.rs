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
use crate::shell::{self, ReadAs, lexicon::Lang};

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
        Self::from(dir, project, env, |runs, place| {
            runs.words(argv, false, place, 0);
        })
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
        for simple in shell::simple_commands(line) {
            match &simple.words {
                Some(words) => self.words(words, simple.conditional, place, depth),
                None => self.unpinned(format!(
                    "`{}` cannot be split into words",
                    short(&simple.text)
                )),
            }
        }
    }

    /// One simple command, as words (`conditional`: inside `[[ … ]]`).
    fn words(&mut self, words: &[String], conditional: bool, place: &mut Place<'_>, depth: usize) {
        let words: Vec<String> = words.iter().map(|w| expand(w, place)).collect();
        // Every word naming a file may be a script it reads.
        for word in &words {
            self.local(place, word);
        }
        for command in shell::commands(&words, conditional) {
            self.command(&command, place, depth);
        }
    }

    /// One command, its wrappers peeled: what it reads as code, and the
    /// runners whose files trust knows (make, npm, cargo, git).
    fn command(&mut self, command: &shell::Command<'_>, place: &mut Place<'_>, depth: usize) {
        for assignment in &command.assignments {
            let name = assignment.split_once('=').map_or(*assignment, |(n, _)| n);
            if super::kind::loads_code(name) {
                self.unpinned(format!("sets `{name}`, which loads code"));
            }
        }
        let (program, name, args) = (command.program, command.name, command.args);
        if program.is_empty() {
            return;
        }
        if program.contains('$') || program.contains('`') {
            self.unpinned(format!("runs `{}`, which names a variable", short(program)));
            return;
        }
        for read in &command.reads {
            self.read(read, place, depth);
        }
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
            "make" | "gmake" => self.make(args, place),
            "npm" | "pnpm" | "yarn" => self.package_script(name, args, place, depth),
            "cargo" => self.cargo(args, place),
            "git" => self.git(args, place, depth),
            _ if shell::lexicon::PACKAGE_RUNNERS.contains(&name) => {
                self.unpinned(format!("`{name}` runs a package trust cannot see"));
            }
            _ if program.contains('/') => self.script(place, program),
            _ => {}
        }
    }

    /// What a command reads as code: a shell line is followed, another
    /// language's code is searched for the local files it imports, a
    /// script is pinned, a module found.
    fn read(&mut self, read: &shell::Read<'_>, place: &mut Place<'_>, depth: usize) {
        let text = read.text.as_ref();
        match read.what {
            ReadAs::Code(Lang::Shell) => {
                let mut inner = Place {
                    dir: place.dir.clone(),
                    project: place.project,
                    env: place.env,
                };
                self.shell(text, &mut inner, depth + 1);
            }
            ReadAs::Code(lang) => {
                let dir = place.dir.clone();
                for found in imported(lang, text, &[&dir, place.project]) {
                    self.local(place, &found.to_string_lossy());
                }
            }
            ReadAs::Script(_) => self.script(place, text),
            ReadAs::Module(lang) => self.module(lang, text, place),
            ReadAs::RemoteShell | ReadAs::Arithmetic | ReadAs::VariableName | ReadAs::Stdin(_) => {}
        }
    }

    /// A module loaded by name: the project's file when it has one, else
    /// said (an installed module trust cannot see).
    fn module(&mut self, lang: Lang, module: &str, place: &Place<'_>) {
        let found: Vec<PathBuf> = match lang {
            Lang::Python => python_module(&place.dir, module)
                .map(|file| {
                    // The packages on the way are imported first.
                    let mut package = place.dir.clone();
                    let inits = module.split('.').map(|part| {
                        package.push(part);
                        package.join("__init__.py")
                    });
                    inits
                        .collect::<Vec<_>>()
                        .into_iter()
                        .chain([file])
                        .collect()
                })
                .unwrap_or_default(),
            Lang::JavaScript if module.starts_with('.') || module.starts_with('/') => {
                return self.script(place, module);
            }
            Lang::Perl | Lang::Ruby => {
                let name = module.split(['=', ' ']).next().unwrap_or_default();
                if name.chars().next().is_some_and(char::is_lowercase) && lang == Lang::Perl {
                    // A pragma (`-Mstrict`).
                    return;
                }
                let file = if lang == Lang::Perl {
                    format!("{}.pm", name.replace("::", "/"))
                } else {
                    format!("{name}.rb")
                };
                [place.dir.join(&file), place.dir.join("lib").join(&file)]
                    .into_iter()
                    .filter(|f| f.is_file())
                    .collect()
            }
            _ => Vec::new(),
        };
        let pinned = found
            .iter()
            .filter(|f| self.local(place, &f.to_string_lossy()).is_some())
            .count();
        if pinned == 0 {
            self.unpinned(format!(
                "loads the installed module `{}`, which trust cannot see",
                short(module)
            ));
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

    /// `cargo run`, `build`, `test`…: the crate's manifest, build script,
    /// configuration and sources, all of which become code that runs.
    fn cargo(&mut self, args: &[String], place: &Place<'_>) {
        const BUILDS: &[&str] = &[
            "run", "r", "build", "b", "test", "t", "bench", "check", "c", "clippy", "doc",
            "install", "fix",
        ];
        let mut manifest_dir = None;
        let mut words = args.iter();
        while let Some(arg) = words.next() {
            if arg == "--manifest-path" {
                manifest_dir = words.next().map(|m| place.dir.join(m));
            } else if let Some(m) = arg.strip_prefix("--manifest-path=") {
                manifest_dir = Some(place.dir.join(m));
            }
        }
        if !args
            .iter()
            .find(|a| !a.starts_with('-') && !a.starts_with('+'))
            .is_some_and(|sub| BUILDS.contains(&sub.as_str()))
        {
            return;
        }
        // The crate: the manifest's directory, or the nearest one above
        // the working directory that has a `Cargo.toml`.
        let root = match manifest_dir {
            Some(manifest) => manifest.parent().map(Path::to_path_buf),
            None => place
                .dir
                .ancestors()
                .take_while(|d| d.starts_with(place.project))
                .find(|d| d.join("Cargo.toml").is_file())
                .map(Path::to_path_buf),
        };
        let Some(root) = root else {
            return;
        };
        for dir in root
            .ancestors()
            .take_while(|d| d.starts_with(place.project))
        {
            for config in [".cargo/config.toml", ".cargo/config"] {
                self.local(place, &dir.join(config).to_string_lossy());
            }
        }
        let sources = walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                e.depth() == 0 || !(name == "target" || name == ".git" || name == "node_modules")
            })
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_type().is_file() && {
                    let name = e.file_name().to_string_lossy();
                    name.ends_with(".rs")
                        || name == "Cargo.toml"
                        || name == "Cargo.lock"
                        || name.starts_with("rust-toolchain")
                }
            });
        for entry in sources {
            if self.files.len() >= MAX_RUN_FILES {
                self.unpinned(format!(
                    "`cargo` builds more than {MAX_RUN_FILES} files, more than trust pins"
                ));
                return;
            }
            self.local(place, &entry.path().to_string_lossy());
        }
    }

    /// `git -c key=value`: a hooks directory it names is pinned, a program
    /// it names (`core.fsmonitor`, `core.sshCommand`, `alias.x=!…`) is
    /// read as a command line.
    fn git(&mut self, args: &[String], place: &mut Place<'_>, depth: usize) {
        let mut words = args.iter();
        let mut dir = place.dir.clone();
        while let Some(arg) = words.next() {
            match arg.as_str() {
                "-C" => {
                    if let Some(d) = words.next() {
                        dir = dir.join(d);
                    }
                }
                "-c" => {
                    let Some((key, value)) = words.next().and_then(|c| c.split_once('=')) else {
                        continue;
                    };
                    let key = key.to_ascii_lowercase();
                    if key == "core.hookspath" {
                        let hooks = walkdir::WalkDir::new(dir.join(value))
                            .max_depth(1)
                            .into_iter()
                            .filter_map(Result::ok)
                            .filter(|e| e.file_type().is_file());
                        for hook in hooks {
                            self.local(place, &hook.path().to_string_lossy());
                        }
                    } else if git_runs(&key) {
                        let line = value.strip_prefix('!').unwrap_or(value);
                        self.shell(line, place, depth + 1);
                    }
                }
                _ if arg.starts_with('-') => {}
                _ => break,
            }
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

/// Whether git runs the value of configuration `key` (lower-case) as a
/// command line.
fn git_runs(key: &str) -> bool {
    const PROGRAMS: &[&str] = &[
        "core.fsmonitor",
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.askpass",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "gpg.program",
        "uploadpack.packobjectshook",
    ];
    const SUFFIXES: &[&str] = &[
        ".textconv",
        ".clean",
        ".smudge",
        ".process",
        ".command",
        ".driver",
        ".cmd",
        ".program",
    ];
    PROGRAMS.contains(&key)
        || key.starts_with("alias.")
        || key.starts_with("pager.")
        || SUFFIXES.iter().any(|s| key.ends_with(s))
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

/// `word` with the variables it is known to have filled in: the project's
/// (`$CLAUDE_PROJECT_DIR` and the like) and the hook's own `env`.
fn expand(word: &str, place: &Place<'_>) -> String {
    http::ENV_REFERENCE
        .replace_all(word, |caps: &regex::Captures<'_>| {
            let name = http::referenced(caps);
            match name {
                // The project's root, where a project's hook runs from
                // (`CommandHook::in_project`). Not `WASM_HOOKS_WORKING_DIR`:
                // that is the event's `cwd`, which follows the agent's `cd`.
                "CLAUDE_PROJECT_DIR" | "GEMINI_PROJECT_DIR" | "PROJECT_DIR" | "PWD" => {
                    place.project.to_string_lossy().into_owned()
                }
                _ => place
                    .env
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or_else(|| caps[0].to_owned(), |(_, v)| v.clone()),
            }
        })
        .into_owned()
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

/// The language a followed file is in, by its name and first line; `None`
/// for a makefile (whose `include`s [`included`] reads).
fn file_lang(file: &Path, text: &str) -> Option<Lang> {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let first = text.lines().next().unwrap_or_default();
    if ext == "py" || first.contains("python") {
        Some(Lang::Python)
    } else if matches!(ext, "js" | "mjs" | "cjs" | "ts" | "mts" | "cts") || first.contains("node") {
        Some(Lang::JavaScript)
    } else if matches!(ext, "pl" | "pm") || first.contains("perl") {
        Some(Lang::Perl)
    } else if name.eq_ignore_ascii_case("makefile") || name == "GNUmakefile" || ext == "mk" {
        None
    } else {
        Some(Lang::Shell)
    }
}

/// The local files the script `file` (its `text`) sources, imports or
/// includes, looked for from each of `roots` (the script's directory,
/// then the project's).
fn referenced(file: &Path, text: &str, roots: &[&Path]) -> Vec<PathBuf> {
    match file_lang(file, text) {
        Some(lang) => imported(lang, text, roots),
        None => included(text, roots.first().copied().unwrap_or(Path::new("."))),
    }
}

/// make's `include`s of `text`, from `dir`.
fn included(text: &str, dir: &Path) -> Vec<PathBuf> {
    static MAKE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\s*-?include\s+(.+)$").expect("fixed"));
    MAKE.captures_iter(text)
        .flat_map(|caps| {
            caps[1]
                .split_whitespace()
                .map(|f| dir.join(f))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The local files code in `lang` (a script's text, or a `-c`/`-e`
/// argument) sources or imports: shell `source`/`.`, Python
/// `import a, b`/`from m import n`, JavaScript `require`/`import`, Perl
/// `require`/`use`/`do`; looked for from each of `roots` (Python imports
/// from where it was started, shells source from the working directory).
fn imported(lang: Lang, text: &str, roots: &[&Path]) -> Vec<PathBuf> {
    static SHELL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)(?:^|[;&|]|\bthen|\bdo)\s*(?:source|\.)\s+["']?([^\s"';&|]+)"#)
            .expect("fixed")
    });
    static PYTHON: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^\s*(?:from\s+(\.*[\w.]*)\s+import\s+\(?([\w, ]+)|import\s+([\w., ]+))")
            .expect("fixed")
    });
    static JS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?:require\(|import\(|from\s+|import\s+)\s*["'](\.{1,2}/[^"']+)["']"#)
            .expect("fixed")
    });
    static PERL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)(?:^|;)\s*(?:require|use|do)\s+(?:["']([^"']+)["']|([A-Z][\w:]*))"#)
            .expect("fixed")
    });
    let dir = roots.first().copied().unwrap_or(Path::new("."));
    let mut found = Vec::new();
    match lang {
        Lang::Python => {
            // `python3 -c 'import a; import b'`: each statement its own line.
            let text = text.replace(';', "\n");
            for caps in PYTHON.captures_iter(&text) {
                let modules: Vec<&str> = match (caps.get(1), caps.get(3)) {
                    (Some(module), _) => vec![module.as_str()],
                    (None, Some(list)) => list
                        .as_str()
                        .split(',')
                        .filter_map(|m| m.split_whitespace().next())
                        .collect(),
                    (None, None) => Vec::new(),
                };
                let names = caps.get(2).map_or("", |m| m.as_str());
                for module in modules {
                    for root in roots {
                        found.extend(python_imports(root, module, names));
                    }
                }
            }
        }
        Lang::JavaScript => {
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
        }
        Lang::Perl => {
            for caps in PERL.captures_iter(text) {
                let file = match (caps.get(1), caps.get(2)) {
                    (Some(path), _) => path.as_str().to_owned(),
                    (None, Some(module)) => format!("{}.pm", module.as_str().replace("::", "/")),
                    (None, None) => continue,
                };
                for root in roots {
                    found.push(root.join(&file));
                    found.push(root.join("lib").join(&file));
                }
            }
        }
        Lang::Shell => {
            for caps in SHELL.captures_iter(text) {
                found.extend(roots.iter().map(|root| root.join(&caps[1])));
            }
        }
        Lang::Ruby | Lang::Php | Lang::Awk | Lang::Sed => {}
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
        assert!(
            says("\"$WASM_HOOKS_WORKING_DIR\"/x.sh")[0].contains("names a variable"),
            "the event's cwd is not the project's root: a script under it is not pinned"
        );
        assert!(says("npx some-tool")[0].contains("package"));
        assert!(says("BASH_ENV=./x.sh true")[0].contains("BASH_ENV"));
        assert!(says("python3 -m black .")[0].contains("installed module"));
        assert!(says("git status").is_empty());
    }

    #[test]
    fn what_a_build_tool_git_or_an_import_runs_is_pinned() {
        let dir = project(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("Cargo.lock", ""),
            ("build.rs", "fn main() {}"),
            ("src/main.rs", "fn main() {}"),
            (".cargo/config.toml", "[alias]\n"),
            ("hooks/pre-commit", "#!/bin/sh\n./x.sh\n"),
            ("x.sh", "echo x"),
            ("lib/Guard.pm", "1;"),
            ("a.py", "X = 1"),
            ("b.py", "Y = 1"),
            ("both.py", "import a, b\n"),
        ]);
        let d = dir.path();
        let cases: &[(&str, &[&str])] = &[
            (
                "cargo run --release",
                &[
                    ".cargo/config.toml",
                    "Cargo.lock",
                    "Cargo.toml",
                    "build.rs",
                    "src/main.rs",
                ],
            ),
            (
                "git -c core.hooksPath=hooks commit -m x",
                &["hooks/pre-commit"],
            ),
            ("git -c core.pager='./x.sh' log", &["x.sh"]),
            (
                "perl -Ilib -e 'require \"lib/Guard.pm\"'",
                &["lib/Guard.pm"],
            ),
            ("python3 -c 'import a; import b'", &["a.py", "b.py"]),
            ("python3 both.py", &["a.py", "b.py", "both.py"]),
        ];
        for (line, expected) in cases {
            let mut found = pinned(d, line, &[]);
            found.sort();
            assert_eq!(found, *expected, "{line}");
        }
    }

    #[test]
    fn an_mcp_servers_script_is_pinned_and_a_package_runner_is_said() {
        let dir = project(&[
            ("server.js", "const lib = require('./lib.js');\n"),
            ("lib.js", "module.exports = 1;"),
        ]);
        let d = dir.path();
        let argv =
            |words: &[&str]| -> Vec<String> { words.iter().map(|w| (*w).to_owned()).collect() };
        let runs = Runs::of_argv(&argv(&["node", "server.js"]), d, d, &[]);
        let mut files: Vec<_> = runs
            .files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["lib.js", "server.js"]);
        assert!(runs.unpinned.is_empty(), "{:?}", runs.unpinned);
        let runs = Runs::of_argv(&argv(&["npx", "-y", "some-mcp"]), d, d, &[]);
        assert!(runs.files.is_empty(), "{:?}", runs.files);
        assert!(runs.unpinned[0].contains("package"), "{:?}", runs.unpinned);
    }
}
