//! Whole corpora of generated transcripts, laid out on disk the way the agents lay them out:
//! `claude/<project dir>/<session>.jsonl` (+ `<session>/subagents/agent-*.jsonl`) and
//! `codex/YYYY/MM/DD/rollout-…-<session>.jsonl`. Same fixtures + same spec = same bytes, whatever
//! the number of threads (every session has its own seed).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::Serialize;

use crate::claude::{self, ClaudeModel, Sizes};
use crate::codex::{self, CodexModel};
use crate::rng::Rng;
use crate::text::TextGen;
use crate::vocab::Vocab;

/// 2026-06-01T00:00:00Z: generated sessions start in the 90 days after this.
const EPOCH_MS: i64 = 1_780_272_000_000;
const SPREAD_MS: i64 = 90 * 24 * 3600 * 1000;

/// What to generate.
#[derive(Debug, Clone, Serialize)]
pub struct Spec {
    pub seed: u64,
    /// Total bytes to aim for (main transcripts and side files).
    pub bytes: u64,
    pub sessions: usize,
    /// Share of sessions that are Codex rollouts.
    pub codex_share: f64,
    /// This many sessions commit on `related_branch` of the first repository (the skim target).
    pub related: usize,
    pub related_branch: String,
    /// Number of repositories (projects) sessions are spread over.
    pub repos: usize,
}

impl Spec {
    pub fn new(seed: u64, bytes: u64, sessions: usize) -> Spec {
        Spec {
            seed,
            bytes,
            sessions,
            codex_share: 0.2,
            related: 0,
            related_branch: "feature/skim-target".into(),
            repos: 41,
        }
    }
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct Stats {
    pub files: usize,
    pub bytes: u64,
    pub claude_sessions: usize,
    pub codex_sessions: usize,
    pub side_files: usize,
    pub lines: u64,
}

/// The models learned from the fixtures, and the text generator.
pub struct Generator {
    claude: ClaudeModel,
    codex: CodexModel,
    sizes: Sizes,
    text: TextGen,
}

/// Long free-text strings of the fixtures (tool output, code, prose), for text windows.
fn text_pool(dir: &Path) -> Result<String> {
    fn walk(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) if s.len() >= 64 && s.contains([' ', '\n']) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut pool = String::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    for p in paths {
        let text = std::fs::read_to_string(&p)?;
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                walk(&v, &mut pool);
            }
        }
    }
    Ok(pool)
}

impl Generator {
    /// Learn from `fixtures` (the repository's `tests/fixtures`).
    pub fn from_fixtures(fixtures: &Path) -> Result<Generator> {
        let claude_dir = fixtures.join("claude");
        let claude = ClaudeModel::learn(&claude_dir)?;
        let codex = CodexModel::learn(&fixtures.join("codex"))?;
        let sizes = claude.sizes();
        let text = TextGen::new(Vocab::from_fixtures(&claude_dir)?, text_pool(&claude_dir)?);
        Ok(Generator {
            claude,
            codex,
            sizes,
            text,
        })
    }

    pub fn describe(&self) -> String {
        self.claude.describe()
    }

    pub fn vocab(&self) -> &Vocab {
        self.text.vocab()
    }

    /// Write a corpus into `out` (which must not exist or be empty).
    pub fn write_corpus(&self, spec: &Spec, out: &Path) -> Result<Stats> {
        let plans = plans(spec);
        let per: Vec<Result<Stats>> = plans
            .par_iter()
            .map(|p| self.write_session(p, out))
            .collect();
        let mut total = Stats::default();
        for s in per {
            let s = s?;
            total.files += s.files;
            total.bytes += s.bytes;
            total.claude_sessions += s.claude_sessions;
            total.codex_sessions += s.codex_sessions;
            total.side_files += s.side_files;
            total.lines += s.lines;
        }
        Ok(total)
    }

