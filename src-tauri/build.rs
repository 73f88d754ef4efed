//! Compiles the Tauri config and the ACL. Cairn's own commands (listed once, in `commands.in`)
//! get generated `allow-<command>` permissions: a command the webview may call has to be granted
//! in `capabilities/default.json`, and a new command is denied until someone grants it.

const COMMANDS: &[&str] = &include!("commands.in");

fn main() {
    println!("cargo:rerun-if-changed=commands.in");
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    if let Err(error) =
        tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
    {
        // A build script reports failure by exiting non-zero; the message says what broke.
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}
