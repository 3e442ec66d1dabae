//! The site's files: the output directory (created, or an earlier site in it replaced — never
//! a directory of something else), the static page and its script and style (our own files,
//! under `assets/`, compiled in), and the index data file.

use crate::embed::script_call_value;
use crate::error::ViewError;
use crate::index::Index;
use std::path::Path;

/// Marks a directory as a site `tauguard view` wrote, so a rebuild may replace it.
pub(crate) const MARKER: &str = ".tauguard-view";

/// The static files: (path in the site, contents).
pub(crate) const ASSETS: &[(&str, &str)] = &[
    ("index.html", include_str!("../assets/index.html")),
    ("assets/style.css", include_str!("../assets/style.css")),
    ("assets/dom.js", include_str!("../assets/dom.js")),
    ("assets/overview.js", include_str!("../assets/overview.js")),
    ("assets/grid.js", include_str!("../assets/grid.js")),
    ("assets/sim.js", include_str!("../assets/sim.js")),
    ("assets/app.js", include_str!("../assets/app.js")),
];

/// Makes `out` an empty site directory: created when missing; an earlier site's files
/// removed; any other non-empty directory refused.
pub(crate) fn prepare(out: &Path) -> Result<(), ViewError> {
    if out.exists() {
        let mut entries = std::fs::read_dir(out).map_err(|e| ViewError::io(out, e))?;
        let empty = entries.next().is_none();
        if !empty {
            if !out.join(MARKER).is_file() {
                return Err(ViewError::OutNotASite {
                    path: out.to_path_buf(),
                });
            }
            for name in ["data", "assets"] {
                let p = out.join(name);
                if p.exists() {
                    std::fs::remove_dir_all(&p).map_err(|e| ViewError::io(&p, e))?;
                }
            }
        }
    }
    std::fs::create_dir_all(out.join("data/sims")).map_err(|e| ViewError::io(out, e))?;
    std::fs::create_dir_all(out.join("assets")).map_err(|e| ViewError::io(out, e))?;
    write(
        &out.join(MARKER),
        "written by `tauguard view`; a rebuild replaces this directory's site\n",
    )
}

/// Writes the static files and `data/index.js`.
pub(crate) fn finish(out: &Path, index: &Index) -> Result<u64, ViewError> {
    for (rel, text) in ASSETS {
        write(&out.join(rel), text)?;
    }
    let js = script_call_value("window.__tg_index", "", index);
    write(&out.join("data/index.js"), &js)?;
    Ok(js.len() as u64)
}

fn write(path: &Path, text: &str) -> Result<(), ViewError> {
    std::fs::write(path, text).map_err(|e| ViewError::io(path, e))
}
