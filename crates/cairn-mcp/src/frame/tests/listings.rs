//! A client lists resources and prompts on connect, whatever the server advertises (Claude
//! Desktop and Cursor do): the server, which advertises tools only, answers each list empty
//! rather than with an error the client logs as a fault; one resource or prompt by name is
//! -32601 saying the server offers tools, and which.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_are_listed_empty_and_asked_for_by_name_are_tools_only() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = serve(&tmp.path().join("data"), tmp.path());
    p.send(INIT).await;
    let init = p.answer().await;
    // Tools only: what the lists say too.
    let capabilities = init["result"]["capabilities"].as_object().unwrap();
    assert!(capabilities.contains_key("tools"), "{init}");
    for none in ["resources", "prompts"] {
        assert!(!capabilities.contains_key(none), "{init}");
    }
    p.send(INITIALIZED).await;
    for (id, method, key) in [
        (1, "resources/list", "resources"),
        (2, "resources/templates/list", "resourceTemplates"),
        (3, "prompts/list", "prompts"),
    ] {
        // With and without params, as clients send them.
        for params in ["", r#","params":{}"#] {
            p.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#
            ))
            .await;
            let a = p.answer().await;
            assert_eq!(a["id"], id, "{a}");
            assert_eq!(a["result"][key], json!([]), "{method}: {a}");
            assert!(a.get("error").is_none(), "{method}: {a}");
        }
    }
    for (id, method, params) in [
        (4, "resources/read", r#"{"uri":"cairn://session/x"}"#),
        (5, "prompts/get", r#"{"name":"catch-up"}"#),
    ] {
        p.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .await;
        let a = p.answer().await;
        assert_eq!(a["error"]["code"], -32601, "{a}");
        let message = a["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("`{method}`"))
                && message.contains("only tools")
                && message.contains("`recall_brief`")
                && message.contains("`skim`"),
            "{message}"
        );
    }
    // A list whose params are not the spec's is a wrong argument, not a method it lacks.
    p.send(r#"{"jsonrpc":"2.0","id":6,"method":"resources/list","params":7}"#)
        .await;
    let a = p.answer().await;
    assert_eq!(a["error"]["code"], -32602, "{a}");
    // The server goes on serving.
    p.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
        .await;
    let tools = p.answer().await;
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}