    fn write_session(&self, p: &Plan, out: &Path) -> Result<Stats> {
        let mut stats = Stats::default();
        let write = |path: &Path, bytes: &[u8], stats: &mut Stats| -> Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            std::fs::write(path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            stats.files += 1;
            stats.bytes += bytes.len() as u64;
            stats.lines += bytes.iter().filter(|b| **b == b'\n').count() as u64;
            Ok(())
        };
        if p.codex {
            let bytes = codex::session(
                &self.codex,
                &self.sizes,
                &self.text,
                &codex::SessionPlan {
                    seed: p.seed,
                    session_id: p.session_id.clone(),
                    cwd: p.cwd.clone(),
                    branch: p.branch.clone(),
                    start_ms: p.start_ms,
                    target_bytes: p.target_bytes,
                    commits: p.commits,
                },
            );
            let path = out
                .join("codex")
                .join(codex::rollout_path(p.start_ms, &p.session_id));
            write(&path, &bytes, &mut stats)?;
            stats.codex_sessions = 1;
        } else {
            let files = claude::session(
                &self.claude,
                &self.text,
                &claude::SessionPlan {
                    seed: p.seed,
                    session_id: p.session_id.clone(),
                    cwd: p.cwd.clone(),
                    branch: p.branch.clone(),
                    start_ms: p.start_ms,
                    target_bytes: p.target_bytes,
                    commits: p.commits,
                },
            );
            let project = out.join("claude").join(claude::project_dir(&p.cwd));
            stats.side_files = files.len() - 1;
            for f in files {
                write(&project.join(&f.rel), &f.bytes, &mut stats)?;
            }
            stats.claude_sessions = 1;
        }
        Ok(stats)
    }

    /// One Claude session of about `bytes`, written under `projects` (a Claude projects dir);
    /// returns the main transcript's path.
    pub fn claude_session(
        &self,
        seed: u64,
        bytes: usize,
        cwd: &str,
        branch: &str,
        projects: &Path,
    ) -> Result<PathBuf> {
        let mut rng = Rng::new(seed);
        let plan = Plan {
            seed: rng.next_u64(),
            codex: false,
            session_id: claude::session_id(&mut rng),
            cwd: cwd.to_owned(),
            branch: branch.to_owned(),
            start_ms: EPOCH_MS,
            target_bytes: bytes,
            commits: false,
        };
        let files = claude::session(
            &self.claude,
            &self.text,
            &claude::SessionPlan {
                seed: plan.seed,
                session_id: plan.session_id.clone(),
                cwd: plan.cwd.clone(),
                branch: plan.branch.clone(),
                start_ms: plan.start_ms,
                target_bytes: bytes,
                commits: false,
            },
        );
        let project = projects.join(claude::project_dir(cwd));
        let main = project.join(&files[0].rel);
        for f in files {
            let path = project.join(&f.rel);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // Side files are dropped when the main file is cut short below.
            std::fs::write(&path, &f.bytes)?;
        }
        Ok(main)
    }

