//! Seeing what the guards do: how each hook has answered, read back from
//! the audit log ([`stats`]); what a hook file would have done over past
//! sessions ([`replay`]); with the bounded line reader every log reader
//! here shares ([`lines`]).

pub(crate) mod feed;
pub(crate) mod lines;
pub(crate) mod page;
pub(crate) mod replay;
pub(crate) mod stats;

pub use feed::{AuditNotes, DecisionFeed, DecisionNote, HookNote};
pub use page::{PageState, routes as page_routes};
pub use replay::logs::{LogFormat, read as read_session_log};
pub use replay::{
    Example, Happened, HookReplay, Recorded, ReplayOptions, ReplayReport, Replayer,
    SkippedInReplay, SourceRead,
};
pub use stats::{AuditStats, Elapsed, HookStats};
