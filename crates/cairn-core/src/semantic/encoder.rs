//! The BERT encoder of the built-in model, run on packed (unpadded) batches.
//!
//! The layers are the standard BERT ones (the same weights and the same arithmetic as
//! `candle_transformers::models::bert`), arranged for throughput on a CPU:
//!
//! * Every dense layer works per token, so the tokens of all texts of a batch are stacked into
//!   one `(tokens, hidden)` matrix with no padding: the big matrix products (Q/K/V, attention
//!   output, the feed-forward pair — about 90% of the work) run once per batch on exactly the
//!   real tokens, and Q, K and V come from one product with the three weights side by side.
//! * Attention is the only step where tokens of a text see each other; it runs per text, on
//!   that text's rows alone, so no attention mask is needed and no padded position is ever
//!   computed. The texts' attention blocks are independent and run in parallel.
//! * Pooling is the mean over each text's rows (all real tokens), as sentence-transformers
//!   pools with the attention mask.
//! * Weights are stored transposed, `(in, out)` row-major, once at load. gemm then reads them in
//!   place; with the checkpoint's `(out, in)` layout it copied (packed) every weight matrix on
//!   every call, which for a short query (a few tokens) cost far more than the arithmetic.

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{LayerNorm, VarBuilder};
use candle_transformers::models::bert::{Config as BertConfig, HiddenAct};
use rayon::prelude::*;

type Result<T> = candle_core::Result<T>;

/// `x · W + b` with `W` stored `(in, out)`, contiguous.
struct Dense {
    weight: Tensor,
    bias: Tensor,
}

impl Dense {
    /// From the checkpoint's `(out, in)` weight rows (several stacked side by side on output).
    fn new(weights: &[Tensor], biases: &[Tensor]) -> Result<Dense> {
        let weight = Tensor::cat(weights, 0)?.t()?.contiguous()?;
        let bias = Tensor::cat(biases, 0)?;
        Ok(Dense { weight, bias })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.matmul(&self.weight)?.broadcast_add(&self.bias)
    }
}

struct Layer {
    /// Query, key and value side by side: `(hidden, 3·hidden)`.
    qkv: Dense,
    attn_out: Dense,
    attn_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    out_norm: LayerNorm,
}

/// The encoder: embeddings and the transformer layers (the pooler head is not used).
pub struct Encoder {
    word: Tensor,
    position: Tensor,
    /// Token type 0 (every input is a single segment).
    token_type: Tensor,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    hidden: usize,
    max_positions: usize,
}

/// The `(out, in)` weight and the bias of a checkpoint linear layer.
fn linear(vb: &VarBuilder, out: usize, inp: usize) -> Result<(Tensor, Tensor)> {
    Ok((vb.get((out, inp), "weight")?, vb.get(out, "bias")?))
}

fn dense(vb: &VarBuilder, out: usize, inp: usize) -> Result<Dense> {
    let (w, b) = linear(vb, out, inp)?;
    Dense::new(&[w], &[b])
}

fn layer_norm(vb: &VarBuilder, size: usize, eps: f64) -> Result<LayerNorm> {
    Ok(LayerNorm::new(
        vb.get(size, "weight")?,
        vb.get(size, "bias")?,
        eps,
    ))
}

