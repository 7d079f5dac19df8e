//! Replays every input kept under `server/fuzz/regressions/resp_parser/` through the driver
//! the cargo-fuzz target uses, so a crash once found stays fixed on stable Rust.

#[path = "../../fuzz/src/drivers.rs"]
mod drivers;

#[test]
fn resp_parser_regressions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/resp_parser");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        drivers::resp_parser(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 5, "regression inputs missing from {}", dir.display());
}

#[test]
fn resp_parser_on_generated_inputs() {
    // A cheap stand-in for the fuzzer on stable: mutated RESP and inline fragments.
    let pieces: &[&[u8]] = &[
        b"*",
        b"$",
        b"\r\n",
        b"\r",
        b"\n",
        b"1",
        b"3",
        b"-1",
        b"0",
        b"GET",
        b"\"",
        b"'",
        b"\\x4",
        b" ",
        b"99999",
        b"*2\r\n$3\r\nSET\r\n$1\r\nk\r\n",
        b"PING\r\n",
        b"abc",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let step = |s: &mut u64| {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    };
    for _ in 0..20_000 {
        step(&mut seed);
        let mut input = vec![(seed & 0xff) as u8];
        let n = (seed >> 8) % 12;
        for _ in 0..n {
            let r = step(&mut seed);
            input.extend_from_slice(pieces[(r % pieces.len() as u64) as usize]);
        }
        drivers::resp_parser(&input);
    }
}
