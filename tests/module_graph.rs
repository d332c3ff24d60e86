//! The crate's modules form layers that only point down: each module uses
//! only modules that README.pod's Architecture table lists below it, and
//! no module reaches, directly or through others, back to itself.
//!
//! The table is read from README.pod: in the Architecture section, every
//! verbatim line indented by exactly four spaces is a row, and its first
//! word names the row's modules (`intq/`, `wait.rs`, or several separated
//! by commas, as `stats.rs, error.rs`); rows are listed top to bottom.
//!
//! The graph is read from the sources: a module is a file `src/NAME.rs` or
//! a folder `src/NAME/`, and it depends on every module it names as
//! `crate::NAME` (or through a name the crate root re-exports, such as
//! `crate::IntQueue`) outside comments, test code (items under a
//! `#[cfg(...test...)]`, and the files of such `mod NAME;` items) and
//! doc-only imports (`#[cfg(doc)]`). The crate root and the binaries are
//! not modules here. Run with `--nocapture` to print the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The `.rs` files under `dir`, recursively.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `text` without comments and string or char literals (blanked, so that
/// braces inside them do not count).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('x' or '\n'); a lifetime has no closing quote.
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// `code` without the items under a test-only `#[cfg(..)]`; the names of
/// test-only `mod NAME;` items go into `test_mods`.
fn strip_tests(code: &str, test_mods: &mut BTreeSet<String>) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(") {
        let attr_end = at + rest[at..].find(']').unwrap() + 1;
        let attr = &rest[at..attr_end];
        // Doc-only items (imports for doc links) are no dependency either.
        let test_only =
            (attr.contains("test") && !attr.contains("not(test)")) || attr == "#[cfg(doc)]";
        if !test_only {
            out.push_str(&rest[..attr_end]);
            rest = &rest[attr_end..];
            continue;
        }
        out.push_str(&rest[..at]);
        let item = &rest[attr_end..];
        let (semi, brace) = (item.find(';'), item.find('{'));
        match (semi, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => {
                // `mod NAME;` (its file is test code) or a one-line item.
                let words: Vec<&str> = item[..s].split_whitespace().collect();
                if let Some(i) = words.iter().position(|w| *w == "mod") {
                    test_mods.insert(words[i + 1].to_string());
                }
                rest = &item[s + 1..];
            }
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (i, c) in item[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &item[end..];
            }
            _ => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The crate's module graph, read from `src`.
fn graph(src: &Path) -> Graph {
    // Names the crate root re-exports: `pub use MODULE::{A, B};`.
    let lib = code_only(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut root = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        for n in names.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !n.is_empty() {
                root.insert(n.to_string(), module.to_string());
            }
        }
    }
    // Modules and their code.
    let mut code: BTreeMap<String, String> = BTreeMap::new();
    let mut test_mods = BTreeSet::new();
    let mut files = Vec::new();
    rs_files(src, &mut files);
    files.sort();
    let mut parts = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap().to_path_buf();
        let text = strip_tests(&code_only(&fs::read_to_string(f).unwrap()), &mut test_mods);
        parts.push((rel, text));
    }
    for (rel, text) in parts {
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let module = first.trim_end_matches(".rs").to_string();
        // A test-only module's file: NAME.rs, or any file under NAME/.
        let test_file = rel
            .iter()
            .any(|c| test_mods.contains(c.to_str().unwrap().trim_end_matches(".rs")));
        if module == "lib" || module == "bin" || test_file {
            continue;
        }
        code.entry(module).or_default().push_str(&text);
    }
    let mut g = Graph::new();
    for (module, text) in &code {
        let deps = g.entry(module.clone()).or_default();
        let mut add = |name: &str| {
            let name = name.trim();
            let target = if code.contains_key(name) {
                Some(name.to_string())
            } else {
                root.get(name).cloned()
            };
            if let Some(t) = target {
                if t != *module {
                    deps.insert(t);
                }
            }
        };
        for (i, _) in text.match_indices("crate::") {
            let after = &text[i + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    add(item.split("::").next().unwrap());
                }
            } else {
                let end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                add(&after[..end]);
            }
        }
    }
    g
}

/// A cycle in `g`, if there is one (as the list of its modules).
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        m: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|m| visit(g, m, &mut Vec::new(), &mut done))
}

