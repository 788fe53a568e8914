//! S3-compatible storage through `object_store` (its signing, retries and paging). Credentials,
//! region and endpoint come from the standard AWS variables (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT_URL`, …) and, for
//! what they leave out, from the shared credentials and config files of `AWS_PROFILE`.

mod profile;

use crate::{Connector, ConnectorError, Listed, RemoteObject};
use futures_util::StreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, RetryConfig};
use std::io::Write;
use std::time::Duration;
use tokio::runtime::Runtime;

pub(crate) struct S3Connector {
    store: AmazonS3,
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
            bucket: bucket.to_string(),
            prefix: (!prefix.is_empty()).then(|| StorePath::from(prefix)),
            runtime,
        })
    }

    fn shown(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
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
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        let what = self.shown(self.prefix.as_ref().map_or("", |p| p.as_ref()));
        let objects = self.runtime.block_on(async {
            let mut listing = self.store.list(self.prefix.as_ref());
            let mut objects = Vec::new();
            while let Some(meta) = listing.next().await {
                let meta = meta.map_err(|error| ConnectorError::transport(&what, true, error))?;
                let key = meta.location.as_ref();
                let marker = meta.e_tag.clone().unwrap_or_else(|| {
                    format!("{}@{}", meta.size, meta.last_modified.timestamp_millis())
                });
                objects.push(RemoteObject {
                    id: key.to_string(),
                    path: self.relative(key).to_string(),
                    marker,
                    size: Some(meta.size),
                    export: None,
                    groups: None,
                });
            }
            Ok::<_, ConnectorError>(objects)
        })?;
        Ok(Listed::complete(objects))
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
