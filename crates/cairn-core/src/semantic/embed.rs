//! Text → vectors. The [`Embedder`] trait has two implementations: [`LocalModel`], the built-in
//! all-MiniLM-L6-v2 sentence encoder run in-process, and (by config) an OpenAI-compatible
//! `/embeddings` endpoint reached through the `llm` client.
//!
//! The local model reproduces sentence-transformers' recipe for this model exactly: WordPiece
//! tokens (lower-cased, truncated to 256), the 6-layer BERT encoder, the mean of the token
//! vectors weighted by the attention mask, then L2 normalisation. `tests/embed_golden.rs` holds
//! it to vectors computed by the Python reference implementation.
//!
//! The model is looked up, in order, in `$CAIRN_MODEL_DIR`, `[embeddings] model_dir`, the
//! resource dir a bundle announces, next to the executable (`../resources/models/…` and
//! `resources/models/…`), the data dir's `models/`, and the source checkout's `resources/models/`
//! (dev builds). `scripts/fetch-model.sh` puts it there.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{Error, Result};

/// The built-in model's folder name under `resources/models/`.
pub const LOCAL_MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// sentence-transformers' `max_seq_length` for this model (tokens, special tokens included).
pub const LOCAL_MAX_TOKENS: usize = 256;
/// The built-in model's [`Embedder::similarity_floor`]. Measured on the real fixtures' 64 turns
/// with 15 questions worded apart from their transcripts and 15 off-topic ones
/// (`tests/fixtures/meaning/`, bench/RESULTS.md): at 0.2 the best right turn of 14 of the 15
/// questions stays, other turns kept fall from 58 to 4 a question, and an off-topic question
/// finds 0.7 turns instead of 62.
pub const LOCAL_SIMILARITY_FLOOR: f32 = 0.2;
/// Files a model dir must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// Token budget of one forward pass (batch × padded length): bounds memory on long inputs.
const BATCH_TOKENS: usize = 8192;
const MAX_BATCH: usize = 64;
/// The nice value of the threads that embed batches (a build, a backlog of entries): background
/// work that can keep every core busy for hours, so it yields to the person's own work. A
/// query's thread keeps its priority.
const BATCH_NICE: i32 = 10;

/// Lower the calling thread's priority to [`BATCH_NICE`], never raising it. Linux gives each
/// thread a nice value of its own, so only this thread changes; elsewhere it does nothing (the
/// same call would lower the whole process). A refusal only leaves the priority as it was.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        let me = Some(rustix::thread::gettid());
        if getpriority_process(me).is_ok_and(|nice| nice < BATCH_NICE) {
            let _ = setpriority_process(me, BATCH_NICE);
        }
    }
}

/// Whether a text is a query or a stored document (some endpoint models prefix them differently;
/// the local model treats both alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Query,
    Document,
}

