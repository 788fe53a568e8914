//! Web search clients: Tavily, Brave Search and SearXNG's JSON API.

use crate::http::{malformed, Endpoint, Http, HttpError};
use serde_json::{json, Value};
use shiori_core::{WebResult, WebSearch, WebSearchError};

/// Which web search API a [`WebSearchClient`] speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebSearchProvider {
    /// `POST /search` with a bearer key; base URL `https://api.tavily.com`.
    Tavily,
    /// `GET /res/v1/web/search` with `X-Subscription-Token`; base URL `https://api.search.brave.com`.
    Brave,
    /// `GET /search?format=json` on a SearXNG instance with the JSON format enabled.
    Searxng,
}

impl WebSearchProvider {
    fn name(self) -> &'static str {
        match self {
            WebSearchProvider::Tavily => "tavily",
            WebSearchProvider::Brave => "brave",
            WebSearchProvider::Searxng => "searxng",
        }
    }
}

pub struct WebSearchClient {
    http: Http,
    provider: WebSearchProvider,
}

impl WebSearchClient {
    pub fn new(
        provider: WebSearchProvider,
        endpoint: Endpoint,
    ) -> Result<WebSearchClient, WebSearchError> {
        Ok(WebSearchClient {
            http: Http::new(provider.name(), endpoint)?,
            provider,
        })
    }

    fn fetch(&self, query: &str, max_results: usize) -> Result<Vec<WebResult>, HttpError> {
        let key = self.http.endpoint.api_key.as_deref();
        let (reply, list, content_field) = match self.provider {
            WebSearchProvider::Tavily => {
                let url = self.http.endpoint.url("/search");
                let body =
                    json!({"query": query, "max_results": max_results, "search_depth": "basic"});
                let reply = self.http.json(|client| {
                    let request = client.post(&url).json(&body);
                    match key {
                        Some(key) => request.bearer_auth(key),
                        None => request,
                    }
                })?;
                (reply, "/results", "content")
            }
            WebSearchProvider::Brave => {
                let url = self.http.endpoint.url("/res/v1/web/search");
                let count = max_results.to_string();
                let reply = self.http.json(|client| {
                    let request = client
                        .get(&url)
                        .query(&[("q", query), ("count", count.as_str())])
                        .header("accept", "application/json");
                    match key {
                        Some(key) => request.header("x-subscription-token", key),
                        None => request,
                    }
                })?;
                (reply, "/web/results", "description")
            }
            WebSearchProvider::Searxng => {
                let url = self.http.endpoint.url("/search");
                let reply = self
                    .http
                    .json(|client| client.get(&url).query(&[("q", query), ("format", "json")]))?;
                (reply, "/results", "content")
            }
        };
        let items = match reply.pointer(list) {
            Some(Value::Array(items)) => items,
            // Brave leaves out `web` when nothing matched.
            None if self.provider == WebSearchProvider::Brave => return Ok(Vec::new()),
            _ => return Err(malformed(self.http.provider, list, &reply)),
        };
        Ok(items
            .iter()
            .filter_map(|item| {
                Some(WebResult {
                    url: item["url"].as_str()?.to_string(),
                    title: item["title"].as_str().unwrap_or_default().to_string(),
                    content: item[content_field].as_str().unwrap_or_default().to_string(),
                })
            })
            .take(max_results)
            .collect())
    }
}

impl WebSearch for WebSearchClient {
    fn name(&self) -> &str {
        self.http.provider
    }

    fn search(&self, query: &str, max_results: usize) -> Result<Vec<WebResult>, WebSearchError> {
        Ok(self.fetch(query, max_results)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::endpoint;
    use shiori_mock::{sequence, MockServer, Reply};

    #[test]
    fn searches_tavily() {
        let server = MockServer::start(sequence(vec![
            Reply::status(429, "slow down"),
            Reply::json(json!({"query": "q", "results": [
                {"title": "Tungsten", "url": "https://example.org/w", "content": "3422 °C", "score": 0.9},
                {"title": "No URL"}
            ]})),
        ]));
        let client =
            WebSearchClient::new(WebSearchProvider::Tavily, endpoint(server.url())).unwrap();
        let results = client.search("tungsten melting point", 3).unwrap();
        assert_eq!(
            results,
            vec![WebResult {
                title: "Tungsten".into(),
                url: "https://example.org/w".into(),
                content: "3422 °C".into()
            }]
        );
        let requests = server.requests_to("/search");
        assert_eq!(requests.len(), 2, "the 429 was retried");
        assert_eq!(requests[1].header("authorization"), Some("Bearer test-key"));
        assert_eq!(requests[1].json()["query"], "tungsten melting point");
        assert_eq!(requests[1].json()["max_results"], 3);
        assert_eq!(client.name(), "tavily");
    }

    #[test]
    fn searches_brave() {
        let server = MockServer::start(sequence(vec![Reply::json(json!({"web": {"results": [
            {"title": "A", "url": "https://a.example", "description": "about a"},
            {"title": "B", "url": "https://b.example", "description": "about b"}
        ]}}))]));
        let client =
            WebSearchClient::new(WebSearchProvider::Brave, endpoint(server.url())).unwrap();
        let results = client.search("rust sse", 1).unwrap();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].content, "about a");
        let sent = &server.requests()[0];
        assert_eq!(sent.method, "GET");
        assert_eq!(sent.path, "/res/v1/web/search");
        assert_eq!(sent.query, "q=rust+sse&count=1");
        assert_eq!(sent.header("x-subscription-token"), Some("test-key"));
    }

    #[test]
    fn searches_searxng_and_reports_bad_replies() {
        let server = MockServer::start(sequence(vec![
            Reply::json(json!({"query": "x", "results": [
                {"title": "S", "url": "https://s.example", "content": "snippet", "engine": "ddg"}
            ]})),
            Reply::json(json!({"unexpected": true})),
        ]));
        let client =
            WebSearchClient::new(WebSearchProvider::Searxng, endpoint(server.url())).unwrap();
        let results = client.search("x", 5).unwrap();
        assert_eq!(results[0].url, "https://s.example");
        assert_eq!(server.requests()[0].query, "q=x&format=json");
        let error = client.search("x", 5).unwrap_err();
        assert!(matches!(error, WebSearchError::Permanent { .. }), "{error}");
    }
}
