//! Cairn's desktop shell: one window over the `cairn-core` facade.
//!
//! The shell holds no business logic. [`commands`] are thin typed wrappers over
//! [`cairn_core::Cairn`]; [`specta_builder`] is the single list of them, shared by the app, the
//! TypeScript bindings export (`ui/src/lib/bindings.ts`) and the mock-runtime tests, so the three
//! cannot drift apart.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod agents;
pub mod backend;
pub mod commands;
pub mod correct;
pub mod events;
pub mod export;
pub mod extract;
pub mod forget;
pub mod insights;
pub mod links;
pub mod mcp;
pub mod meaning;
pub mod pull;
pub mod recall;
pub mod reindex;
pub mod report;
pub mod team;
pub mod watcher;

use std::borrow::Cow;
use std::path::Path;

use tauri::Runtime;

/// Where the generated bindings live, relative to the repository root.
pub const BINDINGS_PATH: &str = "ui/src/lib/bindings.ts";

/// Every command and event of the window. Add a command here, in `build.rs` (its permission)
/// and in `capabilities/default.json` (the grant).
///
/// `u64` token counts (`TokenUsage`) are exported as TypeScript `number`: specta refuses
/// bigint-style integers by default, and no token count comes near 2^53.
// Generic commands name `tauri::Wry` only for specta, which reads their argument types (the
// `AppHandle` is not one of them); Tauri's handler infers the runtime `R` itself.
pub fn specta_builder<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(tauri_specta::collect_commands![
            commands::app_info,
            commands::app_ready::<tauri::Wry>,
            commands::reopen_archive::<tauri::Wry>,
            commands::list_sessions,
            commands::agent_counts,
            commands::list_branches,
            commands::skim_branch,
            commands::session_detail,
            commands::session_timeline,
            commands::session_resume,
            commands::turn_records,
            commands::record_turn,
            commands::search_archive,
            commands::why,
            commands::sync_archive::<tauri::Wry>,
            commands::source_dirs,
            commands::set_source_dirs::<tauri::Wry>,
            commands::hook_overview,
            commands::install_hook,
            commands::uninstall_hook,
            mcp::mcp_overview,
            mcp::install_mcp,
            mcp::uninstall_mcp,
            commands::privacy_preview,
            commands::doctor,
            recall::recall_list,
            recall::recall_stats,
            recall::recall_vocabulary,
            recall::recall_query,
            recall::recall_inbox,
            recall::recall_accept,
            recall::recall_unaccept,
            recall::recall_reject,
            recall::recall_restore,
            recall::recall_supersede,
            recall::recall_proposal,
            recall::recall_merge,
            recall::recall_check_stale,
            recall::recall_for_session,
            recall::recall_agent_usage,
            insights::insight_templates,
            insights::insight_preview,
            insights::insight_generate::<tauri::Wry>,
            insights::insight_list,
            insights::insight_get,
            insights::insight_html,
            insights::insight_star,
            insights::insight_rename,
            insights::insight_delete,
            insights::insight_export,
            export::session_export,
            forget::forget_preview,
            forget::forget_sessions::<tauri::Wry>,
            reindex::reindex_archive::<tauri::Wry>,
            correct::correct_link::<tauri::Wry>,
            pull::pull_teammates::<tauri::Wry>,
            extract::extract_status,
            extract::extract_doctor,
            extract::extract_detect,
            extract::extract_setup,
            extract::extract_test,
            extract::extract_preview,
            extract::extract_save::<tauri::Wry>,
            agents::agent_programs,
            agents::set_agent_program,
            extract::extract_start::<tauri::Wry>,
            extract::extract_stop,
            meaning::meaning_status,
            meaning::meaning_build::<tauri::Wry>,
            team::team_status,
            team::team_save,
            team::team_test,
            team::team_push::<tauri::Wry>,
            team::team_remember,
            team::team_forget,
            team::team_init,
            team::team_grant,
            team::team_revoke,
            team::team_search,
            team::team_skim,
            team::team_show,
        ])
        .events(tauri_specta::collect_events![
            events::SyncProgress,
            events::ArchiveChanged,
            events::LiveCapture,
            events::InsightProgress,
            events::OpenLink,
            events::LinkRefused,
            extract::ExtractProgress,
            extract::ExtractFinished,
            meaning::MeaningProgress,
            meaning::MeaningFinished,
            team::TeamPushProgress
        ])
        .dangerously_cast_bigints_to_number()
}

/// Write the TypeScript bindings for [`specta_builder`] to `path`.
pub fn export_bindings(path: &Path) -> Result<(), String> {
    let typescript = specta_typescript::Typescript::default()
        .header("// Generated by src-tauri (cargo test -p cairn-desktop). Do not edit.");
    specta_builder::<tauri::Wry>()
        .export(Renamed(typescript), path)
        .map_err(|e| format!("cannot export bindings to {}: {e}", path.display()))
}

/// Core types whose names clash in the one flat TypeScript file: (module path prefix, Rust
/// name, TypeScript name). The doctor's `Status` and git's `Evidence` keep their names; Recall's
/// take a prefix. A new clash fails `export_bindings_test` with specta's duplicate-name error.
const RENAMES: &[(&str, &str, &str)] = &[
    ("cairn_core::recall", "Status", "RecallStatus"),
    ("cairn_core::recall", "Evidence", "RecallEvidence"),
];

/// The TypeScript exporter over the builder's types with [`RENAMES`] applied.
struct Renamed(specta_typescript::Typescript);

impl tauri_specta::LanguageExt for Renamed {
    type Error = specta_typescript::Error;

    fn export(
        self,
        cfg: &tauri_specta::BuilderConfiguration,
        path: &Path,
    ) -> Result<(), Self::Error> {
        let mut cfg = cfg.clone();
        cfg.types.iter_mut(|ndt| {
            if let Some((_, _, to)) = RENAMES
                .iter()
                .find(|(module, from, _)| ndt.name == *from && ndt.module_path.starts_with(module))
            {
                ndt.name = Cow::Borrowed(to);
            }
        });
        self.0.export(&cfg, path)
    }
}

/// Start the desktop app. Returns when the last window closes.
///
/// A `cairn://…` argument (`cairn-desktop 'cairn://session/<key>?record=12'`) is handed to the
/// window, which opens it first; started again on the same archive, the app hands the new
/// argument to this window instead and exits; see [`links`].
pub fn run() {
    webkit_environment();
    startup_trace("main");
    let builder = specta_builder::<tauri::Wry>();
    let launch = links::from_args(std::env::args().skip(1));
    if let Some(why) = launch.refusal() {
        eprintln!("cairn-desktop: the link given was not opened: {why}");
    }

    // Debug builds refresh the bindings at start-up, so `tauri dev` picks up a changed command
    // without a test run. Only a binary run from its own checkout's target folder does: a copy
    // run elsewhere (an older build kept to compare) would write its stale types over the
    // checkout's. This never stops the app: a read-only checkout just keeps its file.
    #[cfg(debug_assertions)]
    {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let path = checkout.join(BINDINGS_PATH);
        let built_here = std::env::current_exe()
            .and_then(|exe| Ok((exe.canonicalize()?, checkout.join("target").canonicalize()?)))
            .is_ok_and(|(exe, target)| exe.starts_with(target));
        if built_here
            && path.parent().is_some_and(Path::exists)
            && let Err(message) = export_bindings(&path)
        {
            eprintln!("cairn-desktop: {message}");
        }
    }

    let backend = backend::Backend::from_env(launch);
    if let Err(message) = backend.cairn() {
        // The window says it too; on stderr it also stops scripts/measure-startup.sh from timing
        // an error page.
        eprintln!("cairn-desktop: cannot open the archive: {message}");
    }
    startup_trace("archive opened");
    // First among the plugins: a second launch on the same archive hands its arguments to the
    // running window here and exits before the rest of the setup runs. Without a D-Bus session
    // bus the plugin finds no other instance and the app starts normally.
    let mut single_instance = tauri_plugin_single_instance::Builder::new()
        .callback(|app, argv, _cwd| links::hand_off(app, argv));
    if let Some(dir) = backend.data_dir() {
        single_instance = single_instance.dbus_id(instance_id(dir));
    }
    let result = tauri::Builder::default()
        .plugin(single_instance.build())
        .manage(backend)
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            startup_trace("setup");
            builder.mount_events(app);
            use tauri::Manager as _;
            if let Ok(resources) = app.path().resource_dir() {
                app.state::<backend::Backend>().set_resource_dir(resources);
            }
            Ok(())
        })
        .on_page_load(|_, payload| {
            let event = match payload.event() {
                tauri::webview::PageLoadEvent::Started => "page load started",
                tauri::webview::PageLoadEvent::Finished => "page load finished",
            };
            startup_trace(event);
        })
        .run(tauri::generate_context!());
    if let Err(error) = result {
        eprintln!("cairn-desktop: cannot start the window: {error}");
        std::process::exit(1);
    }
}

/// The single-instance name of the archive in `data_dir` (the plugin adds `.SingleInstance`):
/// one window per archive, so a second archive (`CAIRN_DATA_DIR`, the end-to-end tests) still
/// gets its own window. D-Bus name elements are letters, digits, `_` and `-`, not starting with a
/// digit.
pub fn instance_id(data_dir: &Path) -> String {
    use sha2::{Digest as _, Sha256};
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let digest = Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("dev.cairn.desktop.archive_{hex}")
}

