//! Progress display on stderr, only when stderr is a terminal: pipes and logs stay clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A byte-count bar when the total is known, else a spinner counting items; hidden when
/// stderr is not a terminal.
pub fn bar(total_bytes: Option<u64>, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = match total_bytes {
        Some(total) => {
            let pb = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
            ) {
                pb.set_style(style.progress_chars("=> "));
            }
            pb
        }
        None => spinner_bar("{spinner} {msg} {bytes} read ({bytes_per_sec}, {elapsed})"),
    };
    pb.set_message(what.to_string());
    pb
}

/// A spinner with a message and elapsed time; hidden when stderr is not a terminal.
pub fn spinner(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = spinner_bar("{spinner} {msg} ({elapsed})");
    pb.set_message(what.to_string());
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

fn spinner_bar(template: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    pb
}

/// A bar counting `total` long steps (benchmark runs), with the current step's name in the
/// message and the elapsed time ticking; hidden when stderr is not a terminal.
pub fn steps(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("[{bar:20}] {pos}/{len} {msg} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}
