/// blake3 of `bytes` as lowercase hex: the embedding cache key and the change detector.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_stable_lowercase_hex() {
        let hash = content_hash(b"shiori");
        assert_eq!(hash.len(), 64);
        assert!(hash
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_eq!(hash, content_hash(b"shiori"));
        assert_ne!(hash, content_hash(b"shiori "));
    }
}
