//! Which bytes of a text file a rank reads when the ranks read it in parts: the data region
//! is split by `block_range`, and a rank owns exactly the lines whose first byte lies in its
//! range (it skips a partial first line and reads past its end to finish its last one), so
//! the ranks' spans tile the region line by line. Used by the graph readers (edge lists,
//! Matrix Market) and the mesh readers (.node, .ele).

use std::fs::File;
use std::io;
use std::ops::Range;

/// Bytes read at a time when scanning for a newline or counting lines.
const SCAN_BYTES: usize = 64 << 10;

/// Positional reads from a file or (in tests) an in-memory byte string.
pub trait ReadAt: Sync {
    /// Fill `buf` with the bytes starting at `offset`; fail if they are not all there.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl ReadAt for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// The bytes of the lines whose first byte lies in `part` (a sub-range of the data region
/// `data`): from the first line start at or after `part.start` to the end of the line that
/// holds byte `part.end - 1`. A line starts at `data.start` or right after a '\n'.
pub fn owned_span<R: ReadAt + ?Sized>(
    src: &R,
    data: &Range<u64>,
    part: Range<u64>,
) -> io::Result<Range<u64>> {
    if part.is_empty() {
        return Ok(part.start..part.start);
    }
    let start = if part.start == data.start {
        part.start
    } else {
        after_newline(src, part.start - 1, data.end)?
    };
    if start >= part.end {
        return Ok(start..start);
    }
    Ok(start..after_newline(src, part.end - 1, data.end)?)
}

/// Position just after the first '\n' at or after `from`, or `limit` if there is none.
fn after_newline<R: ReadAt + ?Sized>(src: &R, from: u64, limit: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; SCAN_BYTES];
    let mut pos = from;
    while pos < limit {
        let len = (limit - pos).min(SCAN_BYTES as u64) as usize;
        src.read_exact_at(&mut buf[..len], pos)?;
        if let Some(i) = buf[..len].iter().position(|&b| b == b'\n') {
            return Ok(pos + i as u64 + 1);
        }
        pos += len as u64;
    }
    Ok(limit)
}

/// 1-based line number of the line starting at byte `offset`: one plus the number of '\n'
/// before it. Reads the whole prefix, so it is meant for the error path only.
pub fn line_number<R: ReadAt + ?Sized>(src: &R, offset: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; SCAN_BYTES];
    let mut lines = 1;
    let mut pos = 0;
    while pos < offset {
        let len = (offset - pos).min(SCAN_BYTES as u64) as usize;
        src.read_exact_at(&mut buf[..len], pos)?;
        lines += buf[..len].iter().filter(|&&b| b == b'\n').count() as u64;
        pos += len as u64;
    }
    Ok(lines)
}
