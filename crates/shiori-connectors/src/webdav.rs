//! PLACEHOLDER until the connector lands.
use crate::{Connector, ConnectorError, Listed, RemoteObject};
use std::io::Write;

pub(crate) struct WebDavConnector;

impl WebDavConnector {
    pub(crate) fn new(
        base: &url::Url,
        _settings: &crate::WebDavSettings,
    ) -> Result<WebDavConnector, ConnectorError> {
        Err(ConnectorError::Config(format!("{} not built yet", base)))
    }
}

impl Connector for WebDavConnector {
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        Err(ConnectorError::Config("not built".into()))
    }
    fn fetch(&self, _o: &RemoteObject, _i: &mut dyn Write, _l: u64) -> Result<u64, ConnectorError> {
        Err(ConnectorError::Config("not built".into()))
    }
}
