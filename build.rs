//! Generates `include/data_queue_shared.h` from `src/ffi/` with cbindgen on
//! every build that changes the sources, so the header can never go stale.
//!
//! The distribution has one version, the Perl module's `$VERSION` (in
//! lib/Data/Queue/Shared.pm, which MakeMaker reads too): this script hands
//! it to the `dqs` binary (`DQS_VERSION`, for `dqs --version`) and stops
//! the build when Cargo.toml's version is not the same number in semver
//! spelling (`0.20` there is `0.20.0` here).

use std::path::{Path, PathBuf};

/// `$VERSION` of the Perl module, as written there (`'0.20'`).
fn perl_version(dir: &Path) -> String {
    let pm = dir.join("lib/Data/Queue/Shared.pm");
    let text = std::fs::read_to_string(&pm)
        .unwrap_or_else(|e| panic!("{}: {e} (the version comes from it)", pm.display()));
    text.lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("our $VERSION = '")?;
            rest.split_once('\'').map(|(v, _)| v.to_string())
        })
        .unwrap_or_else(|| panic!("{}: no line our $VERSION = '...';", pm.display()))
}

/// The semver spelling Cargo.toml must use for a Perl version `X.Y`.
fn semver_of(perl: &str) -> Option<String> {
    let (major, minor) = perl.split_once('.')?;
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (num(major) && num(minor)).then(|| {
        let minor = minor.trim_start_matches('0');
        format!("{major}.{}.0", if minor.is_empty() { "0" } else { minor })
    })
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=lib/Data/Queue/Shared.pm");
    let perl = perl_version(&dir);
    let cargo = std::env::var("CARGO_PKG_VERSION").unwrap();
    match semver_of(&perl) {
        Some(want) if want == cargo => {}
        want => panic!(
            "Cargo.toml's version {cargo} is not the Perl module's $VERSION {perl} \
             (lib/Data/Queue/Shared.pm); set Cargo.toml's version to {}",
            want.as_deref().unwrap_or("its semver spelling")
        ),
    }
    println!("cargo:rustc-env=DQS_VERSION={perl}");
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
