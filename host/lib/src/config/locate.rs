//! Where in a hook file an entry or field is: line and column for problems
//! found after parsing (a bad regex, a missing plugin), which serde cannot
//! tell. The file is read a second time by a YAML parser that keeps
//! positions; JSON is YAML's flow syntax, so one locator serves both. Best
//! effort: a path it cannot find simply has no position. The second read
//! happens only when a problem is to be placed: a file without any costs
//! nothing (it was a fifth of loading one).

use std::cell::OnceCell;

use saphyr::{LoadableYamlNode, MarkedYaml};

/// Positions of the nodes of one hook file.
pub(super) struct Locator<'a> {
    text: &'a str,
    root: OnceCell<Option<MarkedYaml<'a>>>,
}

impl<'a> Locator<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            root: OnceCell::new(),
        }
    }

    /// The 1-based line and column of `path` (`hooks.PreToolUse[0].hooks[1]`
    /// or `hooks[2].event`).
    pub(super) fn find(&self, path: &str) -> Option<(usize, usize)> {
        let root = self.root.get_or_init(|| {
            MarkedYaml::load_from_str(self.text)
                .ok()
                .and_then(|docs| docs.into_iter().next())
        });
        let mut node = root.as_ref()?;
        for segment in path.split('.') {
            let (key, indices) = match segment.find('[') {
                Some(at) => (&segment[..at], &segment[at..]),
                None => (segment, ""),
            };
            if !key.is_empty() {
                node = node.data.as_mapping_get(key)?;
            }
            for index in indices.split('[').filter(|s| !s.is_empty()) {
                let index: usize = index.strip_suffix(']')?.parse().ok()?;
                node = node.data.as_sequence_get(index)?;
            }
        }
        let start = node.span.start;
        Some((start.line(), start.col() + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_yaml_entries_are_found() {
        let json = "{\"hooks\": {\n  \"PreToolUse\": [\n    {\"matcher\": \"(\",\n     \"hooks\": [{\"type\": \"wasm\"}, {\"type\": \"wasm\", \"plugin\": \"x\"}]}]}}";
        let at = Locator::new(json);
        assert_eq!(at.find("hooks.PreToolUse[0].matcher"), Some((3, 17)));
        assert_eq!(
            at.find("hooks.PreToolUse[0].hooks[1].plugin").map(|p| p.0),
            Some(4)
        );
        assert_eq!(at.find("hooks.Stop[0]"), None);
        let yaml =
            "hooks:\n  - event: Stop\n    type: wasm\n  - event: tool:pre\n    type: command\n";
        let at = Locator::new(yaml);
        assert_eq!(at.find("hooks[1].event"), Some((4, 12)));
        assert_eq!(at.find("hooks[1]").map(|p| p.0), Some(4));
    }
}
