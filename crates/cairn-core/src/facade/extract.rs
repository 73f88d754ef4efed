//! The [`Cairn`] facade, recall extraction: settings, passes, generations and the server check.

use crate::archive::capture::CaptureLock;
use crate::config::{Config, ExtractSetup, InsightsEndpoint};
use crate::llm::models::{EndpointCheck, ModelListing};
use crate::{Cairn, Error, Result};
use crate::{llm, recall};

/// The lock file one extraction pass at a time holds in the data dir.
pub(crate) const EXTRACT_LOCK: &str = "extract.lock";

/// How long a status waits for another writer (a sync) to store what it read of the sessions:
/// the answer does not wait on it, and the next status reads those sessions again.
const READABLE_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

impl Cairn {
    /// Store what a status or preview read of where sessions have something to read, when the
    /// archive takes a write within [`READABLE_WAIT`]; otherwise (opened read-only, a sync
    /// writing) it is read again next time, never an error.
    fn keep_readable(
        &self,
        store: &crate::store::Store,
        mut readable: recall::extract::store::Readable,
    ) {
        if self.read_only || !readable.learnt() {
            return;
        }
        if let Err(e) = store.waiting_at_most(READABLE_WAIT, |conn| readable.save(conn)) {
            tracing::debug!("keeping where sessions have something to read: {e}");
        }
    }

    /// `config.toml` as it is now: extraction reads it on every call, so what Settings writes
    /// applies without a restart.
    fn config_now(&self) -> Result<Config> {
        Config::load(&self.data_dir)
    }

    /// `[recall.extract]`, validated. Errors name the config file and the key to fix.
    pub fn extract_settings(&self) -> Result<recall::extract::Settings> {
        self.config_now()?
            .recall
            .extract
            .resolve(&self.config_path())
    }

    /// The configured extraction generator: the agent CLI `generator` names, else a client
    /// for the configured server (reads the API key variable now).
    pub(crate) fn extract_generator(
        &self,
        settings: &recall::extract::Settings,
        config: &Config,
    ) -> Result<Box<dyn llm::Generator + Sync>> {
        settings.runnable()?;
        if let Some(kind) = settings.agent {
            return Ok(Box::new(llm::AgentGenerator {
                kind,
                config: config.agent.get(kind.as_str()).cloned(),
            }));
        }
        Ok(Box::new(self.extract_endpoint(settings)?))
    }

    fn extract_endpoint(
        &self,
        settings: &recall::extract::Settings,
    ) -> Result<llm::EndpointGenerator> {
        let Some((name, server)) = &settings.server else {
            return Err(Error::Config {
                path: self.config_path(),
                message: format!(
                    "recall.extract.servers: no model server is defined; name one with {}, which writes it",
                    recall::extract::config::SETUP_HOW
                ),
            });
        };
        llm::EndpointGenerator::new(server, &settings.model).map_err(|e| Error::Config {
            path: self.config_path(),
            message: format!("recall.extract.servers.{name}.api_key_env: {e}"),
        })
    }

    /// Size and cost of what `recall_extract_run` with `scope` would send. Nothing is sent, and
    /// extraction need not be enabled.
    pub fn recall_extract_preview(
        &self,
        scope: &recall::extract::Scope,
    ) -> Result<recall::extract::Preview> {
        let settings = self.extract_settings()?;
        let store = self.store();
        let scope = self.named_session(&store, scope)?;
        let mut readable = recall::extract::store::Readable::load(store.conn())?;
        let preview = recall::extract::preview(
            store.conn(),
            &settings,
            &scope,
            &crate::clock::now(),
            &mut readable,
        )?;
        self.keep_readable(&store, readable);
        Ok(preview)
    }

    /// `scope` with its session named by its key, however a person named it (a unique start
    /// of the key, the agent's id), as every other command reads a session; as it was when it
    /// names none the archive holds (the pass says so in its own words).
    fn named_session(
        &self,
        store: &crate::archive::store::Store,
        scope: &recall::extract::Scope,
    ) -> Result<recall::extract::Scope> {
        let mut scope = scope.clone();
        if let Some(named) = scope
            .session
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            && let Some(row) =
                crate::views::session::resolve(store.conn(), named).map_err(|e| store.err(e))?
        {
            let key = crate::archive::store::session_head(store.conn(), row)
                .map_err(|e| store.err(e))?
                .key;
            scope.session = Some(key);
        }
        Ok(scope)
    }

