//! CURRENT: atomic switch and strict parsing.

use crate::Error;
use crate::env::{Env, StdEnv};
use crate::util::filename::current_path;
use crate::db::manifest::{read_current, set_current};

#[test]
fn set_and_read_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for n in [1u64, 123, 999_999, 1_000_000, u64::MAX] {
        set_current(&StdEnv, dir.path(), n).unwrap();
        assert_eq!(read_current(&StdEnv, dir.path()).unwrap(), n);
    }
    assert_eq!(
        std::fs::read(current_path(dir.path())).unwrap(),
        format!("{}\n", "MANIFEST-18446744073709551615").into_bytes()
    );
    set_current(&StdEnv, dir.path(), 123).unwrap();
    assert_eq!(
        std::fs::read_to_string(current_path(dir.path())).unwrap(),
        "MANIFEST-000123\n"
    );
    // No temp file is left behind.
    assert_eq!(
        StdEnv.list_dir(dir.path()).unwrap(),
        vec!["CURRENT".to_string()]
    );
}

#[test]
fn missing_current_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        read_current(&StdEnv, dir.path()),
        Err(Error::Io { .. })
    ));
}

#[test]
fn malformed_current_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = current_path(dir.path());
    let long = vec![b'9'; 300];
    let cases: Vec<&[u8]> = vec![
        b"",
        b"MANIFEST-000123",
        b"MANIFEST-\n",
        b"MANIFEST-12x\n",
        b"MANIFEST-+12\n",
        b"000123.log\n",
        b"MANIFEST-000123\n\n",
        b" MANIFEST-000123\n",
        b"MANIFEST-\xff\n",
        b"MANIFEST-99999999999999999999999\n",
        &long,
    ];
    for content in cases {
        std::fs::write(&path, content).unwrap();
        match read_current(&StdEnv, dir.path()) {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, path, "{content:?}"),
            other => panic!("{content:?}: expected corruption, got {other:?}"),
        }
    }
}
