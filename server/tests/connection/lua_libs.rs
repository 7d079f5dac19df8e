//! The Lua libraries `cjson` and `cmsgpack` (and `bit`) as scripts see them: replies byte
//! for byte as redis-server 7.0.15 gave them, errors located at the script's line as Redis
//! locates them, and round trips of random values through both libraries.

use crate::common;

use common::model::Rng;
use common::{Raw, TestServer, bulk, ok};
use redis::Value;

/// Runs `(arguments, exact reply)` rows on one connection.
fn run(raw: &mut Raw, table: &[(&[&str], &[u8])]) {
    for (args, want) in table {
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        raw.expect(&refs, want);
    }
}

/// Recorded from redis-server 7.0.15 (RESP2).
#[rustfmt::skip]
const RECORDED: &[(&[&str], &[u8])] = &[
    (&["EVAL", "return cjson.encode({1,2,3,'a',true,false})", "0"], b"$22\r\n[1,2,3,\"a\",true,false]\r\n"),
    (&["EVAL", "return cjson.encode({a={b={1.5,-2,0.1}}})", "0"], b"$24\r\n{\"a\":{\"b\":[1.5,-2,0.1]}}\r\n"),
    (&["EVAL", "return cjson.encode('he said \"hi\" / \\\\ \\n\\t\\1')", "0"], b"$33\r\n\"he said \\\"hi\\\" \\/ \\\\ \\n\\t\\u0001\"\r\n"),
    (&["EVAL", "return cjson.encode({})", "0"], b"$2\r\n{}\r\n"),
    (&["EVAL", "return cjson.encode(1/3)", "0"], b"$16\r\n0.33333333333333\r\n"),
    (&["EVAL", "return cjson.encode(123456789012345)", "0"], b"$19\r\n1.2345678901234e+14\r\n"),
    (&["EVAL", "return cjson.encode(1e-5)", "0"], b"$5\r\n1e-05\r\n"),
    (&["EVAL", "return cjson.encode({[1]=1,[3]=3})", "0"], b"$10\r\n[1,null,3]\r\n"),
    (&["EVAL", "return cjson.encode({[1]=1,[20]=3})", "0"], b"-ERR user_script:1: Cannot serialise table: excessively sparse array script: 599049a94af36a079b8c19b2e9635d7951cda076, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.encode({cjson.null, 1})", "0"], b"$8\r\n[null,1]\r\n"),
    (&["EVAL", "return cjson.encode(1/0)", "0"], b"-ERR user_script:1: Cannot serialise number: must not be NaN or Inf script: 08ffdaa5e7f117332da21c3b5222c2ede9492c60, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.encode({[true]=1})", "0"], b"-ERR user_script:1: Cannot serialise boolean: table key must be a number or string script: 376a640005c8509c694166527ca834359bf69aa8, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.encode(print)", "0"], b"-ERR user_script:1: Script attempted to access nonexistent global variable 'print' script: 8d87d02dc9dc22ef8e1a9ef2fc499a776fb0dbdd, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.encode({[2.5]=1})", "0"], b"$9\r\n{\"2.5\":1}\r\n"),
    (&["EVAL", "local t = cjson.decode('[1,2.5,\"x\",true,false,null,{\"k\":[]}]') return {t[1], t[2]*2, t[3], tostring(t[4]), tostring(t[5]), type(t[6]), t[6] == cjson.null, type(t[7].k)}", "0"], b"*8\r\n:1\r\n:5\r\n$1\r\nx\r\n$4\r\ntrue\r\n$5\r\nfalse\r\n$8\r\nuserdata\r\n:1\r\n$5\r\ntable\r\n"),
    (&["EVAL", "return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\\\\/\"')", "0"], b"$7\r\n\xc3\xa9\xf0\x9f\x98\x80/\r\n"),
    (&["EVAL", "return cjson.decode('{\"a\":')", "0"], b"-ERR user_script:1: Expected value but found T_END at character 6 script: 9ac0f551e097a39c64b39342e3f1952f29ac6e07, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.decode('[1,]')", "0"], b"-ERR user_script:1: Expected value but found T_ARR_END at character 4 script: d31ab1dd313d99d4ad3dac6e48cdff283bea270c, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.decode('nope')", "0"], b"-ERR user_script:1: Expected value but found invalid token at character 1 script: 765d2c31a58a800303d3c85c08339aaf0b35d684, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.decode('[1] x')", "0"], b"-ERR user_script:1: Expected the end but found invalid token at character 5 script: 90488ed3df43636c96be19291b12cbc738913942, on @user_script:1.\r\n"),
    (&["EVAL", "return cjson.decode('  42  ')", "0"], b":42\r\n"),
    (&["EVAL", "return cjson.decode('-1.5e3')", "0"], b":-1500\r\n"),
    (&["EVAL", "return cjson.encode(cjson.decode('{\"a\":{\"b\":[1,2,{\"c\":null}]}}'))", "0"], b"$28\r\n{\"a\":{\"b\":[1,2,{\"c\":null}]}}\r\n"),
    (&["EVAL", "return cmsgpack.pack(1, -1, 200, -200, 70000, -70000, 5000000000, -5000000000, 1.5, 0.1, 'abc', true, false, nil)", "0"], b"$56\r\n\x01\xff\xcc\xc8\xd1\xff8\xce\x00\x01\x11p\xd2\xff\xfe\xee\x90\xcf\x00\x00\x00\x01*\x05\xf2\x00\xd3\xff\xff\xff\xfe\xd5\xfa\x0e\x00\xca?\xc0\x00\x00\xcb?\xb9\x99\x99\x99\x99\x99\x9a\xa3abc\xc3\xc2\xc0\r\n"),
    (&["EVAL", "return cmsgpack.pack({1,2,3}, {}, {a=1}, string.rep('x', 40), string.rep('y', 300))", "0"], b"$354\r\n\x93\x01\x02\x03\x90\x81\xa1a\x01\xd9(xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xda\x01,yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\r\n"),
    (&["EVAL", "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3, {4}}, -5, 1.25))}", "0"], b"*5\r\n:1\r\n$3\r\ntwo\r\n*2\r\n:3\r\n*1\r\n:4\r\n:-5\r\n:1\r\n"),
    (&["EVAL", "local a, b = cmsgpack.unpack(cmsgpack.pack({k='v'}, 7)) return {a.k, b}", "0"], b"*2\r\n$1\r\nv\r\n:7\r\n"),
    (&["EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", "0"], b"*2\r\n:1\r\n:1\r\n"),
    (&["EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}", "0"], b"*2\r\n:2\r\n:2\r\n"),
    (&["EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}", "0"], b"*2\r\n:-1\r\n:3\r\n"),
    (&["EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", "0"], b"*3\r\n:2\r\n:1\r\n:2\r\n"),
    (&["EVAL", "return cmsgpack.unpack('\\\\205')", "0"], b":92\r\n"),
    (&["EVAL", "return cmsgpack.pack()", "0"], b"-ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.) script: 6bc235afa55de88253e203cc5fe5844792e25209, on @user_script:1.\r\n"),
    (&["EVAL", "return {cmsgpack.unpack(cmsgpack.pack(0.1))}", "0"], b"*1\r\n:0\r\n"),
    (&["EVAL", "local t = {} local c = t for i=1,20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)", "0"], b"$17\r\n\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0\r\n"),
    (&["EVAL", "return cmsgpack.unpack(string.char(0xc1))", "0"], b"-ERR user_script:1: Bad data format in input. script: 2ac58dacf1d7b948cadb05031e34b96c0a0332a3, on @user_script:1.\r\n"),
    (&["EVAL", "cjson.encode_max_depth(3) return cjson.encode({{{{1}}}})", "0"], b"-ERR user_script:1: Cannot serialise, excessive nesting (4) script: 3f7db40e74cea15bd74d2f2167ed89088325cedb, on @user_script:1.\r\n"),
    (&["EVAL", "cjson.encode_max_depth(3) return cjson.encode({{{1}}})", "0"], b"$7\r\n[[[1]]]\r\n"),
    (&["EVAL", "return {cjson.encode_sparse_array(true), cjson.encode({[1]=1,[20]=3})}", "0"], b"*2\r\n:1\r\n$14\r\n{\"1\":1,\"20\":3}\r\n"),
    (&["EVAL", "cjson.encode_invalid_numbers('null') return cjson.encode({1/0})", "0"], b"$6\r\n[null]\r\n"),
    (&["EVAL", "cjson.encode_number_precision(3) return cjson.encode(1/3)", "0"], b"$5\r\n0.333\r\n"),
    (&["EVAL", "return bit.tohex(65535, 4)", "0"], b"$4\r\nffff\r\n"),
];