    /// One extraction pass over the sessions in scope (see [`recall::extract::run`]). One pass
    /// at a time per data dir (`extract.lock`); `progress` receives events from worker threads.
    ///
    /// The entries it writes get their vectors as it goes (as every Recall write does, see
    /// [`Cairn::refresh_on_write`]): each unit's entries, once committed, are handed to a thread
    /// that embeds them on a connection of its own, so neither the pass's commits nor the
    /// window's reads wait on the model. Before the pass returns, that thread embeds whatever
    /// else waits (a killed pass's leftovers) and marks the vectors complete, so hybrid search
    /// serves the new entries at once; meanwhile it scores those that have a vector.
    pub fn recall_extract_run(
        &self,
        opts: &recall::extract::RunOptions,
        progress: &dyn recall::extract::ExtractProgress,
    ) -> Result<recall::extract::RunReport> {
        self.writable()?;
        opts.scope.validate()?;
        let opts = &recall::extract::RunOptions {
            scope: self.named_session(&self.store(), &opts.scope)?,
            cancel: opts.cancel.clone(),
        };
        let config = self.config_now()?;
        let settings = config.recall.extract.resolve(&self.config_path())?;
        let generator = self.extract_generator(&settings, &config)?;
        let identity = settings.identity().ok_or_else(|| Error::Config {
            path: self.config_path(),
            message: "recall.extract.model: is required; name the model the server serves".into(),
        })?;
        let lock = CaptureLock::open_named(&self.data_dir, EXTRACT_LOCK)?;
        // A moment's wait: a review write looks at the lock to see whether a pass runs
        // (`extraction_running`), and that look must not be taken for another pass.
        let _held = lock.lock_within(
            &self.data_dir,
            "another extraction pass",
            std::time::Duration::from_millis(500),
        )?;
        let (sender, committed) = std::sync::mpsc::channel::<Vec<String>>();
        std::thread::scope(|scope| {
            let refresher = std::thread::Builder::new()
                .name("cairn-recall-vectors".into())
                .spawn_scoped(scope, move || self.refresh_as_committed(&committed));
            if let Err(e) = &refresher {
                tracing::warn!(
                    "cannot start the recall vector refresher ({e}): vectors wait for the next write"
                );
            }
            // A refresher that could not start leaves them pending, as a killed one would.
            let send = move |ids| drop(sender.send(ids));
            let report = recall::extract::run::Pass {
                db: &self.store,
                settings: &settings,
                identity: &identity,
                generator: generator.as_ref(),
                progress,
                committed: &send,
                now: crate::clock::now(),
            }
            .run(opts);
            // The channel closes: the refresher embeds what is left and marks the store complete.
            drop(send);
            if let Ok(thread) = refresher
                && thread.join().is_err()
            {
                tracing::warn!(
                    "the recall vector refresher panicked: vectors wait for the next write"
                );
            }
            report
        })
    }

    /// Where extraction stands: the configured generation, coverage, all generations, the last
    /// pass, recent failures. Read-only; works with extraction disabled.
    ///
    /// Whether a session no pass covers has anything to read is read from its records once and
    /// kept (`recall::extract::store::Readable`), so a status reads only the records of the
    /// sessions that changed since the last one: the desktop asks at every Settings open.
    pub fn recall_extract_status(&self) -> Result<recall::extract::ExtractStatus> {
        let settings = self.extract_settings()?;
        let store = self.store();
        let mut readable = recall::extract::store::Readable::load(store.conn())?;
        let status = recall::extract::status(store.conn(), &settings, &mut readable)?;
        self.keep_readable(&store, readable);
        Ok(status)
    }

    /// Every generation, newest first, with counts (the configured one is marked).
    pub fn recall_extract_generations(&self) -> Result<Vec<recall::extract::Generation>> {
        let settings = self.extract_settings()?;
        let store = self.store();
        recall::extract::store::generations(store.conn(), settings.fingerprint().as_deref())
    }

