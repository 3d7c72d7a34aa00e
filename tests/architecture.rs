//! The shape of the code: ARCHITECTURE.md names every source file of both crates and no file
//! that is gone (a file added under `src/` or `core/` without its line in the map fails here),
//! no import circle, the C API in one folder, short functions and files, every test declared.

use std::collections::{BTreeMap, BTreeSet};
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
        .filter(|s| s.starts_with("src/") || s.starts_with("core/") || s.starts_with("cli/"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_map_names_every_source_file_and_no_other() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut files = BTreeSet::new();
    for dir in [
        "src",
        "core/src",
        "core/benches",
        "core/examples",
        "cli/src",
    ] {
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

// ---------------------------------------------------------------------------------------------
// The shape of the code: the bars a maintainer holds it to, checked on every test run.

/// Rust source with its comments, string and character literals blanked (so that a path in a
/// doc comment or a message is not read as code) and its test-only items removed.
fn production_code(source: &str) -> String {
    let blanked = blank_comments_and_literals(source);
    remove_test_items(&blanked)
}

fn blank_comments_and_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    // Keeps line breaks, so that line numbers still count.
    let blank = |c: char, out: &mut String| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(chars[i], &mut out);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(chars[i], &mut out);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !is_ident_char(chars[i - 1]))
        {
            // A raw string: r"…" or r#"…"#.
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            for &ch in &chars[i + 1..=j] {
                blank(ch, &mut out);
            }
            i = j + 1;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '"' && (1..=hashes).all(|h| chars.get(i + h) == Some(&'#')) {
                    out.push('"');
                    for _ in 0..hashes {
                        out.push(' ');
                    }
                    i += 1 + hashes;
                    break;
                }
                blank(chars[i], &mut out);
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(chars[i], &mut out);
                    i += 1;
                }
                if i < chars.len() {
                    blank(chars[i], &mut out);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a), left as it is.
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push_str("' ");
                    for _ in i + 2..end {
                        out.push(' ');
                    }
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The index just past the block or statement that starts at or after `from`: through the `;`
/// when one comes before any `{`, else through the `}` that closes the first `{`.
fn item_end(code: &str, from: usize) -> usize {
    let bytes = code.as_bytes();
    let mut depth = 0usize;
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b';' if depth == 0 => return i + 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// Blanks every item under `#[cfg(test)]` (keeping line breaks).
fn remove_test_items(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]") {
        let start = from + at;
        let end = item_end(&out, start + "#[cfg(test)]".len());
        let blanked: String = out[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(start..end, &blanked);
        from = end;
    }
    out
}

/// One source file of a crate, as the import checks see it.
struct SourceFile {
    /// Path from the repository root.
    path: String,
    /// Its module path inside the crate (empty for lib.rs).
    module: Vec<String>,
    /// Whether it is a `lib.rs` or `mod.rs` (whose children are its submodules).
    owns_children: bool,
    code: String,
    /// Names its `use` declarations bring in, each with the absolute path it stands for.
    aliases: BTreeMap<String, Vec<String>>,
}

/// The files of the crate whose root is `dir` (`src` or `core/src`), production code only:
/// the `tests.rs` files of the kinds are test modules.
fn crate_files(root: &Path, dir: &str) -> BTreeMap<Vec<String>, SourceFile> {
    let mut paths = BTreeSet::new();
    rust_files(root, dir, &mut paths);
    let mut files = BTreeMap::new();
    for path in paths.into_iter().filter(|p| !p.ends_with("/tests.rs")) {
        let inner = path[dir.len() + 1..path.len() - 3].to_string();
        let mut module: Vec<String> = inner.split('/').map(str::to_string).collect();
        let owns_children = matches!(module.last().map(String::as_str), Some("mod" | "lib"));
        if owns_children {
            module.pop();
        }
        let source = std::fs::read_to_string(root.join(&path)).expect("a source file");
        let code = production_code(&source);
        files.insert(
            module.clone(),
            SourceFile {
                path,
                module,
                owns_children,
                code,
                aliases: BTreeMap::new(),
            },
        );
    }
    let modules: BTreeSet<Vec<String>> = files.keys().cloned().collect();
    for file in files.values_mut() {
        let mut aliases = BTreeMap::new();
        for tree in use_trees(&file.code) {
            let mut paths = Vec::new();
            expand_use_tree(&tree, Vec::new(), &mut paths);
            for (alias, path) in paths {
                if let Some(absolute) = absolute_path(file, &modules, &path) {
                    aliases.insert(alias, absolute);
                }
            }
        }
        file.aliases = aliases;
    }
    files
}

/// The text of every `use` declaration (after `use`, before `;`).
fn use_trees(code: &str) -> Vec<String> {
    let mut trees = Vec::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(at) = code[from..].find("use ") {
        let start = from + at;
        from = start + 4;
        let before = code[..start].trim_end();
        let starts_item = before.is_empty()
            || before.ends_with([';', '{', '}', ')'])
            || before.ends_with("pub")
            || before.ends_with(']');
        if (start > 0 && is_ident_char(bytes[start - 1] as char)) || !starts_item {
            continue;
        }
        let end = code[from..].find(';').map_or(code.len(), |e| from + e);
        // One space between words (so ` as ` stays a word), none around punctuation.
        let spaced = code[from..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let mut tight = spaced;
        for p in ["::", "{", "}", ","] {
            tight = tight
                .replace(&format!(" {p}"), p)
                .replace(&format!("{p} "), p);
        }
        trees.push(tight);
        from = end;
    }
    trees
}

/// Expands a use tree (`a::{b, c::d as e, self}`) into (alias, path) pairs.
fn expand_use_tree(tree: &str, prefix: Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let mut base = prefix;
        base.extend(
            tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        let inner = &tree[open + 1..tree.rfind('}').expect("a closed use group")];
        let mut depth = 0;
        let mut part = String::new();
        for c in inner.chars().chain(std::iter::once(',')) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if !part.is_empty() {
                        expand_use_tree(&part, base.clone(), out);
                    }
                    part.clear();
                    continue;
                }
                _ => {}
            }
            part.push(c);
        }
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path, Some(alias)),
        None => (tree, None),
    };
    let mut full = prefix;
    full.extend(path.split("::").map(str::to_string));
    if full.last().map(String::as_str) == Some("self") {
        full.pop();
    }
    if full.last().map(String::as_str) == Some("*") {
        return;
    }
    let alias = alias.map_or_else(|| full.last().cloned().unwrap_or_default(), str::to_string);
    out.push((alias, full));
}

