use crate::conversation::now_ms;
use crate::generation::build_api_embedder;
use crate::query::{Question, RetrievalOverrides};
use crate::store::{open_conversations, open_store};
use crate::{
    Config, EmbedderConfig, EmbedderKind, EngineError, Generation, Progress, RetryConfig,
    ShownPaths,
};
use shiori_analysis::JapaneseTokenization;
use shiori_core::{
    Access, Answer, Chunk, ConversationId, Embedder, Filters, PriceTable, Reranker, Retrieval,
    RetrievalConfig, Turn,
};
use shiori_models::{
    assets::ShioriHome, embed_with_cache, E5Embedder, EmbeddingCache, MiniLmEmbedder, Precision,
};
use shiori_rag::{Listener, PipelineKind, PipelineParams, Pipelines, RagError};
use shiori_retrieve::{merge_two_stage, rerank, Retriever};
use shiori_store::{reembed, ConversationStore, DocumentStore, StoreOptions, StoreStats};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What an answer that calls no model is priced by.
static NO_PRICES: PriceTable = PriceTable(std::collections::BTreeMap::new());

/// Chunks re-embedded per cache round-trip.
const REEMBED_BATCH: usize = 256;

/// How `ask` answers: a pipeline (the configured default otherwise), reranked or not, and as a
/// stand-alone question or the next turn of a conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AskOptions {
    pub pipeline: Option<PipelineKind>,
    pub rerank: bool,
    pub conversation: Option<ConversationId>,
    /// Earlier turns the caller keeps itself (the OpenAI API sends them as `messages`), for a
    /// question asked outside a stored conversation.
    pub history: Vec<Turn>,
    /// The API key asking (`None`: the machine's owner); a stored conversation must be its own.
    pub owner: Option<String>,
}

/// One data directory, opened: its config, store, embedder and embedding cache.
pub struct Engine {
    pub config: Config,
    pub(crate) data_dir: PathBuf,
    /// How paths leave the engine: relative to the source root.
    pub(crate) shown_paths: ShownPaths,
    /// Shared with engines opened by [`Engine::reopen`], so a second one costs no model load.
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) cache: Arc<EmbeddingCache>,
    japanese: JapaneseTokenization,
    pub(crate) store: Box<dyn DocumentStore>,
    pub(crate) conversations: Box<dyn ConversationStore>,
    /// Chat models and web search, built from `config` on first use and kept: a local GGUF
    /// model takes seconds to load, and evaluation asks once per query.
    generation: OnceLock<Generation>,
}

impl Engine {
    /// Opens `data_dir` with the models and dictionary installed under `home`.
    pub fn open(data_dir: &Path, home: &ShioriHome) -> Result<Engine, EngineError> {
        Engine::open_with(data_dir, home, false)
    }

    /// Opens `data_dir`; with `reembed`, also one built with another embedder, to be converted
    /// by [`Engine::reembed`] before anything else.
    pub fn open_with(
        data_dir: &Path,
        home: &ShioriHome,
        reembed: bool,
    ) -> Result<Engine, EngineError> {
        Engine::open_with_cache(data_dir, home, &home.embedding_cache(), reembed)
    }

    /// Opens `data_dir` with the embedding cache at `cache` (a benchmark of a first index
    /// starts from an empty one).
    pub fn open_with_cache(
        data_dir: &Path,
        home: &ShioriHome,
        cache: &Path,
        reembed: bool,
    ) -> Result<Engine, EngineError> {
        let config = Config::load(data_dir)?;
        // Side by side: nothing can start before both are in memory (e5 takes about 0.15 s to
        // load on 2 cores, the dictionary 0.07 s).
        let (embedder, japanese) = rayon::join(
            || load_embedder(&config.embedder, &config.llm.retry, home),
            // Without the built dictionary this falls back to character bigrams.
            || JapaneseTokenization::load(Some(&home.ipadic_dictionary())),
        );
        let (embedder, japanese) = (embedder?, japanese?);
        let cache = EmbeddingCache::open(cache)?;
        Engine::from_parts(data_dir, config, embedder, japanese, cache, reembed)
    }

    /// Opens `data_dir` with parts chosen by the caller.
    pub fn from_parts(
        data_dir: &Path,
        config: Config,
        embedder: Box<dyn Embedder>,
        japanese: JapaneseTokenization,
        cache: EmbeddingCache,
        reembed: bool,
    ) -> Result<Engine, EngineError> {
        Engine::with_shared(
            data_dir,
            config,
            Arc::from(embedder),
            japanese,
            Arc::new(cache),
            reembed,
        )
    }

