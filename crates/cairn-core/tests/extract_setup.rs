//! Setting extraction up the way the Settings form does: `config.toml` written by Cairn
//! (comments and other keys kept, a bad setup refused with the file untouched), applied to an
//! open archive without reopening it, tested with one tiny request, previewed with a cost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fake_llm;

use cairn_core::Cairn;
use cairn_core::config::{ExtractSetup, Schedule};
use cairn_core::recall::extract::Scope;
use fake_llm::FakeLlm;

const BEFORE: &str = "# written by hand\n[sources.claude]\nenabled = true # keep\n\n[recall.extract]\nconcurrency = 3 # my machine is small\n";

fn setup(url: &str) -> ExtractSetup {
    ExtractSetup {
        enabled: true,
        generator: "endpoint".into(),
        endpoint: url.to_owned(),
        model: "test-model".into(),
        api_key_env: String::new(),
        schedule: Schedule::Manual,
        input_price_per_mtok: Some(3.0),
        output_price_per_mtok: Some(15.0),
        allow_http: false,
    }
}

#[test]
fn saving_applies_at_once_and_keeps_the_persons_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.toml"), BEFORE).unwrap();
    let cairn = Cairn::open(&data).unwrap();
    assert!(!cairn.recall_extract_status().unwrap().enabled);
    let fake = FakeLlm::start(None);
    let saved = cairn
        .save_recall_extract_setup(&setup(&fake.url()))
        .unwrap();
    assert_eq!(saved, setup(&fake.url()));
    let text = std::fs::read_to_string(data.join("config.toml")).unwrap();
    for kept in [
        "# written by hand",
        "enabled = true # keep",
        "concurrency = 3 # my machine is small",
    ] {
        assert!(text.contains(kept), "{kept} lost:\n{text}");
    }
    // The same open archive sees it: no restart.
    let status = cairn.recall_extract_status().unwrap();
    assert!(status.enabled && status.model == "test-model" && status.concurrency == 3);
    assert_eq!(cairn.recall_extract_setup().unwrap(), saved);
    // Nothing was sent by saving.
    assert!(fake.requests().is_empty());
    // The preview prices what a pass would send (no session yet: nothing).
    let p = cairn.recall_extract_preview(&Scope::default()).unwrap();
    assert_eq!(p.max_cost, Some(0.0));
    assert_eq!(p.concurrency, 3);
}

#[test]
fn a_bad_setup_is_refused_and_the_file_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.toml"), BEFORE).unwrap();
    let cairn = Cairn::open(&data).unwrap();
    let good = setup("http://127.0.0.1:11434/v1");
    let cases: Vec<(ExtractSetup, &str)> = vec![
        (
            ExtractSetup {
                api_key_env: "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD".into(),
                ..good.clone()
            },
            "never the key itself",
        ),
        (
            ExtractSetup {
                api_key_env: "MY KEY".into(),
                ..good.clone()
            },
            "*name* of an environment variable",
        ),
        (
            ExtractSetup {
                endpoint: String::new(),
                ..good.clone()
            },
            "the endpoint is empty",
        ),
        (
            ExtractSetup {
                model: "m\n[evil]".into(),
                ..good.clone()
            },
            "control character",
        ),
        (
            ExtractSetup {
                generator: "vim".into(),
                ..good.clone()
            },
            "unknown generator",
        ),
        // Remote plain HTTP fails the transport policy, named with its key.
        (
            ExtractSetup {
                endpoint: "http://example.com/v1".into(),
                ..good.clone()
            },
            "recall.extract.servers.local.endpoint",
        ),
        (
            ExtractSetup {
                input_price_per_mtok: Some(-1.0),
                ..good.clone()
            },
            "input_price_per_mtok",
        ),
    ];
    for (bad, want) in cases {
        let err = cairn
            .save_recall_extract_setup(&bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{bad:?}: {err}");
        assert_eq!(
            std::fs::read_to_string(data.join("config.toml")).unwrap(),
            BEFORE
        );
    }
}

#[test]
fn the_test_sends_one_tiny_request_and_saves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let cairn = Cairn::open(&data).unwrap();
    let fake = FakeLlm::start(None);
    let d = cairn
        .recall_extract_test(&setup(&fake.url()), false)
        .unwrap();
    assert!(d.ok(), "{d:?}");
    assert_eq!(d.probe_entries, Some(1));
    assert!(d.probe_request.contains("port 4173"));
    assert!(d.probe_answer.as_deref().unwrap().contains("\"entries\""));
    assert_eq!(fake.chats().len(), 1);
    assert!(!data.join("config.toml").exists());
}
