//! The measures: what each metric derives from the summaries of a group (and, for the process
//! view, from a domain's procedure spec over the records' trajectories).

pub mod floors;
pub mod guide;
pub mod pass_k;
pub mod procedure;
pub mod process;
pub mod registry;
pub mod slices;
pub mod spending;

/// Declares each measure's module and registers its type: one line per measure.
macro_rules! measures {
    ($($module:ident :: $measure:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// The registered measures, in the order their outputs are placed.
        pub(crate) static MEASURES: &[&dyn registry::Registered] =
            &[$(&registry::Reg::<$module::$measure>(std::marker::PhantomData)),*];
    };
}

measures! {
    confusion::ConfusionMeasure,
    nmr::Nmr,
    turns::Turns,
    trace::Trace,
    attack::Attack,
    verifier_calls::VerifierCallsMeasure,
    truncation::Truncation,
    fail_mode::FailMode,
    guide_fail_mode::GuideFailMode,
    verifier_inputs::VerifierInputsMeasure,
    read_only_calls::ReadOnlyCalls,
}

#[cfg(test)]
mod confusion_tests;
#[cfg(test)]
mod registry_tests;