/// README.pod's layer table: each module's row, counted from the top.
fn layer_table(readme: &str) -> BTreeMap<String, usize> {
    let start = readme
        .find("\n=head2 Architecture\n")
        .expect("README.pod has an Architecture section");
    let section = &readme[start + 1..];
    let section = &section[..section[1..]
        .find("\n=head2 ")
        .map_or(section.len(), |e| e + 1)];
    let mut rows = BTreeMap::new();
    let mut row = 0;
    for line in section.lines() {
        let Some(rest) = line.strip_prefix("    ") else {
            continue;
        };
        if rest.starts_with(' ') || rest.is_empty() {
            continue;
        }
        // The names: up to the first word that does not end in `.rs` or
        // `/` (or `.rs,`: the row lists more).
        for word in rest.split_whitespace() {
            let name = word.trim_end_matches(',');
            let Some(m) = name.strip_suffix(".rs").or_else(|| name.strip_suffix('/')) else {
                break;
            };
            let m = m.split('/').next().unwrap().to_string();
            assert!(
                rows.insert(m.clone(), row).is_none(),
                "README.pod lists {m} twice"
            );
            if !word.ends_with(',') {
                break;
            }
        }
        row += 1;
    }
    rows
}

/// Every import of `g` that does not point to a row further down
/// `table`, and every module `table` does not list, as messages.
fn upward(g: &Graph, table: &BTreeMap<String, usize>) -> Vec<String> {
    let mut bad = Vec::new();
    for (m, deps) in g {
        let Some(&rm) = table.get(m) else {
            bad.push(format!("{m} is not in README.pod's layer table"));
            continue;
        };
        for d in deps {
            match table.get(d) {
                Some(&rd) if rd > rm => {}
                Some(&rd) => bad.push(format!(
                    "{m} (row {rm}) uses {d} (row {rd}), which the table lists {}",
                    if rd == rm {
                        "in the same row"
                    } else {
                        "above it"
                    }
                )),
                None => {} // reported as a module of its own
            }
        }
    }
    bad
}

#[test]
fn imports_point_down_the_readme_layer_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let g = graph(&root.join("src"));
    let table = layer_table(&fs::read_to_string(root.join("README.pod")).unwrap());
    // The reader sees what it should: the table's ends and a middle.
    assert!(table["ffi"] < table["any"] && table["intq"] < table["lease"]);
    assert!(table["wait"] < table["lock"] && table["stats"] == table["error"]);
    for m in table.keys() {
        assert!(
            g.contains_key(m) || m == "bin",
            "README.pod's layer table lists {m}, which is no module"
        );
    }
    let bad = upward(&g, &table);
    assert!(bad.is_empty(), "imports that point up:\n{}", bad.join("\n"));
}

#[test]
fn the_table_refuses_an_upward_import() {
    let readme = "=head1 X\n\n=head2 Architecture\n\n=item X\n\n    a.rs      top\n    b/        \
                  middle\n                  still b\n    c.rs, d.rs  bottom\n\n\
                  =head2 Next\n\n    e.rs      not in the section\n";
    let table = layer_table(readme);
    assert_eq!(
        table,
        BTreeMap::from([
            ("a".to_string(), 0),
            ("b".to_string(), 1),
            ("c".to_string(), 2),
            ("d".to_string(), 2)
        ])
    );
    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("a", "c"), ("b", "d")] {
        g.entry(a.into()).or_default().insert(b.into());
    }
    g.entry("c".into()).or_default();
    g.entry("d".into()).or_default();
    assert!(upward(&g, &table).is_empty());
    g.entry("c".into()).or_default().insert("b".into());
    g.entry("d".into()).or_default().insert("c".into());
    g.entry("e".into()).or_default();
    assert_eq!(
        upward(&g, &table),
        [
            "c (row 2) uses b (row 1), which the table lists above it",
            "d (row 2) uses c (row 2), which the table lists in the same row",
            "e is not in README.pod's layer table",
        ]
    );
}

#[test]
fn modules_form_layers_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    for (m, deps) in &g {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("{m:10} -> {}", deps.join(" "));
    }
    // The reader sees what it should: the queues reach the layout.
    assert!(g["intq"].contains("layout") && g["strq"].contains("lock"));
    if let Some(c) = find_cycle(&g) {
        panic!("module cycle: {}", c.join(" -> "));
    }
}

#[test]
fn the_reader_finds_a_cycle() {
    let mut g = Graph::new();
    for (a, b) in [
        ("layout", "lock"),
        ("lock", "wait"),
        ("wait", "ring"),
        ("ring", "layout"),
        ("ring", "sync"),
    ] {
        g.entry(a.into()).or_default().insert(b.into());
    }
    g.entry("sync".into()).or_default();
    let c = find_cycle(&g).expect("a cycle");
    assert_eq!(c.first(), c.last());
    assert_eq!(c.len(), 5);
    assert!(find_cycle(&BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::new())
    ]))
    .is_none());
}
