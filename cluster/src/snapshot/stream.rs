//! Streaming a snapshot directory over one HTTP request body, and receiving it.
//!
//! The body is a sequence of frames, each `tag: u8, length: u32 BE, payload`:
//! `H` (first) the encoded vote and snapshot metadata; for each file `F` its encoded name
//! and size, then `D` frames of its bytes (at most [`CHUNK`] each); `M` (last) the manifest:
//! every file's name, size and CRC-32. The receiver writes the files into a scratch
//! directory, checks the names (plain file names only), the sizes it declared and got, and
//! the manifest against what it computed while receiving, fsyncs every file and the
//! directory, and only then hands the snapshot to openraft for installing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bloomkv::env::{Env, WritableFile};
use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::{SnapshotData, meta_file};
use crate::codec;
use crate::types::{SnapshotMeta, Vote};

/// Bytes of file data per `D` frame.
pub(crate) const CHUNK: usize = 1 << 20;
/// The longest a snapshot stream may go without a byte moving before it is given up (and
/// sent again by the leader): the receiver waiting for bytes, the sender for the
/// connection to take them. Without it a stream whose connection silently stopped
/// forwarding (a middlebox dropping packets, a peer paused mid-stream) held the follower
/// behind until the whole-transfer bound (minutes) ran out.
pub(crate) const IDLE: Duration = Duration::from_secs(10);
/// The first wait for a snapshot's answer after its last byte left, beside the time its
/// size takes at [`INSTALL_RATE`]. Short: a link that swallows bytes takes a small
/// snapshot whole at once, and the follower stays behind until the leader sends it again.
pub(crate) const ANSWER_WAIT: Duration = Duration::from_secs(2);
/// The slowest rate a snapshot's receiver is allowed for taking in, syncing and installing
/// what it was sent once the last byte left.
pub(crate) const INSTALL_RATE: u64 = 8 << 20;
/// The largest frame payload a receiver accepts.
const MAX_FRAME: usize = 4 << 20;

const TAG_HEADER: u8 = b'H';
const TAG_FILE: u8 = b'F';
const TAG_DATA: u8 = b'D';
const TAG_MANIFEST: u8 = b'M';

#[derive(Serialize, Deserialize)]
struct Header {
    vote: Vote,
    meta: SnapshotMeta,
}

