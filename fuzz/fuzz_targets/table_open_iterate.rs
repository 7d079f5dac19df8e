#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bloomkv_fuzz::drivers::table_open_iterate(data);
});
