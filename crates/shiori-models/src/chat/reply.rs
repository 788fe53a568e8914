//! The reply as it is streamed: the text handed to the caller so far, up to where the caller's
//! sink broke off.

use std::ops::ControlFlow;

type Sink<'s> = &'s mut dyn FnMut(&str) -> ControlFlow<()>;

/// Collects reply text and forwards it to the caller's sink.
pub struct Reply<'s> {
    text: String,
    sink: Sink<'s>,
    cancelled: bool,
}

impl<'s> Reply<'s> {
    pub fn new(sink: Sink<'s>) -> Self {
        Reply {
            text: String::new(),
            sink,
            cancelled: false,
        }
    }

    pub fn push(&mut self, piece: &str) {
        if self.cancelled || piece.is_empty() {
            return;
        }
        self.text.push_str(piece);
        if (self.sink)(piece).is_break() {
            self.cancelled = true;
        }
    }

    /// Whether the sink broke off the reply.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_that_breaks_off_cancels_the_reply() {
        let mut seen = 0;
        let mut sink = |_: &str| {
            seen += 1;
            ControlFlow::Break(())
        };
        let mut reply = Reply::new(&mut sink);
        reply.push("one");
        reply.push("two");
        assert!(reply.is_cancelled());
        assert_eq!(reply.into_text(), "one");
        assert_eq!(seen, 1);
    }
}
