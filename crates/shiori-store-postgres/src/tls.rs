//! TLS to PostgreSQL with rustls, in libpq's `sslmode` terms: `disable`, `prefer` (libpq's
//! default: encrypted when the server offers it), `require` (encrypted; with a root
//! certificate, the chain is checked as in `verify-ca`, as libpq does), `verify-ca` (the
//! server's chain leads to the root certificate) and `verify-full` (also its name).

use crate::PostgresError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode` values (but `allow`, which tries plain text first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SslMode {
    Disable,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// How connections are encrypted and checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsOptions {
    pub mode: SslMode,
    /// PEM file of the certificate authorities the server's certificate must lead to
    /// (`sslrootcert`); required by `verify-ca` and `verify-full`.
    pub root_cert: Option<PathBuf>,
}

impl TlsOptions {
    /// The client's own name for the mode: whether to ask for TLS and whether to insist.
    pub(crate) fn client_mode(&self) -> postgres::config::SslMode {
        match self.mode {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        }
    }

    /// The connector every connection is made with (unused under `disable`; under `prefer`
    /// the certificate is not checked, as libpq does not).
    pub(crate) fn connector(&self) -> Result<MakeRustlsConnect, PostgresError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|source| PostgresError::Tls {
                what: "protocol versions".to_string(),
                source: Box::new(source),
            })?;
        let chain = match (self.mode, &self.root_cert) {
            (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => None,
            (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
                return Err(PostgresError::TlsNeedsRootCert(self.mode))
            }
            (_, Some(path)) => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots(path)?),
                    Arc::clone(&provider),
                )
                .build()
                .map_err(|source| tls_file_error(path, source))?,
            ),
        };
        let verifier = Arc::new(Verifier {
            chain,
            check_name: self.mode == SslMode::VerifyFull,
            provider,
        });
        let config = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

fn tls_file_error(
    path: &Path,
    source: impl std::error::Error + Send + Sync + 'static,
) -> PostgresError {
    PostgresError::Tls {
        what: format!("sslrootcert {}", path.display()),
        source: Box::new(source),
    }
}

fn roots(path: &Path) -> Result<RootCertStore, PostgresError> {
    let mut roots = RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(path).map_err(|e| tls_file_error(path, e))? {
        let certificate = certificate.map_err(|e| tls_file_error(path, e))?;
        roots
            .add(certificate)
            .map_err(|e| tls_file_error(path, e))?;
    }
    if roots.is_empty() {
        return Err(tls_file_error(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "no certificate in the file",
            ),
        ));
    }
    Ok(roots)
}

/// How a server's certificate is checked: not at all without a root certificate (`prefer`,
/// and `require` as libpq means it: it stops eavesdroppers, not a server in the middle), its
/// chain up to the root certificate, and with `verify-full` its name too.
#[derive(Debug)]
struct Verifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    /// The handshake's signatures are always checked: whoever answers holds the key of the
    /// certificate it showed.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
