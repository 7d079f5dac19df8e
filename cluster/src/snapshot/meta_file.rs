//! `RAFT-SNAPSHOT`: the metadata file inside a snapshot directory.
//!
//! Layout: magic `BKVRSNAP` (8 bytes), version u32 LE (1), length u32 LE, the encoded
//! snapshot metadata (last log id, membership, snapshot id), CRC-32 (IEEE) LE of every byte
//! before it. Written synced before the directory is renamed into place.

use std::path::Path;

use bloomkv::env::Env;

use crate::codec;
use crate::error::{Error, Result};
use crate::fsutil;
use crate::types::SnapshotMeta;

pub(crate) const NAME: &str = "RAFT-SNAPSHOT";
const MAGIC: &[u8; 8] = b"BKVRSNAP";
const VERSION: u32 = 1;

pub(crate) fn encode(meta: &SnapshotMeta) -> Result<Vec<u8>> {
    let body = codec::encode(meta).map_err(Error::Storage)?;
    let len = u32::try_from(body.len())
        .map_err(|_| Error::Storage("snapshot metadata over 4 GiB".into()))?;
    let mut out = Vec::with_capacity(body.len() + 20);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<SnapshotMeta> {
    let damaged = |why: &str| Error::Storage(format!("{} is damaged: {why}", path.display()));
    if bytes.len() < 20 || &bytes[..8] != MAGIC {
        return Err(damaged("no snapshot metadata magic"));
    }
    let (body_and_header, crc) = bytes.split_at(bytes.len() - 4);
    let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32fast::hash(body_and_header) != crc {
        return Err(damaged("checksum mismatch"));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != VERSION {
        return Err(damaged(&format!(
            "version {version}, this build reads {VERSION}"
        )));
    }
    let len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    if 16 + len != body_and_header.len() {
        return Err(damaged("length does not match the file"));
    }
    codec::decode(&body_and_header[16..]).map_err(|e| damaged(&e))
}

pub(crate) fn write(env: &dyn Env, dir: &Path, meta: &SnapshotMeta) -> Result<()> {
    let path = dir.join(NAME);
    fsutil::write_synced(env, &path, &encode(meta)?)
        .map_err(|e| Error::db("writing snapshot metadata", e))?;
    env.sync_dir(dir)
        .map_err(|e| Error::db("syncing a snapshot directory", e))
}

pub(crate) fn read(env: &dyn Env, dir: &Path) -> Result<SnapshotMeta> {
    let path = dir.join(NAME);
    let bytes = env
        .read_all(&path)
        .map_err(|e| Error::db("reading snapshot metadata", e))?;
    decode(&bytes, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let meta = SnapshotMeta {
            snapshot_id: "snap-1".into(),
            ..Default::default()
        };
        let b = encode(&meta).unwrap();
        assert_eq!(decode(&b, Path::new("x")).unwrap(), meta);
        for i in 0..b.len() {
            let mut d = b.clone();
            d[i] ^= 0x40;
            assert!(decode(&d, Path::new("x")).is_err(), "flip at {i} accepted");
        }
        assert!(decode(&b[..b.len() - 1], Path::new("x")).is_err());
    }
}
