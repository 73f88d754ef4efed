//! Compiles the Tauri config and the ACL. Cairn's own commands are listed here so Tauri
//! generates `allow-<command>` permissions for them: a command the webview may call has to be
//! granted in `capabilities/default.json`, and a new command is denied until someone grants it.

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(&["list_sessions", "app_info"]);
    if let Err(error) =
        tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
    {
        // A build script reports failure by exiting non-zero; the message says what broke.
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}