    /// Coverage of each project by the configured generation (empty without a model).
    pub fn recall_extract_coverage(&self) -> Result<Vec<recall::extract::ProjectCoverage>> {
        let settings = self.extract_settings()?;
        let Some(fp) = settings.fingerprint() else {
            return Ok(Vec::new());
        };
        let store = self.store();
        let mut readable = recall::extract::store::Readable::load(store.conn())?;
        let coverage = recall::extract::store::coverage(store.conn(), &fp, &mut readable)?;
        self.keep_readable(&store, readable);
        Ok(coverage)
    }

    /// Activate the configured generation: serve its entries, retire the active one.
    pub fn recall_extract_activate(&self) -> Result<recall::extract::Lifecycle> {
        let settings = self.extract_settings()?;
        let fp = settings.fingerprint().ok_or_else(|| Error::Config {
            path: self.config_path(),
            message: "recall.extract.model: no model is configured, so there is no generation to activate".into(),
        })?;
        let cutoff = recall::extract::ts_minus(&crate::clock::now(), settings.quiet_period_ms);
        self.review(&[], |c, now| {
            recall::extract::store::activate(c, &fp, &cutoff, now)
        })
    }

    /// Retire a generation (by fingerprint or a unique prefix of at least 6 characters): its
    /// unreviewed entries are archived. The active generation needs `force`.
    pub fn recall_extract_retire(
        &self,
        fingerprint: &str,
        force: bool,
    ) -> Result<recall::extract::Lifecycle> {
        self.review(&[], |c, now| {
            recall::extract::store::retire(c, fingerprint, force, now)
        })
    }

    /// Check the extraction setup with real calls: `/models` and one tiny extraction.
    /// Doesn't need `enabled`: checking the server is how one decides to enable it.
    pub fn recall_extract_doctor(&self) -> Result<recall::extract::ExtractDoctor> {
        self.doctor_of(&self.config_now()?, None)
    }

    /// The doctor's calls over `config`; with `model_unlisted` given, a setup's: the server's
    /// `/models` answer must pass [`EndpointCheck::rule`] before anything else is sent.
    fn doctor_of(
        &self,
        config: &Config,
        model_unlisted: Option<bool>,
    ) -> Result<recall::extract::ExtractDoctor> {
        let mut settings = config.recall.extract.resolve(&self.config_path())?;
        if settings.model.is_empty() {
            return Err(Error::Config {
                path: self.config_path(),
                message: "recall.extract.model: is required; name the model the server serves"
                    .into(),
            });
        }
        settings.enabled = true;
        settings.runnable()?;
        if settings.agent.is_some() {
            let generator = self.extract_generator(&settings, config)?;
            return Ok(recall::extract::doctor(&settings, generator.as_ref(), None));
        }
        let mut endpoint = self.extract_endpoint(&settings)?;
        endpoint.client_mut().retry.max_attempts = 1;
        let check = endpoint_check(endpoint.client(), &settings.model);
        if let Some(allowed) = model_unlisted {
            check.rule(allowed)?;
        }
        Ok(recall::extract::doctor(&settings, &endpoint, Some(check)))
    }

    /// What the Settings form shows: `[recall.extract]` as it is on disk.
    pub fn recall_extract_setup(&self) -> Result<ExtractSetup> {
        Ok(self.config_now()?.recall.extract.setup())
    }

    /// `config.toml` with `setup` written into it, and the config it loads as, checked (not
    /// saved): the extraction table must resolve.
    fn config_with(&self, setup: &ExtractSetup) -> Result<Config> {
        check_setup(setup)?;
        let path = self.config_path();
        self.edited_config(
            |text| crate::config::write_extract_setup(text, setup),
            |config| config.recall.extract.resolve(&path).map(|_| ()),
        )
        .map(|(_, config)| config)
    }

    /// Write `setup` into `config.toml` (atomically; comments and every other key kept). A
    /// setup that would not load is refused and the file is left as it was. The next pass,
    /// preview or status reads it: no restart.
    pub fn save_recall_extract_setup(&self, setup: &ExtractSetup) -> Result<ExtractSetup> {
        check_setup(setup)?;
        let path = self.config_path();
        let config = self.edit_config(
            |text| crate::config::write_extract_setup(text, setup),
            |config| config.recall.extract.resolve(&path).map(|_| ()),
        )?;
        Ok(config.recall.extract.setup())
    }

