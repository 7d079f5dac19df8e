//! The manifest's tests: CURRENT, version edits and the manifest log.

mod current;
mod edit;
mod log;

/// The module's documented usage, end to end.
#[test]
fn write_current_then_read_back() -> crate::Result<()> {
    use crate::env::StdEnv;
    use crate::db::manifest::{ManifestWriter, VersionEdit, read_current, read_manifest, set_current};
    let dir = tempfile::tempdir()?;
    let mut m = ManifestWriter::create(&StdEnv, dir.path(), 1)?;
    let edit = VersionEdit { next_file_number: Some(2), ..VersionEdit::default() };
    m.append(&edit)?;
    set_current(&StdEnv, dir.path(), m.number())?;
    
    let number = read_current(&StdEnv, dir.path())?;
    let path = crate::util::filename::manifest_path(dir.path(), number);
    assert_eq!(read_manifest(&StdEnv, &path)?, vec![edit]);
    Ok(())
}
