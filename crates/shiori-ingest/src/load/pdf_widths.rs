//! CID fonts' glyph widths in the one form of the `W` array that pdf-extract reads. The array
//! gives widths as `c [w1 w2 …]` (consecutive CIDs) or as `c_first c_last w` (a range of one
//! width); pdf-extract 0.12 reads the second form as an empty range, so every glyph it covers
//! takes the font's default width. A word drawn glyph by glyph, as Chromium prints a page, then
//! gains a space wherever a glyph is wider than that default: `C han ge the p ho n e’s
//! p assco de`.

use lopdf::{Document, Object, ObjectId};

/// The most CIDs one range may spell out: a CID is two bytes.
const MAX_CIDS: i64 = 1 << 16;

/// Rewrites the `W` array of every CID font into `c [w1 w2 …]` entries only. An array that is
/// not well formed is left as it is.
pub(super) fn spell_out_width_ranges(pdf: &mut Document) {
    let fonts: Vec<(ObjectId, Vec<Object>)> = pdf
        .objects
        .iter()
        .filter_map(|(&id, object)| {
            let font = object.as_dict().ok()?;
            let subtype = font.get(b"Subtype").and_then(Object::as_name).ok()?;
            if subtype != b"CIDFontType2" && subtype != b"CIDFontType0" {
                return None;
            }
            let widths = match font.get(b"W").ok()? {
                Object::Reference(id) => pdf.get_object(*id).ok()?,
                direct => direct,
            };
            let entries = widths.as_array().ok()?;
            let spelled = spelled_out(entries)?;
            (spelled != *entries).then_some((id, spelled))
        })
        .collect();
    for (id, spelled) in fonts {
        if let Ok(font) = pdf.get_dictionary_mut(id) {
            font.set("W", Object::Array(spelled));
        }
    }
}

/// `entries` with each `c_first c_last w` written as `c_first [w w …]`; `None` when they do not
/// read as a `W` array.
fn spelled_out(entries: &[Object]) -> Option<Vec<Object>> {
    let mut spelled = Vec::with_capacity(entries.len());
    let mut rest = entries;
    while let [first, tail @ ..] = rest {
        let first = first.as_i64().ok()?;
        match tail {
            [Object::Array(widths), after @ ..] => {
                spelled.push(Object::Integer(first));
                spelled.push(Object::Array(widths.clone()));
                rest = after;
            }
            [last, width, after @ ..] => {
                let count = last.as_i64().ok()? - first + 1;
                if !(1..=MAX_CIDS).contains(&count) || width.as_float().is_err() {
                    return None;
                }
                spelled.push(Object::Integer(first));
                spelled.push(Object::Array(vec![width.clone(); count as usize]));
                rest = after;
            }
            _ => return None,
        }
    }
    Some(spelled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_spelled_out_and_lists_kept() {
        let entries = vec![
            Object::Integer(3),
            Object::Array(vec![Object::Real(277.8), Object::Integer(0)]),
            Object::Integer(36),
            Object::Integer(38),
            Object::Real(722.2),
        ];
        let spelled = spelled_out(&entries).expect("a W array");
        assert_eq!(
            spelled,
            vec![
                Object::Integer(3),
                Object::Array(vec![Object::Real(277.8), Object::Integer(0)]),
                Object::Integer(36),
                Object::Array(vec![Object::Real(722.2); 3]),
            ]
        );
    }

    #[test]
    fn a_malformed_array_is_not_rewritten() {
        let dangling = [Object::Integer(36), Object::Integer(38)];
        assert_eq!(spelled_out(&dangling), None);
        let backwards = [
            Object::Integer(38),
            Object::Integer(36),
            Object::Integer(500),
        ];
        assert_eq!(spelled_out(&backwards), None);
    }
}
