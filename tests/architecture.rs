//! ARCHITECTURE.md names every source file of both crates, and names no file that is gone: a
//! file added under `src/` or `core/` without its line in the map fails here.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `.rs` file under `dir`, as a path relative to the repository root.
fn rust_files(root: &Path, dir: &str, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}")) {
        let path = entry.unwrap().path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            rust_files(root, &rel, out);
        } else if rel.ends_with(".rs") {
            out.insert(rel);
        }
    }
}

/// The paths the map names in backticks that look like source files.
fn named_files(map: &str) -> BTreeSet<String> {
    map.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(".rs") && !s.contains('<'))
        .filter(|s| s.starts_with("src/") || s.starts_with("core/"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_map_names_every_source_file_and_no_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut files = BTreeSet::new();
    for dir in ["src", "core/src", "core/benches", "core/examples"] {
        rust_files(root, dir, &mut files);
    }
    let named = named_files(&map);
    let missing: Vec<&String> = files.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name {missing:?}"
    );
    let stale: Vec<&String> = named.difference(&files).collect();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {stale:?}"
    );
    assert!(files.len() > 60, "only {} files found", files.len());
}

#[test]
fn the_check_sees_a_missing_file() {
    let map = "| `src/lib.rs` | the entry point |";
    let named = named_files(map);
    assert!(named.contains("src/lib.rs"));
    assert!(!named.contains("src/redis.rs"));
}
