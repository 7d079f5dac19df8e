//! The fault env as the tests set it up, shared by the integration tests (`tests/common`)
//! and the library's unit tests (`src/test_util.rs` includes this file).

use std::sync::Arc;

use bloomkv::env::fault::{FaultController, FaultEnv};
use bloomkv::env::{Env, StdEnv};

/// The real file system behind a fault env whose syncs are simulated (a power cut then
/// drops what was never synced, and the tests need no real fsyncs), and the env's
/// controller.
pub fn fault_env() -> (Arc<dyn Env>, Arc<FaultController>) {
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    ctl.set_simulated_sync(true);
    (env, ctl)
}