/// A path as written in `file`, made absolute in its crate; None for another crate's.
fn absolute_path(
    file: &SourceFile,
    modules: &BTreeSet<Vec<String>>,
    path: &[String],
) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => file.module.clone(),
        "super" => file.module[..file.module.len().checked_sub(1)?].to_vec(),
        _ => {
            if let Some(target) = file.aliases.get(first) {
                target.clone()
            } else {
                let mut child = file.module.clone();
                child.push(first.clone());
                if !(file.owns_children && modules.contains(&child)) {
                    return None;
                }
                child
            }
        }
    };
    let mut rest = rest;
    while rest.first().map(String::as_str) == Some("super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file an absolute path's item lives in, following `use` re-exports; None for a module
/// itself (naming a module is not using its file's items).
fn resolve<'a>(
    files: &'a BTreeMap<Vec<String>, SourceFile>,
    path: &[String],
    depth: u32,
) -> Option<&'a SourceFile> {
    let n = (0..=path.len())
        .rev()
        .find(|&n| files.contains_key(&path[..n]))?;
    let file = &files[&path[..n]];
    if n == path.len() || depth > 8 {
        return None;
    }
    match file.aliases.get(&path[n]) {
        Some(target) if target.first() != Some(&path[n]) || n > 0 => {
            let mut through = target.clone();
            through.extend(path[n + 1..].iter().cloned());
            resolve(files, &through, depth + 1)
                .or(Some(file))
                .filter(|_| true)
        }
        _ => Some(file),
    }
}

