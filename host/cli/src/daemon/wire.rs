//! What `hook` (or `wasm-hooks-hook`) and the daemon say to each other over
//! the socket: one JSON request from the client (then it shuts its side),
//! one JSON reply.

use std::borrow::Cow;
use std::io::{Read, Write};

use std::os::unix::net::UnixStream;

use serde::{Deserialize, Serialize};

use super::place::{Place, effective_uid, peer_uid};

/// The largest request a daemon reads: an event with a tool's whole output
/// can be megabytes.
pub(crate) const MAX_REQUEST: u64 = 64 << 20;

/// One `hook` invocation, forwarded (borrowed by the client, owned by
/// the daemon).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request<'a> {
    /// The key of the daemon the client means (see `place`): a daemon with
    /// another key declines.
    pub(crate) key: Cow<'a, str>,
    /// The client's arguments, its program name first.
    pub(crate) argv: Vec<String>,
    /// What the client read on stdin.
    pub(crate) stdin: Cow<'a, str>,
    /// The client's per-session variables (`place::REQUEST_VARIABLES`),
    /// each with its value or unset.
    #[serde(default)]
    pub(crate) env: Vec<(String, Option<String>)>,
}

/// The daemon's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub(crate) enum Reply {
    /// The hooks ran: print these and exit with this code.
    Answered {
        /// For stdout.
        stdout: String,
        /// For stderr.
        stderr: String,
        /// The exit code.
        exit: u8,
    },
    /// Nothing ran; the client answers in-process.
    Declined {
        /// Why, for the client's log.
        why: String,
    },
}

/// Write `message` as JSON on `stream`.
///
/// # Errors
/// When the stream cannot be written.
pub(crate) fn send(stream: &mut UnixStream, message: &impl Serialize) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    stream.write_all(&bytes)
}

/// The first read's size: a request (an event and a command line), a
/// reply or an event on stdin usually fits.
pub(crate) const RECEIVE_BUFFER: usize = 16 * 1024;

/// Read one JSON message from `stream`, up to its end and at most `limit`
/// bytes.
///
/// # Errors
/// When the stream cannot be read, is longer than `limit`, or is not such
/// a message.
pub(crate) fn receive<T: for<'de> Deserialize<'de>>(
    stream: &mut UnixStream,
    limit: u64,
) -> std::io::Result<T> {
    // Room for a usual message at once: growing from empty reads it in
    // 32, 32, 64, 128… byte pieces, a system call each.
    let mut bytes = Vec::with_capacity(RECEIVE_BUFFER);
    stream.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "a message longer than {limit} bytes"
        )));
    }
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}

/// Send `request` to the daemon at `place` and read its reply: `None` when
/// no daemon took it (none listening, another user's, or one that closed
/// without a word: nothing ran).
pub(crate) fn exchange(place: &Place, request: &Request<'_>) -> std::io::Result<Option<Reply>> {
    let Ok(mut stream) = UnixStream::connect(&place.socket) else {
        return Ok(None);
    };
    if peer_uid(&stream).ok() != Some(effective_uid()) {
        // Another user's (only root could put one in this user's private
        // directory): not used.
        return Ok(None);
    }
    // A daemon that declines at once (busy) may close before reading: the
    // send fails, and its reply, if any, is still read.
    let _ = send(&mut stream, request);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Sized as a request's buffer: a reply is read in one or two calls,
    // not grown from 32 bytes a call at a time.
    let mut bytes = Vec::with_capacity(RECEIVE_BUFFER);
    let _ = stream.read_to_end(&mut bytes);
    if bytes.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(std::io::Error::other)
}
