//! What the compilers' scripted tests share beyond testkit's scripted model: the prompt
//! templates they are run with.

use std::path::{Path, PathBuf};

/// `configs/prompts`, where the compile templates live.
pub(crate) fn prompts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/prompts")
}
