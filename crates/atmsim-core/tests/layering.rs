//! The layers of the core, checked on its source: a module names only
//! modules of its own layer or of the layers below, and the modules'
//! dependencies have no cycle. `docs/model.md` ("Where things live") and
//! the module docs of `src/lib.rs` describe the same layers.
//!
//! A module's dependencies are the `crate::<module>` paths in its code
//! (`use` lines and paths written in place, test modules included);
//! comments, doc links among them, are not code and are skipped. A
//! re-export counts as a dependency of the module that writes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module of the crate and its layer, from the bottom:
/// 0 the foundation (time, events, random streams, typed indices, how a
/// range is declared), 1 the domain models, each with its parameters, 2 the
/// scenario (assembles the models' parameters into a network and checks
/// it), 3 the simulation (builds and runs the network).
const LAYERS: &[(&str, u8)] = &[
    ("engine", 0),
    ("ids", 0),
    ("param", 0),
    ("cell", 1),
    ("buffer", 1),
    ("atm", 1),
    ("traffic", 1),
    ("gfr", 1),
    ("abr", 1),
    ("ip", 1),
    ("tcp", 1),
    ("stats", 1),
    ("scenario", 2),
    ("sim", 3),
];

/// The layers' names, by number.
const LAYER_NAMES: [&str; 4] = ["foundation", "domain", "scenario", "sim"];

/// The source with its comments blanked out (line and block comments,
/// doc comments among them); string literals are kept as they are.
fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c as char);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1] as char);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
        } else if c == b'"' {
            in_str = true;
            out.push('"');
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A character literal such as '"', which must not open a string.
            out.push_str("' '");
            i += 3;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The top-level modules `code` names: `crate::m`, and each `m` of
/// `crate::{m::..., n, ...}`.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(k) = rest.find("crate::") {
        let before = rest[..k].chars().next_back();
        rest = &rest[k + "crate::".len()..];
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue; // `$crate::` or a longer identifier ending in `crate`.
        }
        let rest_trim = rest.trim_start();
        if let Some(list) = rest_trim.strip_prefix('{') {
            // One level of braces: the first path segment of each item.
            let mut depth = 1;
            let mut item_start = true;
            let mut chars = list.char_indices();
            while let Some((j, c)) = chars.next() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if depth == 1 && item_start && is_ident(c) => {
                        let name: String = list[j..].chars().take_while(|&c| is_ident(c)).collect();
                        found.insert(name.clone());
                        for _ in 1..name.len() {
                            chars.next();
                        }
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each top-level module's dependencies on the others, with the file that
/// names each one.
fn dependencies() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut deps: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a component");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if module == "lib" {
            continue; // The crate root declares the modules and re-exports the API.
        }
        let text = std::fs::read_to_string(&path).expect("read a source file");
        let entry = deps.entry(module.clone()).or_default();
        for used in crate_modules(&strip_comments(&text)) {
            if used != module {
                entry.entry(used).or_insert_with(|| rel.to_path_buf());
            }
        }
    }
    deps
}

fn layer_of(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

#[test]
fn every_module_has_a_layer() {
    let missing: Vec<String> = dependencies()
        .into_keys()
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a layer (add them to LAYERS here and to docs/model.md): {missing:?}"
    );
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    for (module, used) in dependencies() {
        let Some(own) = layer_of(&module) else {
            continue;
        };
        for (target, file) in used {
            match layer_of(&target) {
                Some(l) if l > own => wrong.push(format!(
                    "{} ({}) uses {target} ({}), in src/{}",
                    module,
                    LAYER_NAMES[own as usize],
                    LAYER_NAMES[l as usize],
                    file.display()
                )),
                _ => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "upward dependencies:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_modules_depend_on_each_other_without_a_cycle() {
    let deps = dependencies();
    // Depth-first search; a module met again while on the stack closes a
    // cycle, reported as the path around it.
    fn visit(
        m: &str,
        deps: &BTreeMap<String, BTreeMap<String, PathBuf>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(k) = stack.iter().position(|s| s == m) {
            let mut cycle = stack[k..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_string());
        for next in deps.get(m).into_iter().flat_map(|d| d.keys()) {
            if deps.contains_key(next) {
                if let Some(c) = visit(next, deps, stack, done) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in deps.keys() {
        if let Some(cycle) = visit(m, &deps, &mut Vec::new(), &mut done) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    format!(
                        "{} -> {} (src/{})",
                        w[0],
                        w[1],
                        deps[&w[0]][&w[1]].display()
                    )
                })
                .collect();
            panic!("a cycle between modules:\n{}", steps.join("\n"));
        }
    }
}

#[test]
fn the_reader_finds_paths_in_code_only() {
    let code = "use crate::abr::{AbrParams, AlgorithmSpec};\n\
                /// See [`crate::sim`].\n\
                use crate::{engine::Time, param::Ints, stats};\n\
                let s = \"crate::scenario in a string\"; // crate::tcp\n\
                /* crate::traffic */ let x = crate::ip::Packet::new();\n\
                let q = '\"'; let y = $crate::gfr::X;";
    let found = crate_modules(&strip_comments(code));
    let names: Vec<&str> = found.iter().map(String::as_str).collect();
    // The string's `crate::scenario` is counted: a path in a string is rare
    // and naming one more module only makes the check stricter.
    assert_eq!(names, ["abr", "engine", "ip", "param", "scenario", "stats"]);
}

#[test]
fn every_range_is_declared_with_its_parameter() {
    // A field's range goes in its `#[param(range = ...)]`, where its default
    // and doc are too (the `atmsim-params` attribute), not in a schemars
    // attribute beside a hand-written check. Only the elements of the tuple
    // variants of `traffic::FrameSize`, which `#[params]` cannot name, carry
    // the transform themselves.
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    for file in files {
        if file.ends_with("traffic/params.rs") {
            continue;
        }
        let code = strip_comments(&std::fs::read_to_string(&file).unwrap());
        assert!(
            !code.contains("schemars(transform"),
            "{}: a range outside #[param(range = ...)]",
            file.display()
        );
    }
}
