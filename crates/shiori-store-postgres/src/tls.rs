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
        let verifier: Arc<dyn ServerCertVerifier> = match (self.mode, &self.root_cert) {
            (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => {
                Arc::new(EncryptOnly(Arc::clone(&provider)))
            }
            (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
                return Err(PostgresError::TlsNeedsRootCert(self.mode))
            }
            (mode, Some(path)) => {
                let chain =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots(path)?), provider)
                        .build()
                        .map_err(|source| tls_file_error(path, source))?;
                match mode {
                    SslMode::VerifyFull => chain,
                    _ => Arc::new(AnyName(chain)),
                }
            }
        };
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

/// `verify-ca`: the chain is checked, the name is not (libpq's meaning).
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `require` without a root certificate: encrypted, the certificate unchecked (libpq's
/// meaning; it guards against eavesdropping, not against a server in the middle).
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
