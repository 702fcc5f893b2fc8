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
