#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bloomkv_server_fuzz::drivers::resp_parser(data);
});
