//! The [`Cairn`] facade's generated-insights methods.

use crate::Cairn;
use crate::config::CONFIG_FILE;
use crate::error::{Error, Result};
use crate::insights::agent_cli::AgentKind;
use crate::insights::render::{self, ExportFormat};
use crate::insights::{
    self, AgentGenerator, GenerateRequest, Generated, Generator, Insight, InsightSummary, Phase,
    Preview, Template, material,
};

impl Cairn {
    /// The report templates: built-in and the user's own.
    pub fn insight_templates(&self) -> Result<Vec<Template>> {
        insights::template::all(&self.data_dir)
    }

    /// The generator a request names (or the default: the configured endpoint, else Claude).
    pub fn insight_generator(&self, name: Option<&str>) -> Result<Box<dyn Generator>> {
        // Either key set means the endpoint is meant (a half-configured one is an error that
        // names the missing key, not a silent fall back to an agent CLI).
        let configured =
            self.config.insights.endpoint.is_some() || self.config.insights.model.is_some();
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(if configured { "endpoint" } else { "claude" });
        if name == "endpoint" {
            return self.endpoint_generator();
        }
        let kind = AgentKind::parse(name).ok_or_else(|| {
            Error::Invalid(format!(
                "unknown generator `{name}`: use endpoint, claude, codex, gemini or copilot"
            ))
        })?;
        Ok(Box::new(AgentGenerator {
            kind,
            config: self.config.agent.get(name).cloned(),
        }))
    }

    /// The OpenAI-compatible endpoint `[insights]` configures, through the `llm` client.
    fn endpoint_generator(&self) -> Result<Box<dyn Generator>> {
        let path = self.data_dir.join(CONFIG_FILE);
        match insights::endpoint::from_config(&self.config.insights, &path)? {
            Some(g) => Ok(Box::new(g)),
            None => Err(Error::Config {
                path,
                message: "no [insights] endpoint: name one with `cairn insights setup --endpoint <url> --model <model>`, or pick an agent CLI (claude, codex, gemini, copilot)".to_owned(),
            }),
        }
    }

    fn insight_budget(&self) -> usize {
        self.config
            .insights
            .max_prompt_chars
            .unwrap_or(material::DEFAULT_MAX_CHARS)
    }

    /// What the next report would read (nothing is sent).
    pub fn insight_preview(&self, req: &GenerateRequest) -> Result<Preview> {
        let generator = self.insight_generator(req.generator.as_deref())?;
        let store = self.store();
        insights::preview(
            store.conn(),
            &self.data_dir,
            req,
            generator.identity(),
            self.insight_budget(),
            &jiff::ZonedDateTime::now(),
        )
    }

    /// Generate a report with the request's generator (or return the stored one with the same
    /// cache key unless `force`).
    pub fn insight_generate(
        &self,
        req: &GenerateRequest,
        progress: &dyn Fn(Phase),
    ) -> Result<Generated> {
        let generator = self.insight_generator(req.generator.as_deref())?;
        let ready = self.nothing_set_up_for_reports(req.generator.as_deref());
        self.generate_through(req, generator.as_ref(), progress, ready)
    }

    /// Whether a report can be written when nothing was chosen: no generator named, no
    /// `[insights]` endpoint, and the default agent CLI neither given a binary nor on `PATH`
    /// refuse it, saying that the way to choose is setup (not how to point Cairn at a `claude`
    /// binary). Asked only once the slice holds sessions and no stored report answers: a dry
    /// run, an empty slice and a stored report need no generator.
    fn nothing_set_up_for_reports(&self, name: Option<&str>) -> Result<()> {
        let chose = name.is_some_and(|n| !n.trim().is_empty())
            || self.config.insights.endpoint.is_some()
            || self.config.insights.model.is_some();
        let agent = "claude";
        let own_binary = self
            .config
            .agent
            .get(agent)
            .is_some_and(|a| a.binary.is_some());
        let path = std::env::var_os("PATH").unwrap_or_default();
        if chose || own_binary || crate::llm::detect::which(agent, &path).is_some() {
            return Ok(());
        }
        Err(Error::Generator {
            what: "reports".into(),
            message: format!(
                "no generator is set up: no [insights] endpoint, and `{agent}`, the agent CLI reports go to without one, is not on PATH; name an OpenAI-compatible server with `cairn insights setup --endpoint <url> --model <model>`, or install {agent}, or pick another agent CLI with --generator codex|gemini|copilot"
            ),
        })
    }