/// WebKitGTK settings that exist only as environment variables, set before GTK starts and before
/// this process has a second thread (the one moment changing the environment is sound). A
/// variable the user set is kept (`WEBKIT_DISABLE_COMPOSITING_MODE=0` turns compositing back on).
///
/// - Compositing off: the web process paints the page with the CPU instead of compositing layers
///   with OpenGL. A window of lists and text has nothing to gain from the GPU, and the web process
///   is 77 MB smaller (252 → 175 MB under Xvfb, where GL is Mesa's llvmpipe), with no GL frame
///   between the first data and its paint.
/// - No DMA-BUF renderer and no render device: with compositing off the web process hands the
///   window CPU-painted bitmaps, so the GPU buffer transport and the DRM render node it would pick
///   have no use. Left to itself WebKit still opens an EGL display in this process to find that
///   node, which loads the whole GL driver (50 MB of Mesa and LLVM under Xvfb) into the app.
/// - GTK's GL off (`GDK_GL=disable`): the window draws nothing with GL itself, but GDK probes GLX
///   for its visuals when it opens the display, which loads the same driver.
///
/// Figures: `scripts/measure-startup.sh`, bench/NOTES.md.
/// `CAIRN_WEBKIT_DEFAULTS=1` leaves WebKit's own defaults alone (the end-to-end tests use it:
/// WebKitWebDriver's first screenshot of a window started this way times out under Xvfb).
fn webkit_environment() {
    // Not a WebKit setting, but it must be set at the same moment: see
    // `cairn_core::semantic::embed::thread_env_default`.
    #[cfg(target_os = "linux")]
    if let Some((name, value)) = cairn_core::semantic::embed::thread_env_default()
        && let Err(error) = glib::setenv(name, value, false)
    {
        eprintln!("cairn-desktop: cannot set {name}: {error}");
    }
    if std::env::var_os("CAIRN_WEBKIT_DEFAULTS").is_some_and(|v| v == "1") {
        return;
    }
    #[cfg(target_os = "linux")]
    for (name, value) in [
        ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
        ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
        ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
        ("GDK_GL", "disable"),
    ] {
        if let Err(error) = glib::setenv(name, value, false) {
            eprintln!("cairn-desktop: cannot set {name}: {error}");
        }
    }
}

