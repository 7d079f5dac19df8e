//! Manifest files: create/append/read, torn tails, middle damage, header checks.

use std::path::Path;

use crate::Error;
use crate::env::{Env, StdEnv};
use crate::util::filename::manifest_path;
use crate::db::manifest::{
    FileMeta, MANIFEST_FORMAT_VERSION, MANIFEST_MAGIC, ManifestWriter, VersionEdit, read_manifest,
};
use crate::db::wal::LogWriter;

fn edit(i: u64) -> VersionEdit {
    VersionEdit {
        log_number: Some(i),
        next_file_number: Some(i + 100),
        last_sequence: Some(i * 1000),
        compact_pointers: vec![],
        deleted_files: if i > 0 { vec![(0, i - 1)] } else { vec![] },
        new_files: vec![(
            (i % 7) as usize,
            FileMeta {
                number: i,
                size: 1000 + i,
                smallest: format!("key{i:04}").into_bytes(),
                largest: format!("key{i:04}zzzz").into_bytes(),
                entries: i,
                deletions: 0,
                filter_bits_per_key: 10.0,
                filter_bytes: i * 2,
                expected_fpr: 0.01,
                range_deletions: 0,
            },
        )],
    }
}

fn write_manifest(dir: &Path, n: u64) -> (Vec<VersionEdit>, Vec<u64>) {
    let mut m = ManifestWriter::create(&StdEnv, dir, 3).unwrap();
    assert_eq!(m.number(), 3);
    let mut edits = Vec::new();
    let mut ends = vec![m.size()];
    for i in 0..n {
        m.append(&edit(i)).unwrap();
        edits.push(edit(i));
        ends.push(m.size());
    }
    assert_eq!(m.size(), StdEnv.file_size(m.path()).unwrap());
    (edits, ends)
}

#[test]
fn create_append_read() {
    let dir = tempfile::tempdir().unwrap();
    let (edits, _) = write_manifest(dir.path(), 50);
    let path = manifest_path(dir.path(), 3);
    assert_eq!(read_manifest(&StdEnv, &path).unwrap(), edits);

    // A fresh manifest holds just its header: no edits.
    ManifestWriter::create(&StdEnv, dir.path(), 4).unwrap();
    let empty = read_manifest(&StdEnv, &manifest_path(dir.path(), 4)).unwrap();
    assert!(empty.is_empty());
}

#[test]
fn torn_last_edit_is_ignored_at_every_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (edits, ends) = write_manifest(dir.path(), 5);
    let path = manifest_path(dir.path(), 3);
    let full = StdEnv.read_all(&path).unwrap();
    let last_start = ends[ends.len() - 2] as usize;
    for cut in last_start..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        assert_eq!(
            read_manifest(&StdEnv, &path).unwrap(),
            edits[..4],
            "cut at {cut}"
        );
    }
}

#[test]
fn damage_in_the_middle_is_reported_with_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (_, ends) = write_manifest(dir.path(), 10);
    let path = manifest_path(dir.path(), 3);
    let mut bytes = StdEnv.read_all(&path).unwrap();
    let victim_start = ends[4] as usize; // the fifth edit
    bytes[victim_start + 12] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    match read_manifest(&StdEnv, &path) {
        Err(Error::Corruption { file, offset, .. }) => {
            assert_eq!(file, path);
            assert_eq!(offset, victim_start as u64);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

/// Writes a manifest-framed file with the given header and records.
fn raw_manifest(path: &Path, header: &[u8], records: &[Vec<u8>]) {
    let mut w = LogWriter::new(StdEnv.create_writable(path).unwrap());
    w.add_record(header).unwrap();
    for r in records {
        w.add_record(r).unwrap();
    }
    w.sync().unwrap();
}

fn header(magic: &[u8], version: u32) -> Vec<u8> {
    let mut h = magic.to_vec();
    h.extend_from_slice(&version.to_le_bytes());
    h
}

#[test]
fn header_checks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("MANIFEST-000009");

    raw_manifest(
        &path,
        &header(&MANIFEST_MAGIC, MANIFEST_FORMAT_VERSION),
        &[],
    );
    assert!(read_manifest(&StdEnv, &path).unwrap().is_empty());

    raw_manifest(
        &path,
        &header(&MANIFEST_MAGIC, MANIFEST_FORMAT_VERSION + 1),
        &[],
    );
    match read_manifest(&StdEnv, &path) {
        Err(Error::UnsupportedVersion {
            file,
            found,
            supported,
        }) => {
            assert_eq!(file, path);
            assert_eq!(found, MANIFEST_FORMAT_VERSION + 1);
            assert_eq!(supported, MANIFEST_FORMAT_VERSION);
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }

    for bad in [
        header(b"BKVMANIX", 1),
        header(&MANIFEST_MAGIC, 0),
        MANIFEST_MAGIC.to_vec(),
        Vec::new(),
        edit(1).encode(),
    ] {
        raw_manifest(&path, &bad, &[edit(1).encode()]);
        let err = read_manifest(&StdEnv, &path).unwrap_err();
        assert!(
            matches!(&err, Error::Corruption { file, offset: 0, .. } if file == &path),
            "{bad:?}: {err}"
        );
    }

    // An empty file, or one whose header record is torn, has no header.
    for content in [&b""[..], &[1, 2, 3][..]] {
        std::fs::write(&path, content).unwrap();
        let err = read_manifest(&StdEnv, &path).unwrap_err();
        assert!(err.to_string().contains("no complete header"), "{err}");
    }
}

#[test]
fn undecodable_edit_names_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("MANIFEST-000009");
    let good = edit(1).encode();
    raw_manifest(
        &path,
        &header(&MANIFEST_MAGIC, 1),
        &[good.clone(), vec![1, 5, 42, 0], good],
    );
    let err = read_manifest(&StdEnv, &path).unwrap_err();
    // Header record (7 + 12 bytes), then the first edit's record.
    let want = (7 + 12 + 7 + edit(1).encode().len()) as u64;
    match &err {
        Error::Corruption { file, offset, why } => {
            assert_eq!(file, &path);
            assert_eq!(*offset, want);
            assert!(why.contains("unknown version edit tag 42"), "{why}");
            assert!(why.contains("byte 2 of the edit"), "{why}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}
