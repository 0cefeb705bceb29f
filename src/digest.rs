//! SHA-256 digests written as lowercase hex: the one home for the cache key, the
//! journal's message digests, attachment and batch fingerprints, trace ids and the
//! audit chain, so they all spell a digest the same way.

use sha2::{Digest, Sha256};

/// `bytes` as lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    let digit = |d: u8| char::from_digit(u32::from(d), 16).unwrap_or('0');
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(digit(byte >> 4));
        text.push(digit(byte & 0x0f));
    }
    text
}

/// The SHA-256 of `bytes`, its first `n` bytes (at most 32) in hex.
pub fn sha256_hex(bytes: &[u8], n: usize) -> String {
    let digest = Sha256::digest(bytes);
    hex(digest.get(..n).unwrap_or(&digest))
}

/// The whole SHA-256 of what `hasher` was fed, in hex.
pub fn finish_hex(hasher: Sha256) -> String {
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lowercase_hex() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(
            sha256_hex(b"abc", 32),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha256_hex(b"abc", 4), "ba7816bf");
        let mut hasher = Sha256::new();
        hasher.update(b"ab");
        hasher.update(b"c");
        assert_eq!(finish_hex(hasher), sha256_hex(b"abc", 32));
    }
}
