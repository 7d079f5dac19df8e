//! Fuzz drivers for the server. Each takes arbitrary bytes and panics only on a bug.

use bloomkv_server::resp::{Limits, Parser, Reply};
use bytes::BytesMut;

/// What parsing a whole input gave: the requests, then the error text if it stopped on one.
type Outcome = (Vec<Vec<Vec<u8>>>, Option<String>);

fn parse_in_pieces(input: &[u8], piece: usize, limits: Limits, authed: bool) -> Outcome {
    let mut parser = Parser::new(limits);
    parser.set_authenticated(authed);
    let mut buf = BytesMut::new();
    let mut requests = Vec::new();
    for chunk in input.chunks(piece.max(1)) {
        buf.extend_from_slice(chunk);
        loop {
            match parser.next(&mut buf) {
                Ok(Some(args)) => {
                    assert!(
                        !args.is_empty(),
                        "empty requests are skipped, never returned"
                    );
                    for a in &args {
                        assert!(a.len() <= limits.max_bulk_len);
                    }
                    requests.push(args.iter().map(|a| a.to_vec()).collect());
                }
                Ok(None) => break,
                Err(e) => return (requests, Some(e.to_string())),
            }
        }
    }
    (requests, None)
}

/// The RESP parser: never panics; the requests (and the error) do not depend on how the
/// input is split across reads; every request re-encoded as RESP parses back to itself; and
/// encoding any reply built from the input never panics.
pub fn resp_parser(data: &[u8]) {
    let Some((&split, input)) = data.split_first() else {
        return;
    };
    let limits = Limits {
        max_bulk_len: 4096,
        max_multibulk_len: 1024,
        max_inline_len: 512,
        max_query_buffer: 1 << 20,
    };
    // The top bit of the first byte picks the unauthenticated limits (10 elements, 16 KiB).
    let authed = split & 0x80 == 0;
    let whole = parse_in_pieces(input, input.len(), limits, authed);
    let pieces = parse_in_pieces(input, usize::from(split % 31) + 1, limits, authed);
    // Splitting may let a limit trip earlier only if the input is still incomplete; with
    // whole input and pieces seeing the same bytes, the outcomes must agree.
    assert_eq!(whole, pieces, "outcome depends on read boundaries");
    let mut encoded = Vec::new();
    for req in &whole.0 {
        encoded.extend_from_slice(format!("*{}\r\n", req.len()).as_bytes());
        for a in req {
            encoded.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            encoded.extend_from_slice(a);
            encoded.extend_from_slice(b"\r\n");
        }
    }
    let again = parse_in_pieces(&encoded, encoded.len(), limits, authed);
    assert_eq!(
        again,
        (whole.0.clone(), None),
        "re-encoded requests parse differently"
    );
    for proto in [2, 3] {
        let reply = Reply::Array(
            whole
                .0
                .iter()
                .flatten()
                .map(|a| Reply::Error(String::from_utf8_lossy(a).into_owned()))
                .collect(),
        );
        let mut out = Vec::new();
        reply.encode(proto, &mut out);
        assert!(!out.is_empty());
    }
}
