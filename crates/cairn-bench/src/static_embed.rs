//! A static embedder distilled from the local model, to measure what it would give the
//! `sessions` vector store (`turns-bench --static`): an option for issue 21's throughput, not
//! something Cairn runs.
//!
//! Distilling runs the local model once over every vocabulary token alone (`[CLS] token [SEP]`,
//! pooled and normalised as a sentence is); with `center`, the mean of all those rows (the
//! direction every token shares) is taken off each and the rows normalised again. A text's vector
//! is then the normalised sum of its word pieces' rows: a table lookup per piece, no transformer.
//! Word pieces are the local model's own (lower-cased WordPiece, at most 254 a text).

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, ensure};
use cairn_core::semantic::embed::{Embedder, InputKind, LocalModel, normalize};

/// The table: a row of `dims` floats per vocabulary token, in token-id order.
pub fn distill(local: &LocalModel) -> Result<Vec<f32>> {
    let ends = local.token_ids("")?;
    ensure!(
        ends.len() == 2,
        "the tokenizer adds {} special tokens, not 2",
        ends.len()
    );
    let seqs: Vec<Vec<u32>> = (0..local.vocab_size() as u32)
        .map(|t| vec![ends[0], t, ends[1]])
        .collect();
    Ok(local.embed_ids(&seqs)?)
}

/// Take the rows' mean off every row and normalise each again.
pub fn center(table: &mut [f32], dims: usize) {
    let rows = (table.len() / dims).max(1) as f32;
    let mut mean = vec![0f32; dims];
    for row in table.chunks_exact(dims) {
        mean.iter_mut().zip(row).for_each(|(m, x)| *m += x / rows);
    }
    for row in table.chunks_exact_mut(dims) {
        row.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m);
        normalize(row);
    }
}

/// The table at `path` (little-endian f32), distilled and written there first when absent.
pub fn load_or_distill(local: &LocalModel, path: &Path) -> Result<Vec<f32>> {
    let want = local.vocab_size() * local.dims();
    if path.exists() {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        ensure!(
            bytes.len() == want * 4,
            "{} holds {} bytes, not a {}×{} table: delete it to distil again",
            path.display(),
            bytes.len(),
            local.vocab_size(),
            local.dims()
        );
        return Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect());
    }
    let table = distill(local)?;
    let bytes: Vec<u8> = table.iter().flat_map(|f| f.to_le_bytes()).collect();
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(table)
}

/// The embedder over a distilled table.
pub struct StaticModel {
    local: Arc<LocalModel>,
    table: Vec<f32>,
    fingerprint: String,
}

impl StaticModel {
    /// `tag` names the table's variant in the fingerprint (so its vectors are never mixed with
    /// another's).
    pub fn new(local: Arc<LocalModel>, table: Vec<f32>, tag: &str) -> StaticModel {
        let fingerprint = format!("static-{tag}/{}", local.fingerprint());
        StaticModel {
            local,
            table,
            fingerprint,
        }
    }
}

impl Embedder for StaticModel {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
    fn dims(&self) -> usize {
        self.local.dims()
    }
    fn embed(&self, texts: &[&str], _kind: InputKind) -> cairn_core::Result<Vec<f32>> {
        let d = self.dims();
        let mut out = vec![0f32; texts.len() * d];
        for (text, dst) in texts.iter().zip(out.chunks_exact_mut(d)) {
            let ids = self.local.token_ids(text)?;
            // Without [CLS] and [SEP]: every text has them, so they say nothing of it.
            for &t in ids.get(1..ids.len().saturating_sub(1)).unwrap_or_default() {
                let at = t as usize * d;
                if let Some(row) = self.table.get(at..at + d) {
                    dst.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                }
            }
            normalize(dst);
        }
        Ok(out)
    }
    fn refresh_on_write(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        format!("a static table distilled from {}", self.local.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows that share a direction lose it; each is unit length again (a zero row stays zero).
    #[test]
    fn centring_takes_off_the_direction_every_row_shares() {
        let mut t = vec![1.0, 0.2, 1.0, -0.2, 1.0, 0.0];
        center(&mut t, 2);
        let mean: Vec<f32> = (0..2)
            .map(|i| t.chunks(2).map(|r| r[i]).sum::<f32>())
            .collect();
        assert!(mean.iter().all(|m| m.abs() < 1e-5), "{mean:?}");
        for row in t.chunks(2) {
            let n = row.iter().map(|x| x * x).sum::<f32>();
            assert!(n == 0.0 || (n - 1.0).abs() < 1e-5, "{row:?}");
        }
    }
}
