//! The reply as it is streamed: the text handed to the caller so far, cut after the JSON object
//! in JSON mode (small models tend to carry on past the closing brace), or where the caller's sink
//! broke off.

use std::ops::ControlFlow;

type Sink<'s> = &'s mut dyn FnMut(&str) -> ControlFlow<()>;

/// Collects reply text and forwards it to the caller's sink.
pub struct Reply<'s> {
    text: String,
    object: Option<ObjectEnd>,
    sink: Sink<'s>,
    complete: bool,
    cancelled: bool,
}

impl<'s> Reply<'s> {
    pub fn new(json_mode: bool, sink: Sink<'s>) -> Self {
        Reply {
            text: String::new(),
            object: json_mode.then(ObjectEnd::default),
            sink,
            complete: false,
            cancelled: false,
        }
    }

    pub fn push(&mut self, piece: &str) {
        if self.complete {
            return;
        }
        let end = self.object.as_mut().and_then(|object| object.scan(piece));
        let piece = match end {
            Some(end) => {
                self.complete = true;
                &piece[..end]
            }
            None => piece,
        };
        if !piece.is_empty() {
            self.text.push_str(piece);
            if (self.sink)(piece).is_break() {
                self.complete = true;
                self.cancelled = true;
            }
        }
    }

    /// Whether the sink broke off the reply.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// Whether the reply needs no more tokens (its JSON object has closed, or the sink broke off).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

/// Tracks nesting through JSON text to find where the outermost value closes.
#[derive(Default)]
struct ObjectEnd {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl ObjectEnd {
    /// The length of the prefix of `text` that closes the outermost object or array, if it does.
    fn scan(&mut self, text: &str) -> Option<usize> {
        for (at, c) in text.char_indices() {
            if self.in_string {
                match c {
                    _ if self.escaped => self.escaped = false,
                    '\\' => self.escaped = true,
                    '"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' | '[' => self.depth += 1,
                '}' | ']' if self.depth > 0 => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(at + c.len_utf8());
                    }
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(json_mode: bool, pieces: &[&str]) -> (String, Vec<String>, bool) {
        let mut seen = Vec::new();
        let mut sink = |piece: &str| {
            seen.push(piece.to_string());
            ControlFlow::Continue(())
        };
        let mut reply = Reply::new(json_mode, &mut sink);
        for piece in pieces {
            reply.push(piece);
        }
        let complete = reply.is_complete();
        (reply.into_text(), seen, complete)
    }

    #[test]
    fn json_mode_cuts_after_the_object_closes() {
        let (text, seen, complete) = stream(
            true,
            &[
                "{",
                "\"a\": \"}{\\\"",
                "\", \"b\": [1, {}]",
                "}\n\nQuestion",
                " more",
            ],
        );
        assert_eq!(text, "{\"a\": \"}{\\\"\", \"b\": [1, {}]}");
        assert_eq!(seen.concat(), text);
        assert!(complete);
    }

    #[test]
    fn plain_replies_pass_through() {
        let (text, seen, complete) = stream(false, &["{", "}", " and more"]);
        assert_eq!(text, "{} and more");
        assert_eq!(seen.len(), 3);
        assert!(!complete);
        let (text, _, complete) = stream(true, &["{", "\"open\": 1"]);
        assert_eq!(text, "{\"open\": 1");
        assert!(!complete);
    }

    #[test]
    fn a_sink_that_breaks_off_completes_the_reply() {
        let mut seen = 0;
        let mut sink = |_: &str| {
            seen += 1;
            ControlFlow::Break(())
        };
        let mut reply = Reply::new(false, &mut sink);
        reply.push("one");
        reply.push("two");
        assert!(reply.is_complete() && reply.is_cancelled());
        assert_eq!(reply.into_text(), "one");
        assert_eq!(seen, 1);
    }
}