    /// One tiny extraction through `setup` as the form holds it (nothing is saved): the
    /// request, the answer and how long it took. An endpoint's `/models` is asked first and
    /// read by the rule both setups save by ([`EndpointCheck::rule`]): a model it does not list
    /// is refused unless `model_unlisted`, a key it refuses is refused; a server that cannot be
    /// reached is not probed, and the doctor says so (a setup may still save it).
    pub fn recall_extract_test(
        &self,
        setup: &ExtractSetup,
        model_unlisted: bool,
    ) -> Result<recall::extract::ExtractDoctor> {
        let config = self.config_with(setup)?;
        self.doctor_of(&config, Some(model_unlisted))
    }

    /// What is wrong with `var` as the name of the variable holding an API key, in words that
    /// never repeat a key pasted in its place (doctor's check); `None` for a name or nothing.
    /// A front door says it with the name of its own field or flag.
    pub fn api_key_env_problem(var: &str) -> Option<String> {
        llm::endpoint::key_variable_problem(var)
    }

    /// Which of a setup's endpoint and model holds what reads as a key or a token (`"endpoint"`
    /// or `"model"`), and why it is refused, in words that never repeat it; `None` when neither
    /// does. The checks a save and a test request make first; a front door says it with the
    /// name of its own field or flag before it prints or sends anything.
    pub fn setup_key_problem(endpoint: &str, model: &str) -> Option<(&'static str, String)> {
        if endpoint_holds_a_key(endpoint) {
            return Some((
                "endpoint",
                "holds what looks like a key or a token (in the user part, the path or the query): give the server's base URL alone; Cairn keeps no key in config.toml, so export the key in an environment variable and give that variable's name (e.g. OPENAI_API_KEY), never the key itself".into(),
            ));
        }
        if model_holds_a_key(model) {
            return Some((
                "model",
                "looks like a key or a token, not a model's name: Cairn keeps no key in config.toml and sends the model's name with every request, so export the key in an environment variable and give that variable's name (e.g. OPENAI_API_KEY), never the key itself".into(),
            ));
        }
        None
    }

    /// `[insights]` with `endpoint` in it, checked as reports would read it (not saved): the
    /// transport policy, the key variable set.
    fn insights_with(&self, e: &InsightsEndpoint) -> Result<llm::EndpointGenerator> {
        check_insights(e)?;
        let path = self.config_path();
        let (_, config) = self.edited_config(
            |text| crate::config::write_insights_endpoint(text, Some(e)),
            |_| Ok(()),
        )?;
        crate::insights::endpoint::from_config(&config.insights, &path)?.ok_or_else(|| {
            Error::Invalid("an [insights] endpoint needs an endpoint and a model".into())
        })
    }

    /// Ask the endpoint `e` names for its models (one request, nothing else sent, nothing
    /// saved) and read the answer by the rule both setups save by ([`EndpointCheck::rule`]):
    /// a model it does not list is refused unless `model_unlisted`, a key it refuses is
    /// refused; a server that does not answer with a list is a check that could not be made,
    /// said by [`EndpointCheck::note`], not an error.
    pub fn insights_endpoint_test(
        &self,
        e: &InsightsEndpoint,
        model_unlisted: bool,
    ) -> Result<EndpointCheck> {
        let mut generator = self.insights_with(e)?;
        generator.client_mut().retry.max_attempts = 1;
        let check = endpoint_check(generator.client(), &e.model);
        check.rule(model_unlisted)?;
        Ok(check)
    }

    /// Write `[insights]`' endpoint, model and key variable (`None` takes them out: reports go
    /// to an agent CLI), atomically with comments and every other key kept. An endpoint that
    /// would not load or that the transport policy refuses is not written.
    pub fn save_insights_endpoint(
        &self,
        e: Option<&InsightsEndpoint>,
    ) -> Result<crate::config::InsightsConfig> {
        if let Some(e) = e {
            check_insights(e)?;
        }
        let path = self.config_path();
        let config = self.edit_config(
            |text| crate::config::write_insights_endpoint(text, e),
            |config| crate::insights::endpoint::from_config(&config.insights, &path).map(|_| ()),
        )?;
        Ok(config.insights)
    }

