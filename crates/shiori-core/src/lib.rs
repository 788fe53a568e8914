//! The vocabulary every other Shiori crate speaks: the plain data types that flow from ingest to
//! answer (`Document`, `Chunk`, `Hit`, `Answer`, …), the traits at the seams (`Embedder`,
//! `VectorIndex`, `KeywordIndex`, `ChatModel`, `Reranker`, `WebSearch`), the trace of an answer
//! pipeline and the configuration types stored in `shiori.toml`.

mod access;
mod config;
mod conversation;
mod generation;
mod refusal;
mod seams;
mod tool_text;
mod trace;
mod types;

pub use access::{
    check_group_name, joined_groups, narrowed_groups, normal_group, split_groups, Access,
    GROUPS_KEY, NO_READER_GROUP,
};
pub use config::{
    ChunkerConfig, ChunkerKind, FusionKind, RetrievalConfig, RetrievalMode, TimeDecay,
};
pub use conversation::{
    Conversation, ConversationId, ConversationSummary, InvalidConversationId, Turn, TurnSource,
};
pub use generation::{
    escape_markup, ChatError, ChatMessage, ChatModel, ChatRequest, ChatResponse, RerankError,
    Reranker, Role, TokenReceiver, TokenSink, ToolCall, ToolSpec, Usage, WebResult, WebSearch,
    WebSearchError,
};
pub use refusal::{Refusal, RefusalError, RelevanceVerdict};
pub use seams::{EmbedError, Embedder};
pub use tool_text::parse_tool_calls;
pub use trace::{Citation, Price, PriceTable, Quote, Trace, TraceStep};
pub use types::{
    embedding_input, Answer, Chunk, Document, Filters, Hit, RelevanceSignals, Reranked, Retrieval,
    RetrievalStages, Source, Timings,
};
