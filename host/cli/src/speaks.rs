//! What `wasm-hooks hook` speaks (`--protocol`): the dialect of an agent
//! `install` knows, or wasm-hooks' own canonical one (`canonical`, or
//! `none`) for a program that is none of them.

use std::sync::LazyLock;

use clap::ValueEnum;
use clap::builder::PossibleValue;
use wasm_hooks::Protocol;

use super::install::Agent;

/// An agent's dialect, or the canonical one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Speaks {
    /// The agent's own event and answer.
    Agent(Agent),
    /// The canonical event in, the whole outcome out (as `run --json`).
    Canonical,
}

impl Speaks {
    /// The library's protocol for it.
    pub(crate) fn protocol(self) -> Protocol {
        match self {
            Speaks::Agent(agent) => agent.protocol(),
            Speaks::Canonical => Protocol::Canonical,
        }
    }
}

impl ValueEnum for Speaks {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<Speaks>> = LazyLock::new(|| {
            Agent::value_variants()
                .iter()
                .map(|agent| Speaks::Agent(*agent))
                .chain([Speaks::Canonical])
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            Speaks::Agent(agent) => agent.to_possible_value(),
            Speaks::Canonical => Some(PossibleValue::new("canonical").alias("none").help(
                "wasm-hooks' own: the canonical event in, the whole outcome out (as `run --json`)",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--protocol`'s words are the library's (the language bindings'
    /// `agent=`), each naming the same protocol.
    #[test]
    fn every_protocol_word_is_the_librarys() {
        for speaks in Speaks::value_variants() {
            let value = speaks.to_possible_value().unwrap();
            for word in value.get_name_and_aliases() {
                assert_eq!(Protocol::from_word(word), Some(speaks.protocol()), "{word}");
            }
        }
        assert_eq!(Speaks::value_variants().len(), Protocol::ALL.len());
    }
}