#[test]
fn replies_match_redis() {
    let s = TestServer::start();
    run(&mut s.raw(), RECORDED);
}

/// A setting changed by one script does not leak into the next (Redis keeps it for the
/// life of its Lua state; here each run starts from the defaults, so any node's state
/// decides a replicated script the same way).
#[test]
fn settings_last_for_one_script() {
    let s = TestServer::start();
    let mut c = s.client();
    let nested = "return cjson.encode({{{{1}}}})";
    ok(&mut c, &["EVAL", "return cjson.encode_max_depth(3)", "0"]);
    assert_eq!(ok(&mut c, &["EVAL", nested, "0"]), bulk("[[[[1]]]]"));
}

/// Random nested values survive `cjson.decode(cjson.encode(v))` and
/// `cmsgpack.unpack(cmsgpack.pack(v))`: the script compares them deeply and answers 1.
#[test]
fn random_values_round_trip() {
    const CHECK: &str = r#"
        local function same(a, b)
            if type(a) ~= type(b) then return false end
            if type(a) ~= 'table' then return a == b end
            for k, v in pairs(a) do if not same(v, b[k]) then return false end end
            for k, v in pairs(b) do if a[k] == nil then return false end end
            return true
        end
        local v = VALUE
        local j = cjson.decode(cjson.encode(v))
        local m = cmsgpack.unpack(cmsgpack.pack(v))
        if not same(v, j) then return 'json: ' .. cjson.encode(j) end
        if not same(v, m) then return 'msgpack' end
        return 1
    "#;
    let s = TestServer::start();
    let mut c = s.client();
    let mut rng = Rng(0xc150);
    for round in 0..60 {
        let v = value(&mut rng, 0);
        let script = CHECK.replace("VALUE", &v);
        assert_eq!(
            ok(&mut c, &["EVAL", &script, "0"]),
            Value::Int(1),
            "round {round}: {v}"
        );
    }
}

