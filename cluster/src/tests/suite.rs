//! openraft's storage test suite (`openraft::testing::Suite`) on the bloomkv-backed log
//! store and state machine.

use std::sync::Arc;

use bloomkv::Options;
use openraft::testing::{StoreBuilder, Suite};

use crate::kv::KvMachine;
use crate::log_store::LogStore;
use crate::state_machine::StateMachine;
use crate::types::{StorageError, TypeConfig};

struct Builder;

impl StoreBuilder<TypeConfig, LogStore, StateMachine, tempfile::TempDir> for Builder {
    async fn build(&self) -> Result<(tempfile::TempDir, LogStore, StateMachine), StorageError> {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default();
        let log = LogStore::open(&dir.path().join("log"), opts.clone()).unwrap();
        let sm = StateMachine::open(
            1,
            dir.path().join("sm"),
            dir.path().join("snapshots"),
            opts,
            Arc::new(KvMachine::new()),
        )
        .unwrap();
        Ok((dir, log, sm))
    }
}

#[test]
fn openraft_storage_suite() {
    Suite::test_all(Builder).unwrap();
}
