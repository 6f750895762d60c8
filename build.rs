//! Records the git revision the binary was built from, for the provenance of result files,
//! and lists every `kernels/*.cu` file for `device::KERNELS`, so a workload's new kernel file
//! needs no wiring.
fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `$OUT_DIR/kernels.rs`: the kernel files by name, each with its source, in name order.
fn list_kernels() {
    let dir = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("kernels");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the kernels directory")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".cu"))
        .collect();
    files.sort();
    let entries: String = files
        .iter()
        .map(|f| format!("    ({f:?}, include_str!({:?})),\n", dir.join(f)))
        .collect();
    let out =
        std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets it")).join("kernels.rs");
    std::fs::write(out, format!("&[\n{entries}]\n")).expect("OUT_DIR is writable");
    println!("cargo:rerun-if-changed={}", dir.display());
}

fn main() {
    list_kernels();
    let rev = git(&["describe", "--always", "--dirty", "--abbrev=12"]);
    println!(
        "cargo:rustc-env=TESSERA_GIT_REVISION={}",
        rev.as_deref().unwrap_or("unknown")
    );
    // Rebuild when HEAD or the index moves; ask git where they are (worktrees keep them apart).
    for file in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", file]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
