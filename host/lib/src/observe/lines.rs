//! Reading a log one line at a time in bounded memory: a line longer than
//! the cap is skipped and counted, never held whole, so a huge or hostile
//! log costs at most the cap.

use std::io::{self, BufRead};

/// The longest line read whole (8 MiB); a longer one is skipped.
pub(crate) const MAX_LINE: usize = 8 << 20;

/// One line of a log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// The line, without its newline.
    Whole(&'a [u8]),
    /// A line past the cap, skipped.
    TooLong,
}

/// Call `each` with every line of `reader` (the last one too when it has
/// no newline), lines longer than `max` bytes as [`Line::TooLong`].
///
/// # Errors
/// When `reader` fails.
pub(crate) fn each_line(
    mut reader: impl BufRead,
    max: usize,
    mut each: impl FnMut(Line<'_>),
) -> io::Result<()> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            if too_long {
                each(Line::TooLong);
            } else if !line.is_empty() {
                each(Line::Whole(&line));
            }
            return Ok(());
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        if !too_long && line.len() + chunk.len() > max {
            too_long = true;
            line = Vec::new();
        } else if !too_long {
            line.extend_from_slice(chunk);
        }
        let used = newline.map_or(buf.len(), |at| at + 1);
        reader.consume(used);
        if newline.is_some() {
            if too_long {
                each(Line::TooLong);
            } else {
                each(Line::Whole(&line));
            }
            line.clear();
            too_long = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8], max: usize) -> Vec<String> {
        let mut seen = Vec::new();
        // A tiny buffer, so lines cross reads.
        let reader = io::BufReader::with_capacity(3, text);
        each_line(reader, max, |line| {
            seen.push(match line {
                Line::Whole(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                Line::TooLong => "<too long>".to_owned(),
            });
        })
        .unwrap();
        seen
    }

    #[test]
    fn lines_cross_reads_and_a_last_line_needs_no_newline() {
        assert_eq!(lines(b"ab\ncdefg\n\nh", 100), ["ab", "cdefg", "", "h"]);
    }

    #[test]
    fn a_line_past_the_cap_is_skipped_whole_and_the_next_one_read() {
        assert_eq!(
            lines(b"ok\n0123456789\nnext\n0123456789", 5),
            ["ok", "<too long>", "next", "<too long>"]
        );
    }
}