/// A random Lua constructor: numbers (integers and fractions), strings with escapes,
/// booleans, arrays and string-keyed objects, nested up to 4 levels.
fn value(rng: &mut Rng, depth: u32) -> String {
    let pick = if depth >= 4 {
        rng.below(4)
    } else {
        rng.below(6)
    };
    match pick {
        0 => rng.range(-100_000, 100_000).to_string(),
        1 => format!("{}.{}", rng.range(-999, 999), rng.below(1000)),
        2 => {
            let n = rng.below(12);
            let s: String = (0..n)
                .map(|_| match rng.below(6) {
                    0 => "\\n".to_string(),
                    1 => "\\\"".to_string(),
                    2 => "/".to_string(),
                    3 => "\\\\".to_string(),
                    _ => ((b'a' + rng.below(26) as u8) as char).to_string(),
                })
                .collect();
            format!("\"{s}\"")
        }
        3 => if rng.below(2) == 0 { "true" } else { "false" }.to_string(),
        4 => {
            let n = 1 + rng.below(5);
            let items: Vec<String> = (0..n).map(|_| value(rng, depth + 1)).collect();
            format!("{{{}}}", items.join(","))
        }
        _ => {
            let n = 1 + rng.below(5);
            let items: Vec<String> = (0..n)
                .map(|i| format!("k{i}={}", value(rng, depth + 1)))
                .collect();
            format!("{{{}}}", items.join(","))
        }
    }
}
