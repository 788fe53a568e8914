//! The Model Context Protocol face (rmcp): tools `search`, `ask`, `list_documents` and
//! `get_document`, and every indexed file as a resource `shiori://documents/{id}`. One handler
//! serves stdio (`shiori mcp`) and streamable HTTP (`/mcp` on `shiori serve`); it answers through
//! the same `answering` path and engine calls as the HTTP API. Bad arguments are tool errors the
//! agent reads, never protocol failures.

use crate::answering::{self, AnswerJob};
use crate::error::ApiError;
use crate::state::SharedState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use shiori_core::{Access, Answer, ConversationId, Filters, Hit, RetrievalMode};
use shiori_engine::{AskOptions, PipelineKind, Question, Reader, RetrievalOverrides};
use std::fmt::Write;
use std::sync::Arc;

/// Where documents live as resources.
const DOCUMENT_URI: &str = "shiori://documents/";

/// The MCP server over one running engine.
#[derive(Clone)]
pub struct McpHandler {
    state: SharedState,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for, in Japanese or English.
    query: String,
    /// How many passages to return (1-50; default from shiori.toml).
    top_k: Option<usize>,
    /// Which retrievers run: dense, bm25 or hybrid (default from shiori.toml).
    #[schemars(schema_with = "mode_schema")]
    mode: Option<RetrievalMode>,
    /// Only passages of this project (`[projects.NAME]` in shiori.toml).
    project: Option<String>,
    /// Only passages whose source path starts with this (e.g. "docs/").
    source_prefix: Option<String>,
}

