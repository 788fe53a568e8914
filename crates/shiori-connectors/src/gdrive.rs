//! PLACEHOLDER until the connector lands.
use crate::{Connector, ConnectorError, Listed, RemoteObject};
use std::io::Write;

pub(crate) struct DriveConnector;

impl DriveConnector {
    pub(crate) fn new(
        folder: &str,
        _settings: &crate::DriveSettings,
    ) -> Result<DriveConnector, ConnectorError> {
        Err(ConnectorError::Config(format!("{} not built yet", folder)))
    }
}

impl Connector for DriveConnector {
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        Err(ConnectorError::Config("not built".into()))
    }
    fn fetch(&self, _o: &RemoteObject, _i: &mut dyn Write, _l: u64) -> Result<u64, ConnectorError> {
        Err(ConnectorError::Config("not built".into()))
    }
}