    /// The scheduling policy of the configured extraction (for a daemon's
    /// [`recall::extract::schedule::Scheduler`]); `None` when extraction is disabled.
    pub fn recall_extract_schedule_policy(
        &self,
    ) -> Result<Option<recall::extract::schedule::Policy>> {
        let settings = self.extract_settings()?;
        Ok(settings
            .enabled
            .then(|| recall::extract::schedule::Policy::from_settings(&settings)))
    }
}

impl Cairn {
    /// The generators at hand (agent CLIs on `PATH`, servers on their usual loopback ports,
    /// API-key variables by name); nothing is sent anywhere but loopback.
    pub fn recall_extract_detect(&self) -> Vec<llm::detect::DetectedGenerator> {
        llm::detect::detect(&llm::detect::Probe::from_env())
    }

    /// Run `binary` for the agent CLI `agent` (a generator: `claude`, `codex`, `gemini`,
    /// `copilot`) instead of its name looked up on `PATH` (`[agent.<agent>] binary`, written
    /// with comments and every other key kept); an empty `binary` goes back to `PATH`. It must
    /// name an executable file by an absolute path, or nothing is written. Reports and
    /// extraction read it from the archive opened next (the desktop reopens it).
    pub fn set_agent_binary(&self, agent: &str, binary: &str) -> Result<()> {
        if !crate::config::GENERATOR_AGENTS.contains(&agent) {
            return Err(Error::Invalid(format!(
                "unknown agent {:?}: pick claude, codex, gemini or copilot",
                crate::text::one_line(agent, 40)
            )));
        }
        let binary = binary.trim();
        if !binary.is_empty() {
            let path = std::path::Path::new(binary);
            let runnable = path.is_absolute()
                && std::fs::metadata(path).is_ok_and(|meta| {
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt as _;
                        meta.is_file() && meta.permissions().mode() & 0o111 != 0
                    }
                    #[cfg(not(unix))]
                    {
                        meta.is_file()
                    }
                });
            if !runnable {
                return Err(Error::Invalid(format!(
                    "{} is no program Cairn can run: give the full path of the {agent} executable (`which {agent}` in a terminal prints it)",
                    crate::text::one_line(binary, 200)
                )));
            }
        }
        self.edit_config(
            |text| crate::config::write_agent_binary(text, agent, binary),
            |_| Ok(()),
        )?;
        Ok(())
    }
}

/// The one `/models` request a setup makes of its server (one attempt, as the client given
/// allows), read for `model`: what [`EndpointCheck::rule`] decides on.
fn endpoint_check(client: &llm::Client, model: &str) -> EndpointCheck {
    let model = model.trim().to_owned();
    EndpointCheck {
        listing: ModelListing::of(client.models(), &model),
        endpoint: client.endpoint(),
        model,
    }
}

/// What the form may write: a known generator, an endpoint and a model for an endpoint, a
/// variable *name* (never a key), no control characters.
fn check_setup(setup: &ExtractSetup) -> Result<()> {
    let bad = |m: String| Err(Error::Invalid(m));
    let generator = setup.generator.trim();
    let agent = generator != "endpoint";
    if agent && !crate::config::GENERATOR_AGENTS.contains(&generator) {
        return bad(format!(
            "unknown generator {:?}: pick endpoint, claude, codex, gemini or copilot",
            crate::text::one_line(generator, 40)
        ));
    }
    check_fields(&setup.endpoint, &setup.model, &setup.api_key_env)?;
    if !agent && setup.endpoint.trim().is_empty() {
        return bad(
            "the endpoint is empty: type the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 for Ollama".into(),
        );
    }
    if !agent && setup.model.trim().is_empty() {
        return bad(
            "the model is empty: name a model the server serves (the list shows what it offers)"
                .into(),
        );
    }
    let var = setup.api_key_env.trim();
    if !var.is_empty() {
        let looks_like_a_name = var
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        // Doctor's check too: a long hex run is a valid name by its characters alone.
        if !looks_like_a_name
            || Cairn::api_key_env_problem(var).is_some()
            || !crate::archive::redact::Redactor::global()
                .scan_text(var)
                .is_empty()
        {
            return bad(
                "the API key variable must be the *name* of an environment variable (such as OPENAI_API_KEY), never the key itself: Cairn keeps no key in config.toml".into(),
            );
        }
    }
    Ok(())
}