impl Encoder {
    /// Load from BERT weights (`embeddings.*`, `encoder.layer.N.*`, with or without a `bert.`
    /// prefix).
    pub fn load(vb: VarBuilder, config: &BertConfig) -> Result<Encoder> {
        if !matches!(config.hidden_act, HiddenAct::Gelu) {
            candle_core::bail!("only BERT with exact GELU activations is supported");
        }
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let e = vb.pp("embeddings");
        let word = e.get((config.vocab_size, h), "word_embeddings.weight")?;
        let position = e.get(
            (config.max_position_embeddings, h),
            "position_embeddings.weight",
        )?;
        let token_type = e
            .get((config.type_vocab_size, h), "token_type_embeddings.weight")?
            .get(0)?;
        let embed_norm = layer_norm(&e.pp("LayerNorm"), h, eps)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let s = a.pp("self");
            let (q, k, v) = (
                linear(&s.pp("query"), h, h)?,
                linear(&s.pp("key"), h, h)?,
                linear(&s.pp("value"), h, h)?,
            );
            layers.push(Layer {
                qkv: Dense::new(&[q.0, k.0, v.0], &[q.1, k.1, v.1])?,
                attn_out: dense(&a.pp("output.dense"), h, h)?,
                attn_norm: layer_norm(&a.pp("output.LayerNorm"), h, eps)?,
                intermediate: dense(&l.pp("intermediate.dense"), config.intermediate_size, h)?,
                output: dense(&l.pp("output.dense"), h, config.intermediate_size)?,
                out_norm: layer_norm(&l.pp("output.LayerNorm"), h, eps)?,
            });
        }
        let heads = config.num_attention_heads;
        if heads == 0 || h % heads != 0 {
            candle_core::bail!("hidden size {h} is not a multiple of {heads} heads");
        }
        Ok(Encoder {
            word,
            position,
            token_type,
            embed_norm,
            layers,
            heads,
            head_dim: h / heads,
            hidden: h,
            max_positions: config.max_position_embeddings,
        })
    }

    /// Mean-pooled (not yet normalised) token vectors of each text: `texts.len() × hidden`
    /// floats. Every text must hold at least one token and at most the model's positions.
    pub fn pooled(&self, texts: &[&[u32]]) -> Result<Vec<f32>> {
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        if let Some(&bad) = lens.iter().find(|&&l| l == 0 || l > self.max_positions) {
            candle_core::bail!("a text of {bad} tokens cannot be encoded");
        }
        let total: usize = lens.iter().sum();
        let dev = Device::Cpu;
        let mut ids = Vec::with_capacity(total);
        let mut positions = Vec::with_capacity(total);
        for t in texts {
            ids.extend_from_slice(t);
            positions.extend(0..t.len() as u32);
        }
        let ids = Tensor::from_vec(ids, total, &dev)?;
        let positions = Tensor::from_vec(positions, total, &dev)?;
        let x = self
            .word
            .index_select(&ids, 0)?
            .add(&self.position.index_select(&positions, 0)?)?
            .broadcast_add(&self.token_type)?;
        let mut x = self.embed_norm.forward(&x)?;
        let mut offsets = Vec::with_capacity(lens.len());
        let mut at = 0;
        for &l in &lens {
            offsets.push((at, l));
            at += l;
        }
        for layer in &self.layers {
            x = self.layer(layer, &x, &offsets)?;
        }
        let x = x.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
        let h = self.hidden;
        let mut out = vec![0f32; texts.len() * h];
        for (row, &(start, len)) in offsets.iter().enumerate() {
            let dst = &mut out[row * h..(row + 1) * h];
            for tok in x[start * h..(start + len) * h].chunks_exact(h) {
                dst.iter_mut().zip(tok).for_each(|(d, v)| *d += v);
            }
            let n = len as f32;
            dst.iter_mut().for_each(|d| *d /= n);
        }
        Ok(out)
    }

    fn layer(&self, l: &Layer, x: &Tensor, offsets: &[(usize, usize)]) -> Result<Tensor> {
        let qkv = l.qkv.forward(x)?;
        let (h, heads, hd) = (self.hidden, self.heads, self.head_dim);
        let scale = 1.0 / (hd as f64).sqrt();
        let contexts = offsets
            .par_iter()
            .map(|&(start, len)| -> Result<Tensor> {
                let rows = qkv.narrow(0, start, len)?;
                let split = |i: usize| -> Result<Tensor> {
                    rows.narrow(1, i * h, h)?
                        .reshape((len, heads, hd))?
                        .transpose(0, 1)?
                        .contiguous()
                };
                let (q, k, v) = (split(0)?, split(1)?, split(2)?);
                let scores = (q.matmul(&k.t()?)? * scale)?;
                let probs = candle_nn::ops::softmax_last_dim(&scores)?;
                probs
                    .matmul(&v)?
                    .transpose(0, 1)?
                    .contiguous()?
                    .reshape((len, h))
            })
            .collect::<Result<Vec<Tensor>>>()?;
        let context = Tensor::cat(&contexts, 0)?;
        let attn = l
            .attn_norm
            .forward(&l.attn_out.forward(&context)?.add(x)?)?;
        let inner = l.intermediate.forward(&attn)?.gelu_erf()?;
        l.out_norm
            .forward(&l.output.forward(&inner)?.add(&attn)?)
            .and_then(|t| t.contiguous())
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }
}
