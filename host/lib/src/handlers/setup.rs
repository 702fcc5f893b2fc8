//! [`SetupError`]: why a hook of the kinds this library adds (command,
//! http, inline, prompt) cannot be set up from its settings, as values a
//! program can match on; the hook-file loader shows them with the file and
//! entry.

/// A hook that cannot be set up from what it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A URL allowlist pattern that is not a valid glob.
    #[error("bad URL pattern `{pattern}`: {message}")]
    UrlPattern {
        /// The pattern.
        pattern: String,
        /// What the glob parser said.
        message: String,
    },
    /// An HTTP hook's URL outside the engine's allowlist.
    #[error("`{url}` is not in the engine's URL allowlist ({})", allowed.join(", "))]
    UrlNotAllowed {
        /// The URL.
        url: String,
        /// The allowlist's patterns.
        allowed: Vec<String>,
    },
    /// A header that names an environment variable not in `allowed_env`.
    #[error("header `{header}` names `${variable}`, which is not in `allowed_env`")]
    VariableNotAllowed {
        /// The header.
        header: String,
        /// The variable.
        variable: String,
    },
    /// A `{{placeholder}}` that names nothing known.
    #[error("unknown template `{{{{{name}}}}}` (known: {known})")]
    UnknownTemplate {
        /// The placeholder's name.
        name: String,
        /// The names a template may use.
        known: &'static str,
    },
    /// A `{{…}}` template of a shell command inside quotes or a
    /// here-document, where its value could end the quotes.
    #[error(
        "the `{{{{…}}}}` template at byte {at} of the command stands inside {inside}, where its value could end them and run as a command: write it without quotes (values are quoted for you: `echo {{{{tool_name}}}}`, not `echo \"{{{{tool_name}}}}\"`), or read the event from stdin"
    )]
    QuotedTemplate {
        /// Its byte offset in the command.
        at: usize,
        /// `single quotes`, `double quotes` or `a here-document`.
        inside: &'static str,
    },
    /// A `{{…}}` template handed to a command that reads its value as code
    /// again (`eval`, `sh -c`), where quoting cannot protect it.
    #[error(
        "a `{{{{…}}}}` template is handed to {by}, which reads its value as code again (quoting cannot protect it): pass it as an argument (`sh -c 'echo \"$1\"' _ {{{{tool_name}}}}`) or read the event from stdin"
    )]
    ReparsedTemplate {
        /// The command that reads it again.
        by: String,
    },
    /// A PowerShell command line with `{{…}}` templates.
    #[error(
        "`{{{{…}}}}` templates are quoted for POSIX shells: with `shell: powershell`, read the event from stdin instead"
    )]
    ShellTemplates,
    /// A prompt hook with an empty prompt.
    #[error("a prompt hook needs a non-empty `prompt`")]
    EmptyPrompt,
    /// Inline rules that are not a list of rule objects.
    #[error("rules{path}: {message}")]
    Rules {
        /// Where in `rules` (`[0].operator`), empty for the whole list.
        path: String,
        /// What serde said.
        message: String,
    },
    /// An inline hook without rules.
    #[error("an inline hook needs at least one rule in `rules`")]
    NoRules,
    /// One inline rule that cannot be compiled.
    #[error("rules[{index}]: {problem}")]
    Rule {
        /// Its place in `rules`.
        index: usize,
        /// What is wrong with it.
        problem: RuleProblem,
    },
    /// A profile-style matcher entry that cannot be compiled.
    #[error("{0}")]
    Matcher(RuleProblem),
}

/// What is wrong with one inline rule or matcher entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleProblem {
    /// An operator that compares with text, given something else.
    #[error("`{operator}` needs a string `value`")]
    NeedsText {
        /// The operator.
        operator: String,
    },
    /// `in` without a list.
    #[error("`in` needs a list `value`")]
    NeedsList,
    /// A regex that does not compile.
    #[error("bad regex `{pattern}`: {message}")]
    BadRegex {
        /// The pattern.
        pattern: String,
        /// The complaint, on one line.
        message: String,
    },
    /// A glob that does not compile.
    #[error("bad glob `{pattern}`: {message}")]
    BadGlob {
        /// The pattern.
        pattern: String,
        /// The complaint.
        message: String,
    },
    /// A `modify` rule without its field or value.
    #[error("`modify` needs `modify_field` and `modify_value`")]
    ModifyNeedsFields,
    /// A `modify_field` outside the tool's input and output.
    #[error(
        "`modify_field` must be inside the tool input (`args.…` or `tool_input.…`) or the tool's output (`result`, `result.…`), not `{field}`"
    )]
    ModifyOutside {
        /// The field.
        field: String,
    },
    /// A matcher entry's `match` that is not `{tool, args}`.
    #[error("`match`: {message}")]
    Match {
        /// What serde said.
        message: String,
    },
    /// A matcher argument that is not a glob string.
    #[error("`match.args.{field}` must be a glob string")]
    MatchArgument {
        /// The argument.
        field: String,
    },
    /// An action the entry cannot take.
    #[error("{message}")]
    Action {
        /// Which, and what is expected.
        message: String,
    },
}