/// The environment variable a process that runs the local model should set at start, and its
/// value, when the user has not set it: `RAYON_NUM_THREADS` = the available cores, rayon's own
/// default, so no thread pool changes size. candle asks for its thread count on every matrix
/// product and, without the variable, parses `/proc/cpuinfo` each time: 17% of a query's
/// embedding in a profile (bench/NOTES.md). Binaries apply it before their second thread exists
/// (changing the environment later is unsound): [`set_thread_env_default`], or their own safe
/// `setenv` (the desktop's glib).
pub fn thread_env_default() -> Option<(&'static str, String)> {
    const VAR: &str = "RAYON_NUM_THREADS";
    if std::env::var_os(VAR).is_some() {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    Some((VAR, cores.to_string()))
}

/// Set [`thread_env_default`]'s variable in this process, for binaries without a safe `setenv`.
///
/// # Safety
/// No other thread may exist while this runs (another thread could read the environment as it
/// changes): call it first thing in `main`.
#[allow(unsafe_code)]
pub unsafe fn set_thread_env_default() {
    if let Some((name, value)) = thread_env_default() {
        // SAFETY: the caller guarantees this process has one thread.
        unsafe { std::env::set_var(name, value) };
    }
}

/// Something that turns texts into L2-normalised vectors of a fixed dimension.
pub trait Embedder: Send + Sync {
    /// Identity of the vectors this embedder makes: model, dimension, recipe and weights. Vectors
    /// stored under another fingerprint are never compared with this embedder's.
    fn fingerprint(&self) -> &str;
    fn dims(&self) -> usize;
    /// Embed `texts`; returns `texts.len() × dims` floats, row-major, each row unit length (a
    /// row of zeros for an empty text).
    fn embed(&self, texts: &[&str], kind: InputKind) -> Result<Vec<f32>>;
    /// Whether writes refresh vectors at once (true for the local model; an endpoint is only
    /// called when asked to, by `cairn embeddings build`).
    fn refresh_on_write(&self) -> bool;
    /// One line for status output: what runs and where it came from.
    fn describe(&self) -> String;
    /// The least cosine at which a turn or a Recall entry counts as found by its meaning
    /// (search, `why`, Recall's vector and hybrid modes). A model's cosines have a scale of
    /// their own, so only a model measured for one has a floor; any other keeps every nearest
    /// turn and entry.
    fn similarity_floor(&self) -> f32 {
        f32::NEG_INFINITY
    }
}

/// Where the model was looked for, for the error that says it is missing.
#[derive(Debug, Clone, Default)]
pub struct ModelSearch {
    /// `$CAIRN_MODEL_DIR`, when set.
    pub env_dir: Option<PathBuf>,
    /// `[embeddings] model_dir` from config.toml.
    pub config_dir: Option<PathBuf>,
    /// The resource dir of an installed bundle (the desktop app passes it).
    pub resource_dir: Option<PathBuf>,
    /// The directory of the running executable.
    pub exe_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    /// The source checkout this binary was built from (dev and test builds).
    pub checkout_dir: Option<PathBuf>,
}

impl ModelSearch {
    /// The usual places for this process: the env var, the executable's dir, the data dir.
    pub fn for_process(data_dir: &Path) -> ModelSearch {
        ModelSearch {
            env_dir: std::env::var_os("CAIRN_MODEL_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            config_dir: None,
            resource_dir: None,
            exe_dir: std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(Path::to_owned)),
            data_dir: Some(data_dir.to_owned()),
            checkout_dir: Some(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../resources/models"),
            ),
        }
    }

    /// Every candidate dir, in lookup order.
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let named = |base: &Path| base.join(LOCAL_MODEL_NAME);
        // An explicit dir may be the model itself or a folder holding it.
        for dir in [&self.env_dir, &self.config_dir].into_iter().flatten() {
            out.push(dir.clone());
            out.push(named(dir));
        }
        if let Some(r) = &self.resource_dir {
            out.push(named(&r.join("models")));
            out.push(named(&r.join("resources/models")));
        }
        if let Some(exe) = &self.exe_dir {
            out.push(named(&exe.join("../resources/models")));
            out.push(named(&exe.join("resources/models")));
        }
        if let Some(d) = &self.data_dir {
            out.push(named(&d.join("models")));
        }
        if let Some(c) = &self.checkout_dir {
            out.push(named(c));
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|p| seen.insert(p.clone()));
        out
    }

    /// The first candidate holding a complete model, or the typed error naming every place.
    pub fn locate(&self) -> Result<PathBuf> {
        let candidates = self.candidates();
        candidates
            .iter()
            .find(|d| MODEL_FILES.iter().all(|f| d.join(f).is_file()))
            .map(|d| d.canonicalize().unwrap_or_else(|_| d.clone()))
            .ok_or(Error::ModelMissing { looked: candidates })
    }
}

/// The identity of a model dir without loading the weights: a digest of its config and tokenizer
/// and the size of the weights file, plus the recipe. Cheap enough to compute on every query.
pub fn local_fingerprint(dir: &Path) -> Result<(String, usize)> {
    let config_path = dir.join("config.json");
    let config_text = std::fs::read(&config_path).map_err(|e| Error::Read {
        path: config_path.clone(),
        source: e,
    })?;
    let config: BertConfig = serde_json::from_slice(&config_text).map_err(|e| Error::Model {
        path: config_path.clone(),
        message: format!("not a BERT config: {e}"),
    })?;
    let dims = config.hidden_size;
    let tok_path = dir.join("tokenizer.json");
    let tok = std::fs::read(&tok_path).map_err(|e| Error::Read {
        path: tok_path,
        source: e,
    })?;
    let weights = dir.join("model.safetensors");
    let size = std::fs::metadata(&weights)
        .map_err(|e| Error::Read {
            path: weights,
            source: e,
        })?
        .len();
    let mut h = Sha256::new();
    h.update(&config_text);
    h.update([0]);
    h.update(&tok);
    h.update(size.to_le_bytes());
    let digest = hex::encode(h.finalize());
    Ok((
        format!(
            "local/{LOCAL_MODEL_NAME}/d{dims}/mean-l2/t{LOCAL_MAX_TOKENS}/{}",
            &digest[..16]
        ),
        dims,
    ))
}

