//! Embedding APIs as `Embedder`s: OpenAI-compatible `/embeddings` and Gemini `batchEmbedContents`.
//! Vectors are L2-normalised, as the index expects.

use crate::http::{malformed, Endpoint, Http, HttpError};
use serde_json::{json, Value};
use shiori_core::{EmbedError, Embedder};

/// Texts per request; both APIs accept at least this many.
const BATCH: usize = 96;

/// Which wire protocol an embedding API speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingProtocol {
    OpenAi,
    Gemini,
}

/// Which side of retrieval a text is on (Gemini embeds them differently).
#[derive(Clone, Copy)]
enum TextRole {
    Query,
    Passage,
}

pub struct ApiEmbedder {
    http: Http,
    protocol: EmbeddingProtocol,
    model: String,
    model_id: String,
    dimension: usize,
}

impl ApiEmbedder {
    /// Connects; without a known `dimension`, embeds one probe text to learn it.
    pub fn new(
        protocol: EmbeddingProtocol,
        endpoint: Endpoint,
        model: &str,
        dimension: Option<usize>,
    ) -> Result<ApiEmbedder, EmbedError> {
        let provider = match protocol {
            EmbeddingProtocol::OpenAi => "openai",
            EmbeddingProtocol::Gemini => "gemini",
        };
        let mut embedder = ApiEmbedder {
            http: Http::new(provider, endpoint)?,
            protocol,
            model: model.to_string(),
            model_id: format!("{provider}:{model}"),
            dimension: dimension.unwrap_or(0),
        };
        if dimension.is_none() {
            embedder.dimension = embedder.request(&["dimension probe"], TextRole::Query)?[0].len();
        }
        Ok(embedder)
    }

    fn request(&self, texts: &[&str], role: TextRole) -> Result<Vec<Vec<f32>>, HttpError> {
        let provider = self.http.provider;
        let reply = match self.protocol {
            EmbeddingProtocol::OpenAi => {
                let url = self.http.endpoint.url("/embeddings");
                let body = json!({"model": self.model, "input": texts});
                self.http.json(|client| {
                    let request = client.post(&url).json(&body);
                    match &self.http.endpoint.api_key {
                        Some(key) => request.bearer_auth(key),
                        None => request,
                    }
                })?
            }
            EmbeddingProtocol::Gemini => {
                let url = self
                    .http
                    .endpoint
                    .url(&format!("/v1beta/models/{}:batchEmbedContents", self.model));
                let task = match role {
                    TextRole::Query => "RETRIEVAL_QUERY",
                    TextRole::Passage => "RETRIEVAL_DOCUMENT",
                };
                let requests: Vec<Value> = texts
                    .iter()
                    .map(|text| {
                        json!({"model": format!("models/{}", self.model),
                               "content": {"parts": [{"text": text}]}, "taskType": task})
                    })
                    .collect();
                let body = json!({"requests": requests});
                self.http.json(|client| {
                    let request = client.post(&url).json(&body);
                    match &self.http.endpoint.api_key {
                        Some(key) => request.header("x-goog-api-key", key),
                        None => request,
                    }
                })?
            }
        };
        let vectors = match self.protocol {
            EmbeddingProtocol::OpenAi => {
                let mut data: Vec<&Value> = reply["data"]
                    .as_array()
                    .ok_or_else(|| malformed(provider, "data", &reply))?
                    .iter()
                    .collect();
                data.sort_by_key(|item| item["index"].as_u64().unwrap_or(0));
                data.into_iter()
                    .map(|item| parse_vector(&item["embedding"]))
                    .collect::<Option<Vec<_>>>()
            }
            EmbeddingProtocol::Gemini => reply["embeddings"].as_array().and_then(|items| {
                items
                    .iter()
                    .map(|item| parse_vector(&item["values"]))
                    .collect::<Option<Vec<_>>>()
            }),
        }
        .ok_or_else(|| malformed(provider, "embedding vectors", &reply))?;
        if vectors.len() != texts.len() {
            return Err(HttpError::permanent(
                provider,
                format!("{} vectors for {} texts", vectors.len(), texts.len()),
            ));
        }
        if let Some(bad) = vectors
            .iter()
            .find(|v| self.dimension != 0 && v.len() != self.dimension)
        {
            return Err(HttpError::permanent(
                provider,
                format!(
                    "a vector of dimension {}, expected {}",
                    bad.len(),
                    self.dimension
                ),
            ));
        }
        Ok(vectors)
    }
}

