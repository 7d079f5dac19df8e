//! A compaction reads only the tables the MANIFEST names: swapped table files compacted before
//! any lookup opened them stop the compaction with a corruption naming the file, and nothing
//! from the wrong files is merged into new tables.

use bloomkv::{Db, Error, Options};

use crate::common::{sst_paths, swap_files, two_versions_in_two_tables};

#[test]
fn a_compaction_of_swapped_tables_fails_and_merges_nothing() {
    let dir = two_versions_in_two_tables();
    let t = sst_paths(dir.path());
    // Merged as they are, the older table would be read as the newer one and "first" would
    // win every key.
    swap_files(&t[0], &t[1]);

    let db = Db::open(dir.path(), Options::default()).unwrap();
    let live = db.live_files();
    // No lookup before the compaction: its own reads are the first to open the tables.
    let err = db.compact().unwrap_err();
    assert!(matches!(err, Error::WritesStopped(_)), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("corruption in"), "{msg}");
    assert!(msg.contains("MANIFEST"), "{msg}");
    let named = t
        .iter()
        .any(|p| msg.contains(&*p.file_name().unwrap().to_string_lossy()));
    assert!(named, "the message names the table: {msg}");
    // Nothing was installed, and no output of the failed compaction is left.
    assert_eq!(db.live_files(), live);
    assert_eq!(sst_paths(dir.path()), t);
    drop(db);

    // With the files back in place every key reads its newest value: the failed compaction
    // made nothing durable.
    swap_files(&t[0], &t[1]);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in 0..100u32 {
        assert_eq!(
            db.get(format!("a{i:03}")).unwrap().as_deref(),
            Some(&b"second"[..]),
            "a{i:03}"
        );
    }
    db.compact().unwrap();
    assert_eq!(db.get("a042").unwrap().as_deref(), Some(&b"second"[..]));
}