/// The `mode` choices by their names in `shiori.toml`, from the engine's own list (or none:
/// the configured mode).
fn mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<Value> = RetrievalMode::ALL
        .iter()
        .filter_map(|mode| serde_json::to_value(mode).ok())
        .chain([Value::Null])
        .collect();
    schemars::json_schema!({"type": ["string", "null"], "enum": names})
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AskArgs {
    /// The question, in Japanese or English.
    question: String,
    /// Answer pipeline (extractive, basic, fusion, decompose, hyde, crag, fusion-crag, iterative,
    /// agentic, reflective); default from shiori.toml.
    pipeline: Option<String>,
    /// Continue this conversation (an id from shiori's conversations API): the question is read
    /// as a follow-up of its earlier turns, and the answer becomes its next turn.
    conversation: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDocumentsArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetDocumentArgs {
    /// A document as `list_documents` or a search hit shows it: a listed file, or a hit's
    /// `doc_id`, `chunk_id` or `source`.
    id: String,
}

impl McpHandler {
    pub fn new(state: SharedState) -> McpHandler {
        McpHandler { state }
    }

    fn tools() -> Vec<Tool> {
        vec![
            tool::<SearchArgs>(
                "search",
                "Search the indexed documents (Japanese and English) and return the best \
                 passages with their source, title and score. Use it to find what the documents \
                 say before answering.",
            ),
            tool::<AskArgs>(
                "ask",
                "Answer a question from the indexed documents with numbered citations [n] to \
                 the sources listed after the answer, or refuse when the documents do not \
                 contain the answer.",
            ),
            tool::<ListDocumentsArgs>(
                "list_documents",
                "List the ids of every indexed file; each is also the resource \
                 shiori://documents/{id}.",
            ),
            tool::<GetDocumentArgs>(
                "get_document",
                "Read one indexed document: all its chunks, in order. The id is a file \
                 list_documents lists (every record, page or sheet of it), or a search hit's \
                 doc_id, chunk_id or source (that document).",
            ),
        ]
    }

    async fn run_tool(
        &self,
        name: &str,
        args: Map<String, Value>,
        reader: Reader,
    ) -> Result<Reply, ApiError> {
        match name {
            "search" => self.search(parse(args)?, reader).await,
            "ask" => self.ask(parse(args)?, reader).await,
            "list_documents" => {
                parse::<ListDocumentsArgs>(args)?;
                self.list_documents(reader).await
            }
            "get_document" => self.get_document(parse(args)?, reader).await,
            other => Err(ApiError::NotFound(format!(
                "no tool {other:?}; the tools are search, ask, list_documents, get_document"
            ))),
        }
    }

    async fn search(&self, args: SearchArgs, reader: Reader) -> Result<Reply, ApiError> {
        let engine = self.state.engine();
        let retrieval = engine.retrieval(&RetrievalOverrides {
            top_k: args.top_k,
            mode: args.mode,
            ..RetrievalOverrides::default()
        })?;
        let query = Question::new(args.query)?;
        let filters = Filters {
            projects: args.project.into_iter().collect(),
            source_prefix: args.source_prefix,
            access: reader.access,
            ..Filters::default()
        };
        // A search embeds the query: it waits for a query slot as answers do.
        let permit = crate::admission::admit(&self.state).await?;
        let retrieved = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            engine.search(&query, &retrieval, &filters)
        })
        .await??;
        Ok(Reply {
            text: hits_text(&retrieved.hits),
            structured: json!({"hits": retrieved.hits}),
        })
    }

    async fn ask(&self, args: AskArgs, reader: Reader) -> Result<Reply, ApiError> {
        let pipeline = args
            .pipeline
            .map(|name| name.parse::<PipelineKind>())
            .transpose()
            .map_err(|error| ApiError::BadRequest(format!("pipeline: {error}")))?;
        let conversation = args
            .conversation
            .map(|id| id.parse::<ConversationId>())
            .transpose()
            .map_err(|error| ApiError::BadRequest(format!("conversation: {error}")))?;
        let engine = self.state.engine();
        let job = AnswerJob {
            retrieval: engine.config.retrieval.clone(),
            question: Question::new(args.question)?,
            engine,
            filters: Filters::default(),
            options: AskOptions {
                pipeline,
                conversation,
                ..AskOptions::default()
            },
            reader,
        };
        let answer = answering::answer(&self.state, job).await?;
        Ok(Reply {
            text: answer_text(&answer),
            structured: serde_json::to_value(&answer).unwrap_or_default(),
        })
    }

    async fn list_documents(&self, reader: Reader) -> Result<Reply, ApiError> {
        let ids = self.document_ids(reader.access).await?;
        Ok(Reply {
            text: ids.join("\n"),
            structured: json!({"documents": ids}),
        })
    }

    async fn get_document(&self, args: GetDocumentArgs, reader: Reader) -> Result<Reply, ApiError> {
        let chunks = self.document_chunks(&args.id, reader.access).await?;
        Ok(Reply {
            text: document_text(&chunks),
            structured: json!({"id": args.id, "chunks": chunks}),
        })
    }

    /// Every indexed file `access` may read, by its shown path.
    async fn document_ids(&self, access: Access) -> Result<Vec<String>, ApiError> {
        let engine = self.state.engine();
        Ok(tokio::task::spawn_blocking(move || {
            let shown = engine.shown_paths();
            engine
                .files(&access)
                .map(|files| files.iter().map(|file| shown.show(file)).collect())
        })
        .await??)
    }

    /// The chunks of the document `id` names (see [`shiori_engine::Engine::document`]); a 404
    /// when there is none.
    async fn document_chunks(
        &self,
        id: &str,
        access: Access,
    ) -> Result<Vec<shiori_core::Chunk>, ApiError> {
        let engine = self.state.engine();
        let wanted = id.to_string();
        let chunks =
            tokio::task::spawn_blocking(move || engine.document(&wanted, &access)).await??;
        if chunks.is_empty() {
            return Err(ApiError::NotFound(format!(
                "id: no indexed document {id:?}; list_documents lists them"
            )));
        }
        Ok(chunks)
    }
}

