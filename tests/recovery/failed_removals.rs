//! Files the engine no longer needs (compacted tables, replaced WALs and MANIFESTs) stay on
//! disk when removing them fails: nothing fails, no answer changes, an old WAL left behind
//! is never replayed over the writes after it (deleted keys stay deleted), and the next
//! open removes the leftover tables.

use bloomkv::Options;
use bloomkv::env::fault::{Fault, FaultKind, FaultOp};

use crate::common::fault::fault_env;
use crate::common::{Model, sst_files, w1_key, w1_value};

#[test]
fn files_that_cannot_be_removed_stay_without_changing_an_answer() {
    let (env, ctl) = fault_env();
    let opts = Options {
        env,
        memtable_bytes: 64 << 10,
        ..Options::default()
    };
    let mut m = Model::open(opts.clone());
    ctl.add(Fault::nth(FaultOp::Remove, 1, FaultKind::Eio).and_later());
    for round in 0..3u32 {
        for i in 0..2000 {
            m.put(w1_key(i), w1_value(i, round));
        }
        for i in (0..2000).step_by(3 + round as usize) {
            m.delete(w1_key(i));
        }
        m.db().flush().unwrap();
        m.db().compact().unwrap();
    }
    assert!(ctl.injected() > 0, "the engine removed nothing");
    m.check_all((0..2000).map(w1_key));
    let live = m.db().stats().total_files() as usize;
    let dir = m.db().path().to_path_buf();
    assert!(
        sst_files(&dir).len() > live,
        "compacted tables stay on disk"
    );

    // Reopened with removals failing still: the old WALs are not replayed.
    m.reopen();
    m.check_all((0..2000).map(w1_key));

    ctl.clear();
    m.reopen();
    assert!(!m.db().recovery_report().orphan_tables_removed.is_empty());
    assert_eq!(sst_files(&dir).len(), m.db().stats().total_files() as usize);
    m.check_all((0..2000).map(w1_key));
}