    fn with_shared(
        data_dir: &Path,
        config: Config,
        embedder: Arc<dyn Embedder>,
        japanese: JapaneseTokenization,
        cache: Arc<EmbeddingCache>,
        reembed: bool,
    ) -> Result<Engine, EngineError> {
        let store = open_store(
            data_dir,
            &config.store,
            StoreOptions {
                embedder_id: embedder.model_id().to_string(),
                dimension: embedder.dimension(),
                reembed,
            },
            japanese.clone(),
        )?;
        let conversations = open_conversations(data_dir, &config.store)?;
        Ok(Engine {
            shown_paths: ShownPaths::new(
                &config.source_root(data_dir),
                config.configured_folders(data_dir),
            )
            .with_remotes(
                config
                    .remote_mirrors(data_dir)
                    .into_iter()
                    .map(|(url, folder)| (folder, url.shown_prefix())),
            ),
            config,
            data_dir: data_dir.to_path_buf(),
            embedder,
            cache,
            japanese,
            store,
            conversations,
            generation: OnceLock::new(),
        })
    }

    /// Opens the same data directory again, sharing this engine's embedder, analyzer and cache,
    /// and re-reading `shiori.toml` (sources, retrieval settings; the embedder stays this one's).
    /// The new engine sees everything committed so far: a server indexes with one engine while
    /// another keeps answering, then swaps in a fresh one.
    pub fn reopen(&self) -> Result<Engine, EngineError> {
        self.sibling(&self.data_dir, Config::load(&self.data_dir)?)
    }

    /// An engine on `data_dir` with `config`, sharing this one's embedder, analyzer and cache.
    pub(crate) fn sibling(&self, data_dir: &Path, config: Config) -> Result<Engine, EngineError> {
        Engine::with_shared(
            data_dir,
            config,
            Arc::clone(&self.embedder),
            self.japanese.clone(),
            Arc::clone(&self.cache),
            false,
        )
    }

    /// Freezes this engine's view of the data directory at what is committed now, for an
    /// engine that only answers while another one writes (see [`DocumentStore::pin_snapshot`]).
    pub fn pin_snapshot(&self) -> Result<(), EngineError> {
        Ok(self.store.pin_snapshot()?)
    }

    /// How many commits the store has seen, read past a pinned snapshot (see
    /// [`DocumentStore::commits`]); `None` where every read already sees the latest commit.
    pub fn commits(&self) -> Result<Option<u64>, EngineError> {
        Ok(self.store.commits()?)
    }

    /// The generation parts of this engine's config, built once.
    pub(crate) fn generation(&self) -> Result<&Generation, EngineError> {
        if let Some(generation) = self.generation.get() {
            return Ok(generation);
        }
        let built = Generation::from_config(&self.config)?;
        Ok(self.generation.get_or_init(|| built))
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }

    /// How this engine shows paths; surfaces use it for what they report besides hits.
    pub fn shown_paths(&self) -> &ShownPaths {
        &self.shown_paths
    }

    /// Ranks chunks for `question`; `filters` and the hits use shown paths (see
    /// [`ShownPaths`]).
    pub fn search(
        &self,
        question: &Question,
        retrieval: &RetrievalConfig,
        filters: &Filters,
    ) -> Result<Retrieval, EngineError> {
        self.search_text(question.as_str(), retrieval, filters)
    }

    /// [`Engine::search`] for any text: a question, or a query a pipeline wrote.
    pub(crate) fn search_text(
        &self,
        query: &str,
        retrieval: &RetrievalConfig,
        filters: &Filters,
    ) -> Result<Retrieval, EngineError> {
        let filters = self.shown_paths.stored_filters(filters)?;
        let mut retrieved = self.search_stored(query, retrieval, &filters)?;
        for hit in &mut retrieved.hits {
            self.shown_paths.show_chunk(&mut hit.chunk);
        }
        Ok(retrieved)
    }

