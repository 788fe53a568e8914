//! The 207 Multi-Status body a PROPFIND answers with: one `response` per resource, its
//! properties in `propstat` groups that each carry a status (a property the resource lacks
//! comes back empty in a 404 group). Elements are matched on their local names, as the prefix
//! bound to `DAV:` is whatever the server chose (`d:`, `D:`, `ns0:`, none).

use crate::ConnectorError;
use quick_xml::events::Event;
use quick_xml::Reader;
use std::io::BufRead;

/// The longest value kept (an href, an ETag); beyond it the server is broken or hostile, and
/// reading on would let one value take unbounded memory.
const MAX_VALUE_BYTES: usize = 64 * 1024;

/// One resource of a listing as the server described it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct DavResource {
    /// As sent, entities resolved but still percent-encoded: an absolute path or a full URL.
    pub href: String,
    pub properties: Properties,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Properties {
    pub collection: bool,
    pub etag: Option<String>,
    pub length: Option<u64>,
    pub modified: Option<String>,
}

impl Properties {
    /// Takes what a later `propstat` group found, keeping what earlier ones did.
    fn absorb(&mut self, group: Properties) {
        self.collection |= group.collection;
        self.etag = group.etag.or(self.etag.take());
        self.length = group.length.or(self.length);
        self.modified = group.modified.or(self.modified.take());
    }
}

/// The resources of one listing, read as it streams in (only one value at a time is held
/// besides the resources). A body that stops before `</multistatus>` is an error: a listing
/// cut short would look like deleted objects.
pub(super) fn parse(body: impl BufRead, what: &str) -> Result<Vec<DavResource>, ConnectorError> {
    let mut reader = Reader::from_reader(body);
    let mut parser = Parser::default();
    let mut buffer = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buffer)
            .map_err(|error| match error {
                quick_xml::Error::Io(_) => ConnectorError::transport(what, true, error),
                _ => ConnectorError::protocol(
                    what,
                    format!(
                        "malformed listing at byte {}: {error}",
                        reader.error_position()
                    ),
                ),
            })?;
        let outcome = match event {
            Event::Start(element) => parser.open(element.local_name().as_ref()),
            Event::Empty(element) => parser
                .open(element.local_name().as_ref())
                .map(|()| parser.close()),
            Event::End(_) => {
                parser.close();
                Ok(())
            }
            Event::Text(text) => parser.append(&text.xml10_content()),
            Event::CData(data) => parser.append(&data.xml10_content()),
            Event::GeneralRef(reference) => {
                crate::xml::resolve_reference(&reference).and_then(|text| parser.append(&text))
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => Ok(()),
        };
        outcome.map_err(|message| ConnectorError::protocol(what, message))?;
        buffer.clear();
    }
    parser
        .finish()
        .map_err(|message| ConnectorError::protocol(what, message))
}

#[derive(Default)]
struct Parser {
    /// Local names of the elements open now, outermost first.
    open: Vec<String>,
    seen_root: bool,
    /// The text of the innermost element so far.
    text: String,
    resource: DavResource,
    resource_found: bool,
    group: Properties,
    group_found: bool,
    resources: Vec<DavResource>,
}

impl Parser {
    fn open(&mut self, name: &str) -> Result<(), String> {
        match (self.open.last().map(String::as_str), name) {
            (None, "multistatus") => self.seen_root = true,
            (None, other) => return Err(format!("a <{other}> body, not a 207 <multistatus>")),
            (Some("multistatus"), "response") => {
                self.resource = DavResource::default();
                self.resource_found = true;
            }
            (Some("response"), "propstat") => {
                self.group = Properties::default();
                self.group_found = true;
            }
            (Some("resourcetype"), "collection") => self.group.collection = true,
            _ => {}
        }
        self.text.clear();
        self.open.push(name.to_string());
        Ok(())
    }

    fn append(&mut self, text: &str) -> Result<(), String> {
        if self.text.len() + text.len() > MAX_VALUE_BYTES {
            return Err(format!(
                "a value longer than {MAX_VALUE_BYTES} bytes in the listing"
            ));
        }
        self.text.push_str(text);
        Ok(())
    }

