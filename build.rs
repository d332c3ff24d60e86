//! Generates `include/data_queue_shared.h` from `src/ffi/` with cbindgen on
//! every build that changes the sources, so the header can never go stale.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let out = dir.join("include").join("data_queue_shared.h");
    match cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
    {
        // write_to_file leaves the file alone when the text is unchanged, so
        // make does not rebuild the XS for nothing.
        Ok(b) => {
            b.write_to_file(out);
        }
        Err(e) => panic!("cbindgen failed: {e}"),
    }
}