/// What any generator setup may hold: each field on one line and of a sane length.
fn check_fields(endpoint: &str, model: &str, api_key_env: &str) -> Result<()> {
    for (field, v, max) in [
        ("endpoint", endpoint, 2048),
        ("model", model, 200),
        ("API key variable", api_key_env, 100),
    ] {
        if v.chars().any(char::is_control) {
            return Err(Error::Invalid(format!(
                "the {field} contains a control character (a newline, a tab, …): type it on one line"
            )));
        }
        if v.len() > max {
            return Err(Error::Invalid(format!(
                "the {field} is longer than {max} characters"
            )));
        }
    }
    // Both are written to config.toml as typed and go out with each request (the model in
    // its body, the endpoint as its URL): a key in either would leak both ways.
    if let Some((field, why)) = Cairn::setup_key_problem(endpoint, model) {
        return Err(Error::Invalid(format!("the {field} {why}")));
    }
    Ok(())
}

/// A hex run as long as a key (Azure's are 32 digits): the redactor's rules leave a bare one
/// alone, since hashes and ids look the same in a transcript, but no model's name or query
/// value is one.
fn is_hex_key(word: &str) -> bool {
    word.len() >= 32 && word.chars().all(|c| c.is_ascii_hexdigit())
}

/// Whether `url` carries a key: a secret's definite shape anywhere in it (`sk-proj-…`,
/// `ghp_…`, `user:password@`), or anything the redactor only suspects (a random-looking run, a
/// `key=` pair) in the user part or the query, where keys are put and names are not. A
/// suspect run in the path is let be: account and deployment ids live there, and the path is
/// never shown unredacted.
fn endpoint_holds_a_key(url: &str) -> bool {
    use crate::archive::redact::{Confidence, Redactor};
    let url = url.trim();
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[after_scheme..]
        .find(['/', '?'])
        .map_or(url.len(), |i| after_scheme + i);
    let user_end = url[after_scheme..authority_end]
        .rfind('@')
        .map_or(after_scheme, |i| after_scheme + i);
    let query_start = url.find('?').unwrap_or(url.len());
    Redactor::global().scan_text(url).iter().any(|f| {
        f.confidence == Confidence::Definite
            || (f.start >= after_scheme && f.start < user_end)
            || f.end > query_start
    }) || url[query_start..].split(['?', '&', '=']).any(is_hex_key)
}

/// Whether `model` carries a key: a secret's definite shape anywhere in it, or a run the
/// redactor only suspects that is a whole word of it. Part of a word is let be: long names
/// such as `hf.co/unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL` read as random in places.
fn model_holds_a_key(model: &str) -> bool {
    use crate::archive::redact::{Confidence, Redactor};
    let model = model.trim();
    let whole_word = |start: usize, end: usize| {
        model
            .get(..start)
            .is_some_and(|before| before.is_empty() || before.ends_with(char::is_whitespace))
            && model
                .get(end..)
                .is_some_and(|after| after.is_empty() || after.starts_with(char::is_whitespace))
    };
    Redactor::global()
        .scan_text(model)
        .iter()
        .any(|f| f.confidence == Confidence::Definite || whole_word(f.start, f.end))
        || model.split_whitespace().any(is_hex_key)
}

