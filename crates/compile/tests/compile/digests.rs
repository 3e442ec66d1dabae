//! What a scripted compile sends the model and writes, held to committed digests
//! (`snapshots/<name>.digests`): every request body as serialized, in order, and every file of
//! the output directory. A change to a prompt, the repair turn, sampling settings, the report
//! or the artifacts shows here by request index or file name; `TAUGUARD_BLESS=1` rewrites the
//! digests after an intended change. Digests, not texts: the workflow compiles send the
//! benchmark's policy, which is never committed.

use std::path::{Path, PathBuf};
use tauguard_llm::ChatRequest;

fn snapshot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/compile/snapshots")
        .join(format!("{name}.digests"))
}

fn digest(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// One line per request, then one per file of `out_dir` (sorted by name).
fn lines(requests: &[ChatRequest], out_dir: &Path) -> Vec<String> {
    let mut lines: Vec<String> = requests
        .iter()
        .enumerate()
        .map(|(i, req)| {
            let body = serde_json::to_string(req).expect("a request serializes");
            format!("request {i} {}", digest(body.as_bytes()))
        })
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(out_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", out_dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        lines.push(format!("file {name} {}", digest(&bytes)));
    }
    lines
}

/// Fails naming every line that differs from `snapshots/<name>.digests`.
pub(crate) fn assert_unchanged(name: &str, requests: &[ChatRequest], out_dir: &Path) {
    let got = lines(requests, out_dir);
    let path = snapshot(name);
    if std::env::var_os("TAUGUARD_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got.join("\n") + "\n").unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (TAUGUARD_BLESS=1 writes it)", path.display()));
    let want: Vec<&str> = want.lines().collect();
    let mut differ: Vec<String> = Vec::new();
    for i in 0..got.len().max(want.len()) {
        let (g, w) = (got.get(i).map(String::as_str), want.get(i).copied());
        if g != w {
            differ.push(format!(
                "line {}: now {}, recorded {}",
                i + 1,
                g.unwrap_or("(none)"),
                w.unwrap_or("(none)")
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{}: what the compile sends or writes changed (TAUGUARD_BLESS=1 after an intended change):\n{}",
        path.display(),
        differ.join("\n")
    );
}
