#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bloomkv_fuzz::drivers::block_decode(data);
});