    fn close(&mut self) {
        let Some(name) = self.open.pop() else {
            return;
        };
        let text = std::mem::take(&mut self.text);
        let value = text.trim();
        match (self.open.last().map(String::as_str), name.as_str()) {
            (Some("response"), "href") => self.resource.href = value.to_string(),
            (Some("response"), "status") => self.resource_found = is_success(value),
            (Some("propstat"), "status") => self.group_found = is_success(value),
            (Some("prop"), "getetag") => self.group.etag = non_empty(value),
            (Some("prop"), "getcontentlength") => self.group.length = value.parse().ok(),
            (Some("prop"), "getlastmodified") => self.group.modified = non_empty(value),
            (Some("response"), "propstat") if self.group_found => {
                let group = std::mem::take(&mut self.group);
                self.resource.properties.absorb(group);
            }
            (Some("multistatus"), "response")
                if self.resource_found && !self.resource.href.is_empty() =>
            {
                self.resources.push(std::mem::take(&mut self.resource));
            }
            _ => {}
        }
    }

    fn finish(self) -> Result<Vec<DavResource>, String> {
        if !self.seen_root {
            return Err("an empty body, not a 207 <multistatus>".into());
        }
        if let Some(name) = self.open.last() {
            return Err(format!(
                "the listing stopped inside <{name}>: it is incomplete"
            ));
        }
        Ok(self.resources)
    }
}