/// Every path expression of the code (`a::b::c`), as its segments.
fn code_paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_ident_char(chars[i])
            || (i > 0 && (is_ident_char(chars[i - 1]) || chars[i - 1] == ':'))
        {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        loop {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            segments.push(chars[start..i].iter().collect::<String>());
            if chars.get(i) == Some(&':')
                && chars.get(i + 1) == Some(&':')
                && chars.get(i + 2).is_some_and(|&c| is_ident_char(c))
            {
                i += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 {
            paths.push(segments);
        }
    }
    paths
}

/// Which files each file of a crate uses items of.
fn import_graph(files: &BTreeMap<Vec<String>, SourceFile>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<Vec<String>> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for file in files.values() {
        let mut used = BTreeSet::new();
        let mut paths: Vec<Vec<String>> = file.aliases.values().cloned().collect();
        paths.extend(
            code_paths(&file.code)
                .iter()
                .filter_map(|p| absolute_path(file, &modules, p)),
        );
        for path in paths {
            if let Some(target) = resolve(files, &path, 0) {
                if target.path != file.path {
                    if std::env::var_os("ARCH_DEBUG").is_some() {
                        eprintln!("{} -> {} by {}", file.path, target.path, path.join("::"));
                    }
                    used.insert(target.path.clone());
                }
            }
        }
        graph.insert(file.path.clone(), used);
    }
    graph
}

/// The circles of a graph: its strongly connected components of more than one file.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on its reverse.
    fn finish<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<&'a str>,
        order: &mut Vec<&'a str>,
    ) {
        if !seen.insert(node) {
            return;
        }
        for next in graph.get(node).into_iter().flatten() {
            finish(next, graph, seen, order);
        }
        order.push(node);
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for node in graph.keys() {
        finish(node, graph, &mut seen, &mut order);
    }
    let mut reverse: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in graph {
        for to in tos {
            reverse.entry(to.clone()).or_default().insert(from.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut circles = Vec::new();
    for &node in order.iter().rev() {
        let mut component = Vec::new();
        finish(node, &reverse, &mut assigned, &mut component);
        if component.len() > 1 {
            let mut names: Vec<String> = component.iter().map(|s| s.to_string()).collect();
            names.sort();
            circles.push(names);
        }
    }
    circles
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    for dir in ["core/src", "src"] {
        let graph = import_graph(&crate_files(root, dir));
        assert!(graph.len() > 20, "{dir}: only {} files", graph.len());
        let found = circles(&graph);
        let shown: Vec<String> = found
            .iter()
            .map(|c| {
                let edges: Vec<String> = c
                    .iter()
                    .flat_map(|f| {
                        graph[f]
                            .iter()
                            .filter(|t| c.contains(t))
                            .map(move |t| format!("{f} -> {t}"))
                    })
                    .collect();
                edges.join(", ")
            })
            .collect();
        assert!(
            found.is_empty(),
            "{dir}: import circles:\n{}",
            shown.join("\n")
        );
    }
}

#[test]
fn the_import_check_sees_a_circle_and_a_re_export() {
    let mut files = BTreeMap::new();
    for (path, module, code) in [
        ("lib.rs", vec![], "pub mod a; pub mod b; pub use a::Thing;"),
        (
            "a.rs",
            vec!["a"],
            "use crate::b::helper as hash_helper; pub struct Thing;",
        ),
        (
            "b.rs",
            vec!["b"],
            "pub fn helper() -> crate::Thing { crate::Thing }",
        ),
    ] {
        let module: Vec<String> = module.into_iter().map(str::to_string).collect();
        files.insert(
            module.clone(),
            SourceFile {
                path: path.to_string(),
                module,
                owns_children: path == "lib.rs",
                code: production_code(code),
                aliases: BTreeMap::new(),
            },
        );
    }
    let modules: BTreeSet<Vec<String>> = files.keys().cloned().collect();
    let keys: Vec<Vec<String>> = files.keys().cloned().collect();
    for key in keys {
        let mut aliases = BTreeMap::new();
        for tree in use_trees(&files[&key].code) {
            let mut paths = Vec::new();
            expand_use_tree(&tree, Vec::new(), &mut paths);
            for (alias, path) in paths {
                if let Some(absolute) = absolute_path(&files[&key], &modules, &path) {
                    aliases.insert(alias, absolute);
                }
            }
        }
        files.get_mut(&key).unwrap().aliases = aliases;
    }
    let graph = import_graph(&files);
    assert_eq!(
        circles(&graph),
        vec![vec!["a.rs".to_string(), "b.rs".to_string()]]
    );
}

/// The folder of `src/` that alone speaks the server's C API.
const FFI_FOLDER: &str = "src/ffi/";

/// The files outside [`FFI_FOLDER`] whose code names the raw bindings or declares a C function.
fn c_api_users(root: &Path) -> Vec<String> {
    let mut files = BTreeSet::new();
    rust_files(root, "src", &mut files);
    files
        .into_iter()
        .filter(|f| !f.starts_with(FFI_FOLDER))
        .filter(|f| {
            let code = production_code(&std::fs::read_to_string(root.join(f)).unwrap());
            code.contains("raw::") || code.contains("extern \"C\"") || code.contains("extern \" ")
        })
        .collect()
}

#[test]
fn only_the_ffi_folder_speaks_the_servers_c_api() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let users = c_api_users(root);
    assert!(
        users.is_empty(),
        "raw:: or extern \"C\" outside {FFI_FOLDER}: {users:?}"
    );
    // The check sees them where they are.
    let ffi = std::fs::read_to_string(root.join("src/ffi/onload.rs")).unwrap();
    assert!(production_code(&ffi).contains("raw::"));
    assert!(production_code(&ffi).contains("extern \""));
}

/// The longest functions of a file's production code: (name, first line, lines).
fn function_lengths(code: &str) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("fn ") {
        let start = from + at;
        from = start + 3;
        if start > 0 && is_ident_char(code.as_bytes()[start - 1] as char) {
            continue;
        }
        let name: String = code[start + 3..]
            .chars()
            .take_while(|&c| is_ident_char(c))
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` before any `;` (a declaration without a body has none).
        let rest = &code[start..];
        let (Some(open), semi) = (rest.find('{'), rest.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue;
        }
        let end = item_end(code, start + open);
        let first = code[..start].matches('\n').count() + 1;
        let last = code[..end].matches('\n').count() + 1;
        found.push((name, first, last - first + 1));
    }
    found
}

/// The most lines a production function may take: one a reader can hold.
const MAX_FUNCTION_LINES: usize = 80;

#[test]
fn no_production_function_is_over_80_lines() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut files = BTreeSet::new();
    for dir in ["src", "core/src", "cli/src"] {
        rust_files(root, dir, &mut files);
    }
    let mut long = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("/tests.rs")) {
        let code = production_code(&std::fs::read_to_string(root.join(file)).unwrap());
        for (name, line, lines) in function_lengths(&code) {
            if lines > MAX_FUNCTION_LINES {
                long.push(format!("{file}:{line} {name} ({lines} lines)"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines: {long:#?}"
    );
}

#[test]
fn the_length_check_measures_a_function() {
    let code = production_code("fn short() {\n    1;\n}\n\nfn long() {\n    1;\n    2;\n}\n");
    assert_eq!(
        function_lengths(&code),
        vec![("short".to_string(), 1, 3), ("long".to_string(), 5, 4)]
    );
}

#[test]
fn no_file_is_over_1000_lines() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut files = BTreeSet::new();
    for dir in [
        "src",
        "core/src",
        "cli/src",
        "tests",
        "fuzz/src",
        "fuzz/fuzz_targets",
    ] {
        rust_files(root, dir, &mut files);
    }
    assert!(files.len() > 100, "only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .map(|f| {
            (
                f,
                std::fs::read_to_string(root.join(f))
                    .unwrap()
                    .lines()
                    .count(),
            )
        })
        .filter(|&(_, lines)| lines > 1000)
        .map(|(f, lines)| format!("{f} ({lines} lines)"))
        .collect();
    assert!(long.is_empty(), "files over 1,000 lines: {long:?}");
}

/// The integration tests are a package of their own, whose targets are listed by hand (cargo
/// looks for them in `tests/tests/`): a test file missing from `tests/Cargo.toml` would never
/// run, and one listed but gone would stop the build.
#[test]
fn tests_cargo_toml_declares_every_test_file() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(tests).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && path.join("main.rs").is_file() {
            files.insert(format!("{name}/main.rs"));
        } else if name.ends_with(".rs") {
            files.insert(name);
        }
    }
    let manifest = std::fs::read_to_string(tests.join("Cargo.toml")).unwrap();
    let declared: BTreeSet<String> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("path = \""))
        .map(|rest| rest.trim_end_matches('"').to_string())
        .collect();
    assert!(files.len() > 15, "only {} test files", files.len());
    assert_eq!(
        files, declared,
        "tests/*.rs and tests/*/main.rs against tests/Cargo.toml"
    );
}
