//! How `tauguard run` shows a run's progress on stderr: a bar on a terminal, and elsewhere
//! (logs, CI, batch jobs) a plain `progress:` line every few seconds. The runner only says
//! where it stands, through [`Progress`].

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;
use tauguard_orchestrator::Progress;

/// Seconds between progress lines when stderr is not a terminal.
const PROGRESS_EVERY_SECS: u64 = 5;

/// The bar, drawn only on a terminal, and whether plain lines are written instead.
#[derive(Debug)]
struct StderrProgress {
    bar: indicatif::ProgressBar,
    plain: bool,
}

/// The progress of a run as `tauguard run` shows it.
pub(crate) fn on_stderr() -> Arc<dyn Progress> {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {msg} · eta {eta}")
            .expect("static template parses"),
    );
    Arc::new(StderrProgress {
        bar,
        plain: !std::io::stderr().is_terminal(),
    })
}

impl Progress for StderrProgress {
    fn heartbeat_every(&self) -> Option<Duration> {
        self.plain.then(|| Duration::from_secs(PROGRESS_EVERY_SECS))
    }

    fn start(&self, total: u64) {
        self.bar.set_length(total);
    }

    fn advance(&self, line: &str) {
        self.bar.inc(1);
        self.bar.set_message(line.to_string());
    }

    fn heartbeat(&self, line: &str) {
        eprintln!("progress: {line}");
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