/// What `[insights]` may be given: an endpoint and a model, a variable *name*, the checks an
/// extraction setup has (the key variable as doctor checks it).
fn check_insights(e: &InsightsEndpoint) -> Result<()> {
    check_fields(&e.endpoint, &e.model, &e.api_key_env)?;
    if e.endpoint.trim().is_empty() || e.model.trim().is_empty() {
        return Err(Error::Invalid(
            "an [insights] endpoint needs both the server's OpenAI-compatible base URL and the model to ask".into(),
        ));
    }
    if let Some(why) = Cairn::api_key_env_problem(&e.api_key_env) {
        return Err(Error::Invalid(format!("the API key variable {why}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Azure key (32 hex digits) is a valid variable name by its characters alone: doctor's
    /// check refuses it where a variable's name goes, and so does a setup's.
    #[test]
    fn a_hex_key_where_the_variable_name_goes_is_refused() {
        let setup = ExtractSetup {
            generator: "endpoint".into(),
            endpoint: "https://llm.example.com/v1".into(),
            model: "m".into(),
            api_key_env: "a3f9c1d2e4b5a6c7d8e9f0a1b2c3d4e5".into(),
            ..Default::default()
        };
        let err = check_setup(&setup).map_err(|e| e.to_string()).unwrap_err();
        assert!(err.contains("never the key itself"), "{err}");
        let named = ExtractSetup {
            api_key_env: "AZURE_OPENAI_KEY".into(),
            ..setup
        };
        assert!(check_setup(&named).is_ok());
    }

    /// A key pasted into the endpoint (its user part, path or query) or the model is refused
    /// by the field's name, never repeated; the long, random-looking names real servers use
    /// pass.
    #[test]
    fn a_key_in_the_endpoint_or_the_model_is_refused_by_its_field() {
        let openai = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx";
        let github = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
        let aws = "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let bare = "Xk29fLq8Zr7TnB4vWc1Ym6Hd3Pg0Ja5s";
        let azure = "a3f9c1d2e4b5a6c7d8e9f0a1b2c3d4e5";
        let url = "http://127.0.0.1:9/v1";
        let refused = |endpoint: &str, model: &str, field: &str, secret: &str| {
            let err = check_fields(endpoint, model, "")
                .map_err(|e| e.to_string())
                .unwrap_err();
            assert!(err.starts_with(&format!("the {field} ")), "{err}");
            assert!(err.contains("never the key itself"), "{err}");
            assert!(!err.contains(&secret[..10]), "{err}");
        };
        for key in [openai, github, aws, bare, azure] {
            refused(url, key, "model", key);
            refused(url, &format!(" {key} "), "model", key);
        }
        refused(url, &format!("gpt-4o {bare}"), "model", bare);
        for (endpoint, secret) in [
            (format!("{url}?key={github}"), github),
            (format!("{url}?token={bare}"), bare),
            (format!("{url}?api_key={bare}"), bare),
            (
                format!("{url}?api-version=2024-08-01-preview&key={azure}"),
                azure,
            ),
            (format!("http://127.0.0.1:9/{openai}/v1"), openai),
            (format!("http://user:{github}@127.0.0.1:9/v1"), github),
            (
                "http://user:hunter2pass@127.0.0.1:9/v1".to_owned(),
                "hunter2pass",
            ),
        ] {
            refused(&endpoint, "m", "endpoint", secret);
        }
        // The desktop's Test and Save and both commands go through these.
        let setup = ExtractSetup {
            generator: "claude".into(),
            model: github.into(),
            ..Default::default()
        };
        assert!(check_setup(&setup).is_err());
        let insights = InsightsEndpoint {
            endpoint: format!("{url}?key={github}"),
            model: "m".into(),
            ..Default::default()
        };
        assert!(check_insights(&insights).is_err());
        for (endpoint, model) in [
            (
                "https://my-res.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-08-01-preview",
                "gpt-4o",
            ),
            (
                "https://gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/my-gw/openai",
                "@cf/meta/llama-3.1-8b-instruct",
            ),
            (
                "http://127.0.0.1:11434/v1",
                "hf.co/unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL",
            ),
            (
                "http://127.0.0.1:1234/v1",
                "lmstudio-community/Qwen2.5-7B-Instruct-GGUF/Qwen2.5-7B-Instruct-Q4_K_M.gguf",
            ),
            (
                "https://api.openai.com/v1",
                "ft:gpt-4o-mini-2024-07-18:my-org:custom-suffix:9aBcDeFgHiJkLmNo",
            ),
            (
                "https://api.example.com/v1",
                "owner/model:5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa",
            ),
            (
                "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1",
                "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
            ),
        ] {
            assert!(
                check_fields(endpoint, model, "").is_ok(),
                "{endpoint} {model}"
            );
        }
    }
}