/// What a tool returns: text an agent can quote, and the same as structured content.
struct Reply {
    text: String,
    structured: Value,
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("shiori", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Shiori searches and answers from a company's indexed documents (Japanese and \
             English). Use `search` to find passages, `ask` for a cited answer or a refusal, \
             and `get_document` to read a whole document.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(McpHandler::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        McpHandler::tools()
            .into_iter()
            .find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match self.run_tool(&request.name, args, reader(&context)).await {
            Ok(reply) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(reply.text)]);
                result.structured_content = Some(reply.structured);
                result
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{}: {}",
                error.code(),
                shiori_engine::without_absolute_paths(&error.to_string())
            ))]),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let ids = self
            .document_ids(reader(&context).access)
            .await
            .map_err(internal)?;
        let resources = ids
            .into_iter()
            .map(|id| {
                Resource::new(format!("{DOCUMENT_URI}{id}"), id.clone())
                    .with_mime_type("text/plain")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let Some(id) = uri.strip_prefix(DOCUMENT_URI) else {
            return Err(ErrorData::resource_not_found(
                format!("{uri}: resources are {DOCUMENT_URI}{{id}}"),
                None,
            ));
        };
        let chunks = self
            .document_chunks(id, reader(&context).access)
            .await
            .map_err(|error| ErrorData::resource_not_found(error.to_string(), None))?;
        let text = document_text(&chunks);
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri.clone())]).into())
    }
}

/// Who a request reads as: over HTTP, the reader the API key middleware put on the request;
/// over stdio (`shiori mcp`, a local process), the machine's owner.
fn reader(context: &RequestContext<RoleServer>) -> Reader {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => parts
            .extensions
            .get::<Reader>()
            .cloned()
            .unwrap_or_else(Reader::nobody),
        None => Reader::owner(),
    }
}

/// A tool whose input schema is `Args`'s.
fn tool<Args: JsonSchema>(name: &'static str, description: &'static str) -> Tool {
    let schema = serde_json::to_value(schemars::schema_for!(Args)).unwrap_or_default();
    let schema = match schema {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    Tool::new(name, description, Arc::new(schema))
}

/// A tool's arguments, or a 400 naming what is wrong with them.
fn parse<Args: DeserializeOwned>(args: Map<String, Value>) -> Result<Args, ApiError> {
    serde_json::from_value(Value::Object(args))
        .map_err(|error| ApiError::BadRequest(format!("invalid arguments: {error}")))
}

fn internal(error: ApiError) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

/// A document's text: its chunks in order, a blank line apart.
fn document_text(chunks: &[shiori_core::Chunk]) -> String {
    chunks
        .iter()
        .map(|chunk| chunk.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Hits as numbered lines an agent can quote.
fn hits_text(hits: &[Hit]) -> String {
    if hits.is_empty() {
        return "No passages found.".to_string();
    }
    let mut text = String::new();
    for (index, hit) in hits.iter().enumerate() {
        let chunk = &hit.chunk;
        let _ = writeln!(
            text,
            "[{}] {} ({}) score {:.3}\n{}\n",
            index + 1,
            chunk.title,
            chunk.source,
            hit.score,
            chunk.text
        );
    }
    text
}

/// The answer, then the sources its `[n]` markers point at.
fn answer_text(answer: &Answer) -> String {
    let mut text = answer.answer.clone();
    if answer.refused {
        return text;
    }
    text.push_str("\n\nSources:");
    for (index, source) in answer.sources.iter().enumerate() {
        let _ = write!(
            text,
            "\n[{}] {} ({})",
            index + 1,
            source.title,
            source.source
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_tool_lists_the_engines_modes_by_their_config_names() {
        let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
        let modes = &schema["properties"]["mode"]["enum"];
        assert_eq!(modes, &json!(["dense", "bm25", "hybrid", null]), "{schema}");
        let args: SearchArgs =
            serde_json::from_value(json!({"query": "vpn", "mode": "bm25"})).unwrap();
        assert_eq!(args.mode, Some(RetrievalMode::Bm25));
        assert!(
            serde_json::from_value::<SearchArgs>(json!({"query": "q", "mode": "fuzzy"})).is_err()
        );
    }
}
