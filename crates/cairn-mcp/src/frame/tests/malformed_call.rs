//! A `tools/call` the server cannot read is answered as a wrong argument (-32602) saying which
//! part is wrong, not as a method the server lacks: rmcp hands one whose `arguments` are no
//! object on as a method of its own, which the server answered "no method `tools/call`" while
//! naming `tools/call` among those it has. A call of a tool the server lacks lists the tools.

use super::*;

fn raw_call(id: u32, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_arguments_no_object_is_a_wrong_argument_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = serve(&tmp.path().join("data"), tmp.path());
    p.send(INIT).await;
    assert_eq!(p.answer().await["id"], 0);
    p.send(INITIALIZED).await;
    for (id, arguments, kind) in [
        (1, r#""phx""#, "a string"),
        (2, "[1]", "an array"),
        (3, "42", "a number"),
    ] {
        p.send(&raw_call(
            id,
            &format!(r#"{{"name":"search","arguments":{arguments}}}"#),
        ))
        .await;
        let a = p.answer().await;
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(id), json!(-32602)),
            "{a}"
        );
        let message = a["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`arguments` of `tools/call` must be an object")
                && message.ends_with(&format!("not {kind}")),
            "{message}"
        );
        assert!(!message.contains("no method"), "{message}");
    }
    // A name that is no string: which tools there are.
    p.send(&raw_call(4, r#"{"name":7,"arguments":{}}"#)).await;
    let a = p.answer().await;
    assert_eq!(a["error"]["code"], -32602, "{a}");
    let message = a["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`name` of `tools/call` must be a tool's name")
            && message.contains("not a number")
            && message.contains("`search`"),
        "{message}"
    );
    // No tool of that name: the tools listed.
    p.send(&call(5, "nope", json!({}))).await;
    let a = p.answer().await;
    assert_eq!(a["error"]["code"], -32602, "{a}");
    let message = a["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(r#"tool "nope" not found; the tools are "#),
        "{message}"
    );
    for tool in [
        "`skim`",
        "`show`",
        "`search`",
        "`recall_brief`",
        "`recall_feedback`",
    ] {
        assert!(message.contains(tool), "{message}");
    }
    // The server goes on serving.
    p.send(&call(6, "search", json!({"query": "x"}))).await;
    let served = p.answer().await;
    assert_eq!(served["id"], 6, "{served}");
    assert!(served.get("result").is_some(), "{served}");
}
