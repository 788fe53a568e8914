//! The checks every backend's tests run on it, so that both stores are held to one contract.
//! They panic on a broken contract, as tests do.

pub mod access;
pub mod conversations;
