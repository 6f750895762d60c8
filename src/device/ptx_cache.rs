//! A disk cache of the PTX that NVRTC makes. Every rank of every run compiles each kernel file
//! it uses (a second or more for the large ones, at every start); with the cache the first run
//! on a node compiles and the others read. The key is the program text, the architecture, the
//! options and NVRTC's version, so an edited kernel, another GPU or another CUDA misses. A file
//! is written under a temporary name and renamed, so ranks starting together never read half
//! of one; a file that cannot be read or written is compiled again, never an error.
//!
//! `TESSERA_KERNEL_CACHE` names the folder (`off` turns the cache off); by default
//! `$XDG_CACHE_HOME/tessera/kernels`, else `$HOME/.cache/tessera/kernels`.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// The cache folder from the environment, or `None` when the cache is off or no home is known.
pub fn folder() -> Option<PathBuf> {
    match std::env::var_os("TESSERA_KERNEL_CACHE") {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
            .map(|base| base.join("tessera").join("kernels")),
    }
}

/// The cache file of one program: 128 bits of hash of everything that shapes its PTX (two
/// 64-bit hashes with different leading bytes; a collision would need both to collide).
fn file_for(folder: &Path, key: &[&str]) -> PathBuf {
    let half = |salt: u8| {
        let mut h = DefaultHasher::new();
        salt.hash(&mut h);
        key.hash(&mut h);
        h.finish()
    };
    folder.join(format!("{:016x}{:016x}.ptx", half(0), half(1)))
}

/// The PTX of the program `key` names: read from `folder` if there, else made by `compile`
/// and stored there.
pub fn cached<E>(
    folder: Option<&Path>,
    key: &[&str],
    compile: impl FnOnce() -> Result<String, E>,
) -> Result<String, E> {
    let Some(folder) = folder else {
        return compile();
    };
    let file = file_for(folder, key);
    if let Ok(ptx) = std::fs::read_to_string(&file) {
        // A PTX file from NVRTC always names its target; anything else is not ours.
        if ptx.contains("\n.target ") {
            return Ok(ptx);
        }
    }
    let ptx = compile()?;
    if let Err(e) = store(&file, &ptx) {
        log::debug!("kernel cache: cannot write {}: {e}", file.display());
    }
    Ok(ptx)
}

/// Write `ptx` to `file` atomically: a name of this process first, then a rename.
fn store(file: &Path, ptx: &str) -> std::io::Result<()> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let temp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temp, ptx)
        .and_then(|()| std::fs::rename(&temp, file))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const PTX: &str = "//\n.version 9.0\n.target sm_90\n.address_size 64\n";

    #[test]
    fn a_program_is_compiled_once_then_read_and_a_changed_key_compiles_again() {
        let dir = std::env::temp_dir().join(format!("tessera-ptx-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let compiles = Cell::new(0);
        let compile = |text: &str| {
            compiles.set(compiles.get() + 1);
            Ok::<_, ()>(format!("{PTX}// {text}\n"))
        };
        let first = cached(Some(&dir), &["a.cu", "sm_90"], || compile("a"));
        let again = cached(Some(&dir), &["a.cu", "sm_90"], || compile("b"));
        assert_eq!((first.clone(), compiles.get()), (again, 1));
        let other_arch = cached(Some(&dir), &["a.cu", "sm_80"], || compile("c")).unwrap();
        assert_eq!((other_arch.ends_with("// c\n"), compiles.get()), (true, 2));
        // A damaged file is compiled again and replaced.
        std::fs::write(file_for(&dir, &["a.cu", "sm_90"]), "half a fi").unwrap();
        let repaired = cached(Some(&dir), &["a.cu", "sm_90"], || compile("d")).unwrap();
        assert_eq!((repaired.ends_with("// d\n"), compiles.get()), (true, 3));
        let entries = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(entries, 2, "no temporary file is left behind");
        // Off: always compiled, nothing written.
        let off = cached(None, &["a.cu", "sm_90"], || compile("e")).unwrap();
        assert_eq!((off.ends_with("// e\n"), compiles.get()), (true, 4));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_compile_is_returned_and_not_stored() {
        let dir = std::env::temp_dir().join(format!("tessera-ptx-fail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let failed = cached(Some(&dir), &["bad.cu"], || Err::<String, _>("syntax"));
        assert_eq!(failed, Err("syntax"));
        assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().count() == 0);
    }
}
