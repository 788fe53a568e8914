//! Metadata filters as a SQL condition on `chunks c`, with its parameters.

use postgres::types::ToSql;
use shiori_core::Filters;

pub(crate) type Param = Box<dyn ToSql + Sync>;

/// `filters` as a condition whose placeholders follow those already in `params`, onto which it
/// pushes its values. Metadata pairs must all be present (JSONB containment, served by a GIN
/// index).
pub(crate) fn condition(filters: &Filters, params: &mut Vec<Param>) -> String {
    let mut conditions = vec!["TRUE".to_string()];
    let next = |params: &mut Vec<Param>, value: Param| {
        params.push(value);
        format!("${}", params.len())
    };
    if !filters.doc_ids.is_empty() {
        let slot = next(params, Box::new(filters.doc_ids.clone()));
        conditions.push(format!("c.doc_id = ANY({slot}::TEXT[])"));
    }
    if !filters.projects.is_empty() {
        let slot = next(params, Box::new(filters.projects.clone()));
        conditions.push(format!("c.metadata->>'project' = ANY({slot}::TEXT[])"));
    }
    if let Some(prefix) = &filters.source_prefix {
        let slot = next(params, Box::new(prefix.clone()));
        conditions.push(format!("starts_with(c.source, {slot}::TEXT)"));
    }
    if !filters.metadata.is_empty() {
        let pairs = serde_json::Map::from_iter(
            filters
                .metadata
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))),
        );
        let slot = next(
            params,
            Box::new(serde_json::Value::Object(pairs).to_string()),
        );
        conditions.push(format!("c.metadata @> {slot}::TEXT::JSONB"));
    }
    if let Some(groups) = filters.access.groups() {
        let slot = next(params, Box::new(groups.iter().cloned().collect::<Vec<_>>()));
        // A chunk without groups is everyone's; otherwise one of its groups must be readable.
        conditions.push(format!(
            "(COALESCE(c.metadata->>'groups', '') = '' \
             OR string_to_array(c.metadata->>'groups', ',') && {slot}::TEXT[])"
        ));
    }
    if let Some(after) = filters.modified_after {
        let slot = next(params, Box::new(after));
        conditions.push(format!("c.modified >= {slot}::BIGINT"));
    }
    if let Some(before) = filters.modified_before {
        let slot = next(params, Box::new(before));
        conditions.push(format!("c.modified <= {slot}::BIGINT"));
    }
    conditions.join(" AND ")
}

pub(crate) fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p.as_ref()).collect()
}