/// With `CAIRN_STARTUP_TRACE` set, print when a start-up milestone is reached (wall-clock
/// milliseconds, so `scripts/measure-startup.sh` can subtract the time it started the process).
pub fn startup_trace(milestone: &str) {
    if std::env::var_os("CAIRN_STARTUP_TRACE").is_some() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        eprintln!("cairn-desktop: {milestone} at {now} ms");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use tauri::Manager as _;
    use tauri::test::{INVOKE_KEY, MockRuntime, mock_builder, mock_context, noop_assets};
    use tauri::webview::{InvokeRequest, WebviewWindowBuilder};

    fn mock_app(backend: backend::Backend) -> tauri::App<MockRuntime> {
        let builder = specta_builder::<MockRuntime>();
        let app = mock_builder()
            .manage(backend)
            .invoke_handler(builder.invoke_handler())
            .build(mock_context(noop_assets()))
            .expect("mock app builds");
        builder.mount_events(&app);
        WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .expect("mock window builds");
        app
    }

    /// The causes of the `archive-changed` events the window hears, as they arrive.
    fn archive_changes(
        app: &tauri::App<MockRuntime>,
    ) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
        use tauri::Listener as _;
        let causes = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let seen = causes.clone();
        app.listen("archive-changed", move |event| {
            let v: Value = serde_json::from_str(event.payload()).unwrap();
            seen.lock()
                .unwrap()
                .push(v["cause"].as_str().unwrap().to_owned());
        });
        causes
    }

    fn invoke(app: &tauri::App<MockRuntime>, cmd: &str, body: Value) -> Result<Value, Value> {
        let webview = app.get_webview_window("main").expect("the main window");
        tauri::test::get_ipc_response(
            &webview,
            InvokeRequest {
                cmd: cmd.into(),
                callback: tauri::ipc::CallbackFn(0),
                error: tauri::ipc::CallbackFn(1),
                url: "tauri://localhost".parse().unwrap(),
                body: tauri::ipc::InvokeBody::Json(body),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|body| body.deserialize::<Value>().unwrap())
    }

    /// A `config.toml` that does not load keeps the archive shut (the window would otherwise
    /// sync on defaults, reading agents the person turned off); once the person corrects it,
    /// Retry opens the archive without restarting the app, and goes live.
    #[test]
    fn a_corrected_config_opens_the_archive_on_retry() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let config = data.join("config.toml");
        std::fs::write(&config, "[sources.claude]\ndirs = 3\n").unwrap();
        let app = mock_app(backend::Backend::open(data.clone()));
        let refused = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap_err();
        assert_eq!(refused["kind"], "config", "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains(&*config.to_string_lossy()),
            "{refused}"
        );
        // Still broken: Retry says so again.
        let again = invoke(&app, "reopen_archive", json!({})).unwrap_err();
        assert_eq!(again["kind"], "config", "{again}");

        let claude = dir.path().join("claude");
        std::fs::create_dir_all(&claude).unwrap();
        let corrected = format!(
            "[sources.claude]\ndirs = [{:?}]\n",
            claude.to_string_lossy()
        );
        std::fs::write(&config, corrected).unwrap();
        let live = invoke(&app, "reopen_archive", json!({})).unwrap();
        let watching = live["watching"].as_array().unwrap();
        assert!(
            watching.contains(&json!(claude.to_string_lossy())),
            "{live}"
        );
        let sessions = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap();
        assert_eq!(sessions, json!([]));
        // An open archive is kept: a second Retry changes nothing.
        invoke(&app, "reopen_archive", json!({})).unwrap();
        assert_eq!(
            invoke(&app, "list_sessions", json!({ "query": {} })).unwrap(),
            json!([])
        );
    }

    #[test]
    fn list_sessions_of_a_new_archive_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let app = mock_app(backend::Backend::open(dir.path().join("data")));
        let sessions = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap();
        assert_eq!(sessions, json!([]));
    }

    #[test]
    fn list_sessions_accepts_every_filter() {
        let dir = tempfile::tempdir().unwrap();
        let app = mock_app(backend::Backend::open(dir.path().join("data")));
        let query = json!({ "query": { "agent": "codex", "branch": "main", "limit": 50 } });
        assert!(invoke(&app, "list_sessions", query).unwrap().is_array());
    }

    #[test]
    fn a_bad_query_is_an_error_message_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let app = mock_app(backend::Backend::open(dir.path().join("data")));
        let error = invoke(
            &app,
            "list_sessions",
            json!({ "query": { "agent": "emacs" } }),
        );
        let message = error.unwrap_err();
        assert!(
            message.as_str().is_some_and(|m| m.contains("emacs")),
            "{message}"
        );
    }

    /// Settings → Team writes `[team]` into config.toml (comments kept), reads it back with
    /// whether the password variable is set (never its value), and refuses what is not a
    /// variable's name.
    #[test]
    fn team_settings_write_config_toml_and_never_a_password() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            data.join("config.toml"),
            "# my settings\n[sources.claude]\nenabled = true\n",
        )
        .unwrap();
        let app = mock_app(backend::Backend::open(data.clone()));
        let status = invoke(&app, "team_status", json!({})).unwrap();
        assert_eq!(status["setup"]["host"], "");
        assert_eq!(status["last_push"], Value::Null);
        let setup = json!({ "host": "127.0.0.1", "port": 5433, "database": "team", "user": "alice", "password_env": "PATH" });
        let saved = invoke(&app, "team_save", json!({ "setup": setup })).unwrap();
        assert_eq!(saved, setup);
        let text = std::fs::read_to_string(data.join("config.toml")).unwrap();
        assert!(text.starts_with("# my settings"), "{text}");
        assert!(
            text.contains("[team]") && text.contains("password_env = \"PATH\""),
            "{text}"
        );
        let status = invoke(&app, "team_status", json!({})).unwrap();
        assert_eq!(status["setup"], setup);
        assert_eq!(status["password_var"], "PATH");
        assert_eq!(status["password_set"], true);
        let path = std::env::var("PATH").unwrap();
        assert!(
            !status.to_string().contains(&path),
            "the variable's value left the backend"
        );
        // A password typed where the variable's name goes is refused, not written, not repeated.
        let typed = json!({ "host": "127.0.0.1", "port": null, "database": "team", "user": "alice", "password_env": "s3cret pass!" });
        let err = invoke(&app, "team_save", json!({ "setup": typed })).unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
        assert!(err.to_string().contains("password_env"), "{err}");
        assert_eq!(
            std::fs::read_to_string(data.join("config.toml")).unwrap(),
            text
        );
        // Not set up: the Team view's reads say where to set it up.
        let empty =
            json!({ "host": "", "port": null, "database": "", "user": "", "password_env": "" });
        invoke(&app, "team_save", json!({ "setup": empty })).unwrap();
        assert!(
            !std::fs::read_to_string(data.join("config.toml"))
                .unwrap()
                .contains("[team]")
        );
        let err = invoke(&app, "team_search", json!({ "query": "x", "limit": 10 })).unwrap_err();
        assert!(err.to_string().contains("Settings → Team"), "{err}");
    }

    /// A database too damaged to open keeps the archive shut, and the window's errors point at
    /// Settings, not at `cairn doctor`; Settings' checks still run (on nothing: doctor creates
    /// nothing), the archive's saying what is wrong and the way back.
    #[test]
    fn an_archive_that_does_not_open_still_gets_its_checks_and_the_window_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("cairn.db"), "not a database ".repeat(400)).unwrap();
        let app = mock_app(backend::Backend::open(data.clone()));
        let refused = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap_err();
        assert_eq!(refused["kind"], "corrupt", "{refused}");
        let hint = refused["hint"].as_str().unwrap();
        assert!(hint.starts_with("Settings › Data and retention"), "{hint}");
        assert!(!hint.contains("cairn "), "{hint}");
        // The settings that need the archive say the same; the checks run without it.
        assert_eq!(invoke(&app, "source_dirs", json!({})).unwrap_err(), refused);
        let doctor = invoke(&app, "doctor", json!({})).unwrap();
        let checks = doctor["checks"].as_array().unwrap();
        let archive = checks.iter().find(|c| c["name"] == "archive").unwrap();
        assert_eq!(archive["status"], "fail", "{doctor}");
        assert!(
            archive["detail"]
                .as_str()
                .unwrap()
                .contains(&*data.join("cairn.db").to_string_lossy()),
            "{archive}"
        );
        assert!(
            checks.iter().any(|c| c["name"] == "claude source dir"),
            "{doctor}"
        );
        // Doctor created nothing.
        let mut left: Vec<String> = std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["cairn.db"]);
    }

    /// Doctor on an archive that did not open for a reason doctor cannot see (a folder the
    /// user may not write): its archive check says the window's reason, once; a reason doctor
    /// names itself (the config, a damaged database) is left as doctor says it.
    #[test]
    fn the_reason_an_archive_did_not_open_takes_the_archive_check() {
        use cairn_core::doctor::{Check, DoctorReport, Status};
        let check = |name: &str, status: Status| Check {
            name: name.into(),
            status,
            detail: format!("{name} as doctor says it"),
        };
        let report = DoctorReport {
            checks: vec![
                check("config", Status::Ok),
                check("archive", Status::Warn),
                check("claude source dir", Status::Ok),
            ],
        };
        let why = cairn_core::ErrorReport::new(
            cairn_core::ErrorKind::Io,
            "cannot create cairn.db in /d: your user may not write to that folder",
        )
        .with_hint("Make /d writable.");
        let said = commands::unopened(report.clone(), &why);
        assert_eq!(said.checks.len(), 3);
        assert_eq!(said.checks[1].name, "archive");
        assert_eq!(said.checks[1].status, Status::Fail);
        assert_eq!(
            said.checks[1].detail,
            "did not open: cannot create cairn.db in /d: your user may not write to that folder. Make /d writable."
        );
        // No archive check (a doctor that words it otherwise): one is put after the config's.
        let mut without = report.clone();
        without.checks.remove(1);
        let said = commands::unopened(without, &why);
        assert_eq!(said.checks[1].status, Status::Fail);
        assert_eq!(said.checks.len(), 3);
        for kind in [
            cairn_core::ErrorKind::Config,
            cairn_core::ErrorKind::Corrupt,
        ] {
            let mut own = why.clone();
            own.kind = kind;
            assert_eq!(commands::unopened(report.clone(), &own), report);
        }
    }

    #[test]
    fn app_info_names_the_data_dir_and_version() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let app = mock_app(backend::Backend::open(data.clone()));
        let info = invoke(&app, "app_info", json!({})).unwrap();
        assert_eq!(info["data_dir"], json!(data.display().to_string()));
        assert_eq!(info["version"], json!(env!("CARGO_PKG_VERSION")));
        assert_eq!(info["read_only"], json!(false));
        assert_eq!(info["read_only_why"], Value::Null);
    }

    #[test]
    fn the_capability_grants_only_cairns_commands() {
        let text = include_str!("../capabilities/default.json");
        let capability: Value = serde_json::from_str(text).unwrap();
        let mut granted: Vec<&str> = capability["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        granted.sort_unstable();
        let mut expected: Vec<String> = COMMANDS
            .iter()
            .map(|c| format!("allow-{}", c.replace('_', "-")))
            .collect();
        // Listening to the app's own typed events (sync progress, archive changed).
        expected.push("core:event:allow-listen".into());
        expected.push("core:event:allow-unlisten".into());
        expected.sort_unstable();
        assert_eq!(granted, expected);
        assert_eq!(capability["windows"], json!(["main"]));
    }

    /// The commands build.rs declares (so each gets a permission) are exactly the ones the
    /// builder registers.
    #[test]
    fn build_rs_declares_every_registered_command() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bindings.ts");
        export_bindings(&path).unwrap();
        let bindings = std::fs::read_to_string(path).unwrap();
        let mut registered: Vec<&str> = bindings
            .split("__TAURI_INVOKE")
            .skip(2) // the import line
            .filter_map(|call| call.split('"').nth(1))
            .collect();
        registered.sort_unstable();
        let mut declared = COMMANDS.to_vec();
        declared.sort_unstable();
        assert_eq!(registered, declared);
    }

    const COMMANDS: &[&str] = &include!("../commands.in");

    /// docs/SECURITY.md's "What the window can call" has one row per command of `commands.in`
    /// (and no other), each saying what it touches: a new command cannot ship undocumented.
    #[test]
    fn security_md_lists_every_command() {
        let text = include_str!("../../docs/SECURITY.md");
        let table = text
            .split("<!-- window-commands: begin -->")
            .nth(1)
            .and_then(|rest| rest.split("<!-- window-commands: end -->").next())
            .expect("SECURITY.md has the window-commands table");
        let mut documented: Vec<&str> = Vec::new();
        for row in table.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            let name = cells[0].trim_matches('`');
            assert_eq!(
                cells.len(),
                4,
                "{name}: command, archive, files, processes: {row}"
            );
            assert!(
                cells.iter().all(|c| !c.is_empty()),
                "{name}: an empty cell: {row}"
            );
            documented.push(name);
        }
        let mut unique = documented.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), documented.len(), "a command has two rows");
        let mut declared = COMMANDS.to_vec();
        declared.sort_unstable();
        assert_eq!(unique, declared, "SECURITY.md rows vs commands.in");
    }

    /// A second launch's arguments reach the running window as one `open-link` event carrying the
    /// first valid link; hostile arguments send a `link-refused` event saying why, never the
    /// link. Either is also what a window still starting reads from `app_info`.
    #[test]
    fn a_second_launch_hands_its_link_to_the_running_window() {
        use tauri::Listener as _;
        let dir = tempfile::tempdir().unwrap();
        let app = mock_app(backend::Backend::open(dir.path().join("data")));
        let record = |name: &str| {
            let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
            let sink = seen.clone();
            app.listen(name.to_owned(), move |event| {
                sink.lock()
                    .unwrap()
                    .push(serde_json::from_str(event.payload()).unwrap());
            });
            seen
        };
        let opened = record("open-link");
        let refused = record("link-refused");
        let exe = "/usr/bin/cairn-desktop".to_owned();
        let argv = |args: &[&str]| {
            std::iter::once(exe.clone())
                .chain(args.iter().map(|a| (*a).to_owned()))
                .collect::<Vec<_>>()
        };
        let info = |field: &str| invoke(&app, "app_info", json!({})).unwrap()[field].clone();
        let link = "cairn://session/sha256-00112233445566778899aabbccddeeff?record=3";
        // A plain second start, and one with flags only: the window is raised, nothing more.
        links::hand_off(app.handle(), argv(&[]));
        links::hand_off(app.handle(), argv(&["--automation"]));
        assert!(refused.lock().unwrap().is_empty());
        assert_eq!(info("launch_refused"), Value::Null);
        // Hostile ones: nothing navigates; the window hears why the first was refused.
        let long = format!("cairn://search?q={}", "x".repeat(5000));
        const CHARACTER: &str =
            "it holds a space, a control or a non-ASCII character (those must be %-escaped)";
        for (args, why) in [
            (vec!["cairn://search?q=a b"], CHARACTER),
            (
                vec!["cairn://search?q=\u{1b}]52;c;cHduZWQ=\u{7}"],
                CHARACTER,
            ),
            (vec!["cairn://settings\u{202e}"], CHARACTER),
            (
                vec!["cairn://evil.example/session"],
                "it names no place in Cairn",
            ),
            (
                vec!["https://example.com", "cairn://nowhere"],
                "it is not a cairn:// link",
            ),
            (vec![long.as_str()], "it is longer than 2048 bytes"),
        ] {
            refused.lock().unwrap().clear();
            links::hand_off(app.handle(), argv(&args));
            assert_eq!(
                *refused.lock().unwrap(),
                [json!({ "reason": why })],
                "{args:?}"
            );
            assert_eq!(info("launch_refused"), why);
        }
        assert!(opened.lock().unwrap().is_empty());
        assert_eq!(info("launch_link"), Value::Null);
        // argv[0] is never taken for a link, even when it looks like one.
        links::hand_off(app.handle(), vec!["cairn://settings".to_owned()]);
        refused.lock().unwrap().clear();
        links::hand_off(app.handle(), argv(&["--flag", link, "cairn://settings"]));
        assert_eq!(*opened.lock().unwrap(), [json!({ "link": link })]);
        assert!(refused.lock().unwrap().is_empty());
        assert_eq!(info("launch_link"), link);
        assert_eq!(
            info("launch_refused"),
            Value::Null,
            "the last link is the one that counts"
        );
    }

    /// The first launch's link, refused, reaches the window through `app_info`: why, not what.
    #[test]
    fn a_refused_launch_link_is_named_by_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let hostile = "https://evil.example/\u{202e}";
        let launch = links::from_args([hostile.to_owned()]);
        let app = mock_app(backend::Backend::open(dir.path().join("data")).with_launch(launch));
        let info = invoke(&app, "app_info", json!({})).unwrap();
        assert_eq!(info["launch_link"], Value::Null);
        assert_eq!(info["launch_refused"], "it is not a cairn:// link");
        assert!(!info.to_string().contains("evil"), "{info}");
    }

    #[test]
    fn each_archive_has_its_own_instance_name() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let linked = dir.path().join("link-to-a");
        std::os::unix::fs::symlink(&a, &linked).unwrap();
        let id = instance_id(&a);
        assert_ne!(id, instance_id(&b));
        assert_eq!(
            id,
            instance_id(&linked),
            "the same archive through a symlink"
        );
        // A valid D-Bus name: dot-separated elements of [A-Za-z0-9_-], none starting with a digit.
        assert!(id.len() < 200);
        for element in id.split('.') {
            assert!(!element.is_empty() && !element.starts_with(|c: char| c.is_ascii_digit()));
            assert!(
                element
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
        }
    }

    fn fixture_archive() -> (tempfile::TempDir, backend::Backend) {
        fixture_archive_with("")
    }

    /// A synced archive of one fixture session; `config` is appended to its `config.toml`.
    fn fixture_archive_with(config: &str) -> (tempfile::TempDir, backend::Backend) {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        std::fs::create_dir_all(&claude).unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude");
        let copy = claude.join("short.jsonl");
        std::fs::copy(fixtures.join("short.jsonl"), &copy).unwrap();
        // The fixtures are read-only; agents append to their transcripts.
        let mut permissions = std::fs::metadata(&copy).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        std::fs::set_permissions(&copy, permissions).unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            data.join("config.toml"),
            format!(
                "[sources.claude]\ndirs = [{:?}]\n[sources.codex]\nenabled = false\n{config}",
                claude.display().to_string()
            ),
        )
        .unwrap();
        let backend = backend::Backend::open(data);
        let report = backend
            .cairn()
            .unwrap()
            .sync(
                &cairn_core::SyncOptions::default(),
                &cairn_core::archive::capture::Quiet,
            )
            .unwrap();
        assert!(report.sessions_added > 0, "{report:?}");
        (dir, backend)
    }

    /// Append a person's prompt (`uuid`, `text`) to the fixture archive's transcript, as the
    /// agent would, in the session of its first record.
    fn append_prompt(dir: &Path, uuid: &str, text: &str) {
        let transcript = dir.join("claude/short.jsonl");
        let first: Value = serde_json::from_str(
            std::fs::read_to_string(&transcript)
                .unwrap()
                .lines()
                .nth(1)
                .unwrap(),
        )
        .unwrap();
        let mut line = json!({"type": "user", "uuid": uuid, "timestamp": "2030-01-01T00:00:00Z",
            "message": {"role": "user", "content": text}});
        for field in ["sessionId", "cwd", "version"] {
            line[field] = first[field].clone();
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&transcript)
            .unwrap();
        std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).unwrap();
    }

    #[test]
    fn a_session_opens_from_list_to_timeline_to_turn_to_record_anchor() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let sessions = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap();
        let key = sessions[0]["session_key"].as_str().unwrap().to_owned();

        let timeline = invoke(&app, "session_timeline", json!({ "sessionKey": key })).unwrap();
        let turns = timeline["turns"].as_array().unwrap();
        assert!(!turns.is_empty());
        let turn = &turns[0];
        let records = invoke(
            &app,
            "turn_records",
            json!({ "sessionKey": key, "turnIndex": turn["turn_index"] }),
        )
        .unwrap();
        let first = &records["records"][0];
        let ordinal = first["ordinal"].as_u64().unwrap();
        let located = invoke(
            &app,
            "record_turn",
            json!({ "sessionKey": key, "ordinal": ordinal }),
        )
        .unwrap();
        assert_eq!(located, turn["turn_index"]);
        let missing = invoke(
            &app,
            "record_turn",
            json!({ "sessionKey": key, "ordinal": 999_999 }),
        )
        .unwrap();
        assert_eq!(missing, Value::Null);

        let detail = invoke(&app, "session_detail", json!({ "sessionKey": key })).unwrap();
        assert!(detail["tokens"]["input"].is_u64());
    }

    /// "Belongs here" and "not related" from the skim timeline, a refused target from the
    /// webview, and forgetting: each change of the archive is told to the window.
    #[test]
    fn correcting_a_link_and_forgetting_tell_the_window_the_archive_changed() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let causes = archive_changes(&app);
        let sessions = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap();
        let key = sessions[0]["session_key"].as_str().unwrap().to_owned();
        let target =
            json!({ "kind": "branch", "key": "ref:refs/heads/feature/x", "pr_number": null });
        let linked = invoke(
            &app,
            "correct_link",
            json!({ "sessionKey": key, "target": target, "action": "link", "reason": "planned here" }),
        )
        .unwrap();
        assert_eq!(linked["action"], "link");
        let skim = invoke(
            &app,
            "skim_branch",
            json!({ "targetKey": "feature/x", "includeWeak": true, "repoRoot": null }),
        )
        .unwrap();
        assert_eq!(skim["sessions"][0]["session_key"], key.as_str());
        assert_eq!(skim["sessions"][0]["why_related"][0]["evidence"], "person");
        let unlinked = invoke(
            &app,
            "correct_link",
            json!({ "sessionKey": key, "target": target, "action": "unlink", "reason": null }),
        )
        .unwrap();
        assert_eq!(unlinked["links_removed"], 1);
        let forged =
            json!({ "kind": "branch", "key": "ref:refs/heads/a\u{1b}[31m", "pr_number": null });
        let refused = invoke(
            &app,
            "correct_link",
            json!({ "sessionKey": key, "target": forged, "action": "link", "reason": null }),
        )
        .unwrap_err();
        assert_eq!(refused["kind"], "invalid", "{refused}");
        let request = json!({ "session": key, "project": null, "before": null, "agent": null, "allow_reimport": false });
        // The window forgets what its preview listed: the plan goes back with the request.
        let plan = invoke(&app, "forget_preview", json!({ "request": request })).unwrap();
        invoke(
            &app,
            "forget_sessions",
            json!({ "request": request, "plan": plan }),
        )
        .unwrap();
        assert_eq!(*causes.lock().unwrap(), ["correct", "correct", "forget"]);
    }

    /// Reading the archive again from Settings: a dry run says what would change and changes
    /// nothing; the real one puts the misread prompt right, reports its progress as a sync's,
    /// and tells the window the archive changed; one with nothing to change tells it nothing.
    #[test]
    fn reading_the_archive_again_says_what_changed_and_tells_the_window() {
        use tauri::Listener as _;
        let (dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let causes = archive_changes(&app);
        let phases = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let heard = phases.clone();
        app.listen("sync-progress", move |event| {
            let v: Value = serde_json::from_str(event.payload()).unwrap();
            heard
                .lock()
                .unwrap()
                .push(v["phase"].as_str().unwrap().to_owned());
        });
        // What an older build stored: the person's prompts taken for injected text.
        let db = rusqlite::Connection::open(dir.path().join("data/cairn.db")).unwrap();
        let misread = db
            .execute(
                "UPDATE records SET prompt_source = 'system_injected' WHERE prompt_source = 'human'",
                [],
            )
            .unwrap();
        assert!(misread > 0);
        // Read by this build: nothing to offer. Read by an older one: the window is told.
        let older = || invoke(&app, "app_info", json!({})).unwrap()["sessions_read_before"].clone();
        assert_eq!(older(), 0);
        db.execute("UPDATE sessions SET read_by = 0", []).unwrap();
        assert_eq!(older(), 1);
        let request =
            |dry: bool| json!({ "request": { "session": null, "agent": null, "dry_run": dry } });
        let dry = invoke(&app, "reindex_archive", request(true)).unwrap();
        assert_eq!(dry["dry_run"], true);
        assert!(
            dry["records_changed"].as_u64().unwrap() >= misread as u64,
            "{dry}"
        );
        let human = |db: &rusqlite::Connection| -> i64 {
            db.query_row(
                "SELECT COUNT(*) FROM records WHERE prompt_source = 'human'",
                [],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert_eq!(human(&db), 0, "a dry run changed the archive");
        assert!(causes.lock().unwrap().is_empty());

        let done = invoke(&app, "reindex_archive", request(false)).unwrap();
        assert_eq!(done["sessions_changed"], 1, "{done}");
        assert_eq!(human(&db), misread as i64);
        assert_eq!(*causes.lock().unwrap(), ["reindex"]);
        assert!(phases.lock().unwrap().contains(&"finish".to_owned()));
        assert_eq!(older(), 0, "read again by this build");
        invoke(&app, "reindex_archive", request(false)).unwrap();
        assert_eq!(
            *causes.lock().unwrap(),
            ["reindex"],
            "nothing changed the second time"
        );
    }

    #[test]
    fn an_unknown_session_is_a_message_that_says_what_to_do() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let error = invoke(
            &app,
            "session_timeline",
            json!({ "sessionKey": "sha256-00000000000000000000000000000000" }),
        )
        .unwrap_err();
        // The error crosses as an ErrorReport: its kind, and the message saying what to do.
        assert_eq!(error["kind"], "not_found", "{error}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("not found")),
            "{error}"
        );
    }

    #[test]
    fn search_finds_fixture_text_and_reports_bad_queries() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let answer = invoke(
            &app,
            "search_archive",
            json!({ "query": { "text": "the", "limit": 5 } }),
        )
        .unwrap();
        assert!(!answer["hits"].as_array().unwrap().is_empty(), "{answer}");
        // No vectors built: by words, with nothing said to wait.
        assert_eq!(answer["mode"], "lexical", "{answer}");
        assert_eq!(answer["vectors_pending"], 0, "{answer}");
        let bad = invoke(
            &app,
            "search_archive",
            json!({ "query": { "text": "\"unterminated AND (", "limit": 5 } }),
        );
        assert!(bad.is_err(), "{bad:?}");
    }

    /// Why from Search (a description, no repository), and the places git may not be sent:
    /// a folder no archived session ran in, however it is spelled.
    #[test]
    fn why_answers_a_description_and_runs_git_only_where_the_archive_knows() {
        let (dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let answer = invoke(
            &app,
            "why",
            json!({ "target": "server doesnt start", "place": { "type": "nowhere" } }),
        )
        .unwrap();
        assert_eq!(answer["kind"], "description", "{answer}");
        assert!(
            !answer["sessions"].as_array().unwrap().is_empty(),
            "{answer}"
        );
        // A commit id without a repository is only words: nothing traced, nothing run.
        let words = invoke(
            &app,
            "why",
            json!({ "target": "HEAD", "place": { "type": "nowhere" } }),
        )
        .unwrap();
        assert_eq!(words["kind"], "description", "{words}");
        let outside = dir.path().display().to_string();
        for root in [
            outside.as_str(),
            "/",
            "/tmp/../etc",
            "relative/dir",
            "/x\u{1b}[31m",
        ] {
            let refused = invoke(
                &app,
                "why",
                json!({ "target": "HEAD", "place": { "type": "repo", "root": root } }),
            )
            .unwrap_err();
            assert_eq!(refused["kind"], "not_found", "{root}: {refused}");
            assert!(
                !refused["message"].as_str().unwrap().contains('\u{1b}'),
                "{refused}"
            );
        }
        let unknown = invoke(
            &app,
            "why",
            json!({ "target": "src/a.rs", "place": { "type": "session", "session_key": "sha256-00000000000000000000000000000000" } }),
        )
        .unwrap_err();
        assert_eq!(unknown["kind"], "not_found", "{unknown}");
        let empty = invoke(
            &app,
            "why",
            json!({ "target": "  ", "place": { "type": "nowhere" } }),
        )
        .unwrap_err();
        assert_eq!(empty["kind"], "invalid", "{empty}");
    }

    #[test]
    fn sync_reports_and_a_second_sync_adds_nothing() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let report = invoke(&app, "sync_archive", json!({})).unwrap();
        assert_eq!(report["sessions_added"], json!(0));
        assert_eq!(report["records_added"], json!(0));
    }

    #[test]
    fn settings_read_sources_doctor_and_the_privacy_preview() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let dirs = invoke(&app, "source_dirs", json!({})).unwrap();
        assert!(
            dirs.as_array()
                .unwrap()
                .iter()
                .any(|d| d["agent"] == "claude" && d["origin"] == "config" && d["exists"] == true),
            "{dirs}"
        );
        let doctor = invoke(&app, "doctor", json!({})).unwrap();
        assert!(!doctor["checks"].as_array().unwrap().is_empty());
        let preview = invoke(
            &app,
            "privacy_preview",
            json!({ "text": "key AKIAIOSFODNN7EXAMPLE here" }),
        )
        .unwrap();
        assert!(
            !preview["text"]
                .as_str()
                .unwrap()
                .contains("AKIAIOSFODNN7EXAMPLE"),
            "{preview}"
        );
        let hooks = invoke(&app, "hook_overview", json!({})).unwrap();
        assert_eq!(hooks["hooks"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn saving_source_dirs_reopens_the_archive_with_them() {
        let (dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let other = dir.path().join("elsewhere");
        std::fs::create_dir_all(&other).unwrap();
        let dirs = invoke(
            &app,
            "set_source_dirs",
            json!({ "agent": "claude", "dirs": [other.display().to_string()] }),
        )
        .unwrap();
        let claude: Vec<&Value> = dirs
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["agent"] == "claude")
            .collect();
        assert_eq!(claude.len(), 1);
        assert_eq!(claude[0]["path"], json!(other.display().to_string()));
    }

    #[test]
    fn branches_and_skim_of_an_unlinked_branch_are_empty_not_errors() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        assert!(invoke(&app, "list_branches", json!({})).unwrap().is_array());
        let skim = invoke(
            &app,
            "skim_branch",
            json!({ "targetKey": "ref:refs/heads/nowhere", "includeWeak": true }),
        )
        .unwrap();
        assert_eq!(skim["sessions"], json!([]));
        assert_eq!(skim["target_key"], json!("ref:refs/heads/nowhere"));
    }

    /// The Team view's repository comes from the webview: a folder the archive has no sessions
    /// in is refused before any server is asked (or git run there).
    #[test]
    fn a_team_skim_in_a_repository_the_archive_does_not_know_is_refused() {
        let (dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let refused = invoke(
            &app,
            "team_skim",
            json!({ "target": "#12", "repoRoot": elsewhere.to_string_lossy() }),
        )
        .unwrap_err();
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains("no repository with agent sessions"),
            "{message}"
        );
    }

    #[test]
    fn a_branch_of_a_group_without_a_repository_skims_only_that_groups_sessions() {
        let (_dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let repos = invoke(&app, "list_branches", json!({})).unwrap();
        let group = repos
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["root"].is_null() && r["project"].is_string())
            .expect("the fixtures ran in no repository on this machine");
        let branch = &group["branches"][0];
        let listed =
            branch["sessions"].as_u64().unwrap() + branch["weak_sessions"].as_u64().unwrap();
        let skim = |project: Value| {
            invoke(
                &app,
                "skim_branch",
                json!({ "targetKey": branch["key"], "includeWeak": true, "project": project }),
            )
            .unwrap()["sessions"]
                .as_array()
                .unwrap()
                .len() as u64
        };
        // What the row counts is what its timeline shows.
        assert_eq!(skim(group["project"].clone()), listed, "{group}");
        assert_eq!(skim(json!("no such project")), 0);
    }

    /// Live capture without a window: the watcher sees lines appended to a transcript and
    /// captures them into the archive.
    #[test]
    fn the_watcher_captures_what_an_agent_appends() {
        let (dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let backend = app.state::<backend::Backend>();
        let cairn = backend.cairn().unwrap();
        let before = cairn.sessions(&Default::default()).unwrap()[0].record_count;
        let watch = watcher::start(app.handle().clone(), watcher::source_dirs(&cairn)).unwrap();
        assert_eq!(watch.dirs, [dir.path().join("claude")]);

        append_prompt(dir.path(), "live-1", "one more thing");

        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let after = cairn.sessions(&Default::default()).unwrap()[0].record_count;
            if after > before {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the appended line was not captured"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        drop(watch);
    }

    /// Listen to `meaning-finished`; the returned wait gives the `n`th event (from 1), failing
    /// after two minutes without it. Each event is checked as it is sent: a status the window
    /// reads on it must no longer say a build runs (unless another pass was asked for, which
    /// sends its own event), or the window would show "Computing vectors" for good.
    fn meaning_finished(app: &tauri::App<MockRuntime>) -> impl Fn(usize) -> Value {
        use tauri::Listener as _;
        let finished = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
        let sink = finished.clone();
        let handle = app.handle().clone();
        app.listen("meaning-finished", move |event| {
            let mut payload: Value = serde_json::from_str(event.payload()).unwrap();
            payload["running_when_sent"] = handle
                .state::<crate::backend::Backend>()
                .meaning
                .running()
                .into();
            sink.lock().unwrap().push(payload);
        });
        move |n| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while finished.lock().unwrap().len() < n {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no meaning-finished #{n}"
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            finished.lock().unwrap()[n - 1].clone()
        }
    }

    /// Search by meaning from the window: nothing until a person builds the vectors in
    /// Settings; then Search and Why run by meaning and words (a turn found by a word it does not
    /// contain), and a sync that brings a new turn embeds it by itself.
    #[test]
    fn a_built_vector_store_makes_search_find_by_meaning_and_keeps_up_after_syncs() {
        let (dir, backend) = fixture_archive();
        let app = mock_app(backend);
        let wait_for = meaning_finished(&app);
        let status = invoke(&app, "meaning_status", json!({})).unwrap();
        assert_eq!(status["vectors"], 0, "{status}");
        assert_eq!(status["ready"], false, "{status}");
        assert_eq!(status["after_sync"], false, "{status}");
        assert!(status["waiting"].as_u64().unwrap() > 0, "{status}");
        let search = |text: &str| {
            invoke(
                &app,
                "search_archive",
                json!({ "query": { "text": text, "limit": 10 } }),
            )
            .unwrap()
        };
        let hits = |text: &str| search(text)["hits"].clone();
        let semantic = |hits: &Value| {
            hits.as_array()
                .unwrap()
                .iter()
                .any(|h| h["match_reasons"].to_string().contains("semantic"))
        };
        // No transcript holds all these words; short.jsonl's first request, "start phoenix in
        // background", means them.
        let question = "run the Elixir web app server as a background process";
        assert_eq!(hits(question), json!([]), "words only before a build");
        assert!(!semantic(&hits("the")), "words only before a build");
        assert_eq!(search("the")["mode"], "lexical");

        let started = invoke(&app, "meaning_build", json!({})).unwrap();
        assert!(started.get("building").is_some(), "{started}");
        let done = wait_for(1);
        assert_eq!(done["running_when_sent"], false, "{done}");
        assert_eq!(done["error"], Value::Null, "{done}");
        assert!(done["embedded"].as_u64().unwrap() > 0, "{done}");
        let status = invoke(&app, "meaning_status", json!({})).unwrap();
        assert_eq!(status["ready"], true, "{status}");
        assert_eq!(status["after_sync"], true, "{status}");
        assert_eq!(status["waiting"], 0, "{status}");
        assert_eq!(status["building"], false, "{status}");
        let found = hits(question);
        assert!(semantic(&found), "by meaning and words once built: {found}");
        assert_eq!(found[0]["match_reasons"], json!(["semantic"]), "{found}");
        assert_eq!(search(question)["mode"], "hybrid");
        let why = invoke(
            &app,
            "why",
            json!({ "target": question, "place": { "type": "nowhere" } }),
        )
        .unwrap();
        assert!(!why["sessions"].as_array().unwrap().is_empty(), "{why}");

        // A new turn arrives by a sync: it gets its vector without anyone asking.
        append_prompt(dir.path(), "meaning-1", "rename the widget factory");
        invoke(&app, "sync_archive", json!({})).unwrap();
        let again = wait_for(2);
        assert_eq!(again["running_when_sent"], false, "{again}");
        assert_eq!(again["error"], Value::Null, "{again}");
        assert_eq!(again["embedded"], 1, "{again}");
        let status = invoke(&app, "meaning_status", json!({})).unwrap();
        assert_eq!(status["ready"], true, "{status}");
        let caught_up = search("rename the widget factory");
        assert_eq!(caught_up["vectors_pending"], 0, "{caught_up}");
        assert!(semantic(&caught_up["hits"]), "{caught_up}");
    }

    /// A model that panics ends the build with an error the window shows, and the next build
    /// may start: the build is not left marked as running.
    #[test]
    fn a_panicking_model_ends_the_build_with_an_error() {
        use cairn_core::semantic::embed::{Embedder, InputKind};
        struct Panics;
        impl Embedder for Panics {
            fn fingerprint(&self) -> &str {
                "panics/test"
            }
            fn dims(&self) -> usize {
                4
            }
            fn embed(&self, _: &[&str], _: InputKind) -> cairn_core::Result<Vec<f32>> {
                panic!("the test model panics")
            }
            fn refresh_on_write(&self) -> bool {
                true
            }
            fn describe(&self) -> String {
                "panics".into()
            }
        }
        let (_dir, backend) = fixture_archive();
        backend
            .cairn()
            .unwrap()
            .set_embedder(std::sync::Arc::new(Panics));
        let app = mock_app(backend);
        let wait_for = meaning_finished(&app);
        for round in 1..=2 {
            invoke(&app, "meaning_build", json!({})).unwrap();
            let done = wait_for(round);
            assert_eq!(done["error"]["kind"], "internal", "{done}");
            // The thread marks the build over just after it sends the event.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                let status = invoke(&app, "meaning_status", json!({})).unwrap();
                if status["building"] == false {
                    assert_eq!(status["last_error"]["kind"], "internal", "{status}");
                    break;
                }
                assert!(std::time::Instant::now() < deadline, "{status}");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }

    /// With an `[embeddings]` endpoint configured, the window never starts a build (it would
    /// send the turns' text off the machine): it says so and names the command that does.
    #[test]
    fn the_window_never_builds_vectors_through_an_endpoint() {
        let (_dir, backend) = fixture_archive_with(
            "[embeddings]\nprovider = \"endpoint\"\nendpoint = \"http://192.0.2.1:8080/v1\"\nmodel = \"m\"\n",
        );
        let app = mock_app(backend);
        let refused = invoke(&app, "meaning_build", json!({})).unwrap_err();
        assert_eq!(refused["kind"], "refused", "{refused}");
        assert!(
            refused["hint"]
                .as_str()
                .is_some_and(|h| h.contains("cairn embeddings build --store sessions")),
            "{refused}"
        );
        let status = invoke(&app, "meaning_status", json!({})).unwrap();
        assert_eq!(status["building"], false, "{status}");
        assert_eq!(status["after_sync"], false, "{status}");
    }

    /// A source folder that does not exist when the watch starts (an agent installed after the
    /// window opened, a repository's `.crush` before Crush first runs there) is waited for from
    /// its parent: when it appears with a transcript already in it, that transcript is
    /// captured without a sync.
    #[test]
    fn the_watcher_captures_from_a_source_folder_that_appears_later() {
        let (dir, backend) = fixture_archive();
        let claude = dir.path().join("claude");
        let later = dir.path().join("later");
        // A configured folder that is not there yet (the settings page refuses to add one, a
        // config file may name one, and an agent's default folder often is one).
        let config = dir.path().join("data/config.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        let one = format!("dirs = [{:?}]", claude.display().to_string());
        let two = format!(
            "dirs = [{:?}, {:?}]",
            claude.display().to_string(),
            later.display().to_string()
        );
        assert!(text.contains(&one), "{text}");
        std::fs::write(&config, text.replace(&one, &two)).unwrap();
        let app = mock_app(backend);
        let backend = app.state::<backend::Backend>();
        let cairn = backend.reopen().unwrap();
        let before = cairn.sessions(&Default::default()).unwrap().len();
        let watch = watcher::start(app.handle().clone(), watcher::source_dirs(&cairn)).unwrap();
        assert_eq!(
            watch.dirs,
            [claude],
            "only folders that exist are source folders watched"
        );

        // The folder and a transcript in it at once, faster than any watch of the folder.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/claude");
        std::fs::create_dir_all(later.join("-home-u-p")).unwrap();
        std::fs::copy(
            fixtures.join("small.jsonl"),
            later.join("-home-u-p/small.jsonl"),
        )
        .unwrap();

        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while cairn.sessions(&Default::default()).unwrap().len() == before {
            assert!(
                std::time::Instant::now() < deadline,
                "the transcript in the folder that appeared was not captured"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        drop(watch);
    }

    #[test]
    fn the_watcher_classifies_changed_transcripts_by_source_dir() {
        use cairn_core::archive::Agent;
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        let codex = dir.path().join("codex");
        let gemini = dir.path().join("gemini");
        std::fs::create_dir_all(claude.join("p/s1/subagents")).unwrap();
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::create_dir_all(gemini.join("proj/chats")).unwrap();
        let main = claude.join("p/s1.jsonl");
        let sub = claude.join("p/s1/subagents/agent-a1.jsonl");
        let rollout = codex.join("rollout-1.jsonl");
        // A session document (read whole when it changes) and JSON that is no transcript.
        let document = gemini.join("proj/chats/session-2026-01-01T00-00-abcd1234.json");
        let logs = gemini.join("proj/logs.json");
        let claude_json = claude.join("p/settings.json");
        for f in [&main, &sub, &rollout, &document, &logs, &claude_json] {
            std::fs::write(f, "{}\n").unwrap();
        }
        // A transcript-named symlink to a file outside the source dirs is never read.
        let outside = dir.path().join("secret.jsonl");
        std::fs::write(&outside, "{}\n").unwrap();
        let link = claude.join("p/link.jsonl");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let changed = [
            main.clone(),
            sub.clone(),
            rollout.clone(),
            claude.join("gone.jsonl"),
            link,
            document.clone(),
            logs,
            claude_json,
        ]
        .into_iter()
        .collect();
        let dirs = vec![
            (Agent::Claude, claude),
            (Agent::Codex, codex),
            (Agent::Gemini, gemini),
        ];
        let found = watcher::transcripts(&dirs, &changed);
        let summary: Vec<(Agent, bool)> = found
            .iter()
            .map(|f| (f.agent, f.agent_id.is_some()))
            .collect();
        assert_eq!(
            summary,
            // Paths in order: `p/s1/…` sorts before `p/s1.jsonl`.
            [
                (Agent::Claude, true),
                (Agent::Claude, false),
                (Agent::Codex, false),
                (Agent::Gemini, false)
            ]
        );
    }

    /// A known repository's folders are watched for Aider's history and Crush's database: a
    /// change there is that agent's transcript; another file of the repository is nothing.
    #[test]
    fn the_watcher_classifies_in_repository_transcripts() {
        use cairn_core::archive::Agent;
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("app");
        std::fs::create_dir_all(repo.join(".crush")).unwrap();
        let history = repo.join(".aider.chat.history.md");
        let db = repo.join(".crush/crush.db");
        let other = repo.join("package.json");
        for f in [&history, &db, &other] {
            std::fs::write(f, "x\n").unwrap();
        }
        let dirs = vec![
            (Agent::Aider, repo.clone()),
            (Agent::Crush, repo.join(".crush")),
        ];
        let changed = [history.clone(), db.clone(), other].into_iter().collect();
        let found: Vec<(Agent, std::path::PathBuf)> = watcher::transcripts(&dirs, &changed)
            .into_iter()
            .map(|f| (f.agent, f.path))
            .collect();
        assert_eq!(found, [(Agent::Aider, history), (Agent::Crush, db)]);
    }

    /// The fixture session's agent id (11 records).
    const SHORT: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

    /// Two reviewed entries imported over the fixture session; the second then set back to
    /// unreviewed, as extraction writes entries (no front door makes one).
    fn recall_archive() -> (tempfile::TempDir, backend::Backend) {
        let (dir, backend) = fixture_archive();
        let line = |id: &str, title: &str, body: &str, start: u32, end: u32| {
            json!({"candidate_id": id, "session_id": SHORT, "type": "warning", "scope": "project",
                "title": title, "body": body, "label": "correct",
                "evidence": {"ordinal_start": start, "ordinal_end": end}})
            .to_string()
        };
        let text = [
            line(
                "rc-known",
                "Spotter ships a status line",
                "The status line script lives in the repo.",
                0,
                1,
            ),
            line(
                "rc-new",
                "Hook scripts need tmux",
                "The SessionStart hook calls tmux-waiting.sh.",
                1,
                2,
            ),
        ]
        .join("\n");
        let cairn = backend.cairn().unwrap();
        let report = cairn.recall_import(&text, false).unwrap();
        assert_eq!(report.imported, 2, "{report:?}");
        let conn = rusqlite::Connection::open(cairn.data_dir().join("cairn.db")).unwrap();
        conn.execute(
            "UPDATE recall_entries SET review_state = 'unreviewed_auto', transferable = 0, reviewed_at = NULL WHERE id = 'rc-new'",
            [],
        )
        .unwrap();
        drop(cairn);
        (dir, backend)
    }

    #[test]
    fn the_inbox_accepts_an_edited_entry_which_then_answers_trusted_queries() {
        let (_dir, backend) = recall_archive();
        let app = mock_app(backend);
        let inbox = invoke(&app, "recall_inbox", json!({ "limit": 50 })).unwrap();
        let items = inbox.as_array().unwrap();
        assert_eq!(items.len(), 1, "{inbox}");
        assert_eq!(items[0]["reason"], "unreviewed");
        assert_eq!(items[0]["entry"]["id"], "rc-new");

        let trusted = json!({ "request": { "text": "tmux hook", "mode": "lexical",
            "filters": { "trusted_only": true }, "context": false } });
        let before = invoke(&app, "recall_query", trusted.clone()).unwrap();
        assert_eq!(before["results"], json!([]), "{before}");
        assert_eq!(before["untrusted_matches"], 1);

        let accepted = invoke(
            &app,
            "recall_accept",
            json!({ "id": "rc-new", "edit": { "title": "Session hooks need tmux installed" } }),
        )
        .unwrap();
        assert_eq!(accepted["review_state"], "human_reviewed");
        assert_eq!(accepted["title"], "Session hooks need tmux installed");
        assert_eq!(
            invoke(&app, "recall_inbox", json!({ "limit": 50 })).unwrap(),
            json!([])
        );

        let after = invoke(&app, "recall_query", trusted).unwrap();
        let first = &after["results"][0];
        assert_eq!(first["entry"]["id"], "rc-new", "{after}");
        assert!(first["breakdown"]["bm25f"].as_f64().unwrap() > 0.0);
        assert!(
            first["breakdown"]["matched_terms"]
                .as_array()
                .unwrap()
                .contains(&json!("tmux")),
            "{first}"
        );
        assert!(after["query_id"].is_string(), "queries are recorded");

        let stats = invoke(
            &app,
            "recall_stats",
            json!({ "filters": { "trusted_only": false } }),
        )
        .unwrap();
        assert_eq!(
            (stats["count"].as_u64(), stats["trusted"].as_u64()),
            (Some(2), Some(2))
        );
        assert_eq!(stats["by_type"]["warning"], 2);

        // Undo of the accept: back in the inbox as it was shown before, the edit kept; a second
        // Undo finds no accept to take back.
        let back = invoke(
            &app,
            "recall_unaccept",
            json!({ "id": "rc-new", "previous": "unreviewed_auto" }),
        )
        .unwrap();
        // It replaced none: nothing serves again in its place.
        assert_eq!(back["reinstated"], serde_json::Value::Null, "{back}");
        let back = &back["entry"];
        assert_eq!(back["review_state"], "unreviewed_auto");
        assert_eq!(back["trusted"], false);
        // When a person reviewed it stays (a forget keeps an entry a person touched).
        assert!(back["reviewed_at"].is_string(), "{back}");
        assert_eq!(back["title"], "Session hooks need tmux installed");
        let inbox = invoke(&app, "recall_inbox", json!({ "limit": 50 })).unwrap();
        assert_eq!(inbox[0]["entry"]["id"], "rc-new", "{inbox}");
        let again = invoke(
            &app,
            "recall_unaccept",
            json!({ "id": "rc-new", "previous": "unreviewed_auto" }),
        )
        .unwrap_err();
        assert_eq!(again["kind"], "conflict", "{again}");
        let bad = invoke(
            &app,
            "recall_unaccept",
            json!({ "id": "rc-known", "previous": "human_reviewed" }),
        )
        .unwrap_err();
        assert_eq!(bad["kind"], "invalid", "{bad}");
    }

    /// The session-start brief a session in the worktree `root` (a folder named as the
    /// fixture's project, `spotter`, with `HEAD` on `branch`) is given: the ids of the entries in
    /// it. The same rule of what applies on which branch the MCP Recall tools read.
    fn brief_ids(data: &Path, root: &Path, branch: &str) -> Vec<String> {
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(
            root.join(".git/HEAD"),
            format!("ref: refs/heads/{branch}\n"),
        )
        .unwrap();
        let input = json!({ "cwd": root }).to_string();
        cairn_core::Cairn::session_start_brief(data, &input, root)
            .unwrap()
            .map(|b| b.entry_ids)
            .unwrap_or_default()
    }

    /// The inbox's edit narrows an entry to its branch and corrects its type, as
    /// `cairn recall review --edit --scope --type` does: the core's edit, through the window's
    /// accept. Narrowed to `master`, it leaves another branch's brief and stays in its own; the
    /// trusted query answers it by its new type and scope. What the core's scope is not (a
    /// repository or branch named, an unknown type, a value of a megabyte) is refused before
    /// anything changes, and a branch scope where no branch is known is refused saying so.
    #[test]
    fn the_inbox_narrows_an_entry_to_its_branch_and_corrects_its_type() {
        let (dir, backend) = recall_archive();
        let data = dir.path().join("data");
        let app = mock_app(backend);
        let here = dir.path().join("here/spotter");
        let other = dir.path().join("other/spotter");
        let inbox = invoke(&app, "recall_inbox", json!({ "limit": 50 })).unwrap();
        let entry = &inbox[0]["entry"];
        assert_eq!(
            (
                &entry["id"],
                &entry["git_branch"],
                &entry["scope"],
                &entry["type"]
            ),
            (
                &json!("rc-new"),
                &json!("master"),
                &json!("project"),
                &json!("warning")
            ),
            "{inbox}"
        );

        // Accepted as extracted (project scope), it is in every branch's brief.
        invoke(
            &app,
            "recall_accept",
            json!({ "id": "rc-new", "edit": null }),
        )
        .unwrap();
        assert!(brief_ids(&data, &here, "master").contains(&"rc-new".to_owned()));
        assert!(brief_ids(&data, &other, "feat/search").contains(&"rc-new".to_owned()));
        // The window's Undo: back in the inbox, in no brief.
        invoke(
            &app,
            "recall_unaccept",
            json!({ "id": "rc-new", "previous": "unreviewed_auto" }),
        )
        .unwrap();
        assert!(!brief_ids(&data, &here, "master").contains(&"rc-new".to_owned()));

        // Hostile edits: refused, and nothing changed by them. What is not the core's type or
        // scope (an unknown word, a place named, a field no edit has, a megabyte) is refused as
        // the arguments are read; a megabyte of text by the core, saying its limit, not the text.
        let huge = "x".repeat(1 << 20);
        for (edit, says) in [
            (json!({ "type": "gotcha" }), "unknown variant `gotcha`"),
            (json!({ "scope": "elsewhere/api" }), "unknown variant"),
            (
                json!({ "scope": { "repository": "elsewhere" } }),
                "invalid args `edit`",
            ),
            (
                json!({ "scope": "branch", "branch": "feat/search" }),
                "unknown field `branch`",
            ),
            (json!({ "type": huge }), "unknown variant"),
            (json!({ "scope": huge }), "unknown variant"),
            (
                json!({ "title": huge }),
                "longer than the 500 characters Cairn stores",
            ),
            (
                json!({ "body": huge, "scope": "branch" }),
                "longer than the 20000 characters",
            ),
        ] {
            let err = invoke(
                &app,
                "recall_accept",
                json!({ "id": "rc-new", "edit": edit }),
            )
            .unwrap_err();
            let text = err.to_string();
            assert!(text.contains(says), "{}", &text[..text.len().min(400)]);
            if err["kind"] == "invalid" {
                assert!(
                    text.len() < 400,
                    "the core's refusal holds the value: {text:.400}"
                );
            }
            let shown = invoke(&app, "recall_inbox", json!({ "limit": 50 })).unwrap();
            let e = &shown[0]["entry"];
            assert_eq!(
                (&e["id"], &e["scope"], &e["type"], &e["review_state"]),
                (
                    &json!("rc-new"),
                    &json!("project"),
                    &json!("warning"),
                    &json!("unreviewed_auto")
                ),
                "{says}"
            );
            assert_eq!(e["title"], "Hook scripts need tmux");
        }

        let accepted = invoke(
            &app,
            "recall_accept",
            json!({ "id": "rc-new", "edit": { "type": "procedure", "scope": "branch" } }),
        )
        .unwrap();
        assert_eq!(
            (&accepted["type"], &accepted["scope"], &accepted["trusted"]),
            (&json!("procedure"), &json!("branch"), &json!(true)),
            "{accepted}"
        );
        assert!(brief_ids(&data, &here, "master").contains(&"rc-new".to_owned()));
        let elsewhere = brief_ids(&data, &other, "feat/search");
        assert!(!elsewhere.contains(&"rc-new".to_owned()), "{elsewhere:?}");
        // The project-wide entry is still in both: the rule read the branch, not less.
        assert!(elsewhere.contains(&"rc-known".to_owned()), "{elsewhere:?}");

        // The trusted query answers it by its new type and scope, and by its old ones not.
        let trusted = |filters: Value| {
            let mut f = json!({ "trusted_only": true });
            f.as_object_mut()
                .unwrap()
                .extend(filters.as_object().unwrap().clone());
            let r = invoke(
                &app,
                "recall_query",
                json!({ "request": { "text": "tmux hook", "mode": "lexical", "filters": f,
                    "context": false } }),
            )
            .unwrap();
            r["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["entry"]["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            trusted(json!({ "type": "procedure", "scope": "branch" })),
            ["rc-new"]
        );
        assert!(!trusted(json!({ "type": "warning" })).contains(&"rc-new".to_owned()));
        assert!(!trusted(json!({ "scope": "project" })).contains(&"rc-new".to_owned()));

        // An entry whose session ran on no branch cannot be narrowed to one: the core says why
        // and what to keep, and nothing changed.
        let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
        conn.execute(
            "UPDATE recall_entries SET git_branch = '' WHERE id = 'rc-known'",
            [],
        )
        .unwrap();
        drop(conn);
        let err = invoke(
            &app,
            "recall_accept",
            json!({ "id": "rc-known", "edit": { "scope": "branch" } }),
        )
        .unwrap_err();
        assert_eq!(err["kind"], "invalid", "{err}");
        let message = err["message"].as_str().unwrap();
        assert!(
            message.contains("no branch is known") && message.contains("keep scope project"),
            "{err}"
        );
        let known = invoke(
            &app,
            "recall_list",
            json!({ "filters": { "trusted_only": true, "type": "warning" } }),
        )
        .unwrap();
        assert_eq!(known[0]["id"], "rc-known", "{known}");
        assert_eq!(known[0]["scope"], "project", "{known}");
    }

    #[test]
    fn review_actions_reject_supersede_merge_and_session_entries() {
        let (_dir, backend) = recall_archive();
        let app = mock_app(backend);
        let key = invoke(&app, "list_sessions", json!({ "query": {} })).unwrap()[0]["session_key"]
            .as_str()
            .unwrap()
            .to_owned();
        let of_session = invoke(&app, "recall_for_session", json!({ "sessionKey": key })).unwrap();
        let mut ids: Vec<&str> = of_session
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, ["rc-known", "rc-new"]);
        assert_eq!(of_session[0]["evidence"][0]["session_key"], json!(key));

        // The duplicate laid out for review: its evidence quoted, the known entry flagged.
        let proposal = invoke(&app, "recall_proposal", json!({ "id": "rc-new" })).unwrap();
        assert_eq!(proposal["reason"], "unreviewed", "{proposal}");
        assert!(
            proposal["evidence"][0]["records"]
                .as_array()
                .is_some_and(|r| !r.is_empty()),
            "{proposal}"
        );
        assert!(
            proposal["duplicate_basis"]
                .as_str()
                .unwrap()
                .contains("by their words")
        );
        // Merge the unreviewed duplicate into the known entry: it is superseded.
        let kept = invoke(
            &app,
            "recall_merge",
            json!({ "duplicate": "rc-new", "keep": "rc-known" }),
        )
        .unwrap();
        assert_eq!(kept["id"], "rc-known");
        let archived = invoke(
            &app,
            "recall_list",
            json!({ "filters": { "status": "archived", "trusted_only": false } }),
        )
        .unwrap();
        assert_eq!(archived[0]["id"], "rc-new");
        assert_eq!(archived[0]["superseded_by_entry_id"], "rc-known");
        // A superseded entry cannot be superseded again: the core's message comes through.
        let again = invoke(
            &app,
            "recall_supersede",
            json!({ "oldId": "rc-new", "newId": "rc-known" }),
        )
        .unwrap_err();
        assert_eq!(again["kind"], "conflict", "{again}");
        assert!(
            again["message"].as_str().unwrap().contains("already"),
            "{again}"
        );

        let rejected = invoke(&app, "recall_reject", json!({ "id": "rc-known" })).unwrap();
        assert_eq!(rejected["entry"]["status"], "archived");
        assert_eq!(rejected["reinstated"], Value::Null, "it replaced nothing");
        let restored = invoke(&app, "recall_restore", json!({ "id": "rc-known" })).unwrap();
        assert_eq!(restored["entry"]["status"], "accepted");
        assert_eq!(restored["replaces"], Value::Null, "it replaced nothing");
        let again = invoke(&app, "recall_reject", json!({ "id": "rc-known" })).unwrap();
        assert_eq!(again["entry"]["status"], "archived");
        let missing = invoke(&app, "recall_accept", json!({ "id": "nope", "edit": null }));
        let missing = missing.unwrap_err();
        assert_eq!(missing["kind"], "not_found", "{missing}");
        assert!(missing["message"].as_str().unwrap().contains("nope"));
        assert_eq!(
            invoke(&app, "recall_check_stale", json!({})).unwrap(),
            json!({ "trusted": 0, "untrusted": 0 })
        );
        let bad = invoke(
            &app,
            "recall_list",
            json!({ "filters": { "status": "archived", "trusted_only": true } }),
        );
        let bad = bad.unwrap_err();
        assert_eq!(bad["kind"], "invalid", "{bad}");
        assert!(bad["message"].as_str().unwrap().contains("trusted-only"));
    }

    #[test]
    fn rejecting_a_replacement_serves_the_entry_it_replaced_and_undo_replaces_it_again() {
        let (_dir, backend) = recall_archive();
        let app = mock_app(backend);
        invoke(
            &app,
            "recall_accept",
            json!({ "id": "rc-new", "edit": null }),
        )
        .unwrap();
        invoke(
            &app,
            "recall_supersede",
            json!({ "oldId": "rc-known", "newId": "rc-new" }),
        )
        .unwrap();

        let rejected = invoke(&app, "recall_reject", json!({ "id": "rc-new" })).unwrap();
        assert_eq!(rejected["entry"]["id"], "rc-new", "{rejected}");
        assert_eq!(rejected["entry"]["status"], "archived");
        assert_eq!(rejected["reinstated"]["id"], "rc-known", "{rejected}");
        assert_eq!(rejected["reinstated"]["status"], "accepted");
        assert_eq!(rejected["reinstated"]["superseded_by_entry_id"], "");

        // Undo: the replacement is served again and replaces the older entry again.
        let restored = invoke(&app, "recall_restore", json!({ "id": "rc-new" })).unwrap();
        assert_eq!(restored["entry"]["status"], "accepted");
        assert_eq!(
            restored["entry"]["supersedes_entry_id"], "rc-known",
            "{restored}"
        );
        assert_eq!(restored["replaces"]["id"], "rc-known", "{restored}");
        assert_eq!(restored["replaces"]["status"], "archived");
        assert_eq!(restored["replaces"]["superseded_by_entry_id"], "rc-new");
        let archived = invoke(
            &app,
            "recall_list",
            json!({ "filters": { "status": "archived", "trusted_only": false } }),
        )
        .unwrap();
        assert_eq!(archived[0]["id"], "rc-known", "{archived}");
        assert_eq!(archived[0]["superseded_by_entry_id"], "rc-new");
    }

    /// A stand-in for `claude -p --output-format json`: answers with a report citing the first
    /// turn link of the prompt it was given on stdin.
    fn fake_claude(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("fake-claude");
        std::fs::write(
            &path,
            "#!/bin/sh\nprompt=$(cat)\nlink=$(printf '%s' \"$prompt\" | grep -o 'cairn://session/sha256-[0-9a-f]*?record=[0-9]*' | head -n 1)\n\
             printf '{\"type\":\"result\",\"is_error\":false,\"result\":\"# Report\\\\n\\\\nSee [the turn](%s) and <b>raw</b>.\"}\\n' \"$link\"\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        path
    }

    /// A report's agent CLI that cannot be found points at Settings, where the person names the
    /// program; once named, reports run it without a restart. A program that cannot run is
    /// refused and nothing is written.
    #[test]
    fn an_agent_program_is_named_in_settings_and_reports_run_it() {
        let scripts = tempfile::tempdir().unwrap();
        let script = fake_claude(scripts.path());
        let (dir, backend) =
            fixture_archive_with("# mine\n[agent.claude]\nbinary = \"/nonexistent/claude\"\n");
        let app = mock_app(backend);
        let claude = |programs: &Value| {
            programs
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["agent"] == "claude")
                .unwrap()
                .clone()
        };
        let programs = invoke(&app, "agent_programs", json!({})).unwrap();
        assert_eq!(programs.as_array().unwrap().len(), 4);
        assert_eq!(claude(&programs)["configured"], "/nonexistent/claude");
        assert_eq!(claude(&programs)["runs"], Value::Null);

        let request = json!({ "slice": { "since": "2000-01-01", "until": "2099-12-31", "automation": "include" },
            "template": "weekly-summary", "generator": "claude", "focus": null, "title": null, "force": false });
        let generate = || {
            invoke(
                &app,
                "insight_generate",
                json!({ "run": 1, "request": request.clone() }),
            )
        };
        let missing = generate().unwrap_err();
        let hint = missing["hint"].as_str().unwrap();
        assert!(hint.contains("Settings › Agent programs"), "{missing}");
        assert!(
            !format!("{missing}").contains("config.toml"),
            "no hand edit: {missing}"
        );

        let refused = invoke(
            &app,
            "set_agent_program",
            json!({ "agent": "claude", "binary": "bin/claude" }),
        )
        .unwrap_err();
        assert_eq!(refused["kind"], "invalid", "{refused}");
        let config = dir.path().join("data").join("config.toml");
        assert!(
            std::fs::read_to_string(&config)
                .unwrap()
                .contains("/nonexistent/claude")
        );

        let named = script.display().to_string();
        let programs = invoke(
            &app,
            "set_agent_program",
            json!({ "agent": "claude", "binary": named }),
        )
        .unwrap();
        assert_eq!(claude(&programs)["runs"], json!(named));
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.contains("# mine\n[agent.claude]\n"), "{text}");
        assert!(text.contains(&format!("binary = {named:?}")), "{text}");
        let made = generate().unwrap();
        assert!(made["insight"]["id"].is_number(), "{made}");

        let programs = invoke(
            &app,
            "set_agent_program",
            json!({ "agent": "claude", "binary": "" }),
        )
        .unwrap();
        assert_eq!(claude(&programs)["configured"], Value::Null);
    }

    #[test]
    fn a_report_is_previewed_generated_with_progress_saved_and_exported() {
        use tauri::Listener as _;
        let scripts = tempfile::tempdir().unwrap();
        let script = fake_claude(scripts.path());
        let (dir, backend) = fixture_archive_with(&format!(
            "[agent.claude]\nbinary = {:?}\n",
            script.display().to_string()
        ));
        let exports = dir.path().join("exports-here");
        let app = mock_app(backend.with_export_dir(exports.clone()));
        let phases = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
        let seen = phases.clone();
        app.listen("insight-progress", move |event| {
            seen.lock()
                .unwrap()
                .push(serde_json::from_str(event.payload()).unwrap());
        });

        let templates = invoke(&app, "insight_templates", json!({})).unwrap();
        assert!(
            templates
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == "weekly-summary")
        );
        let request = json!({ "slice": { "since": "2000-01-01", "until": "2099-12-31", "automation": "include" },
            "template": "weekly-summary", "generator": "claude", "focus": null, "title": null, "force": false });
        let preview = invoke(
            &app,
            "insight_preview",
            json!({ "request": request.clone() }),
        )
        .unwrap();
        assert_eq!(preview["sessions_total"], 1, "{preview}");
        assert!(
            preview["prompt"]
                .as_str()
                .unwrap()
                .contains("cairn://session/")
        );
        assert_eq!(preview["cached_id"], Value::Null);

        let generated = invoke(
            &app,
            "insight_generate",
            json!({ "run": 7, "request": request.clone() }),
        )
        .unwrap();
        assert_eq!(generated["cached"], false);
        let id = generated["insight"]["id"].as_i64().unwrap();
        assert_eq!(
            generated["insight"]["link"],
            json!(format!("cairn://recall?tab=generated&insight={id}"))
        );
        assert_eq!(
            *phases.lock().unwrap(),
            [
                json!({"run": 7, "phase": "material"}),
                json!({"run": 7, "phase": "generating"}),
                json!({"run": 7, "phase": "saving"})
            ]
        );
        // The same request again is answered by the saved report.
        let preview = invoke(
            &app,
            "insight_preview",
            json!({ "request": request.clone() }),
        )
        .unwrap();
        assert_eq!(preview["cached_id"], json!(id));
        let cached = invoke(
            &app,
            "insight_generate",
            json!({ "run": 8, "request": request }),
        )
        .unwrap();
        assert_eq!(cached["cached"], true);

        let html = invoke(&app, "insight_html", json!({ "id": id })).unwrap();
        let html = html.as_str().unwrap();
        assert!(html.contains("<a href=\"cairn://session/sha256-"), "{html}");
        assert!(
            html.contains("&lt;b&gt;raw&lt;/b&gt;"),
            "raw HTML is escaped: {html}"
        );

        invoke(
            &app,
            "insight_rename",
            json!({ "id": id, "title": "Week one" }),
        )
        .unwrap();
        invoke(&app, "insight_star", json!({ "id": id, "starred": true })).unwrap();
        let starred = invoke(
            &app,
            "insight_list",
            json!({ "search": null, "starred": true, "limit": 50 }),
        )
        .unwrap();
        assert_eq!(starred[0]["title"], "Week one");
        assert_eq!(
            invoke(&app, "insight_get", json!({ "id": id })).unwrap()["starred"],
            true
        );

        let exported = invoke(&app, "insight_export", json!({ "id": id, "format": "md" })).unwrap();
        let path = std::path::PathBuf::from(exported["path"].as_str().unwrap());
        assert_eq!(path.parent(), Some(exports.as_path()));
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("# Week one")
        );
        let again = invoke(&app, "insight_export", json!({ "id": id, "format": "md" })).unwrap();
        assert_ne!(
            again["path"], exported["path"],
            "an export never replaces a file"
        );

        invoke(&app, "insight_delete", json!({ "id": id })).unwrap();
        let gone = invoke(&app, "insight_get", json!({ "id": id })).unwrap_err();
        assert_eq!(gone["kind"], "not_found", "{gone}");
        assert!(
            gone["message"].as_str().unwrap().contains("not found"),
            "{gone}"
        );
    }

    /// Recall's `Status` and `Evidence` would clash with the doctor's and git's in the flat
    /// bindings file; they are exported under prefixed names.
    #[test]
    fn clashing_core_type_names_are_prefixed_in_the_bindings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bindings.ts");
        export_bindings(&path).unwrap();
        let bindings = std::fs::read_to_string(path).unwrap();
        for name in ["RecallStatus", "RecallEvidence", "Status", "Evidence"] {
            assert!(
                bindings.contains(&format!("export type {name} =")),
                "{name} is not exported"
            );
        }
        // What the window receives is the serialized form.
        assert!(bindings.contains("evidence: RecallEvidence_Serialize[]"));
    }

    /// Keeps `ui/src/lib/bindings.ts` in step with the commands; CI then fails on a diff.
    #[test]
    fn export_bindings_test() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(BINDINGS_PATH);
        export_bindings(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("listSessions"), "bindings lack listSessions");
        assert!(
            text.contains("archiveChanged"),
            "bindings lack the archive-changed event"
        );
    }
}
