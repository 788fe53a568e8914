//! Turning the bytes of generated tokens into text pieces without splitting a character: a
//! byte-level token may end inside a multi-byte UTF-8 sequence, so its bytes wait until the
//! sequence completes.

/// Collects token bytes and hands out the text they complete.
#[derive(Default)]
pub struct TextStream {
    pending: Vec<u8>,
}

impl TextStream {
    /// Adds one token's bytes; returns the new text, if it completes any characters. Bytes that
    /// can never be valid UTF-8 come out as replacement characters.
    pub fn push(&mut self, bytes: &[u8]) -> Option<String> {
        self.pending.extend_from_slice(bytes);
        let mut end = 0;
        loop {
            match std::str::from_utf8(&self.pending[end..]) {
                Ok(rest) => {
                    end += rest.len();
                    break;
                }
                Err(error) => match error.error_len() {
                    None => {
                        end += error.valid_up_to();
                        break;
                    }
                    Some(invalid) => end += error.valid_up_to() + invalid,
                },
            }
        }
        self.release(end)
    }

    /// The bytes not yet handed out (an incomplete sequence at the very end, decoded lossily).
    pub fn finish(&mut self) -> Option<String> {
        self.release(self.pending.len())
    }

    fn release(&mut self, end: usize) -> Option<String> {
        let piece = String::from_utf8_lossy(&self.pending[..end]).into_owned();
        self.pending.drain(..end);
        (!piece.is_empty()).then_some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_splits_a_multibyte_character() {
        let mut stream = TextStream::default();
        let mut pieces = Vec::new();
        for byte in "aあ😀b".bytes() {
            pieces.extend(stream.push(&[byte]));
        }
        assert_eq!(pieces, vec!["a", "あ", "😀", "b"]);
        assert_eq!(stream.finish(), None);
    }

    #[test]
    fn invalid_bytes_are_released_once_followed_and_flushed_at_the_end() {
        let mut stream = TextStream::default();
        assert_eq!(stream.push(&[0xE3]), None);
        assert_eq!(stream.push(b"x").as_deref(), Some("\u{FFFD}x"));
        assert_eq!(stream.push(&[0xE3]), None);
        assert_eq!(stream.finish().as_deref(), Some("\u{FFFD}"));
    }
}
