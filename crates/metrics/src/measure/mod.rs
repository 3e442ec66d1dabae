//! The measures: what each metric derives from the summaries of a group (and, for the process
//! view, from a domain's procedure spec over the records' trajectories).

pub(crate) mod floors;
pub(crate) mod guide;
pub(crate) mod pass_k;
pub(crate) mod procedure;
pub(crate) mod process;
pub(crate) mod registry;
pub(crate) mod slices;
pub(crate) mod spending;

/// Declares each measure's module and registers its type: one line per measure.
macro_rules! measures {
    ($($module:ident :: $measure:ident),* $(,)?) => {
        $(pub(crate) mod $module;)*
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
pub(crate) mod registry_tests;
