//! A bucket listed by Shiori itself (ListObjectsV2, signed with AWS Signature Version 4):
//! `object_store` parses each page of a listing whole, so one key it cannot name (`a//b`, `..`,
//! a control character) failed the whole source. Here each key is taken or refused alone;
//! objects are still read through `object_store`.

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, AwsCredential};
use object_store::path::Path as StorePath;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use quick_xml::events::Event;
use sha2::{Digest, Sha256};
use std::time::SystemTime;

/// What AWS leaves unencoded in a canonical request: letters, digits, `-`, `.`, `_`, `~`.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Where a bucket is listed, as `object_store` addresses it.
pub(super) struct Bucket {
    /// `https://s3.REGION.amazonaws.com/BUCKET`, `ENDPOINT/BUCKET`, or a virtual-hosted URL.
    pub endpoint: url::Url,
    pub region: String,
}

impl Bucket {
    /// The bucket's URL from the builder's settings, as `object_store` makes it.
    pub(super) fn of(builder: &AmazonS3Builder, bucket: &str) -> Result<Bucket, String> {
        let setting = |key: AmazonS3ConfigKey| builder.get_config_value(&key);
        let region = setting(AmazonS3ConfigKey::Region).unwrap_or_else(|| "us-east-1".into());
        let virtual_hosted =
            setting(AmazonS3ConfigKey::VirtualHostedStyleRequest).is_some_and(|v| v == "true");
        let endpoint = setting(AmazonS3ConfigKey::Endpoint);
        let endpoint = match (endpoint, virtual_hosted) {
            (Some(endpoint), true) => endpoint,
            (Some(endpoint), false) => format!("{}/{bucket}", endpoint.trim_end_matches('/')),
            (None, true) => format!("https://{bucket}.s3.{region}.amazonaws.com"),
            (None, false) => format!("https://s3.{region}.amazonaws.com/{bucket}"),
        };
        let endpoint =
            url::Url::parse(&endpoint).map_err(|error| format!("{endpoint}: {error}"))?;
        Ok(Bucket { endpoint, region })
    }