    /// Append one generated turn to the transcript at `path`; returns the bytes appended.
    pub fn append_turn(&self, path: &Path, seed: u64) -> Result<usize> {
        use std::io::Write;
        let existing =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let first: Option<serde_json::Value> = existing
            .split(|b| *b == b'\n')
            .next()
            .and_then(|l| serde_json::from_slice(l).ok());
        let codex = first
            .as_ref()
            .is_some_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("session_meta"));
        let more = if codex {
            codex::append_turn(&self.codex, &self.sizes, &self.text, seed, &existing)
        } else {
            claude::append_turn(&self.claude, &self.text, seed, &existing)
        }
        .with_context(|| format!("{} does not look like a transcript", path.display()))?;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("cannot append to {}", path.display()))?;
        if !existing.ends_with(b"\n") && !existing.is_empty() {
            f.write_all(b"\n")?;
        }
        f.write_all(&more)?;
        Ok(more.len())
    }

    /// Append one turn to `fraction` of the corpus's main transcripts (chosen by `seed`).
    /// Returns (files appended to, bytes appended).
    pub fn append_to_corpus(
        &self,
        corpus: &Path,
        fraction: f64,
        seed: u64,
    ) -> Result<(usize, u64)> {
        let mut mains = main_transcripts(corpus)?;
        mains.sort();
        let n = ((mains.len() as f64 * fraction).ceil() as usize).clamp(1, mains.len().max(1));
        let mut rng = Rng::new(seed);
        // Partial Fisher-Yates: the first n are the chosen ones.
        for i in 0..n.min(mains.len()) {
            let j = i + rng.below(mains.len() - i);
            mains.swap(i, j);
        }
        let mut bytes = 0u64;
        for (i, path) in mains.iter().take(n).enumerate() {
            bytes += self.append_turn(path, seed ^ (i as u64 + 1).wrapping_mul(0x9E37))? as u64;
        }
        Ok((n.min(mains.len()), bytes))
    }
}

/// Main transcripts of a corpus (not sub-agent files).
pub fn main_transcripts(corpus: &Path) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
            let p = e?.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "subagents") {
                    continue;
                }
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "jsonl") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for sub in ["claude", "codex"] {
        let d = corpus.join(sub);
        if d.is_dir() {
            walk(&d, &mut out)?;
        }
    }
    Ok(out)
}

struct Plan {
    seed: u64,
    codex: bool,
    session_id: String,
    cwd: String,
    branch: String,
    start_ms: i64,
    target_bytes: usize,
    commits: bool,
}

/// A standard normal deviate (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn plans(spec: &Spec) -> Vec<Plan> {
    let mut rng = Rng::new(spec.seed);
    let n = spec.sessions.max(1);
    // Session sizes: log-normal (σ = 1), the heavy tail real archives have, scaled to the
    // requested total. Generation overshoots each target by part of a turn, so aim a little low.
    let sigma = 1.0;
    let raw: Vec<f64> = (0..n)
        .map(|_| (sigma * normal(&mut rng) - sigma * sigma / 2.0).exp())
        .collect();
    let sum: f64 = raw.iter().sum();
    let budget = spec.bytes as f64;
    // Every `stride`-th session is one of the related ones.
    let stride = if spec.related == 0 {
        usize::MAX
    } else {
        (n / spec.related.min(n)).max(1)
    };
    let mut related_left = spec.related;
    let words: Vec<&str> = [
        "login", "parser", "cache", "search", "sync", "retry", "export", "config", "ui", "db",
        "auth", "api", "perf", "docs", "hooks", "index",
    ]
    .to_vec();
    (0..n)
        .map(|i| {
            let mut r = Rng::new(spec.seed ^ (i as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
            let related = related_left > 0 && i % stride == 0;
            if related {
                related_left -= 1;
            }
            let codex = !related && r.chance(spec.codex_share);
            let repo = if related {
                0
            } else {
                // Few busy repositories, many quiet ones.
                let a = r.below(spec.repos.max(1));
                let b = r.below(spec.repos.max(1));
                a.min(b)
            };
            let branch = if related {
                spec.related_branch.clone()
            } else if r.chance(0.35) {
                "main".to_owned()
            } else {
                format!("feature/{}-{}", words[r.below(words.len())], r.below(12))
            };
            let target = ((raw[i] / sum) * budget).clamp(2_000.0, 64e6) as usize;
            Plan {
                seed: r.next_u64(),
                codex,
                session_id: claude::session_id(&mut r),
                cwd: format!("/home/dev/projects/repo{repo:02}"),
                branch,
                start_ms: EPOCH_MS + (SPREAD_MS / n as i64) * i as i64 + r.below(3_600_000) as i64,
                target_bytes: target,
                commits: related || r.chance(0.25),
            }
        })
        .collect()
}