    /// [`Engine::search`] on stored paths. With `two_stage` and a project filter, the first
    /// filtered project is searched first and related projects second (see
    /// [`merge_two_stage`]).
    fn search_stored(
        &self,
        query: &str,
        retrieval: &RetrievalConfig,
        filters: &Filters,
    ) -> Result<Retrieval, EngineError> {
        let retriever = Retriever {
            store: self.store.as_ref(),
            embedder: self.embedder.as_ref(),
        };
        let Some(current) = filters.projects.first().filter(|_| retrieval.two_stage) else {
            return Ok(retriever.retrieve(query, retrieval, filters)?);
        };
        let related = match &filters.projects[1..] {
            [] => self.config.related_projects(current)?,
            listed => listed.to_vec(),
        };
        let primary_filters = Filters {
            projects: vec![current.clone()],
            ..filters.clone()
        };
        if related.is_empty() {
            return Ok(retriever.retrieve(query, retrieval, &primary_filters)?);
        }
        let related_filters = Filters {
            projects: related,
            ..filters.clone()
        };
        let mut stages =
            retriever.retrieve_each(query, retrieval, &[primary_filters, related_filters])?;
        let (Some(secondary), Some(primary)) = (stages.pop(), stages.pop()) else {
            unreachable!("one result per filter set")
        };
        Ok(merge_two_stage(
            primary,
            secondary,
            retrieval.top_k,
            retrieval.related_hits,
        ))
    }

    /// The filter errors every retrieval of an answer would meet, found before a pipeline runs
    /// (a pipeline reports a failed retrieval without its cause): paths that are not shown
    /// ones, and for two-stage search (which reads their related projects) unknown projects.
    fn check_filters(
        &self,
        retrieval: &RetrievalConfig,
        filters: &Filters,
    ) -> Result<(), EngineError> {
        self.shown_paths.stored_filters(filters)?;
        if retrieval.two_stage {
            // Named without the configured ones: any key may send filters, and the list of
            // projects is the operator's.
            if let Some(unknown) = filters
                .projects
                .iter()
                .find(|project| !self.config.projects.contains_key(*project))
            {
                return Err(EngineError::Invalid(format!(
                    "filters.projects: unknown project {unknown:?}"
                )));
            }
        }
        Ok(())
    }

    /// Ranks chunks for `question`, then reorders them with the configured LLM reranker.
    pub fn search_reranked(
        &self,
        question: &Question,
        retrieval: &RetrievalConfig,
        filters: &Filters,
    ) -> Result<Retrieval, EngineError> {
        let generation = self.generation()?;
        let reranker = generation.reranker()?;
        self.retrieve(question.as_str(), retrieval, filters, Some(&reranker))
    }

    /// The retrieval stage of every answer and search: ranks chunks for `query` and, given a
    /// reranker, reorders them with it.
    fn retrieve(
        &self,
        query: &str,
        retrieval: &RetrievalConfig,
        filters: &Filters,
        reranker: Option<&dyn Reranker>,
    ) -> Result<Retrieval, EngineError> {
        let retrieved = self.search_text(query, retrieval, filters)?;
        match reranker {
            Some(reranker) => Ok(rerank(reranker, query, retrieved)?),
            None => Ok(retrieved),
        }
    }

    /// The configured `[retrieval]` with a request's `overrides` on top, checked: what every
    /// surface hands [`Engine::search`], [`Engine::answer`] and [`Engine::evaluate`].
    pub fn retrieval(
        &self,
        overrides: &RetrievalOverrides,
    ) -> Result<RetrievalConfig, EngineError> {
        overrides.over(&self.config.retrieval)
    }

    /// The one answer path of every surface: runs the chosen pipeline and its fallbacks, reporting steps and tokens to `listener`. In a
    /// conversation the question is condensed with the earlier turns first, and the answer is
    /// kept as the conversation's next turn.
    pub fn answer(
        &self,
        question: &Question,
        retrieval: &RetrievalConfig,
        filters: &Filters,
        options: &AskOptions,
        listener: &Listener<'_>,
    ) -> Result<Answer, EngineError> {
        let _span = tracing::info_span!("answer", pipeline = ?options.pipeline).entered();
        self.check_filters(retrieval, filters)?;
        let question = question.as_str();
        let history = match &options.conversation {
            Some(_) if !options.history.is_empty() => {
                return Err(EngineError::Invalid(
                    "a question continues either a stored conversation or the turns it is \
                     given, not both"
                        .into(),
                ))
            }
            Some(id) => Cow::Owned(
                self.conversation_to_continue(id, options.owner.as_deref())?
                    .turns,
            ),
            None => Cow::Borrowed(options.history.as_slice()),
        };
        let chain = self.config.pipeline.chain(options.pipeline);
        // The extractive answer calls no model: the chat models are not even loaded for it.
        let generation = match (chain.as_slice(), options.rerank) {
            ([PipelineKind::Extractive], false) => None,
            _ => Some(self.generation()?),
        };
        let reranker = match generation {
            Some(generation) if options.rerank => Some(generation.reranker()?),
            _ => None,
        };
        let corpus = |query: &str, k: usize| -> Result<Retrieval, RagError> {
            let retrieval = RetrievalConfig {
                top_k: k,
                ..retrieval.clone()
            };
            let reranker = reranker.as_ref().map(|r| r as &dyn Reranker);
            self.retrieve(query, &retrieval, filters, reranker)
                .map_err(|e| RagError::Retrieval(Box::new(e)))
        };
        let pipeline = &self.config.pipeline;
        let pipelines = Pipelines {
            corpus: &corpus,
            embedder: Some(self.embedder.as_ref()),
            models: generation.map(Generation::models).unwrap_or_default(),
            web: generation.and_then(Generation::web),
            prices: generation.map_or(&NO_PRICES, Generation::prices),
            params: PipelineParams {
                top_k: retrieval.top_k,
                queries: pipeline.queries,
                max_context: pipeline.max_context,
                web_results: pipeline.web_results,
                max_steps: pipeline.max_steps,
                rrf_k: retrieval.rrf_k,
                max_tokens: Some(pipeline.max_tokens),
                refuse_irrelevant: pipeline.refuse_irrelevant,
                history_tokens: pipeline.history_tokens,
            },
        };
        let mut answer = pipelines.answer_in_conversation(question, &history, &chain, listener)?;
        if let Some(id) = &options.conversation {
            self.record_turn(id, &Turn::new(question, &answer, now_ms()))?;
            answer.conversation_id = Some(id.clone());
        }
        Ok(answer)
    }