    /// The signed request for one page of keys under `prefix`.
    pub(super) fn page_request(
        &self,
        client: &reqwest::blocking::Client,
        credential: &AwsCredential,
        prefix: &str,
        continuation: Option<&str>,
        now: SystemTime,
    ) -> reqwest::blocking::RequestBuilder {
        let mut query = vec![
            ("encoding-type", "url".to_string()),
            ("list-type", "2".to_string()),
            ("prefix", prefix.to_string()),
        ];
        if let Some(token) = continuation {
            query.push(("continuation-token", token.to_string()));
        }
        let query = canonical_query(&query);
        let mut url = self.endpoint.clone();
        let path = format!("{}/", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.set_query(Some(&query));
        let headers = sign(&url, &path, &query, &self.region, credential, now);
        headers
            .into_iter()
            .fold(client.get(url), |request, (name, value)| {
                request.header(name, value)
            })
    }
}

/// The keys of one page, and the token of the next page when there is one.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Page {
    pub keys: Vec<ListedKey>,
    pub next: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct ListedKey {
    pub key: String,
    pub etag: Option<String>,
    pub size: u64,
    pub last_modified: String,
}

impl ListedKey {
    /// Whether `object_store` can read the object: its key parses as one of its paths.
    pub(super) fn readable(&self) -> Result<(), String> {
        StorePath::parse(&self.key)
            .map(|_| ())
            .map_err(|error| error.to_string())
    }
}

/// A ListObjectsV2 answer (`encoding-type=url`, so keys are percent-encoded).
pub(super) fn parse_page(xml: &str) -> Result<Page, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut page = Page::default();
    let mut truncated = false;
    let mut open: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut key: Option<ListedKey> = None;
    loop {
        match reader.read_event().map_err(|error| error.to_string())? {
            Event::Start(start) => {
                let name = start.local_name().as_ref().to_string();
                if name == "Contents" {
                    key = Some(ListedKey::default());
                }
                open.push(name);
                text.clear();
            }
            Event::Text(part) => text.push_str(&part.xml10_content()),
            Event::GeneralRef(reference) => {
                text.push_str(&crate::xml::resolve_reference(&reference)?);
            }
            Event::End(_) => {
                let field = open.pop().unwrap_or_default();
                match (field.as_str(), key.as_mut()) {
                    ("Contents", _) => page.keys.extend(key.take()),
                    ("Key", Some(listed)) => {
                        listed.key = percent_decode_str(&text).decode_utf8_lossy().into_owned();
                    }
                    ("ETag", Some(listed)) => listed.etag = Some(text.clone()),
                    ("Size", Some(listed)) => listed.size = text.trim().parse().unwrap_or(0),
                    ("LastModified", Some(listed)) => listed.last_modified = text.clone(),
                    ("IsTruncated", None) => truncated = text.trim() == "true",
                    ("NextContinuationToken", None) => page.next = Some(text.clone()),
                    _ => {}
                }
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !truncated {
        page.next = None;
    }
    Ok(page)
}

fn canonical_query(pairs: &[(&str, String)]) -> String {
    let mut encoded: Vec<String> = pairs
        .iter()
        .map(|(name, value)| {
            format!(
                "{}={}",
                utf8_percent_encode(name, UNRESERVED),
                utf8_percent_encode(value, UNRESERVED)
            )
        })
        .collect();
    encoded.sort();
    encoded.join("&")
}

/// The headers that sign a GET of `url` (Signature Version 4, unsigned empty payload).
fn sign(
    url: &url::Url,
    path: &str,
    query: &str,
    region: &str,
    credential: &AwsCredential,
    now: SystemTime,
) -> Vec<(&'static str, String)> {
    let (date, timestamp) = amz_date(now);
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let payload = hex(&Sha256::digest(b""));
    let mut headers = vec![
        ("host", host),
        ("x-amz-content-sha256", payload.clone()),
        ("x-amz-date", timestamp.clone()),
    ];
    if let Some(token) = &credential.token {
        headers.push(("x-amz-security-token", token.clone()));
    }
    let signed: Vec<&str> = headers.iter().map(|(name, _)| *name).collect();
    let signed = signed.join(";");
    let canonical_headers: String = headers
        .iter()
        .map(|(name, value)| format!("{name}:{}\n", value.trim()))
        .collect();
    let canonical_path = path
        .split('/')
        .map(|segment| {
            let decoded = percent_decode_str(segment).decode_utf8_lossy();
            utf8_percent_encode(&decoded, UNRESERVED).to_string()
        })
        .collect::<Vec<_>>()
        .join("/");
    let request =
        format!("GET\n{canonical_path}\n{query}\n{canonical_headers}\n{signed}\n{payload}");
    let scope = format!("{date}/{region}/s3/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{timestamp}\n{scope}\n{}",
        hex(&Sha256::digest(request.as_bytes()))
    );
    let mut key = hmac(
        format!("AWS4{}", credential.secret_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [region, "s3", "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, to_sign.as_bytes()));
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
        credential.key_id
    );
    headers.retain(|(name, _)| *name != "host");
    headers.push(("authorization", authorization));
    headers
}

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `YYYYMMDD` and `YYYYMMDDTHHMMSSZ` of `now`, in UTC.
fn amz_date(now: SystemTime) -> (String, String) {
    let now = chrono::DateTime::<chrono::Utc>::from(now);
    (
        now.format("%Y%m%d").to_string(),
        now.format("%Y%m%dT%H%M%SZ").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        assert_eq!(
            hex(&hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_listing_is_signed_as_aws_documents_it() {
        // The "GET Bucket (List Objects)" example of AWS's Signature Version 4 documentation.
        let credential = AwsCredential {
            key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            token: None,
        };
        let url =
            url::Url::parse("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J").unwrap();
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_369_353_600);
        let headers = sign(
            &url,
            "/",
            "max-keys=2&prefix=J",
            "us-east-1",
            &credential,
            at,
        );
        let authorization = &headers
            .iter()
            .find(|(name, _)| *name == "authorization")
            .unwrap()
            .1;
        assert_eq!(
            authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;x-amz-content-sha256;x-amz-date, \
             Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        );
    }

    #[test]
    fn dates_are_utc_calendar_days() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_440_938_160);
        assert_eq!(
            amz_date(at),
            ("20150830".to_string(), "20150830T123600Z".to_string())
        );
        let day = |days: u64| {
            amz_date(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(days * 86_400)).0
        };
        assert_eq!(day(0), "19700101");
        assert_eq!(day(19_782), "20240229");
    }

    #[test]
    fn a_page_lists_every_key_decoded_and_its_continuation() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Name>b</Name><IsTruncated>true</IsTruncated>
              <Contents><Key>docs/a%2F%2Fb.txt</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>
                <ETag>&quot;abc&quot;</ETag><Size>12</Size></Contents>
              <Contents><Key>docs/ok%20file.md</Key><Size>3</Size></Contents>
              <NextContinuationToken>next+token</NextContinuationToken>
            </ListBucketResult>"#;
        let page = parse_page(xml).unwrap();
        let keys: Vec<&str> = page.keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(keys, ["docs/a//b.txt", "docs/ok file.md"]);
        assert_eq!(page.keys[0].etag.as_deref(), Some("\"abc\""));
        assert_eq!(page.keys[0].size, 12);
        assert_eq!(page.next.as_deref(), Some("next+token"));
        assert!(page.keys[0].readable().is_err());
        assert!(page.keys[1].readable().is_ok());
    }
}
