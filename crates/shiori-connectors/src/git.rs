//! PLACEHOLDER until the connector lands.
use crate::{Connector, ConnectorError, Listed, RemoteObject};
use std::io::Write;

pub(crate) struct GitConnector;

impl GitConnector {
    pub(crate) fn new(
        remote: &str,
        _branch: Option<&str>,
        _state: &std::path::Path,
    ) -> Result<GitConnector, ConnectorError> {
        Err(ConnectorError::Config(format!("{} not built yet", remote)))
    }
}

impl Connector for GitConnector {
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        Err(ConnectorError::Config("not built".into()))
    }
    fn fetch(&self, _o: &RemoteObject, _i: &mut dyn Write, _l: u64) -> Result<u64, ConnectorError> {
        Err(ConnectorError::Config("not built".into()))
    }
}
