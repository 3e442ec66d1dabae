//! PLACEHOLDER: the retail domain is being implemented; this module is replaced wholesale.

use crate::data::LoadError;
use crate::environment::{DomainBase, Environment};
use std::path::Path;

pub struct RetailBase;

impl RetailBase {
    pub fn load(dir: &Path) -> Result<Self, LoadError> {
        Err(LoadError::Parse { path: dir.to_path_buf(), message: "domain not implemented yet".into() })
    }
}

impl DomainBase for RetailBase {
    fn domain(&self) -> &'static str {
        "retail"
    }
    fn fresh(&self) -> Box<dyn Environment> {
        unreachable!("placeholder base is never constructed")
    }
}