fn parse_vector(value: &Value) -> Option<Vec<f32>> {
    let mut vector: Vec<f32> = value
        .as_array()?
        .iter()
        .map(|x| x.as_f64().map(|x| x as f32))
        .collect::<Option<_>>()?;
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    Some(vector)
}

impl Embedder for ApiEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            vectors.extend(self.request(batch, TextRole::Passage)?);
        }
        Ok(vectors)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.request(&[text], TextRole::Query)?;
        vectors
            .pop()
            .ok_or_else(|| EmbedError::inference("the API returned no vector"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::endpoint;
    use shiori_mock::{MockServer, Reply};

    #[test]
    fn embeds_with_the_openai_protocol_in_input_order() {
        let server = MockServer::start(|request| {
            let inputs = request.json()["input"].as_array().unwrap().clone();
            // Answers out of order, as the API may: the client sorts by `index`.
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .rev()
                .map(|(index, _)| {
                    json!({"object": "embedding", "index": index,
                                         "embedding": [3.0, 4.0 * index as f64]})
                })
                .collect();
            Reply::json(json!({"object": "list", "data": data, "model": "emb-test",
                               "usage": {"prompt_tokens": 3, "total_tokens": 3}}))
        });
        let embedder = ApiEmbedder::new(
            EmbeddingProtocol::OpenAi,
            endpoint(server.url()),
            "emb-test",
            None,
        )
        .unwrap();
        assert_eq!(embedder.dimension(), 2, "learned from a probe");
        assert_eq!(embedder.model_id(), "openai:emb-test");
        let vectors = embedder.embed_passages(&["a", "b"]).unwrap();
        assert_eq!(vectors[0], vec![1.0, 0.0]);
        assert_eq!(vectors[1], vec![0.6, 0.8]);
        let requests = server.requests_to("/embeddings");
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[1].json()["input"], json!(["a", "b"]));
        assert_eq!(requests[1].header("authorization"), Some("Bearer test-key"));
    }

    #[test]
    fn embeds_with_gemini_task_types() {
        let server = MockServer::start(|request| {
            let count = request.json()["requests"].as_array().unwrap().len();
            let embeddings: Vec<Value> = (0..count)
                .map(|_| json!({"values": [0.0, 2.0, 0.0]}))
                .collect();
            Reply::json(json!({"embeddings": embeddings}))
        });
        let embedder = ApiEmbedder::new(
            EmbeddingProtocol::Gemini,
            endpoint(server.url()),
            "text-embedding-test",
            Some(3),
        )
        .unwrap();
        assert_eq!(embedder.embed_query("q").unwrap(), vec![0.0, 1.0, 0.0]);
        assert_eq!(embedder.embed_passages(&["p1", "p2"]).unwrap().len(), 2);
        let requests = server.requests();
        assert_eq!(
            requests.len(),
            2,
            "no probe when the dimension is configured"
        );
        assert_eq!(
            requests[0].path,
            "/v1beta/models/text-embedding-test:batchEmbedContents"
        );
        let query = requests[0].json();
        assert_eq!(query["requests"][0]["taskType"], "RETRIEVAL_QUERY");
        assert_eq!(query["requests"][0]["model"], "models/text-embedding-test");
        assert_eq!(
            requests[1].json()["requests"][1]["taskType"],
            "RETRIEVAL_DOCUMENT"
        );
    }

    #[test]
    fn rejects_vectors_of_the_wrong_dimension() {
        let server = MockServer::start(|_| {
            Reply::json(json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}))
        });
        let embedder = ApiEmbedder::new(
            EmbeddingProtocol::OpenAi,
            endpoint(server.url()),
            "e",
            Some(3),
        )
        .unwrap();
        let error = embedder.embed_query("q").unwrap_err().to_string();
        assert!(error.contains("dimension 2, expected 3"), "{error}");
    }
}
