//! The compilers' integration tests as one binary: the checklist compiler end to end with a
//! scripted model (`checklist.rs`), the workflow compiler on the real airline policy and tools
//! with a model that answers by stage (`workflow.rs`, its script in `workflow/script.rs`), and
//! the digests of every request and output file those compiles make (`digests.rs`), which hold
//! what the compilers send and write fixed.

mod checklist;
mod digests;
mod support;
mod workflow;
