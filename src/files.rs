//! Files a user names (decks, graphs, meshes, schedules, outputs) must be regular files.

use std::io;
use std::path::Path;

/// Refuse `path` where it exists and is not a regular file (a missing one passes: opening it
/// then says so). Decided from its metadata before anything opens it: opening a FIFO for
/// reading blocks until a writer comes, a device such as /dev/zero never ends, and a result
/// renamed over either would replace it.
pub fn must_be_regular(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a socket"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what}, not a regular file: name a regular file"),
    ))
}
