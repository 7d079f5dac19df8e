//! Streams between this server and redis-server 7.0.15: payloads it dumped (pinned below as
//! hex, recorded from the script in [`super::streams::script`]) restore here to the same
//! entries, groups and PELs, and dump back to the same bytes; and, when
//! `/usr/bin/redis-server` is installed, the same script run on both, each side's DUMP
//! restored on the other, compared by XRANGE, XINFO STREAM FULL and XPENDING.
//!
//! `BLOOMKV_RECORD_STREAMS=1` prints redis-server's payloads in the form of [`FROM_REDIS`].

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::streams::{KEYS, normalized, run, script, state};
use super::{bytes, hex, restore};
use crate::common::{TestServer, client_at, ok};
use redis::Value;

const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// A redis-server on a loopback port in 7500-7599, with no persistence; killed on drop.
struct Redis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    /// `None` when redis-server is not installed; a redis-server that is installed but
    /// does not start fails the test (it would otherwise pass without crossing anything).
    fn start() -> Option<Redis> {
        if !std::path::Path::new(REDIS_SERVER).exists() {
            return None;
        }
        // Tests of this binary run at once: each takes ports of its own.
        static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
        let base = (std::process::id() % 100) as u16;
        for _ in 0..100u16 {
            let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let port = 7500 + (base + k) % 100;
            if TcpListener::bind(("127.0.0.1", port)).is_err() {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            let child = Command::new(REDIS_SERVER)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut r = Redis {
                child,
                port,
                _dir: dir,
            };
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                if r.child.try_wait().ok().flatten().is_some() {
                    // Lost the port to another process: try the next.
                    break;
                }
                if let Ok(Ok(mut c)) = redis::Client::open(r.url()).map(|c| c.get_connection())
                    && redis::cmd("PING").query::<Value>(&mut c).is_ok()
                    && r.child.try_wait().ok().flatten().is_none()
                {
                    return Some(r);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("{REDIS_SERVER} is installed but did not start on any port of 7500-7599");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `DUMP` of each stream of the script, recorded from redis-server 7.0.15.
const FROM_REDIS: &[(&str, &str)] = &[
    // `big`: 230 entries in nodes of up to 100 (one of 2000 bytes), 4 deleted, groups g1-g3.
    (
        "big",
        concat!(
            "13031000000000000003e80000000000000001c3443d46a208a2060000800262010220010681660281670200",
            "2009000020010682763103010105600d0001200d02320302a00d0002200d02330303600d090101dfff028276",
            "340304200e202f603802350305200d401c403802360306200d4044406413846e616d65058276370385657874",
            "7261060701086018604702380308202b4027408002390309a00d07010183763130040aa00e0002400e023104",
            "0b600e0003403a201e0232040ca00f0000401e0233040da00e603c0234040ea00e603c0235040f600e0004a0",
            "3c02360410200f0000200f40df80a42053013704a0a5001160a50004804b02380412202c400e604b02390413",
            "600e0005804b0332300414200b400f40880332310415a00e40880332320416a00e403c0332330417600e0006",
            "a03c02340418200f0000200f4131219202f1a86121404020603e0236041aa01f4106c0a80032e000a8001b60",
            "a80007a04d0238041c202d400f608a0239041da00e404b033330041ea00e408a033331041f600e0008803c03",
            "33320420a00f403c0333330421a00e603c02340422a00e603c02350423600e0009a03c02360424200f000020",
            "0fe103500033e000a700252066402d604b02380426202c400e604b02390427600e000a804b0334300428a00f",
            "40880334310429a00e403c033432042aa00e403c033433042b600e000ba03c0234042ca00f603c0235042da0",
            "0e603c0236042e200e0000202de1034e0034e000a6002f60a6000ca04b02380430202d400f604b0239043120",
            "0e0001201e400021ab04f250c300044199000c20240583763531043320200202010d803f0335320434a00f40",
            "3f0335330435a00e408b0335340436a00e603c02350437600e000ea03c02360438200f0000200fe103510035",
            "e000aa003960aa000e804b0238043a202c400e604b0239043b600e000f804b033630043ca00f408803363104",
            "3da00e4088033632043ea00e403c033633043f600e0010a03c02340440a00f603c02350441a00e603c023604",
            "42200e0000202de103510036e000a6004360a60011a04b02380444202d400f604b02390445a00e404b033730",
            "0446a00e40880337310447600e0012803c0337320448a00f403c0337330449a00e603c0234044a200e000020",
            "2d443f419d02f82401619d0013a03f0236044c602100132025e3014b0037e000aa004d60aa0013804e023804",
            "4e202c400e608b0239044f600e0014804b0338300450a00f408b0338310451a00e408b0338320452a00e403c",
            "0338330453600e0015a03c02340454a00f603c02350455a00e603c02360456200e0000202de103510038e000",
            "a6005760a60016a04b02380458202d400f604b02390459a00e404b033930045aa00e4088033931045b600e00",
            "17803c033932045ca00f403c033933045da00e603c0234045ea00e603c0235045f600e0018a03c0236046020",
            "0f0000200fe1034e0039e000a7006160a70018804b02380462202c400e604b02390463200e02000119404b81",
            "ad01a08621ad0101ff1000000000000004010000000000000001c344804f2108210f0000800262010220010a",
            "8166028167020001030100200108847631303105650105201902000101600f02320566a00f0002600f023305",
            "67600f040101dfff02403002340568a010804002350569a00f80400236056a200f404e407005846e616d6505",
            "40370b3705856578747261066b0108601aa04f0238056c202f402b804f0239056da00f604f033130056ea00f",
            "204d200f0231056f600f0003a0400331320570a01060400331330571a00f804002340572a00f804002350573",
            "600f0004c0400236057420100000201060f4c0b10031e000b1007560b10004a04f02380576202e400f804f02",
            "390577600f0005a04f0332300578200c401060900332310579a00f6090033232057aa00f6040033233057b60",
            "0f0006c0400234057c201000002010414621b305f248e8010406202e0006a0420236057ea0216116c0b20032",
            "e000b2007f60b20007c051043805c08002406f00072052214504323905c081a010609404333005c082a01060",
            "9504333105c08360100008a04404333205c084a011604404333305c085a0108044033405c086a01080440335",
            "05c08760100009c044033605c088201100002011e1046d0033e000ba02c08902403e0009a05320ba008a2030",
            "4010805320ba008b6010000aa053003420bb008ca0116098003420bb008da0106098003420ba008ea0106044",
            "003420ba008f6010000bc04420bb0090a011804420bb0091a010804420ba0092201000002033e104750034e0",
            "01ba009360ba000cc05320bb009420314011805320bb0095201000002022400021da02e7d078e0ff00e0ff00",
            "e0ff00e0ff00e0ff00e0ff00e0ff00e08e00010fd24995000c27f529680035288a009727f10202010da81400",
            "35288b0098a01168140035288b0099a01068680035288a009aa0108044288a009b6010000ec044288b009c20",
            "1100002011e904460035e8018b009d688b000ea053288a009e203040108053288a009f6010000fa053003629",
            "4600a0a0116098003620bb00a1a0106098003620ba00a2a0106044003620ba00a360100010c04420bb00a4a0",
            "11804420bb00a5a010804420ba00a6201000002033e904460036e001ba00a760ba0011c05320bb00a8203140",
            "11805320bb00a9a0106053003720ba00aaa0106098003720ba00ab60100012a044003720bb00aca011604400",
            "3720bb00ada010804420ba00ae2010000020334c7c299c03f298ab026b770013c04520bc00b0602300132027",
            "206acb790037e001bc00b160bc0013a05420bb00b220304010202e202820bb00b360100014a053003820bc00",
            "b4a0116099003820bc00b5a0106099003820bb00b6a0106044003820bb00b760100015c04420bc00b8a01180",
            "44217700b9a010804420ba00ba201000002033e104770038e001ba00bb60ba0016c05320bb00bc2031401180",
            "5320bb00bda0106053003920ba00bea0106098003920ba00bf60100017a044003920bb00c0a0116044003920",
            "bb00c1a010804420ba00c2a010804420ba00c360100018c04420bb00c4201100002011e104760039e001bb00",
            "c560bb0018a05320ba00c620304010805320ba00c7201002010119405381dd02400d0321dd00ff1000000000",
            "0000041a0000000000000001c3417942481148020000c4001e01000102018166028167024009000020010984",
            "7632303105c0c90205201a020001016010033205c0caa01000026010033305c0cb6010040101dfff02403303",
            "3405c0cca0118044033505c0cda0108044033605c0ce201040530002200105846e616d6505403a0c37058565",
            "7874726106c0cf020820190002c053033805c0d0203140118053033905c0d1a010605304313005c0d2a01020",
            "51201020ba00d360100003a044003120bb00d4a0116044003120bb00d5a010804420ba00d6a010804420ba00",
            "d760100004c04420bb00d82011000020116102c0bb0031e001bb00d960bb0004a05320ba00da203040108053",
            "20ba00db60100005a053003220bb00dca0116098003220bb00dda0106098003220ba00dea0106044003220ba",
            "00df60100006c04420bb00e0201100002011415821cb05f2e86e03040620300006a04520bb00e2a0226125c0",
            "bb0032e001bb00e360bb0007c05420bc00e420314011809920bc00e5a0106099003320bb00e6201000ff40e2",
            "44210243e801441a0040e60302673143ec0081ffffffffffffffff0e00000000000003e80000000000000001",
            "8893f52aa20100000100000000000003e800000000000000038893f52aa20100000200000000000003e90000",
            "0000000000008893f52aa20100000100000000000003e900000000000000028893f52aa20100000100000000",
            "000003e900000000000000038893f52aa20100000100000000000003ea00000000000000008893f52aa20100",
            "000100000000000003ea00000000000000018893f52aa20100000100000000000003ea000000000000000288",
            "93f52aa20100000100000000000003ea00000000000000038893f52aa20100000100000000000003eb000000",
            "00000000008893f52aa20100000100000000000003eb00000000000000018893f52aa2010000010000000000",
            "0003eb00000000000000028893f52aa20100000100000000000003eb00000000000000038893f52aa2010000",
            "0100000000000003ec00000000000000008893f52aa2010000010205616c6963658893f52aa2010000080000",
            "0000000003e8000000000000000100000000000003e9000000000000000000000000000003e9000000000000",
            "000200000000000003e9000000000000000300000000000003ea000000000000000000000000000003ea0000",
            "00000000000100000000000003ea000000000000000200000000000003ea000000000000000303626f628893",
            "f52aa20100000600000000000003e8000000000000000300000000000003eb00000000000000000000000000",
            "0003eb000000000000000100000000000003eb000000000000000200000000000003eb000000000000000300",
            "000000000003ec000000000000000002673244210281ffffffffffffffff0001056361726f6c8893f52aa201",
            "00000002673344060081ffffffffffffffff00000a00d6bf8b16901033cc",
        ),
    ),
    // `plain`: 150 entries added only, the group `readers` with 3 pending.
    (
        "plain",
        concat!(
            "13021000000000000013890000000000000000c343c447a514a507000005026401000101018474656d700500",
            "0102200d0b00018776616c75652d370804201000012010008880100231340940114024a01101323160110003",
            "e0012301323860110004e0011101333560110005e0011101343260110006e00211003960110007e001110135",
            "3660110008e0011101363360110009e001110137306011000ae0021100376011000be00111003880b3000ce0",
            "0111003980b3000de0021180b3000e20110089a0e90230350a40ea000fe0021201313260120010e003120039",
            "60120011e0021201323660120012e0021201333360120013e0021201343060120014e00312003760120015e0",
            "021201353460120016e0021201363160120017e00312003860120018e00212003780bd0019e00212003880bd",
            "001ae0031280bd001be00212003980bd001ce0011201323040bd0200011d20030002a227a1240d3231300a84",
            "756e69740581430208201d001e2023e0001b80ce001fe00212003280ce0020e00212003380ce0021e0031280",
            "ce0022e00212003480ce0023e00212003580ce0024e0031280ce0025e00212003680ce0026e00212003740ce",
            "02020127e002120038818c0028e0031280bd0029e00212003980bd002ae0011201333080bd002be0031280bd",
            "002ce00212003180bd002de00212003280bd002ee0031280bd002fe00212003380bd0030e00212003480bd00",
            "31e00212003580bd0032e0031280bd0033e00212003680bd0034e00212003780bd0035e0031280bd0036e002",
            "12003880bd0037e00212003980bd0038e0031280bd0039e0011201343080bd003ae00212003140bd0200013b",
            "2003e2064a013432e2064a003c2023a24a01343280ce003de00212003380ce003ee00212003480ce003fe003",
            "1280ce0040e00212003580ce0041e00212003680ce0042e0031280ce0043e00212003780ce0044e002120038",
            "40ce02020145e002120039818c0046e0031280bd0047e0011201353080bd0048e00212003180bd0049e00312",
            "80bd004ae00212003280bd004be00212003380bd004ce0031280bd004de00212003480bd004ee00212003580",
            "bd004fe00212003680bd0050e0031280bd0051e00212003780bd0052e00212003880bd0053e0031280bd0054",
            "e00212003980bd0055e0011201363080bd0056e0031280bd0057e00212003180bd0058e00212003240bd0200",
            "01592003e2064a02363330e40595005a2023a24a01363380ce005be00212003480ce005ce00212003580ce00",
            "5de0031280ce005ee00212003680ce005fe00212003780ce0060e0031280ce0061e00212003880ce0062e002",
            "12003940ce02020163e00112013730218c0101ff1000000000000013ed0000000000000000c3420643f514f5",
            "03000007013201000101018474656d7005000102200d0d00018976616c75652d3730370a0420120001e00212",
            "01313460124027c02501323160120003e0022501323860120004e0021201333560120005e002120134326012",
            "0006e00312003960120007e0021201353660120008e0021201363360120009e002120137306012000ae00312",
            "80bd000be00212003880bd000ce00212003980bd000de0031280bd000ee0011201383080bd000fe002120031",
            "80bd0010e0031280bd0011e00212003280bd0012e00212003340bd0200011320030002a178a14a0d3834300a",
            "84756e69740581430208201d00142023e0001b80ce0015e00212003580ce0016e00212003680ce0017e00312",
            "80ce0018e00212003780ce0019e00212003880ce001ae0031280ce001be00212003980ce001ce00112013930",
            "40ce0202011de002120031818c001ee0031280bd001fe00212003280bd0020e00212003380bd0021e0031280",
            "bd0022e00212003480bd0023e00212003580bd0024e0031280bd0025e00212003680bd0026e00212003780bd",
            "0027e00212003880bd0028e0031280bd0029e00212003980bd002a2012008a832e04313030310b410a002be0",
            "041300386013002ce003130131356013002de003130132326013002ee0041300396013002fe0031301333660",
            "130030e003130134332013020001312003c251e000930235300be201520101ff4096541e0053890000004096",
            "010772656164657273538b000303000000000000138900000000000000008b93f52aa2010000010000000000",
            "00138a00000000000000008b93f52aa201000001000000000000138b00000000000000008b93f52aa2010000",
            "01010272318b93f52aa20100000300000000000013890000000000000000000000000000138a000000000000",
            "0000000000000000138b00000000000000000a0022dda6ca257e3da3",
        ),
    ),
    // `wide`: 20 entries of 700-byte values, 5 a node.
    (
        "wide",
        concat!(
            "13041000000000000000010000000000000000c340794e0a170a0e00001e00050100010101877061796c6f61",
            "64080001022010060001e2be313a77e0ff00e0ff00e0a2000205c00422c9000162c90032e2ffc9e0ff00e0a4",
            "0082c9459502e2be33e2ffc9e0ff00e0a40082c9000365930034e2ffc9e0ff00e0a40082c9000462c90035e2",
            "ffc9e0ff00e0a40022c90101ff1000000000000000060000000000000000c3407c4e0b170b0e00001e000501",
            "00010101877061796c6f6164080001022010060001e2be363a77e0ff00e0ff00e0a2000205c00422c9000162",
            "c90037e2ffc9e0ff00e0a40082c9459502e2be38e2ffc9e0ff00e0a40082c9000365930039e2ffc9e0ff00e0",
            "a40082c9000442c902bf3130e2ffcae0ff00e0a4000405c10401ff10000000000000000b0000000000000000",
            "c3407a4e0f170f0e00001e00050100010101877061796c6f6164080001022010070001e2bf31313a77e0ff00",
            "e0ff00e0a2000205c10422ca000182ca0032e2ffcae0ff00e0a40082ca459725950033e2ffcae0ff00e0a400",
            "82ca000385950034e2ffcae0ff00e0a40082ca000482ca0035e2ffcae0ff00e0a40022ca0101ff1000000000",
            "000000100000000000000000c3407b4e0f170f0e00001e00050100010101877061796c6f6164080001022010",
            "070001e2bf31363a77e0ff00e0ff00e0a2000205c10422ca000182ca0037e2ffcae0ff00e0a40082ca459725",
            "950038e2ffcae0ff00e0a40082ca000385950039e2ffcae0ff00e0a40082ca000462ca013230e2ffcae0ff00",
            "e0a40022ca0101ff1414000100000014000a00b701b146d8dc79a9",
        ),
    ),
    // `empty`: XGROUP CREATE ... MKSTREAM, no entry.
    (
        "empty",
        "13000000000000000000010167000081ffffffffffffffff00000a00a01a953dfb9cddde",
    ),
    // `emptied`: its only entry deleted.
    ("emptied", "13000005010000050101000a00c6649ea899ebb58d"),
];

/// Keys whose Redis nodes hold no deleted entries (Redis drops a node with its last live
/// entry): Redis's bytes and this server's agree.
const NO_TOMBSTONES: [&str; 4] = ["plain", "wide", "empty", "emptied"];

/// XRANGE, XPENDING (summary and extended, idle time left out) and the groups' summary:
/// the state that does not depend on delivery and seen times.
fn timeless(c: &mut redis::Connection, key: &str) -> Vec<Value> {
    let mut out = state(c, key);
    out.remove(3);
    out.push(normalized(ok(c, &["XINFO", "GROUPS", key])));
    out
}

#[test]
fn stream_payloads_from_redis_restore_and_dump_back_the_same() {
    let s = TestServer::start();
    let mut c = s.client();
    run(&mut c, &script());
    for (key, payload) in FROM_REDIS {
        let payload = hex(payload);
        let copy = format!("r:{key}");
        assert_eq!(restore(&mut c, &copy, &payload), Value::Okay, "{key}");
        assert_eq!(timeless(&mut c, key), timeless(&mut c, &copy), "{key}");
        if NO_TOMBSTONES.contains(key) {
            assert_eq!(bytes(ok(&mut c, &["DUMP", &copy])), payload, "{key}");
        }
    }
    assert_eq!(FROM_REDIS.len(), KEYS.len());
}

#[test]
fn streams_cross_with_redis_server() {
    let Some(redis) = Redis::start() else {
        eprintln!("{REDIS_SERVER} not available: only the pinned payloads are compared");
        return;
    };
    let s = TestServer::start();
    let mut b = s.client();
    let mut r = client_at(&redis.url());
    let script = script();
    run(&mut b, &script);
    run(&mut r, &script);
    let record = std::env::var_os("BLOOMKV_RECORD_STREAMS").is_some();
    let (mut compared, mut identical) = (0, 0);
    for key in KEYS {
        // Redis's payload restores here to Redis's state...
        let from_redis = bytes(ok(&mut r, &["DUMP", key]));
        if record {
            let h: String = from_redis.iter().map(|x| format!("{x:02x}")).collect();
            eprintln!("(\"{key}\", \"{h}\"),");
        }
        let here = format!("r:{key}");
        assert_eq!(restore(&mut b, &here, &from_redis), Value::Okay, "{key}");
        assert_eq!(state(&mut r, key), state(&mut b, &here), "{key} from redis");
        // ... and dumps back to Redis's bytes where Redis keeps no deleted entries.
        let back = bytes(ok(&mut b, &["DUMP", &here]));
        compared += 1;
        if NO_TOMBSTONES.contains(&key) {
            assert_eq!(back, from_redis, "{key}: bytes");
            identical += 1;
        }
        // This server's payloads restore in Redis to this server's state, and Redis dumps
        // them back unchanged.
        for (src, dst) in [
            (key.to_string(), format!("b:{key}")),
            (here.clone(), format!("rb:{key}")),
        ] {
            let payload = bytes(ok(&mut b, &["DUMP", &src]));
            assert_eq!(restore(&mut r, &dst, &payload), Value::Okay, "{src}");
            assert_eq!(state(&mut b, &src), state(&mut r, &dst), "{src} to redis");
            assert_eq!(
                bytes(ok(&mut r, &["DUMP", &dst])),
                payload,
                "{src}: redis re-dump"
            );
            compared += 1;
            identical += 1;
        }
    }
    eprintln!("{compared} payloads compared with redis-server, {identical} byte-identical");
}

/// List elements of 128 bytes and more end with a back-length of two or three bytes, which
/// Redis reads when it walks a listpack backwards (LINDEX from the tail, RPOP): a list
/// dumped here reads the same there both ways.
#[test]
fn long_list_elements_dumped_here_read_backwards_in_redis() {
    let Some(redis) = Redis::start() else {
        eprintln!("{REDIS_SERVER} not available");
        return;
    };
    let s = TestServer::start();
    let mut b = s.client();
    let mut r = client_at(&redis.url());
    let (mid, long) = ("y".repeat(300), "z".repeat(20_000));
    ok(&mut b, &["RPUSH", "l", "a", &mid, "b", &long, "c"]);
    let payload = bytes(ok(&mut b, &["DUMP", "l"]));
    assert_eq!(restore(&mut r, "l", &payload), Value::Okay);
    for i in ["-1", "-2", "-3", "-4", "-5"] {
        assert_eq!(
            ok(&mut r, &["LINDEX", "l", i]),
            ok(&mut b, &["LINDEX", "l", i]),
            "{i}"
        );
    }
    for _ in 0..5 {
        assert_eq!(ok(&mut r, &["RPOP", "l"]), ok(&mut b, &["RPOP", "l"]));
    }
}