#[derive(Serialize, Deserialize)]
struct FileHead {
    name: String,
    size: u64,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
struct FileSum {
    size: u64,
    crc: u32,
}

fn frame(tag: u8, payload: &[u8]) -> Result<Bytes, String> {
    let len = u32::try_from(payload.len()).map_err(|_| "frame over 4 GiB".to_string())?;
    let mut b = BytesMut::with_capacity(5 + payload.len());
    b.extend_from_slice(&[tag]);
    b.extend_from_slice(&len.to_be_bytes());
    b.extend_from_slice(payload);
    Ok(b.freeze())
}

/// Whether `name` is a plain file name a snapshot may hold.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

/// The frames of snapshot `dir` (vote and meta first), produced by a blocking task that
/// reads the files through `env`; an error ends the stream with that error.
pub(crate) fn send(
    env: Arc<dyn Env>,
    dir: std::path::PathBuf,
    vote: Vote,
    meta: SnapshotMeta,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::task::spawn_blocking(move || {
        if let Err(e) = produce(env.as_ref(), &dir, vote, meta, &tx) {
            let _ = tx.blocking_send(Err(std::io::Error::other(e)));
        }
    });
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

fn produce(
    env: &dyn Env,
    dir: &Path,
    vote: Vote,
    meta: SnapshotMeta,
    tx: &mpsc::Sender<Result<Bytes, std::io::Error>>,
) -> Result<(), String> {
    let put = |b: Bytes| {
        tx.blocking_send(Ok(b))
            .map_err(|_| "receiver gone".to_string())
    };
    put(frame(TAG_HEADER, &codec::encode(&Header { vote, meta })?)?)?;
    let mut names = env.list_dir(dir).map_err(|e| e.to_string())?;
    names.sort();
    let mut manifest = BTreeMap::new();
    for name in names {
        // The metadata travels in the header; LOCK is a live database's, not data.
        if name == meta_file::NAME || name == "LOCK" {
            continue;
        }
        let path = dir.join(&name);
        if env.is_dir(&path) {
            continue;
        }
        let size = env.file_size(&path).map_err(|e| e.to_string())?;
        put(frame(
            TAG_FILE,
            &codec::encode(&FileHead {
                name: name.clone(),
                size,
            })?,
        )?)?;
        let f = env.open_random_access(&path).map_err(|e| e.to_string())?;
        let mut crc = crc32fast::Hasher::new();
        let mut off = 0u64;
        while off < size {
            let n = usize::try_from(size - off).unwrap_or(CHUNK).min(CHUNK);
            let data = f.read_at(off, n).map_err(|e| e.to_string())?;
            if data.len() != n {
                return Err(format!("{} shrank while being sent", path.display()));
            }
            crc.update(&data);
            put(frame(TAG_DATA, &data)?)?;
            off += n as u64;
        }
        manifest.insert(
            name,
            FileSum {
                size,
                crc: crc.finalize(),
            },
        );
    }
    put(frame(TAG_MANIFEST, &codec::encode(&manifest)?)?)
}

/// A file being received.
struct Open {
    name: String,
    size: u64,
    got: u64,
    crc: crc32fast::Hasher,
    file: Box<dyn WritableFile>,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("snapshot receive task failed: {e}"))?
}

/// Closes (fsyncs) the file being received, checking it is complete.
async fn close(open: Open, received: &mut BTreeMap<String, FileSum>) -> Result<(), String> {
    if open.got != open.size {
        return Err(format!(
            "snapshot file {} ended at {} of {} bytes",
            open.name, open.got, open.size
        ));
    }
    let mut file = open.file;
    blocking(move || file.sync().map_err(|e| e.to_string())).await?;
    received.insert(
        open.name,
        FileSum {
            size: open.size,
            crc: open.crc.finalize(),
        },
    );
    Ok(())
}

/// Receives a snapshot body into `into` (an empty scratch directory). Returns the vote and
/// metadata from the header, with `into` now holding the verified, synced files.
/// `progress` is called with the sender's vote after every frame past the header: the
/// node counts a stream from its leader as contact (no election halfway through it).
pub(crate) async fn receive<S, E>(
    env: Arc<dyn Env>,
    mut body: S,
    into: SnapshotData,
    progress: impl Fn(&Vote),
) -> Result<(Vote, SnapshotMeta, SnapshotData), String>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut buf = BytesMut::new();
    let mut header: Option<Header> = None;
    let mut open: Option<Open> = None;
    let mut received = BTreeMap::new();
    let mut manifest: Option<BTreeMap<String, FileSum>> = None;
    loop {
        // Parse every whole frame in the buffer.
        while buf.len() >= 5 {
            let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
            if len > MAX_FRAME {
                return Err(format!("snapshot frame of {len} bytes exceeds {MAX_FRAME}"));
            }
            if buf.len() < 5 + len {
                break;
            }
            let tag = buf[0];
            buf.advance(5);
            let payload = buf.split_to(len).freeze();
            if manifest.is_some() {
                return Err("snapshot stream goes on after its manifest".into());
            }
            match (tag, header.is_some()) {
                (TAG_HEADER, false) => header = Some(codec::decode(&payload)?),
                (TAG_HEADER, true) => return Err("second snapshot header".into()),
                (_, false) => return Err("snapshot stream does not start with a header".into()),
                (TAG_FILE, true) => {
                    if let Some(o) = open.take() {
                        close(o, &mut received).await?;
                    }
                    let head: FileHead = codec::decode(&payload)?;
                    if !valid_name(&head.name) || head.name == meta_file::NAME {
                        return Err(format!("snapshot file name {:?} refused", head.name));
                    }
                    if received.contains_key(&head.name) {
                        return Err(format!("snapshot file {} sent twice", head.name));
                    }
                    let path = into.dir.join(&head.name);
                    let env2 = Arc::clone(&env);
                    let file =
                        blocking(move || env2.create_writable(&path).map_err(|e| e.to_string()))
                            .await?;
                    open = Some(Open {
                        name: head.name,
                        size: head.size,
                        got: 0,
                        crc: crc32fast::Hasher::new(),
                        file,
                    });
                }
                (TAG_DATA, true) => {
                    let Some(mut o) = open.take() else {
                        return Err("snapshot data before any file".into());
                    };
                    o.got += payload.len() as u64;
                    if o.got > o.size {
                        return Err(format!(
                            "snapshot file {} is longer than its declared {} bytes",
                            o.name, o.size
                        ));
                    }
                    o.crc.update(&payload);
                    let mut file = o.file;
                    let file = blocking(move || {
                        file.append(&payload).map_err(|e| e.to_string())?;
                        Ok(file)
                    })
                    .await?;
                    o.file = file;
                    open = Some(o);
                }
                (TAG_MANIFEST, true) => {
                    if let Some(o) = open.take() {
                        close(o, &mut received).await?;
                    }
                    manifest = Some(codec::decode(&payload)?);
                }
                (t, true) => return Err(format!("unknown snapshot frame tag {t:#04x}")),
            }
            if let Some(h) = &header {
                progress(&h.vote);
            }
        }
        match body.next().await {
            Some(Ok(chunk)) => buf.extend_from_slice(&chunk),
            Some(Err(e)) => return Err(format!("snapshot stream broke: {e}")),
            None => break,
        }
    }
    if !buf.is_empty() {
        return Err(format!(
            "snapshot stream ends inside a frame ({} bytes left)",
            buf.len()
        ));
    }
    let (Some(header), Some(manifest)) = (header, manifest) else {
        return Err("snapshot stream ended before its manifest".into());
    };
    if manifest != received {
        let missing: Vec<_> = manifest
            .keys()
            .filter(|k| !received.contains_key(*k))
            .collect();
        let differing: Vec<_> = received
            .iter()
            .filter(|(k, v)| manifest.get(*k) != Some(v))
            .map(|(k, _)| k)
            .collect();
        return Err(format!(
            "snapshot manifest does not match the files received (missing {missing:?}, \
             differing or unlisted {differing:?})"
        ));
    }
    let dir = into.dir.clone();
    blocking(move || env.sync_dir(&dir).map_err(|e| e.to_string())).await?;
    Ok((header.vote, header.meta, into))
}

