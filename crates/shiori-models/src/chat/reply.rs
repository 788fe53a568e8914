//! The reply as it is streamed: the text handed to the caller so far, up to where the caller's
//! sink broke off.

use shiori_core::TokenSink;

/// Collects reply text and forwards it to the caller's sink.
pub struct Reply<'s> {
    text: String,
    sink: TokenSink<'s>,
    cancelled: bool,
}

impl<'s> Reply<'s> {
    pub fn new(sink: TokenSink<'s>) -> Self {
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
        if self.sink.token(piece).is_break() {
            self.cancelled = true;
        }
    }

    /// Asks the sink, while no text comes, whether to go on; false once it has broken off.
    pub fn keep_going(&mut self) -> bool {
        if !self.cancelled && self.sink.keep_going().is_break() {
            self.cancelled = true;
        }
        !self.cancelled
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
    use shiori_core::TokenReceiver;
    use std::ops::ControlFlow;

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

    /// Goes on until asked `keep_going` for the first time.
    #[derive(Default)]
    struct Gone {
        pieces: usize,
    }

    impl TokenReceiver for Gone {
        fn token(&mut self, _: &str) -> ControlFlow<()> {
            self.pieces += 1;
            ControlFlow::Continue(())
        }

        fn keep_going(&mut self) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
    }

    #[test]
    fn a_sink_that_says_stop_while_no_text_comes_cancels_the_reply() {
        let mut gone = Gone::default();
        let mut reply = Reply::new(&mut gone);
        reply.push("one");
        assert!(!reply.keep_going());
        reply.push("two");
        assert!(reply.is_cancelled());
        assert_eq!(reply.into_text(), "one");
        assert_eq!(gone.pieces, 1);
    }
}
