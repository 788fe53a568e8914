/// blake3 of `bytes` as lowercase hex: the embedding cache key and the change detector.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// [`content_hash`] of a file's bytes, read a piece at a time however large the file.
pub fn file_content_hash(path: &std::path::Path) -> std::io::Result<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(std::fs::File::open(path)?)?;
    Ok(hasher.finalize().to_hex().to_string())
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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"shiori").unwrap();
        assert_eq!(file_content_hash(&path).unwrap(), hash);
    }
}