    /// Recomputes every stored chunk's vector with the configured embedder (through the
    /// embedding cache); returns how many chunks were converted.
    pub fn reembed(&mut self, progress: &dyn Progress) -> Result<usize, EngineError> {
        let chunks = self.store.stats(&Filters::default())?.chunks;
        progress.start("re-embedding chunks", chunks);
        let embedder = self.embedder.as_ref();
        let cache = &self.cache;
        let converted = reembed(self.store.as_mut(), REEMBED_BATCH, |items| {
            let vectors = embed_with_cache(embedder, cache, items)?.0;
            progress.advance(items.len() as u64);
            progress.chunks_embedded(items.len() as u64);
            Ok::<_, EngineError>(vectors)
        })?;
        progress.finish();
        Ok(converted)
    }

    /// The index's description with the counts of what `access` may read.
    pub fn stats(&self, access: &Access) -> Result<StoreStats, EngineError> {
        let filters = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        Ok(self.store.stats(&filters)?)
    }

    /// Every indexed file path `access` may read a chunk of, sorted.
    pub fn files(&self, access: &Access) -> Result<Vec<String>, EngineError> {
        let filters = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        Ok(self.store.file_paths(&filters)?)
    }

    /// The chunks of the document `id` names, in store order, with shown paths; empty when there
    /// is none `access` may read. `id` may be anything a hit shows of it: its document id (a
    /// record's own, a page's `file#p3`, a file's path), a chunk id (`doc_id#index`), its source
    /// (`faq.jsonl#L12`, `report.pdf p.3`), or a file's shown path (then every record, page or
    /// sheet of the file).
    /// An absolute path is refused whether or not it names a stored file: ids are given as
    /// results show them, and a lookup that found a file by its stored path would tell a caller
    /// where the server keeps its files.
    pub fn document(&self, id: &str, access: &Access) -> Result<Vec<Chunk>, EngineError> {
        if id.trim().is_empty() {
            return Ok(Vec::new());
        }
        if std::path::Path::new(id).is_absolute() {
            return Err(EngineError::Invalid(
                "id: an absolute path; name a document as results show it (relative to the \
                 source root)"
                    .into(),
            ));
        }
        // A record's own id (`faq-009`), and its chunks' ids, name no file.
        for doc_id in std::iter::once(id).chain(document_of_chunk_id(id)) {
            let filters = Filters {
                doc_ids: vec![doc_id.to_string()],
                access: access.clone(),
                ..Filters::default()
            };
            let keys = self.store.keys_matching(&filters)?;
            if !keys.is_empty() {
                return Ok(self.shown(self.store.chunks(&keys)?));
            }
        }
        // Everything else starts with the file's shown path. A file outside every known folder
        // is shown by its last components only, which do not lead back to its stored path, so
        // the file is found among the files as shown.
        let Some((file, shown)) = self
            .files(access)?
            .into_iter()
            .map(|file| {
                let shown = self.shown_paths.show(&file);
                (file, shown)
            })
            .filter(|(_, shown)| names_a_part_of(id, shown))
            .max_by_key(|(_, shown)| shown.len())
        else {
            return Ok(Vec::new());
        };
        let chunks = self.file_chunks(&file, access)?;
        if shown == id {
            return Ok(chunks);
        }
        let named: Vec<String> = chunks
            .iter()
            .filter(|chunk| {
                [&chunk.doc_id, &chunk.source, &chunk.chunk_id]
                    .iter()
                    .any(|field| field.as_str() == id)
            })
            .map(|chunk| chunk.doc_id.clone())
            .collect();
        Ok(chunks
            .into_iter()
            .filter(|chunk| named.contains(&chunk.doc_id))
            .collect())
    }

