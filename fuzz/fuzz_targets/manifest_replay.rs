#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bloomkv_fuzz::drivers::manifest_replay(data);
});
