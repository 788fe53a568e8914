//! S3-compatible storage: objects read through `object_store` (its signing, retries and
//! streaming), the bucket listed by Shiori itself (`listing`), so that one key `object_store`
//! cannot name is refused alone. Credentials, region and endpoint come from the standard AWS
//! variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL`, …) and, for what they leave out, from the shared credentials and config
//! files of `AWS_PROFILE`.

mod listing;
mod profile;

use crate::{http, Connector, ConnectorError, Listed, ObjectFailure, RemoteObject};
use futures_util::StreamExt;
use listing::{parse_page, Bucket, ListedKey};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ClientOptions, ObjectStoreExt, RetryConfig};
use std::io::{Read, Write};
use std::time::{Duration, SystemTime};
use tokio::runtime::Runtime;

pub(crate) struct S3Connector {
    store: AmazonS3,
    /// Where the bucket is listed (by Shiori, see `listing`), and the client that lists it.
    listed_at: Bucket,
    client: reqwest::blocking::Client,
    bucket: String,
    prefix: Option<StorePath>,
    runtime: Runtime,
}

impl S3Connector {
    pub(crate) fn new(bucket: &str, prefix: &str) -> Result<S3Connector, ConnectorError> {
        let what = format!("s3://{bucket}/{prefix}");
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        let mut endpoint = std::env::var("AWS_ENDPOINT_URL_S3")
            .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
            .unwrap_or_default();
        for (key, value) in profile::settings(&profile::ProfileFiles::from_env()) {
            if key
                .env_names()
                .iter()
                .any(|name| std::env::var_os(name).is_some())
            {
                continue;
            }
            if key == profile::ProfileKey::Endpoint {
                endpoint.clone_from(&value);
            }
            builder = builder.with_config(key.config_key(), value);
        }
        let options = ClientOptions::new()
            .with_connect_timeout(Duration::from_secs(10))
            .with_timeout_disabled()
            .with_read_timeout(Duration::from_secs(60))
            // An endpoint the operator wrote with http:// (a MinIO on the same host) is taken
            // as they wrote it; AWS itself is always HTTPS.
            .with_allow_http(endpoint.starts_with("http://"));
        let listed_at = Bucket::of(&builder, bucket)
            .map_err(|message| ConnectorError::protocol(&what, message))?;
        let client = http::client(&what)?;
        let store = builder
            .with_client_options(options)
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 4,
                retry_timeout: Duration::from_secs(120),
            })
            .build()
            .map_err(|error| ConnectorError::transport(&what, false, error))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| ConnectorError::io(&what, error))?;
        let prefix = prefix.trim_matches('/');
        Ok(S3Connector {
            store,
            listed_at,
            client,
            bucket: bucket.to_string(),
            prefix: (!prefix.is_empty()).then(|| StorePath::from(prefix)),
            runtime,
        })
    }

    fn shown(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }

    /// Every key under the prefix, a page at a time, each page retried as every connector
    /// request is (`http::send`: backoff on 429 and 5xx, `Retry-After`).
    fn list_keys(&self, what: &str) -> Result<Vec<ListedKey>, ConnectorError> {
        let credential = self
            .runtime
            .block_on(self.store.credentials().get_credential())
            .map_err(|error| ConnectorError::transport(what, false, error))?;
        // `object_store` lists a prefix as a folder: the keys below `prefix/`.
        let prefix = self
            .prefix
            .as_ref()
            .map_or_else(String::new, |prefix| format!("{}/", prefix.as_ref()));
        let mut keys = Vec::new();
        let mut continuation: Option<String> = None;
        loop {
            let response = http::send(what, || {
                let now = SystemTime::now();
                let token = continuation.as_deref();
                (self.listed_at).page_request(&self.client, &credential, &prefix, token, now)
            })?;
            let mut body = String::new();
            http::Paced::body(response)
                .read_to_string(&mut body)
                .map_err(|error| ConnectorError::transport(what, true, error))?;
            let page =
                parse_page(&body).map_err(|message| ConnectorError::protocol(what, message))?;
            keys.extend(page.keys);
            match page.next {
                Some(next) => continuation = Some(next),
                None => return Ok(keys),
            }
        }
    }

    fn remote_object(&self, key: ListedKey) -> RemoteObject {
        let marker = key
            .etag
            .clone()
            .unwrap_or_else(|| format!("{}@{}", key.size, key.last_modified));
        RemoteObject {
            path: self.relative(&key.key).to_string(),
            id: key.key,
            marker,
            size: Some(key.size),
            export: None,
            groups: None,
        }
    }

    fn relative<'a>(&self, key: &'a str) -> &'a str {
        match &self.prefix {
            Some(prefix) => key
                .strip_prefix(prefix.as_ref())
                .map_or(key, |rest| rest.trim_start_matches('/')),
            None => key,
        }
    }
}

impl Connector for S3Connector {
    /// Every key under the prefix, page by page; a key `object_store` cannot name is
    /// refused alone (it could not be read either), the others are listed.
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        let what = self.shown(self.prefix.as_ref().map_or("", |p| p.as_ref()));
        let keys = self.list_keys(&what)?;
        let (mut objects, mut refused) = (Vec::new(), Vec::new());
        for key in keys {
            match key.readable() {
                Ok(()) => objects.push(self.remote_object(key)),
                Err(reason) => refused.push(ObjectFailure {
                    object: self.shown(&key.key),
                    reason: format!("a key S3 paths cannot name ({reason}); not mirrored"),
                }),
            }
        }
        Ok(Listed::complete_refusing(objects, refused))
    }

    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError> {
        let what = self.shown(&object.id);
        self.runtime.block_on(async {
            // The id is a listed location, already in `object_store`'s form: `from` would
            // percent-encode it again.
            let location = StorePath::parse(&object.id)
                .map_err(|error| ConnectorError::protocol(&what, error.to_string()))?;
            let result = self
                .store
                .get(&location)
                .await
                .map_err(|error| ConnectorError::transport(&what, false, error))?;
            if result.meta.size > limit {
                return Err(ConnectorError::too_large(
                    &what,
                    limit,
                    Some(result.meta.size),
                ));
            }
            let mut stream = result.into_stream();
            let mut written = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|error| ConnectorError::transport(&what, true, error))?;
                written += chunk.len() as u64;
                if written > limit {
                    return Err(ConnectorError::too_large(&what, limit, None));
                }
                into.write_all(&chunk)
                    .map_err(|error| ConnectorError::io(&what, error))?;
            }
            Ok(written)
        })
    }
}
