//! Statistics across sides and cells: `compare` (paired McNemar tests and bootstrap intervals
//! of Pass^k differences), the selectors that pick its sides, and the cell checks both
//! `report` and `compare` use.

pub(crate) mod bootstrap;
pub(crate) mod compare;
pub(crate) mod mcnemar;
pub(crate) mod select;
