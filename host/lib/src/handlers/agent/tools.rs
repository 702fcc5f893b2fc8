//! The tools an agent hook's model may call: read a file, grep, glob and
//! list a folder, only inside the hook's read-only grants (and the
//! event's transcript when granted). Paths are opened through cap-std
//! from the granted directory, so `..` and links that lead out are
//! refused as the wasm sandbox refuses them. No shell, no write, no
//! network; every answer is capped.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde_json::{Value, json};

/// The most one tool answer says; the rest is cut with a note.
const MAX_ANSWER_BYTES: usize = 16 * 1024;
/// The most of one file that is read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The most directory entries one walk (grep, glob) visits.
const MAX_WALK_ENTRIES: usize = 10_000;
/// The most lines grep gives, and paths glob or list give.
const MAX_RESULTS: usize = 200;
/// The longest line grep quotes.
const MAX_LINE_CHARS: usize = 300;
/// The biggest compiled regex a model's pattern may make.
const MAX_REGEX_BYTES: usize = 1024 * 1024;

/// The file tools over one hook's grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadOnlyTools {
    /// The directories granted (absolute); a relative path starts at the
    /// first.
    dirs: Vec<PathBuf>,
    /// Whether the event's `transcript_path` may be read.
    transcript: bool,
}

/// The tools the model is told about (the `answer` tool is the agent
/// loop's own): name, description, JSON schema of the input.
pub(crate) fn definitions() -> Vec<(&'static str, &'static str, Value)> {
    let path = json!({"type": "string", "description": "an absolute path, or one relative to the first granted folder"});
    vec![
        (
            "read_file",
            "Read a text file (at most 1 MiB; lines from `offset`, 1-based, at most `limit`).",
            json!({"type": "object", "properties": {"path": path, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, "required": ["path"]}),
        ),
        (
            "grep",
            "Lines matching a regular expression in a file or under a folder (`glob` narrows the files).",
            json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": path, "glob": {"type": "string"}}, "required": ["pattern"]}),
        ),
        (
            "glob",
            "Files under a folder whose path (relative to it) matches a glob such as `**/*.rs`.",
            json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": path}, "required": ["pattern"]}),
        ),
        (
            "list",
            "The entries of a folder (folders end with `/`).",
            json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
        ),
    ]
}

impl ReadOnlyTools {
    /// Tools reading `dirs` (absolute, existing), and the transcript when
    /// `transcript` is set.
    pub(crate) fn new(dirs: Vec<PathBuf>, transcript: bool) -> Self {
        Self { dirs, transcript }
    }

    /// What the tools may read, in a few words (for listings).
    pub(crate) fn describe(&self) -> String {
        let mut parts: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        if self.transcript {
            parts.push("the transcript".to_owned());
        }
        if parts.is_empty() {
            "nothing".to_owned()
        } else {
            parts.join(", ")
        }
    }

    /// Run tool `name` on `input`: its answer, or why it was refused.
    /// `transcript` is the event's `transcript_path`, if any.
    pub(crate) fn run(
        &self,
        name: &str,
        input: &Value,
        transcript: Option<&Path>,
    ) -> Result<String, String> {
        let text = |field: &str| input.get(field).and_then(Value::as_str);
        let path = text("path");
        let answer = match name {
            "read_file" => {
                let path = path.ok_or("`path` is required")?;
                let number = |field: &str| input.get(field).and_then(Value::as_u64);
                self.read_file(path, transcript, number("offset"), number("limit"))
            }
            "grep" => self.grep(
                text("pattern").ok_or("`pattern` is required")?,
                path,
                text("glob"),
            ),
            "glob" => self.glob(text("pattern").ok_or("`pattern` is required")?, path),
            "list" => self.list(path.ok_or("`path` is required")?),
            other => Err(format!(
                "there is no tool `{other}` (read_file, grep, glob, list, answer)"
            )),
        }?;
        Ok(capped(answer))
    }

    /// The granted directory `path` is in, opened, and the rest of the
    /// path relative to it (`.` for the directory itself).
    fn locate(&self, path: &str) -> Result<(Dir, PathBuf, PathBuf), String> {
        let asked = Path::new(path);
        let absolute = match (asked.is_absolute(), self.dirs.first()) {
            (true, _) => asked.to_path_buf(),
            (false, Some(first)) => first.join(asked),
            (false, None) => return Err(self.outside(path)),
        };
        for dir in &self.dirs {
            if let Ok(rest) = absolute.strip_prefix(dir) {
                if rest.components().any(|c| c == Component::ParentDir) {
                    return Err(self.outside(path));
                }
                let opened = Dir::open_ambient_dir(dir, ambient_authority())
                    .map_err(|e| format!("cannot open `{}`: {e}", dir.display()))?;
                let rest = if rest.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    rest.to_path_buf()
                };
                return Ok((opened, dir.clone(), rest));
            }
        }
        Err(self.outside(path))
    }

    fn outside(&self, path: &str) -> String {
        format!(
            "`{path}` is outside what this hook may read ({})",
            self.describe()
        )
    }

    fn read_file(
        &self,
        path: &str,
        transcript: Option<&Path>,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<String, String> {
        let bytes = match transcript {
            Some(t) if self.transcript && Path::new(path) == t => read_capped(
                std::fs::File::open(t).map_err(|e| format!("cannot read `{path}`: {e}"))?,
            ),
            _ => {
                let (dir, _, rest) = self.locate(path)?;
                let file = dir
                    .open(&rest)
                    .map_err(|e| format!("cannot read `{path}`: {}", refusal(&e)))?;
                read_capped(file)
            }
        }
        .map_err(|e| format!("cannot read `{path}`: {e}"))?;
        let text = String::from_utf8_lossy(&bytes);
        let skip = offset.unwrap_or(1).saturating_sub(1);
        let take = limit.unwrap_or(u64::MAX);
        Ok(text
            .lines()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(usize::try_from(take).unwrap_or(usize::MAX))
            .collect::<Vec<_>>()
            .join("\n"))
    }

    fn list(&self, path: &str) -> Result<String, String> {
        let (dir, _, rest) = self.locate(path)?;
        let mut names = Vec::new();
        for entry in dir
            .read_dir(&rest)
            .map_err(|e| format!("cannot list `{path}`: {}", refusal(&e)))?
            .flatten()
            .take(MAX_RESULTS)
        {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(names.join("\n"))
    }

    fn glob(&self, pattern: &str, path: Option<&str>) -> Result<String, String> {
        let matcher = globset::Glob::new(pattern)
            .map_err(|e| format!("`{pattern}` is not a glob: {e}"))?
            .compile_matcher();
        let (dir, root, rest) = self.locate(path.unwrap_or("."))?;
        let mut found = Vec::new();
        walk(&dir, &rest, &mut |file, _| {
            let under = file.strip_prefix(&rest).unwrap_or(file);
            if matcher.is_match(under) {
                found.push(root.join(file).display().to_string());
            }
            found.len() < MAX_RESULTS
        })?;
        Ok(found.join("\n"))
    }

    fn grep(
        &self,
        pattern: &str,
        path: Option<&str>,
        glob: Option<&str>,
    ) -> Result<String, String> {
        let regex = regex::RegexBuilder::new(pattern)
            .size_limit(MAX_REGEX_BYTES)
            .build()
            .map_err(|e| format!("`{pattern}` is not a regular expression: {e}"))?;
        let only = glob
            .map(|g| globset::Glob::new(g).map(|g| g.compile_matcher()))
            .transpose()
            .map_err(|e| format!("`glob` is not a glob: {e}"))?;
        let (dir, root, rest) = self.locate(path.unwrap_or("."))?;
        let mut lines = Vec::new();
        let mut search = |file: &Path, dir: &Dir| {
            let name = file.file_name().map(Path::new).unwrap_or(file);
            if only
                .as_ref()
                .is_some_and(|m| !m.is_match(name) && !m.is_match(file))
            {
                return true;
            }
            let Ok(bytes) = dir
                .open(file)
                .map_err(|e| e.to_string())
                .and_then(read_capped)
            else {
                return true;
            };
            if bytes.iter().take(8192).any(|b| *b == 0) {
                return true;
            }
            for (number, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
                if regex.is_match(line) {
                    let quoted: String = line.chars().take(MAX_LINE_CHARS).collect();
                    lines.push(format!(
                        "{}:{}: {quoted}",
                        root.join(file).display(),
                        number + 1
                    ));
                    if lines.len() >= MAX_RESULTS {
                        return false;
                    }
                }
            }
            true
        };
        if dir.metadata(&rest).is_ok_and(|m| m.is_file()) {
            search(&rest, &dir);
        } else {
            walk(&dir, &rest, &mut search)?;
        }
        Ok(lines.join("\n"))
    }
}

/// Visit the files under `start` in `dir` (links are not followed, `.git`
/// is skipped), at most [`MAX_WALK_ENTRIES`] entries, until `visit` says
/// stop.
fn walk(dir: &Dir, start: &Path, visit: &mut dyn FnMut(&Path, &Dir) -> bool) -> Result<(), String> {
    let mut pending = vec![start.to_path_buf()];
    let mut budget = MAX_WALK_ENTRIES;
    while let Some(folder) = pending.pop() {
        let entries = dir
            .read_dir(&folder)
            .map_err(|e| format!("cannot list `{}`: {}", folder.display(), refusal(&e)))?;
        for entry in entries.flatten() {
            if budget == 0 {
                return Ok(());
            }
            budget -= 1;
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = if folder == Path::new(".") {
                PathBuf::from(&name)
            } else {
                folder.join(&name)
            };
            if kind.is_dir() && name != ".git" {
                pending.push(path);
            } else if kind.is_file() && !visit(&path, dir) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Up to [`MAX_FILE_BYTES`] of `file`.
fn read_capped(file: impl Read) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Why cap-std refused a path, in the words a model (and the trace) reads.
fn refusal(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        "it leads outside what this hook may read".to_owned()
    } else {
        e.to_string()
    }
}

/// `text` cut at [`MAX_ANSWER_BYTES`] (on a character boundary), with a
/// note when cut.
fn capped(mut text: String) -> String {
    if text.len() > MAX_ANSWER_BYTES {
        let mut end = MAX_ANSWER_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[cut: the answer is longer than 16 KiB]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, ReadOnlyTools) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("project");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/main.rs"), "fn main() {\n    serve()\n}\n").unwrap();
        std::fs::write(dir.join("README.md"), "hello\n").unwrap();
        std::fs::write(root.path().join("secret.txt"), "the secret\n").unwrap();
        let tools = ReadOnlyTools::new(vec![dir], false);
        (root, tools)
    }

    #[test]
    fn each_tool_reads_inside_the_grants() {
        let (root, tools) = project();
        let dir = root.path().join("project");
        let run = |name: &str, input: Value| tools.run(name, &input, None).unwrap();
        assert_eq!(
            run(
                "read_file",
                json!({"path": "src/main.rs", "offset": 2, "limit": 1})
            ),
            "    serve()"
        );
        assert_eq!(
            run("list", json!({"path": dir.display().to_string()})),
            "README.md\nsrc/"
        );
        assert_eq!(
            run("glob", json!({"pattern": "**/*.rs"})),
            dir.join("src/main.rs").display().to_string()
        );
        assert_eq!(
            run("grep", json!({"pattern": "serve\\(", "glob": "*.rs"})),
            format!("{}:2:     serve()", dir.join("src/main.rs").display())
        );
    }

    #[test]
    fn a_path_outside_the_grants_is_refused_however_it_is_spelt() {
        let (root, tools) = project();
        let dir = root.path().join("project");
        std::os::unix::fs::symlink(root.path().join("secret.txt"), dir.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(root.path(), dir.join("up")).unwrap();
        let secret = root.path().join("secret.txt").display().to_string();
        for path in [
            secret.clone(),
            "../secret.txt".to_owned(),
            format!("{}/../secret.txt", dir.display()),
            "link.txt".to_owned(),
            "up/secret.txt".to_owned(),
            "/etc/passwd".to_owned(),
        ] {
            let refused = tools.run("read_file", &json!({"path": path}), None);
            assert!(refused.is_err(), "{path} was read: {refused:?}");
        }
        let grep = tools.run("grep", &json!({"pattern": "secret", "path": "up"}), None);
        assert!(
            grep.is_err() || grep.unwrap().is_empty(),
            "grep followed a link out"
        );
        let no_grants = ReadOnlyTools::new(Vec::new(), false);
        assert!(
            no_grants
                .run("list", &json!({"path": "."}), None)
                .unwrap_err()
                .contains("nothing")
        );
        assert!(
            tools
                .run("shell", &json!({"command": "cat /etc/passwd"}), None)
                .unwrap_err()
                .contains("no tool")
        );
    }

    #[test]
    fn the_transcript_is_read_only_when_granted() {
        let (root, tools) = project();
        let transcript = root.path().join("secret.txt");
        let input = json!({"path": transcript.display().to_string()});
        assert!(tools.run("read_file", &input, Some(&transcript)).is_err());
        let granted = ReadOnlyTools::new(tools.dirs.clone(), true);
        assert_eq!(
            granted.run("read_file", &input, Some(&transcript)).unwrap(),
            "the secret"
        );
    }

    #[test]
    fn a_long_answer_is_cut_with_a_note() {
        let cut = capped("é".repeat(MAX_ANSWER_BYTES));
        assert!(cut.len() < MAX_ANSWER_BYTES + 64 && cut.ends_with("longer than 16 KiB]"));
    }
}