/// Whether `HTTP/1.1 200 OK` (a `status` element) says success.
fn is_success(status_line: &str) -> bool {
    status_line
        .split_whitespace()
        .nth(1)
        .is_some_and(|code| code.starts_with('2'))
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(xml: &str) -> Vec<DavResource> {
        parse(xml.as_bytes(), "test").unwrap()
    }

    fn file(href: &str, etag: Option<&str>, length: Option<u64>) -> DavResource {
        DavResource {
            href: href.into(),
            properties: Properties {
                collection: false,
                etag: etag.map(str::to_string),
                length,
                modified: Some("Mon, 12 Jan 1998 09:25:56 GMT".into()),
            },
        }
    }

    #[test]
    fn reads_files_and_collections_whatever_the_prefix() {
        for prefix in ["d:", "D:", "ns0:", ""] {
            let xmlns = match prefix.strip_suffix(':') {
                Some(name) => format!("xmlns:{name}=\"DAV:\""),
                None => "xmlns=\"DAV:\"".into(),
            };
            let xml = format!(
                r#"<?xml version="1.0" encoding="utf-8"?>
                <{p}multistatus {xmlns}>
                  <{p}response>
                    <{p}href>/docs/</{p}href>
                    <{p}propstat><{p}prop>
                      <{p}resourcetype><{p}collection/></{p}resourcetype>
                    </{p}prop><{p}status>HTTP/1.1 200 OK</{p}status></{p}propstat>
                  </{p}response>
                  <{p}response>
                    <{p}href>/docs/a.txt</{p}href>
                    <{p}propstat><{p}prop>
                      <{p}resourcetype/>
                      <{p}getetag>"abc"</{p}getetag>
                      <{p}getcontentlength>12</{p}getcontentlength>
                      <{p}getlastmodified>Mon, 12 Jan 1998 09:25:56 GMT</{p}getlastmodified>
                    </{p}prop><{p}status>HTTP/1.1 200 OK</{p}status></{p}propstat>
                  </{p}response>
                </{p}multistatus>"#,
                p = prefix
            );
            let resources = parsed(&xml);
            assert_eq!(resources.len(), 2, "{prefix}");
            assert!(resources[0].properties.collection);
            assert_eq!(resources[0].href, "/docs/");
            assert_eq!(
                resources[1],
                file("/docs/a.txt", Some("\"abc\""), Some(12)),
                "{prefix}"
            );
        }
    }

    #[test]
    fn keeps_hrefs_encoded_and_resolves_entities() {
        let xml = r#"<D:multistatus xmlns:D="DAV:">
            <D:response><D:href>https://cloud.example.com/dav/R%26D%20notes/%E6%97%A5%E6%9C%AC.txt?a=1&amp;b=2</D:href>
              <D:propstat><D:prop><D:getetag>W/"1-2"</D:getetag></D:prop>
              <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href><![CDATA[/dav/x&y.txt]]></D:href>
              <D:propstat><D:prop><D:getcontentlength>3</D:getcontentlength></D:prop>
              <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            </D:multistatus>"#;
        let resources = parsed(xml);
        assert_eq!(
            resources[0].href,
            "https://cloud.example.com/dav/R%26D%20notes/%E6%97%A5%E6%9C%AC.txt?a=1&b=2"
        );
        assert_eq!(resources[0].properties.etag.as_deref(), Some("W/\"1-2\""));
        assert_eq!(resources[1].href, "/dav/x&y.txt");
        assert_eq!(resources[1].properties.length, Some(3));
    }

    #[test]
    fn a_property_the_server_lacks_is_missing_not_empty() {
        // WsgiDAV's shape: what a resource has in a 200 group, the rest empty in a 404 one.
        let xml = r#"<ns0:multistatus xmlns:ns0="DAV:"><ns0:response>
            <ns0:href>/a.txt</ns0:href>
            <ns0:propstat><ns0:prop><ns0:resourcetype />
              <ns0:getlastmodified>Mon, 12 Jan 1998 09:25:56 GMT</ns0:getlastmodified></ns0:prop>
              <ns0:status>HTTP/1.1 200 OK</ns0:status></ns0:propstat>
            <ns0:propstat><ns0:prop><ns0:getetag /><ns0:getcontentlength>9</ns0:getcontentlength></ns0:prop>
              <ns0:status>HTTP/1.1 404 Not Found</ns0:status></ns0:propstat>
            </ns0:response></ns0:multistatus>"#;
        assert_eq!(parsed(xml), vec![file("/a.txt", None, None)]);
    }

    #[test]
    fn a_response_that_failed_is_left_out() {
        let xml = r#"<multistatus xmlns="DAV:">
            <response><href>/gone.txt</href><status>HTTP/1.1 404 Not Found</status></response>
            <response><href>/kept.txt</href><propstat><prop><getetag>"k"</getetag></prop>
              <status>HTTP/1.1 200 OK</status></propstat></response>
            </multistatus>"#;
        let resources = parsed(xml);
        assert_eq!(resources.len(), 1);
        assert_eq!(resources[0].href, "/kept.txt");
    }

    #[test]
    fn a_listing_cut_short_or_not_a_multistatus_is_an_error() {
        for body in [
            r#"<d:multistatus xmlns:d="DAV:"><d:response><d:href>/a</d:href></d:response>"#,
            "<html><body>Login</body></html>",
            "",
            r#"<d:multistatus xmlns:d="DAV:"><d:response><d:href>&bogus;</d:href></d:response></d:multistatus>"#,
        ] {
            let error = parse(body.as_bytes(), "webdav+https://host/docs/").unwrap_err();
            assert!(
                matches!(error, ConnectorError::Protocol { .. }),
                "{body}: {error}"
            );
            assert!(
                error.to_string().contains("webdav+https://host/docs/"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_huge_value_is_refused_rather_than_held() {
        let href = "a".repeat(MAX_VALUE_BYTES + 1);
        let xml = format!(
            r#"<multistatus xmlns="DAV:"><response><href>{href}</href></response></multistatus>"#
        );
        assert!(parse(xml.as_bytes(), "x").is_err());
    }

    #[test]
    fn a_hundred_thousand_entries_stream_through() {
        let entries = 100_000;
        let mut xml = String::from(r#"<d:multistatus xmlns:d="DAV:">"#);
        for index in 0..entries {
            xml.push_str(&format!(
                "<d:response><d:href>/docs/file-{index}.txt</d:href><d:propstat><d:prop>\
                 <d:resourcetype/><d:getetag>\"{index}\"</d:getetag></d:prop>\
                 <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
            ));
        }
        xml.push_str("</d:multistatus>");
        let resources = parse(std::io::BufReader::new(xml.as_bytes()), "x").unwrap();
        assert_eq!(resources.len(), entries);
        assert_eq!(
            resources[entries - 1].href,
            format!("/docs/file-{}.txt", entries - 1)
        );
    }
}