    /// [`Cairn::insight_generate`] with a given generator.
    pub fn insight_generate_with(
        &self,
        req: &GenerateRequest,
        generator: &dyn Generator,
        progress: &dyn Fn(Phase),
    ) -> Result<Generated> {
        self.generate_through(req, generator, progress, Ok(()))
    }

    /// A report through `generator`, once `ready` says it can be asked.
    fn generate_through(
        &self,
        req: &GenerateRequest,
        generator: &dyn Generator,
        progress: &dyn Fn(Phase),
        ready: Result<()>,
    ) -> Result<Generated> {
        self.writable()?;
        progress(Phase::Material);
        // The store lock is held while the material is read and while the report is saved,
        // never while the generator runs (that can take minutes).
        let plan = {
            let store = self.store();
            insights::plan(
                store.conn(),
                &self.data_dir,
                req,
                generator.identity(),
                self.insight_budget(),
                &jiff::ZonedDateTime::now(),
            )?
        };
        if let Some(insight) = plan.cached.clone() {
            progress(Phase::CacheHit);
            return Ok(Generated {
                insight: insights::Insight {
                    status: insights::Status::Cached,
                    ..insight
                },
                cached: true,
            });
        }
        ready?;
        progress(Phase::Generating);
        let insight = insights::write(plan, generator, req.title.as_deref())?;
        progress(Phase::Saving);
        let mut store = self.store();
        let insight = insights::save(store.conn_mut(), &self.data_dir, insight)?;
        Ok(Generated {
            insight: insights::Insight {
                status: insights::Status::Generated,
                ..insight
            },
            cached: false,
        })
    }

    /// Reports, newest first.
    pub fn insight_list(
        &self,
        search: Option<&str>,
        starred: bool,
        limit: u32,
    ) -> Result<Vec<InsightSummary>> {
        let store = self.store();
        insights::store::list(store.conn(), search, starred, limit).map_err(|e| store.err(e))
    }

    pub fn insight_get(&self, id: i64) -> Result<Insight> {
        let store = self.store();
        insights::get(store.conn(), &self.data_dir, id)?.ok_or_else(|| not_found(id))
    }

    /// The report's Markdown as safe HTML, for the report view.
    pub fn insight_html(&self, id: i64) -> Result<String> {
        Ok(render::report_html(&self.insight_get(id)?))
    }

    /// A report in an export format (through the outbound redactor), with its default file name.
    pub fn insight_export(&self, id: i64, format: ExportFormat) -> Result<(String, String)> {
        let insight = self.insight_get(id)?;
        Ok((
            render::export(&insight, format)?,
            render::file_name(&insight, format),
        ))
    }

    /// Export a report into `dir` (created if needed), as `file_name` or else the report's own
    /// name. Never replaces a file ([`render::write_new`]: `name (2).md` instead), for every
    /// door. Returns the file written and its size.
    pub fn insight_export_into(
        &self,
        id: i64,
        format: ExportFormat,
        dir: &std::path::Path,
        file_name: Option<&str>,
    ) -> Result<(std::path::PathBuf, usize)> {
        let (text, name) = self.insight_export(id, format)?;
        let path = render::write_new(dir, file_name.unwrap_or(&name), text.as_bytes())?;
        Ok((path, text.len()))
    }

    pub fn insight_star(&self, id: i64, starred: bool) -> Result<()> {
        self.writable()?;
        let store = self.store();
        let done =
            insights::store::set_starred(store.conn(), id, starred).map_err(|e| store.err(e))?;
        if done { Ok(()) } else { Err(not_found(id)) }
    }

    pub fn insight_rename(&self, id: i64, title: &str) -> Result<()> {
        self.writable()?;
        let title = crate::text::printable(title);
        let title = title.trim();
        if title.is_empty() {
            return Err(Error::Invalid("a report title cannot be empty".to_owned()));
        }
        let store = self.store();
        // A person's words, stored as every text is: a secret in them redacted.
        let title = crate::text::excerpt(title, 200);
        let title = crate::archive::redact::Redactor::global().redact_text(
            &title,
            "title",
            &mut Vec::new(),
        );
        let done = insights::store::rename(store.conn(), id, &title).map_err(|e| store.err(e))?;
        if done { Ok(()) } else { Err(not_found(id)) }
    }

    pub fn insight_delete(&self, id: i64) -> Result<()> {
        self.writable()?;
        let store = self.store();
        let done = insights::store::delete(store.conn(), id).map_err(|e| store.err(e))?;
        if done { Ok(()) } else { Err(not_found(id)) }
    }
}

fn not_found(id: i64) -> Error {
    Error::NotFound(format!(
        "report {id}; list reports with `cairn insights list`"
    ))
}
