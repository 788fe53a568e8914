//! The answer pipelines' names: what `--pipeline`, `[pipeline] default` and a request's
//! `pipeline` parse into, once, where they enter.

use crate::corpus::RagError;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// The answer pipelines, by the names `--pipeline`, `[pipeline] default` and a query's
/// `pipeline` take; a name is parsed once, where it enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PipelineKind {
    Extractive,
    Basic,
    Fusion,
    Decompose,
    Hyde,
    Crag,
    FusionCrag,
    Iterative,
    Agentic,
    Reflective,
}

impl PipelineKind {
    pub const ALL: [PipelineKind; 10] = [
        PipelineKind::Extractive,
        PipelineKind::Basic,
        PipelineKind::Fusion,
        PipelineKind::Decompose,
        PipelineKind::Hyde,
        PipelineKind::Crag,
        PipelineKind::FusionCrag,
        PipelineKind::Iterative,
        PipelineKind::Agentic,
        PipelineKind::Reflective,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PipelineKind::Extractive => "extractive",
            PipelineKind::Basic => "basic",
            PipelineKind::Fusion => "fusion",
            PipelineKind::Decompose => "decompose",
            PipelineKind::Hyde => "hyde",
            PipelineKind::Crag => "crag",
            PipelineKind::FusionCrag => "fusion-crag",
            PipelineKind::Iterative => "iterative",
            PipelineKind::Agentic => "agentic",
            PipelineKind::Reflective => "reflective",
        }
    }

    pub fn names() -> String {
        PipelineKind::ALL.map(PipelineKind::name).join(", ")
    }
}

impl TryFrom<String> for PipelineKind {
    type Error = RagError;

    fn try_from(name: String) -> Result<PipelineKind, RagError> {
        name.parse()
    }
}

impl From<PipelineKind> for String {
    fn from(kind: PipelineKind) -> String {
        kind.name().to_string()
    }
}

impl std::fmt::Display for PipelineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PipelineKind {
    type Err = RagError;

    fn from_str(name: &str) -> Result<PipelineKind, RagError> {
        PipelineKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| RagError::UnknownPipeline(name.to_string()))
    }
}