    /// `chunks` with shown paths.
    fn shown(&self, chunks: Vec<(u64, Chunk)>) -> Vec<Chunk> {
        chunks
            .into_iter()
            .map(|(_, mut chunk)| {
                self.shown_paths.show_chunk(&mut chunk);
                chunk
            })
            .collect()
    }

    /// The chunks indexed from the file at the stored `path` (every record of a JSONL or CSV
    /// file, every page, slide or sheet of a PDF or Office file), in store order, with shown
    /// paths; only those `access` may read.
    pub fn file_chunks(&self, path: &str, access: &Access) -> Result<Vec<Chunk>, EngineError> {
        let filters = Filters {
            source_prefix: Some(path.to_string()),
            access: access.clone(),
            ..Filters::default()
        };
        let keys = self.store.keys_matching(&filters)?;
        let record_prefix = format!("{path}#");
        Ok(self
            .store
            .chunks(&keys)?
            .into_iter()
            .map(|(_, chunk)| chunk)
            .filter(|chunk| {
                chunk.source == path
                    || chunk.source.starts_with(&record_prefix)
                    || chunk.doc_id.starts_with(&record_prefix)
            })
            .map(|mut chunk| {
                self.shown_paths.show_chunk(&mut chunk);
                chunk
            })
            .collect())
    }
}

/// Loads the embedder `config` names: a local model from its configured path or the one in
/// `home`, or an embedding API client.
pub fn load_embedder(
    config: &EmbedderConfig,
    retry: &RetryConfig,
    home: &ShioriHome,
) -> Result<Box<dyn Embedder>, EngineError> {
    let precision = config.precision.unwrap_or_else(Precision::fastest);
    Ok(match config.kind {
        EmbedderKind::E5 => {
            let path = config.path.clone().unwrap_or_else(|| home.e5_model());
            Box::new(E5Embedder::load_with(&path, precision)?)
        }
        EmbedderKind::Minilm => {
            let dir = config.path.clone().unwrap_or_else(|| home.minilm_dir());
            Box::new(MiniLmEmbedder::load_with(&dir, precision)?)
        }
        EmbedderKind::Openai | EmbedderKind::Gemini => build_api_embedder(config, retry)?,
    })
}

/// Whether `id` is the file shown as `file`, or something of it: a document, chunk or source
/// whose id goes on after the path with `#` (`#p3`, `#L12`, `#0`) or a space (` p.3`).
fn names_a_part_of(id: &str, file: &str) -> bool {
    id.strip_prefix(file)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['#', ' ']))
}

/// The document id in a chunk id (`doc_id#index`, as the chunkers write it), if `id` is one.
fn document_of_chunk_id(id: &str) -> Option<&str> {
    let (doc_id, index) = id.rsplit_once('#')?;
    let is_index = !index.is_empty() && index.bytes().all(|byte| byte.is_ascii_digit());
    (is_index && !doc_id.is_empty()).then_some(doc_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_go_on_after_a_file_name_a_part_of_it() {
        for id in ["faq/a.jsonl", "faq/a.jsonl#L12", "r.pdf p.3", "r.pdf#p3#0"] {
            let file = if id.starts_with("faq") {
                "faq/a.jsonl"
            } else {
                "r.pdf"
            };
            assert!(names_a_part_of(id, file), "{id}");
        }
        for id in ["faq/a.jsonl.bak", "faq/a.json", "r.pdfx p.3"] {
            assert!(
                !names_a_part_of(id, "faq/a.jsonl") && !names_a_part_of(id, "r.pdf"),
                "{id}"
            );
        }
    }

    #[test]
    fn a_chunk_id_names_its_document() {
        assert_eq!(document_of_chunk_id("faq-009#0"), Some("faq-009"));
        assert_eq!(
            document_of_chunk_id("report.pdf#p3#12"),
            Some("report.pdf#p3")
        );
        for not_a_chunk_id in ["faq-009", "faq.jsonl#L12", "#3", "notes.md#", "a#1b"] {
            assert_eq!(
                document_of_chunk_id(not_a_chunk_id),
                None,
                "{not_a_chunk_id}"
            );
        }
    }
}