/// The built-in sentence encoder, run in-process on the CPU.
pub struct LocalModel {
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    fingerprint: String,
    dims: usize,
    pool: rayon::ThreadPool,
    /// One thread, for single texts (queries).
    single: rayon::ThreadPool,
    threads: usize,
    /// One batch at a time: a batch already uses every thread of the pool. A single text never
    /// takes it (see [`Embedder::embed`]).
    busy: Mutex<()>,
}

fn model_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Model {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

impl LocalModel {
    /// Load the model in `dir` (see [`ModelSearch::locate`]); inference uses at most `threads`
    /// CPU threads (0 = the default: all cores, at most 4).
    pub fn load(dir: &Path, threads: usize) -> Result<LocalModel> {
        let (fingerprint, dims) = local_fingerprint(dir)?;
        let config_path = dir.join("config.json");
        let config: BertConfig = std::fs::read(&config_path)
            .map_err(|e| Error::Read {
                path: config_path.clone(),
                source: e,
            })
            .and_then(|t| serde_json::from_slice(&t).map_err(|e| model_err(&config_path, e)))?;
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| model_err(&tok_path, e))?;
        // sentence-transformers overrides the file's 128-token settings: truncate at 256, pad to
        // the longest in the batch (we pad ourselves).
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: LOCAL_MAX_TOKENS,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|e| model_err(&tok_path, e))?;
        tokenizer.with_padding(None);
        let weights = dir.join("model.safetensors");
        // Read (not mmap: this crate forbids unsafe code) — about 90 MB, once per process.
        let bytes = std::fs::read(&weights).map_err(|e| Error::Read {
            path: weights.clone(),
            source: e,
        })?;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
            .map_err(|e| model_err(&weights, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| model_err(&weights, e))?;
        let threads = if threads == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(4)
        } else {
            threads
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cairn-embed-{i}"))
            .start_handler(|_| lower_priority())
            .build()
            .map_err(|e| model_err(dir, format!("cannot start inference threads: {e}")))?;
        let single = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "cairn-embed-query".into())
            .build()
            .map_err(|e| model_err(dir, format!("cannot start inference threads: {e}")))?;
        Ok(LocalModel {
            dir: dir.to_owned(),
            model,
            tokenizer,
            fingerprint,
            dims,
            pool,
            single,
            threads,
            busy: Mutex::new(()),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The same model reading at most `max` word pieces of a text (special tokens included)
    /// instead of 256: a shorter cap for measuring what it costs in quality (`turns-bench
    /// --max-tokens`). Its fingerprint differs, so its vectors are never mixed with the default's.
    pub fn with_max_tokens(mut self, max: usize) -> Result<LocalModel> {
        let max = max.clamp(8, LOCAL_MAX_TOKENS);
        self.tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|e| model_err(&self.dir, e))?;
        if max != LOCAL_MAX_TOKENS {
            self.fingerprint = format!("{}+max{max}", self.fingerprint);
        }
        Ok(self)
    }

    /// Token ids of a text as the model sees them (with `[CLS]`/`[SEP]`, truncated).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| model_err(&self.dir, e))?;
        Ok(enc.get_ids().to_vec())
    }

    /// The vectors of token-id sequences as given (special tokens the caller's), pooled and
    /// normalised as [`Embedder::embed`] does, 256 sequences a forward pass: what distilling a
    /// static table of the vocabulary needs (`cairn_bench::static_embed`).
    pub fn embed_ids(&self, seqs: &[Vec<u32>]) -> Result<Vec<f32>> {
        let mut out = vec![0f32; seqs.len() * self.dims];
        let _one = self
            .busy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.pool.install(|| -> Result<()> {
            for (k, chunk) in seqs.chunks(256).enumerate() {
                let batch: Vec<&[u32]> = chunk.iter().map(Vec::as_slice).collect();
                let at = k * 256 * self.dims;
                self.forward(&batch, &mut out[at..at + chunk.len() * self.dims])
                    .map_err(|e| model_err(&self.dir, e))?;
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The tokenizer's vocabulary size (added tokens included).
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    fn forward(&self, batch: &[&[u32]], out: &mut [f32]) -> candle_core::Result<()> {
        let len = batch.iter().map(|ids| ids.len()).max().unwrap_or(0);
        let n = batch.len();
        let mut ids = vec![0u32; n * len];
        let mut mask = vec![0u32; n * len];
        for (row, toks) in batch.iter().enumerate() {
            ids[row * len..row * len + toks.len()].copy_from_slice(toks);
            mask[row * len..row * len + toks.len()].fill(1);
        }
        let dev = Device::Cpu;
        let ids = Tensor::from_vec(ids, (n, len), &dev)?;
        let mask = Tensor::from_vec(mask, (n, len), &dev)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over real tokens: Σ h·m / max(Σ m, 1e-9), as sentence-transformers pools.
        let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let pooled = summed.broadcast_div(&counts)?.to_vec2::<f32>()?;
        for (row, v) in pooled.iter().enumerate() {
            let dst = &mut out[row * self.dims..(row + 1) * self.dims];
            dst.copy_from_slice(v);
            normalize(dst);
        }
        Ok(())
    }
}

/// Scale to unit length (torch's `F.normalize`: divide by max(‖v‖, 1e-12)).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
}

impl Embedder for LocalModel {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str], _kind: InputKind) -> Result<Vec<f32>> {
        let mut out = vec![0f32; texts.len() * self.dims];
        if texts.is_empty() {
            return Ok(out);
        }
        // A single short text (a query) gains nothing from a second thread: its products are
        // too small to split. It runs on the pool of one, leaving the other cores to what runs
        // beside it (hybrid's lexical leg; measured: bench/NOTES.md). It never waits for a
        // batch either: a build's chunk holds the batch pool for many seconds, longer still at
        // its lowered priority when the machine is busy, and a query beside it would wait all
        // that time. The query's thread keeps the priority the batch threads gave up.
        let _one = (texts.len() > 1).then(|| {
            self.busy
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        });
        let pool = if texts.len() == 1 {
            &self.single
        } else {
            &self.pool
        };
        pool.install(|| -> Result<()> {
            let encodings = self
                .tokenizer
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| model_err(&self.dir, e))?;
            // Similar lengths together: less padding per batch.
            let mut order: Vec<usize> = (0..texts.len())
                .filter(|&i| !texts[i].trim().is_empty())
                .collect();
            order.sort_by_key(|&i| encodings[i].get_ids().len());
            let mut start = 0;
            while start < order.len() {
                let longest = encodings[order[(start + MAX_BATCH).min(order.len()) - 1]]
                    .get_ids()
                    .len()
                    .max(1);
                let take = (BATCH_TOKENS / longest)
                    .clamp(1, MAX_BATCH)
                    .min(order.len() - start);
                let rows = &order[start..start + take];
                let batch: Vec<&[u32]> = rows.iter().map(|&i| encodings[i].get_ids()).collect();
                let mut vecs = vec![0f32; rows.len() * self.dims];
                self.forward(&batch, &mut vecs)
                    .map_err(|e| model_err(&self.dir, e))?;
                for (k, &i) in rows.iter().enumerate() {
                    out[i * self.dims..(i + 1) * self.dims]
                        .copy_from_slice(&vecs[k * self.dims..(k + 1) * self.dims]);
                }
                start += take;
            }
            Ok(())
        })?;
        Ok(out)
    }

    fn refresh_on_write(&self) -> bool {
        true
    }

    fn similarity_floor(&self) -> f32 {
        LOCAL_SIMILARITY_FLOOR
    }

    fn describe(&self) -> String {
        format!(
            "local {LOCAL_MODEL_NAME} ({} dims; batches on {} threads, a single text on 1) from {}",
            self.dims,
            self.threads,
            self.dir.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_names_every_place_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let search = ModelSearch {
            env_dir: Some(dir.path().join("env")),
            config_dir: None,
            resource_dir: Some(dir.path().join("res")),
            exe_dir: Some(dir.path().join("bin")),
            data_dir: Some(dir.path().join("data")),
            checkout_dir: None,
        };
        let err = search.locate().unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::ModelMissing { .. }));
        for part in [
            "env",
            "res/models/all-MiniLM-L6-v2",
            "bin/../resources/models/all-MiniLM-L6-v2",
            "bin/resources/models/all-MiniLM-L6-v2",
            "data/models/all-MiniLM-L6-v2",
            "scripts/fetch-model.sh",
            "CAIRN_MODEL_DIR",
            "--mode lexical",
        ] {
            assert!(msg.contains(part), "{part} missing from: {msg}");
        }
        // A dir with the three files is found, whether named directly or as its parent.
        let model = dir.path().join("data/models").join(LOCAL_MODEL_NAME);
        std::fs::create_dir_all(&model).unwrap();
        for f in MODEL_FILES {
            std::fs::write(model.join(f), "x").unwrap();
        }
        assert_eq!(search.locate().unwrap(), model.canonicalize().unwrap());
        let direct = ModelSearch {
            env_dir: Some(model.clone()),
            ..ModelSearch::default()
        };
        assert_eq!(direct.locate().unwrap(), model.canonicalize().unwrap());
    }

    #[test]
    fn normalize_makes_unit_length_and_leaves_zero_alone() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        let mut z = vec![0.0; 3];
        normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }
}
