//! Turning generated token ids into text pieces without splitting a character: a byte-level
//! token may end inside a multi-byte UTF-8 sequence, so text is released only once it decodes
//! without a trailing replacement character.

/// Accumulates generated ids and hands out the text they add, piece by piece.
pub struct TextStream<D> {
    decode: D,
    ids: Vec<u32>,
    /// Bytes of the decoded text already handed out.
    released: usize,
}

impl<D: Fn(&[u32]) -> Result<String, String>> TextStream<D> {
    pub fn new(decode: D) -> Self {
        TextStream {
            decode,
            ids: Vec::new(),
            released: 0,
        }
    }

    /// Adds one token; returns the new text, if it completes any characters.
    pub fn push(&mut self, id: u32) -> Result<Option<String>, String> {
        self.ids.push(id);
        let text = (self.decode)(&self.ids)?;
        if text.ends_with(char::REPLACEMENT_CHARACTER) || text.len() <= self.released {
            return Ok(None);
        }
        Ok(self.release(text))
    }

    /// The text not yet handed out (an incomplete sequence at the very end, decoded lossily).
    pub fn finish(&mut self) -> Result<Option<String>, String> {
        let text = (self.decode)(&self.ids)?;
        Ok(self.release(text))
    }

    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    fn release(&mut self, text: String) -> Option<String> {
        let piece = text.get(self.released..).filter(|p| !p.is_empty())?;
        let piece = piece.to_string();
        self.released = text.len();
        Some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte-level "vocabulary" where token id = one byte.
    fn bytes(ids: &[u32]) -> Result<String, String> {
        let raw: Vec<u8> = ids.iter().map(|&id| id as u8).collect();
        Ok(String::from_utf8_lossy(&raw).into_owned())
    }

    #[test]
    fn never_splits_a_multibyte_character() {
        let mut stream = TextStream::new(bytes);
        let mut pieces = Vec::new();
        for byte in "aあ😀b".bytes() {
            if let Some(piece) = stream.push(byte as u32).unwrap() {
                pieces.push(piece);
            }
        }
        assert_eq!(pieces, vec!["a", "あ", "😀", "b"]);
        assert_eq!(stream.finish().unwrap(), None);
    }

    #[test]
    fn invalid_bytes_are_released_once_followed_and_flushed_at_the_end() {
        let mut stream = TextStream::new(bytes);
        assert_eq!(stream.push(0xE3).unwrap(), None);
        assert_eq!(
            stream.push(b'x' as u32).unwrap().as_deref(),
            Some("\u{FFFD}x")
        );
        assert_eq!(stream.push(0xE3).unwrap(), None);
        assert_eq!(stream.finish().unwrap().as_deref(), Some("\u{FFFD}"));
        assert_eq!(stream.ids().len(), 3);
    }
}
