//! The tool an event is about, its input read into one shape whatever the
//! agent: Claude Code's and Codex's tool names (`Bash`, `Read`, `Write`,
//! `Edit`, `MultiEdit`, `Glob`, `Grep`, `WebFetch`, `WebSearch`) and Gemini
//! CLI's (`run_shell_command`, `read_file`, `write_file`, `replace`,
//! `glob`, `search_file_content`, `web_fetch`, `google_web_search`). Start
//! from [`Event::tool`](crate::Event::tool).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Error, Result};

/// A tool call, by what it does.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Tool {
    /// Run a shell command (`Bash`; Gemini CLI's `run_shell_command`).
    Shell {
        /// The command line.
        command: String,
    },
    /// Read a file (`Read`, `read_file`).
    Read {
        /// The file.
        path: String,
    },
    /// Write a whole file (`Write`, `write_file`).
    Write {
        /// The file.
        path: String,
        /// What is written.
        content: String,
    },
    /// Replace text in a file (`Edit`, `MultiEdit`, `replace`).
    Edit {
        /// The file.
        path: String,
        /// Each replacement, in order.
        edits: Vec<Edit>,
    },
    /// Find files by pattern (`Glob`, `glob`).
    Glob {
        /// The pattern.
        pattern: String,
        /// Where to look, when given.
        path: Option<String>,
    },
    /// Search file contents (`Grep`, `search_file_content`).
    Grep {
        /// The pattern.
        pattern: String,
        /// Where to look, when given.
        path: Option<String>,
    },
    /// Fetch a web page (`WebFetch`, `web_fetch`).
    WebFetch {
        /// The URL (Gemini CLI puts URLs in its prompt instead).
        url: Option<String>,
        /// What to do with it.
        prompt: Option<String>,
    },
    /// Search the web (`WebSearch`, `google_web_search`).
    WebSearch {
        /// The query.
        query: String,
    },
    /// Any other tool: its name and input as sent.
    Other {
        /// The tool's name.
        name: String,
        /// Its input.
        input: Value,
    },
}

/// One replacement of an edit.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Edit {
    /// The text replaced.
    #[serde(rename = "old_string")]
    pub old: String,
    /// The text put instead.
    #[serde(rename = "new_string")]
    pub new: String,
    /// Whether every occurrence is replaced.
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Deserialize)]
struct ShellInput {
    command: String,
}

#[derive(Deserialize)]
struct PathInput {
    #[serde(alias = "absolute_path")]
    file_path: String,
}

#[derive(Deserialize)]
struct WriteInput {
    file_path: String,
    content: String,
}

#[derive(Deserialize)]
struct EditInput {
    file_path: String,
    #[serde(flatten)]
    edit: Edit,
}

#[derive(Deserialize)]
struct MultiEditInput {
    file_path: String,
    edits: Vec<Edit>,
}

#[derive(Deserialize)]
struct SearchInput {
    pattern: String,
    #[serde(default, alias = "dir_path")]
    path: Option<String>,
}

#[derive(Deserialize)]
struct FetchInput {
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
}

#[derive(Deserialize)]
struct QueryInput {
    query: String,
}

impl Tool {
    /// The tool `name` called with `input`.
    ///
    /// # Errors
    /// When the input of a tool this module knows lacks a field it needs,
    /// or has one of the wrong type: the message names the tool and field.
    pub fn read(name: &str, input: Value) -> Result<Self> {
        fn parse<T: DeserializeOwned>(name: &str, input: Value) -> Result<T> {
            serde_json::from_value(input).map_err(|e| Error::new(format!("`{name}` input: {e}")))
        }
        Ok(match name {
            "Bash" | "run_shell_command" => Tool::Shell {
                command: parse::<ShellInput>(name, input)?.command,
            },
            "Read" | "read_file" => Tool::Read {
                path: parse::<PathInput>(name, input)?.file_path,
            },
            "Write" | "write_file" => {
                let i: WriteInput = parse(name, input)?;
                Tool::Write {
                    path: i.file_path,
                    content: i.content,
                }
            }
            "Edit" | "replace" => {
                let i: EditInput = parse(name, input)?;
                Tool::Edit {
                    path: i.file_path,
                    edits: vec![i.edit],
                }
            }
            "MultiEdit" => {
                let i: MultiEditInput = parse(name, input)?;
                Tool::Edit {
                    path: i.file_path,
                    edits: i.edits,
                }
            }
            "Glob" | "glob" => {
                let i: SearchInput = parse(name, input)?;
                Tool::Glob {
                    pattern: i.pattern,
                    path: i.path,
                }
            }
            "Grep" | "search_file_content" | "grep" => {
                let i: SearchInput = parse(name, input)?;
                Tool::Grep {
                    pattern: i.pattern,
                    path: i.path,
                }
            }
            "WebFetch" | "web_fetch" => {
                let i: FetchInput = parse(name, input)?;
                Tool::WebFetch {
                    url: i.url,
                    prompt: i.prompt,
                }
            }
            "WebSearch" | "google_web_search" => Tool::WebSearch {
                query: parse::<QueryInput>(name, input)?.query,
            },
            _ => Tool::Other {
                name: name.to_owned(),
                input,
            },
        })
    }

    /// The file or folder the call reads, writes or searches, when it names
    /// one.
    pub fn path(&self) -> Option<&str> {
        match self {
            Tool::Read { path } | Tool::Write { path, .. } | Tool::Edit { path, .. } => Some(path),
            Tool::Glob { path, .. } | Tool::Grep { path, .. } => path.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_agents_names_read_into_one_shape() {
        let shell = Tool::Shell {
            command: "ls".into(),
        };
        assert_eq!(Tool::read("Bash", json!({"command": "ls"})).unwrap(), shell);
        assert_eq!(
            Tool::read(
                "run_shell_command",
                json!({"command": "ls", "description": "x"})
            )
            .unwrap(),
            shell
        );
        let read = Tool::read("read_file", json!({"absolute_path": "/a"})).unwrap();
        assert_eq!(read.path(), Some("/a"));
        let edit = Tool::read(
            "MultiEdit",
            json!({"file_path": "f", "edits": [{"old_string": "a", "new_string": "b"}]}),
        )
        .unwrap();
        assert_eq!(
            edit,
            Tool::Edit {
                path: "f".into(),
                edits: vec![Edit {
                    old: "a".into(),
                    new: "b".into(),
                    replace_all: false
                }]
            }
        );
        assert!(matches!(
            Tool::read("mcp__x__y", json!({"a": 1})).unwrap(),
            Tool::Other { .. }
        ));
    }

    #[test]
    fn a_known_tool_with_a_wrong_input_names_the_tool_and_field() {
        let error = Tool::read("Write", json!({"file_path": "f"})).unwrap_err();
        assert!(error.message().contains("`Write` input"), "{error}");
        assert!(error.message().contains("content"), "{error}");
    }
}
