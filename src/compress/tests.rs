//! Unit tests of compress.rs.

use super::*;

#[test]
fn content_size_parses_every_field_width() {
    // Single segment, 1-byte size.
    assert_eq!(content_size(&[0x28, 0xB5, 0x2F, 0xFD, 0x20, 42]), Some(42));
    // 2-byte size (+256), with a window descriptor.
    assert_eq!(
        content_size(&[0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x58, 1, 0]),
        Some(257)
    );
    // 4-byte size with a 1-byte dictionary id, single segment.
    assert_eq!(
        content_size(&[0x28, 0xB5, 0x2F, 0xFD, 0xA1, 7, 0x10, 0x27, 0, 0]),
        Some(10_000)
    );
    // No size declared, wrong magic, truncated.
    assert_eq!(content_size(&[0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x58]), None);
    assert_eq!(content_size(&[0x29, 0xB5, 0x2F, 0xFD, 0x20, 42]), None);
    assert_eq!(content_size(&[0x28, 0xB5, 0x2F, 0xFD, 0x80, 0x58, 1]), None);
    assert_eq!(content_size(&[]), None);
}

#[test]
fn settings_are_checked() {
    assert_eq!(check_setting(0, 99).unwrap(), u64::MAX);
    if cfg!(feature = "zstd") {
        assert_eq!(check_setting(100, 3).unwrap(), 100);
        let e = check_setting(100, 99).unwrap_err().to_string();
        assert!(e.starts_with("compression level 99 is out of range"), "{e}");
        assert!(check_setting(100, 0).is_err());
    } else {
        let e = check_setting(100, 3).unwrap_err().to_string();
        assert!(e.contains("zstd feature"), "{e}");
    }
}

#[cfg(feature = "zstd")]
#[test]
fn frames_round_trip_and_scribbles_are_caught() {
    let text: Vec<u8> = (0..5000u32)
        .flat_map(|i| format!("{{\"id\":{i},\"ok\":true}}").into_bytes())
        .take(5000)
        .collect();
    let mut frame = Vec::new();
    assert!(encode(&text, 3, &mut frame));
    assert!(frame.len() < text.len() / 2, "{} bytes", frame.len());
    assert_eq!(content_size(&frame), Some(text.len() as u64));
    let mut out = Vec::new();
    decode(&frame, &mut out).unwrap();
    assert_eq!(out, text);
    // Random bytes do not shrink: stored plain.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..2000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    assert!(!encode(&noise, 3, &mut frame));
    // Every single-byte scribble after the header is caught (the
    // checksum), never decoded into other bytes.
    assert!(encode(&text, 3, &mut frame));
    for i in 6..frame.len() {
        let mut bad = frame.clone();
        bad[i] ^= 0x5A;
        let r = decode(&bad, &mut out);
        assert!(
            r.is_err() || out == text,
            "byte {i}: decoded to other bytes"
        );
    }
}

#[cfg(not(feature = "zstd"))]
#[test]
fn without_the_feature_a_compressed_item_is_an_error_naming_it() {
    let frame = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 3, 1, 0, 0, b'a', b'b', b'c'];
    let mut out = frame.to_vec();
    let e = unpack(&mut out).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)));
    assert!(e.to_string().contains("zstd feature"), "{e}");
    assert!(out.is_empty());
}
