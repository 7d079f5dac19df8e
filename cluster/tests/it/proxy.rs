//! The test proxy: passes, delays, blackholes and cuts a link as told.

use std::time::{Duration, Instant};

use bloomkv_cluster_testkit::proxy::{Link, Proxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn echo_server() -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    addr
}

async fn round_trip(c: &mut TcpStream, msg: &[u8]) -> std::io::Result<Vec<u8>> {
    c.write_all(msg).await?;
    let mut buf = vec![0u8; msg.len()];
    c.read_exact(&mut buf).await?;
    Ok(buf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_delay_blackhole_cut() {
    let proxy = Proxy::start(echo_server().await).await.unwrap();
    let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(round_trip(&mut c, b"hello").await.unwrap(), b"hello");

    proxy.set(Link::Delay(Duration::from_millis(100)));
    let t = Instant::now();
    assert_eq!(round_trip(&mut c, b"slow").await.unwrap(), b"slow");
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "delayed both ways: {:?}",
        t.elapsed()
    );

    proxy.set(Link::Blackhole);
    let lost = tokio::time::timeout(Duration::from_millis(300), round_trip(&mut c, b"gone")).await;
    assert!(lost.is_err(), "nothing comes back through a blackhole");

    proxy.set(Link::Pass);
    let mut c2 = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(round_trip(&mut c2, b"again").await.unwrap(), b"again");

    proxy.set(Link::Cut);
    let mut buf = [0u8; 8];
    let n = tokio::time::timeout(Duration::from_secs(2), c2.read(&mut buf))
        .await
        .unwrap();
    assert!(
        matches!(n, Ok(0) | Err(_)),
        "an open connection is closed: {n:?}"
    );
    // New connections are accepted and closed at once.
    let mut c3 = TcpStream::connect(proxy.addr()).await.unwrap();
    let n = tokio::time::timeout(Duration::from_secs(2), c3.read(&mut buf))
        .await
        .unwrap();
    assert!(matches!(n, Ok(0) | Err(_)), "{n:?}");
    assert_eq!(proxy.link(), Link::Cut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_aborts_open_and_new_connections() {
    let proxy = Proxy::start(echo_server().await).await.unwrap();
    let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(round_trip(&mut c, b"hello").await.unwrap(), b"hello");

    proxy.set(Link::Reset);
    let mut buf = [0u8; 8];
    let r = tokio::time::timeout(Duration::from_secs(2), c.read(&mut buf))
        .await
        .unwrap();
    assert_eq!(
        r.map_err(|e| e.kind()).err(),
        Some(std::io::ErrorKind::ConnectionReset),
        "an open connection is reset, not closed in order"
    );
    // A new connection is reset on accept: the reset reaches the connect itself or the
    // first read, depending on who runs first.
    let r = match TcpStream::connect(proxy.addr()).await {
        Ok(mut c2) => tokio::time::timeout(Duration::from_secs(2), c2.read(&mut buf))
            .await
            .unwrap()
            .map(|_| ()),
        Err(e) => Err(e),
    };
    assert_eq!(
        r.map_err(|e| e.kind()).err(),
        Some(std::io::ErrorKind::ConnectionReset),
        "a new connection is reset on accept"
    );
    assert_eq!(proxy.link(), Link::Reset);

    proxy.set(Link::Pass);
    let mut c3 = TcpStream::connect(proxy.addr()).await.unwrap();
    assert_eq!(round_trip(&mut c3, b"again").await.unwrap(), b"again");
}

/// A server that closes (or dies) is seen closed by the client at once, as its kernel's FIN
/// would tell it: the proxy does not hold the client's side open for its linger, in which a
/// client with a pooled connection would send requests into a dead one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closing_server_closes_the_client_side() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        if let Ok((mut s, _)) = l.accept().await {
            let _ = s.write_all(b"bye").await;
        }
    });
    let proxy = Proxy::start(addr).await.unwrap();
    let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
    let mut buf = [0u8; 3];
    c.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"bye");
    // The client keeps its own side open. The proxy lingers 2 s for requests still in
    // flight towards the server; the end of the server's side must not wait for that.
    let n = tokio::time::timeout(Duration::from_millis(1500), c.read(&mut buf)).await;
    assert!(
        matches!(n, Ok(Ok(0))),
        "the server's close reaches the client before the linger ends: {n:?}"
    );
}
