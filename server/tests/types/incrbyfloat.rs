//! INCRBYFLOAT in Redis's long double arithmetic and text (`cmd::longdouble`): the replies of
//! redis-server 7.0 for sums an `f64` gets wrong.

use crate::common;

use common::{TestServer, bulk, err, ok};

#[test]
fn incrbyfloat_answers_as_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["INCRBYFLOAT", "k", "0.1"]), bulk("0.1"));
    assert_eq!(ok(&mut c, &["INCRBYFLOAT", "k", "0.2"]), bulk("0.3"));
    assert_eq!(ok(&mut c, &["GET", "k"]), bulk("0.3"));
    assert_eq!(ok(&mut c, &["INCRBYFLOAT", "t", "1e-20"]), bulk("0"));
    assert_eq!(ok(&mut c, &["INCRBYFLOAT", "x", "0x10"]), bulk("16"));
    assert_eq!(
        ok(&mut c, &["INCRBYFLOAT", "p", "3.0000000000000001"]),
        bulk("3.0000000000000001")
    );
    ok(&mut c, &["SET", "n", "17179869184"]);
    assert_eq!(
        ok(&mut c, &["INCRBYFLOAT", "n", "1.5"]),
        bulk("17179869185.5")
    );
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "k", "x"]),
        "ERR value is not a valid float"
    );
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "k", "inf"]),
        "ERR increment would produce NaN or Infinity"
    );
    ok(&mut c, &["SET", "s", " 1"]);
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "s", "1"]),
        "ERR value is not a valid float"
    );
    // The type is checked before the increment is parsed.
    ok(&mut c, &["SADD", "set", "m"]);
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "set", "x"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}
