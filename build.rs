//! Records the git revision the binary was built from, for the provenance of result files.
fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
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