/// `body` with each item awaited at most `idle`: a stall ends the stream with an error that
/// says so.
pub(crate) fn idle_bounded<S, E>(
    body: S,
    idle: Duration,
) -> impl Stream<Item = Result<Bytes, String>> + Unpin
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    Box::pin(futures_util::stream::unfold(
        Some(body),
        move |body| async move {
            let mut body = body?;
            match tokio::time::timeout(idle, body.next()).await {
                Ok(Some(Ok(b))) => Some((Ok(b), Some(body))),
                Ok(Some(Err(e))) => Some((Err(e.to_string()), None)),
                Ok(None) => None,
                Err(_) => Some((
                    Err(format!("no snapshot bytes for {} s", idle.as_secs())),
                    None,
                )),
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_that_stops_moving_ends_with_an_error() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let items: Vec<Result<Bytes, String>> = rt.block_on(async {
            let first = futures_util::stream::iter([Ok::<_, String>(Bytes::from_static(b"ab"))]);
            let stuck = first.chain(futures_util::stream::pending());
            idle_bounded(stuck, Duration::from_millis(20))
                .collect()
                .await
        });
        assert_eq!(items.len(), 2, "{items:?}");
        assert_eq!(items[0], Ok(Bytes::from_static(b"ab")));
        assert!(items[1].as_ref().unwrap_err().contains("no snapshot bytes"));

        let ended: Vec<Result<Bytes, String>> = rt.block_on(
            idle_bounded(
                futures_util::stream::iter([Ok::<_, String>(Bytes::from_static(b"x"))]),
                Duration::from_millis(20),
            )
            .collect(),
        );
        assert_eq!(ended, vec![Ok(Bytes::from_static(b"x"))]);
    }
    use crate::fsutil::DirGuard;
    use bloomkv::env::StdEnv;
    use bloomkv::{Db, Options};

    /// A checkpoint with a few keys, and the frames that send it.
    async fn sent() -> (tempfile::TempDir, Vec<Bytes>, SnapshotMeta) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("live"), Options::default()).unwrap();
        for i in 0..100 {
            db.put(format!("k{i}"), vec![i as u8; 300]).unwrap();
        }
        db.flush().unwrap();
        db.put("in-wal", "x").unwrap();
        db.checkpoint(dir.path().join("snap")).unwrap();
        let meta = SnapshotMeta {
            snapshot_id: "s1".into(),
            ..Default::default()
        };
        let frames: Vec<Bytes> = send(
            StdEnv::shared(),
            dir.path().join("snap"),
            Vote::default(),
            meta.clone(),
        )
        .map(|r| r.unwrap())
        .collect()
        .await;
        (dir, frames, meta)
    }

    async fn receive_frames(dir: &Path, frames: Vec<Bytes>) -> Result<SnapshotMeta, String> {
        let into_dir = dir.join(format!("in{}", frames.len()));
        let _ = std::fs::remove_dir_all(&into_dir);
        std::fs::create_dir_all(&into_dir).unwrap();
        let into = SnapshotData {
            dir: into_dir.clone(),
            _keep: Arc::new(DirGuard::new(into_dir, StdEnv::shared(), false)),
        };
        let body = futures_util::stream::iter(frames.into_iter().map(Ok::<_, String>));
        receive(StdEnv::shared(), body, into, |_| {})
            .await
            .map(|(_, m, _)| m)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sent_snapshot_is_received_whole() {
        let (dir, frames, meta) = sent().await;
        // Re-chunk the byte stream arbitrarily: frames split across network reads.
        let all: Vec<u8> = frames.iter().flat_map(|f| f.to_vec()).collect();
        let pieces: Vec<Bytes> = all.chunks(777).map(Bytes::copy_from_slice).collect();
        let got = receive_frames(dir.path(), pieces.clone()).await.unwrap();
        assert_eq!(got, meta);
        let into = dir.path().join(format!("in{}", pieces.len()));
        let db = Db::open_read_only(&into, Options::default()).unwrap();
        assert_eq!(db.get("k7").unwrap(), Some(vec![7u8; 300]));
        assert_eq!(db.get("in-wal").unwrap(), Some(b"x".to_vec()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn damaged_streams_are_refused_with_the_reason() {
        let (dir, frames, _) = sent().await;
        let data_at = frames.iter().position(|f| f[0] == TAG_DATA).unwrap();
        let cases: Vec<(&str, Vec<Bytes>)> = vec![
            ("manifest", frames[..frames.len() - 1].to_vec()),
            ("header", frames[1..].to_vec()),
            ("ends inside a frame", {
                let mut f = frames.clone();
                let last = f.pop().unwrap();
                f.push(last.slice(..last.len() - 1));
                f
            }),
            ("manifest does not match", {
                let mut f = frames.clone();
                let mut d = f[data_at].to_vec();
                d[10] ^= 1;
                f[data_at] = Bytes::from(d);
                f
            }),
            ("ended at", {
                let mut f = frames.clone();
                f.remove(data_at);
                f
            }),
            ("longer than", {
                let mut f = frames.clone();
                f.insert(data_at, frame(TAG_DATA, &vec![0u8; 1 << 21]).unwrap());
                f
            }),
            ("refused", {
                let mut f = frames.clone();
                let file_at = f.iter().position(|f| f[0] == TAG_FILE).unwrap();
                f[file_at] = frame(
                    TAG_FILE,
                    &codec::encode(&FileHead {
                        name: "../escape".into(),
                        size: 1,
                    })
                    .unwrap(),
                )
                .unwrap();
                f
            }),
            ("after its manifest", {
                let mut f = frames.clone();
                f.push(frame(TAG_DATA, b"x").unwrap());
                f
            }),
            (
                "exceeds",
                vec![Bytes::from(vec![TAG_HEADER, 0xff, 0xff, 0xff, 0xff])],
            ),
        ];
        for (why, f) in cases {
            let e = receive_frames(dir.path(), f).await.unwrap_err();
            assert!(e.contains(why), "expected {why:?}, got {e:?}");
        }
    }

    #[test]
    fn names() {
        assert!(valid_name("000012.sst"));
        assert!(valid_name("MANIFEST-000003"));
        for bad in ["", ".", "..", "a/b", "../x", "a\0", "é"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
