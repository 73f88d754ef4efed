"""Drive `cairn mcp` with the reference MCP client (the official Python SDK, PyPI `mcp`).

Run by tests/cli/mcp.rs against a throwaway archive:
    client.py <cairn binary> <working dir> <secret> [<secret>...]
Environment: CAIRN_DATA_DIR and HOME for the server. Prints one JSON line of what it saw
(tool names, the proposal's entry id) for the Rust side; exits non-zero with a message on the
first failed check.
"""

import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.types import Implementation

# Bidi embeddings, overrides and isolates: they reorder (or hide inside a word) what a reader sees.
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

TOOLS = {"skim", "show", "search", "why", "recall_query", "recall_brief", "recall_propose", "recall_feedback"}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class Checker:
    def __init__(self, session, secrets):
        self.session = session
        self.secrets = secrets
        self.seen = []

    def no_secret(self, where, text):
        for s in self.secrets:
            check(s not in text, f"{where}: a planted secret appears in the answer")
        hidden = [c for c in text if c in "\x1b\x07\x7f" or "\x80" <= c <= "\x9f" or c in BIDI]
        check(not hidden, f"{where}: control or bidi characters appear in the answer: {hidden!r}")

    async def ok(self, tool, args):
        res = await self.session.call_tool(tool, args)
        text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
        check(not res.is_error, f"{tool}({args}) failed: {text}")
        self.no_secret(tool, text)
        check(len(text.encode()) <= 48 * 1024 + 1024, f"{tool}: answer of {len(text)} bytes is over the budget")
        value = json.loads(text)
        self.seen.append(tool)
        return value

    async def protocol_error(self, tool, args, expect):
        """A call the protocol refuses (a tool the server does not have): a JSON-RPC error
        whose message says `expect`."""
        try:
            res = await self.session.call_tool(tool, args)
        except MCPError as e:
            msg = str(e.error.message if hasattr(e, "error") else e)
            self.no_secret(f"{tool} error", msg)
            check(expect.lower() in msg.lower(), f"{tool}({args}): error {msg!r} does not say {expect!r}")
            check(len(msg) <= 601 and "\n" not in msg, f"{tool}: the error is not one line of at most 600 characters")
            return msg
        fail(f"{tool}({args}) was answered, not refused by the protocol: {res}")

    async def error(self, tool, args, expect):
        """A call of a tool the server has, refused: the tool's result marked `isError` (the
        MCP spec's place for input validation errors, which the model reads and can correct),
        one clean line saying `expect`; never a JSON-RPC error."""
        try:
            res = await self.session.call_tool(tool, args)
        except MCPError as e:
            fail(f"{tool}({args}): a JSON-RPC error, not the tool's isError answer: {e}")
        text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
        check(res.is_error, f"{tool}({args}) was not refused: {text[:300]}")
        self.no_secret(f"{tool} error", text)
        check(expect.lower() in text.lower(), f"{tool}({args}): error {text!r} does not say {expect!r}")
        check(len(text) <= 601 and "\n" not in text, f"{tool}: the refusal is not one line of at most 600 characters")
        return text

    async def refused(self, tool, args, expect):
        """A call the archive cannot serve yet: the tool's own answer marked `isError` (which
        the model reads), not a JSON-RPC error, saying `expect`."""
        res = await self.session.call_tool(tool, args)
        text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
        check(res.is_error, f"{tool}({args}) was not refused: {text[:300]}")
        self.no_secret(f"{tool} refusal", text)
        check(expect.lower() in text.lower(), f"{tool}({args}): {text!r} does not say {expect!r}")
        return text


async def main():
    binary, cwd, *secrets = sys.argv[1:]
    import os
    # The client passes the server only a few environment variables: name the archive.
    params = StdioServerParameters(command=binary, args=["--data-dir", os.environ["CAIRN_DATA_DIR"], "mcp"], cwd=cwd)
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, client_info=Implementation(name="reference-client", version="1.0")
        ) as session:
            init = await session.initialize()
            check(init.server_info.name == "cairn", f"server name {init.server_info.name}")
            check(init.capabilities.tools is not None, "no tools capability")
            # Tools only, yet a client that lists resources and prompts on connect (as Claude
            # Desktop and Cursor do) is answered empty lists, not an error it logs.
            check(init.capabilities.resources is None and init.capabilities.prompts is None,
                  f"capabilities beyond tools: {init.capabilities}")
            check((await session.list_resources()).resources == [], "resources/list is not empty")
            check((await session.list_resource_templates()).resource_templates == [],
                  "resources/templates/list is not empty")
            check((await session.list_prompts()).prompts == [], "prompts/list is not empty")

            listed = await session.list_tools()
            tools = {t.name: t for t in listed.tools}
            check(set(tools) == TOOLS, f"tools {sorted(tools)}")
            for t in listed.tools:
                check(len(t.description or "") > 60, f"{t.name}: description too short for a model to choose by")
                schema = t.input_schema
                check(schema.get("type") == "object", f"{t.name}: input schema is not an object")
                for name, prop in schema.get("properties", {}).items():
                    check(prop.get("description") or "$ref" in json.dumps(prop) or "anyOf" in prop or "oneOf" in prop,
                          f"{t.name}.{name}: no description")
            check("address" in tools["show"].input_schema.get("required", []), "show: address is not required")
            check(set(tools["recall_propose"].input_schema.get("required", [])) >= {"type", "title", "body", "evidence"},
                  "recall_propose: required fields")
            check(set(tools["recall_feedback"].input_schema.get("required", [])) >= {"entry_id", "verdict"},
                  "recall_feedback: required fields")
            # What each tool does to the archive, for a client deciding what to run unasked: the
            # four readers change nothing; the Recall tools add, never destroy; none reaches out.
            for name, t in tools.items():
                a = t.annotations
                check(a is not None, f"{name}: no annotations")
                check(a.open_world_hint is False, f"{name}: openWorldHint {a.open_world_hint}")
                reads = name in {"skim", "show", "search", "why"}
                check(a.read_only_hint is reads, f"{name}: readOnlyHint {a.read_only_hint}")
                if not reads:
                    check(a.destructive_hint is False, f"{name}: destructiveHint {a.destructive_hint}")

            for kind in ("wrote_line", "wrote_lines", "edited_path", "ai_note", "search"):
                check(kind in (tools["why"].description or ""), f"why: description does not name the evidence {kind}")

            c = Checker(session, secrets)

            # skim: the fixture branch, then a cursor walk.
            sk = await c.ok("skim", {"target": "master", "include_weak": True, "limit": 1})
            check(sk["target_key"] == "ref:refs/heads/master", f"skim target {sk['target_key']}")
            check(len(sk["sessions"]) == 1, "skim limit 1 returned more or less than one session")
            pages = 1
            cursor = sk["next_cursor"]
            while cursor and pages < 20:
                more = await c.ok("skim", {"target": "master", "include_weak": True, "limit": 1, "cursor": cursor})
                check(len(more["sessions"]) == 1, "skim page without a session")
                check(more["sessions"][0]["address"] != sk["sessions"][0]["address"], "skim page repeats the first")
                cursor = more["next_cursor"]
                pages += 1
            check(pages >= 2, "skim never offered a cursor over several sessions")
            # The default target is the branch checked out in the server's cwd.
            # One agent's sessions: the fixture branch has only Claude's.
            claude_only = await c.ok("skim", {"target": "master", "include_weak": True, "agent": "claude"})
            check(claude_only["sessions"] and all(s["agent"] == "claude" for s in claude_only["sessions"]),
                  "skim agent=claude returned another agent's session")
            codex_only = await c.ok("skim", {"target": "master", "include_weak": True, "agent": "codex"})
            check(codex_only["sessions"] == [], "skim agent=codex returned Claude's sessions")
            default = await c.ok("skim", {})
            check(default["target_key"] == "ref:refs/heads/master", f"default skim target {default['target_key']}")

            # show: a session, a page back, a turn, a record (the fixture session with the
            # most turns, found through skim).
            main = await c.ok("skim", {"target": "main", "include_weak": True})
            longest = max(main["sessions"], key=lambda s: s["turn_count"])
            check(longest["turn_count"] > 2, "no fixture session with several turns on main")
            key = longest["address"].removeprefix("cairn://session/")
            sess = await c.ok("show", {"address": f"cairn://session/{key}", "limit": 2})
            check(len(sess["turns"]) <= 2 and sess["turns"], "show session: turns")
            check(sess["next_cursor"], "show session: no cursor though the session has more turns")
            older = await c.ok("show", {"address": f"cairn://session/{key}", "limit": 2, "cursor": sess["next_cursor"]})
            check(older["turns"][0]["turn_index"] < sess["turns"][-1]["turn_index"], "show cursor did not go back")
            turn = await c.ok("show", {"address": sess["turns"][0]["address"]})
            check(turn["records"], "show turn: no records")
            rec_addr = turn["records"][-1]["address"]
            rec = await c.ok("show", {"address": rec_addr})
            # The record in its turn with those around it, as `cairn show` gives it: marked.
            cited = [r for r in rec["records"] if r["cited"]]
            check(len(cited) == 1 and cited[0]["address"] == rec_addr, "show record")

            # search: lexical with filters, then a cursor.
            hits = await c.ok("search", {"query": "phoenix", "agent": "claude", "branch": "master", "limit": 1})
            check(len(hits["hits"]) == 1, "search found nothing")
            check(hits["next_cursor"], "search: no cursor")
            page2 = await c.ok("search", {"query": "phoenix", "agent": "claude", "branch": "master", "limit": 1,
                                          "cursor": hits["next_cursor"]})
            check(page2["hits"] and page2["hits"][0]["address"] != hits["hits"][0]["address"], "search page 2")
            # A cursor belongs to the query that returned it: with other words it would skip
            # their first results unseen, so it is refused.
            await c.error("search", {"query": "phoenix server", "limit": 1, "cursor": hits["next_cursor"]},
                          "a cursor belongs to the query that returned it")
            # The planted secret's context is searchable, the secret is not in the answer; nor is
            # the key an invisible character split, in the hit or the record it leads to.
            await c.ok("search", {"query": "deploy token"})
            release = await c.ok("search", {"query": "release key"})
            check(release["hits"], "search: the record with the hidden key was not found")
            await c.ok("show", {"address": release["hits"][0]["address"]})
            # A NUL or another control character in the words separates them; no server error.
            nul = await c.ok("search", {"query": "\u0007phoenix\u0000", "limit": 1})
            check(len(nul["hits"]) == 1, f"search with a NUL: {nul}")

            # why: a description is looked up among the sessions of the server's repository
            # (none ran in it: an empty answer pointing at search); a commit of the server's
            # repository (no session made it); a path out of the repository is refused.
            w = await c.ok("why", {"target": "phoenix server", "limit": 2})
            check(w["kind"] == "description" and w["sessions"] == [] and "`search`" in w.get("hint", ""),
                  f"why description outside the sessions' repository: {w}")
            head = await c.ok("why", {"target": "HEAD"})
            check(head["kind"] == "commit" and head["commits"][0]["subject"] == "init" and head["sessions"] == [],
                  f"why HEAD: {head}")
            await c.error("why", {"target": "../../../../../../etc/passwd:1"},
                          "outside this repository (the one `cairn mcp -C <dir>` serves)")
            await c.error("why", {"target": "x\u001b[2J"}, "control or invisible characters")
            await c.error("why", {"target": "x", "limit": 100}, "limit")

            # Recall answers for the repository the server runs in (`repo`, whose entries are
            # none): empty, saying what to try; the fixture's project when asked for by name.
            here = await c.ok("recall_query", {"query": "phoenix server"})
            check(here["entries"] == [] and here["scope"]["repo"] == "repo", f"recall_query here: {here}")
            check("`repo`" in here.get("hint", ""), f"recall_query here: no hint {here}")
            # Recall: trusted only by default; the proposal.
            q = await c.ok("recall_query", {"query": "phoenix server", "repo": "spotter"})
            check(all(e["project"] == "spotter" for e in q["entries"]), "recall_query: another project's entry")
            check(q["entries"], "recall_query: no trusted entry")
            check(all(e["trusted"] for e in q["entries"]), "recall_query served an untrusted entry by default")
            check(q.get("vectors_pending") == 0, f"recall_query: vectors_pending is {q.get('vectors_pending')!r}")
            entry = q["entries"][0]
            check(entry["evidence"] and entry["evidence"][0]["address"].startswith("cairn://session/"), "evidence address")
            check("changed_since_cited" in entry["evidence"][0], "evidence: no changed_since_cited")
            brief = await c.ok("recall_brief", {"query": "phoenix server", "max_tokens": 200, "repo": "spotter"})
            check(brief["text"] and brief["estimated_tokens"] <= 200, f"brief: {brief['estimated_tokens']} tokens")
            check(brief["text"].startswith("Reviewed notes from past sessions in spotter"), f"brief: {brief['text'][:80]}")
            # Every project's brief, for a server started where no repository is: headed so.
            every = await c.ok("recall_brief", {"query": "phoenix server", "all_repos": True})
            check(every["scope"]["repo"] is None and every["entries"], f"recall_brief all_repos: {every}")
            check(every["text"].startswith("Reviewed notes from past sessions in every project"),
                  f"recall_brief all_repos: {every['text'][:80]}")
            await c.error("recall_brief", {"all_repos": True, "repo": "spotter"}, "not both")

            prop_args = {
                "type": "warning",
                "title": "Phoenix needs the dev database up",
                "body": f"Start postgres before mix phx.server; the token {secrets[0]} is not needed.",
                "evidence": [f"cairn://session/{key}?record=1-2"],
                "session": "agent-session-1",
                "turn": "3",
            }
            p = await c.ok("recall_propose", prop_args)
            check(not p["duplicate"] and p["review_state"] == "unreviewed_auto" and not p["trusted"], f"propose: {p}")
            again = await c.ok("recall_propose", prop_args)
            check(again["duplicate"] and again["entry_id"] == p["entry_id"], "the same proposal twice is not one entry")
            # The same proposal citing what does not exist is refused like any, not answered as
            # the duplicate it would be.
            await c.error("recall_propose",
                          dict(prop_args, evidence=[f"cairn://session/{key}?record=900000"]), "record")
            trusted = await c.ok("recall_query", {"query": "dev database", "all_repos": True})
            check(all(e["id"] != p["entry_id"] for e in trusted["entries"]), "a proposal was served as trusted")
            untrusted = await c.ok("recall_query", {"query": "dev database", "include_untrusted": True, "all_repos": True})
            found = [e for e in untrusted["entries"] if e["id"] == p["entry_id"]]
            check(found and not found[0]["trusted"], "include_untrusted did not return the proposal, untrusted")
            # A brief holding it does not call its notes reviewed.
            mixed = await c.ok("recall_brief", {"query": "dev database", "include_untrusted": True, "all_repos": True})
            check(any(e["id"] == p["entry_id"] and not e["trusted"] for e in mixed["entries"]),
                  f"recall_brief include_untrusted: no proposal {mixed}")
            check(not mixed["text"].startswith("Reviewed") and "Unreviewed" in mixed["text"],
                  f"recall_brief include_untrusted: {mixed['text'][:120]}")
            # A secret a control character ends (which cleaning would glue to the next word) is
            # stored redacted: `ok` checks no answer carries it.
            aws = "AKIA" + "IOSFODNN7" + "EXAMPLE"  # AWS documentation example key, built, not written
            c.secrets.append(aws)
            glued = await c.ok("recall_propose", dict(prop_args, title="Glued secret",
                                                      body=f"the key {aws}\u0000nul and {secrets[0]}\u0000nul stay out",
                                                      trigger=f"trig {aws}\u0007abc"))
            await c.ok("recall_query", {"query": "glued secret", "include_untrusted": True, "all_repos": True})
            await c.ok("recall_brief", {"query": "glued secret", "include_untrusted": True, "repo": "spotter"})
            check(not glued["duplicate"], f"propose: {glued}")

            # Feedback refused (no such entry) does not use up the session's allowance of 100.
            for n in range(101):
                await c.error("recall_feedback", {"entry_id": f"missing-{n}", "verdict": "helpful"}, f"missing-{n}")
            fb = await c.ok("recall_feedback", {"entry_id": entry["id"], "verdict": "helpful",
                                                "query_id": q["query_id"], "note": "it worked"})
            check(fb["helpful"] == 1, f"feedback: {fb}")
            # One verdict per entry per server session: a second replaces the first.
            fb = await c.ok("recall_feedback", {"entry_id": entry["id"], "verdict": "helpful"})
            check(fb["helpful"] == 1, f"a session's second verdict counted twice: {fb}")
            await c.error("recall_feedback", {"entry_id": entry["id"], "verdict": "wrong", "query_id": "not-a-query"},
                          "no query of this archive")
            # What an agent names itself, its session and its turn are its words: a secret there
            # is stored redacted (the Rust side looks in every table).
            await c.ok("recall_propose", dict(prop_args, title="Who said it", session=f"s-{secrets[0]}",
                                              turn=f"t-{aws}", agent=f"agent-{aws}"))
            await c.ok("recall_query", {"query": "dev database", "session": f"s-{secrets[0]}",
                                        "branch": f"b-{secrets[0]}"})

            # Bad input: each the tool's isError answer with a clear message (a tool the server
            # lacks: a JSON-RPC error); the server keeps serving.
            await c.protocol_error("no_such_tool", {}, "not found; the tools are `recall_brief`, `recall_feedback`")
            await c.error("search", {"query": 42}, "invalid type")
            await c.error("search", {"query": "x", "limit": "ten"}, "invalid type")
            await c.error("search", {"query": "x", "limit": 10**9}, "limit")
            await c.error("search", {"query": "x", "limit": 2.5}, "`limit` to be a whole number from 1 to 100")
            # Below, at or above the range: one message with the real range.
            for bad in (-1, 0, 51):
                await c.error("skim", {"limit": bad}, "`limit` to be a whole number from 1 to 50")
            await c.error("skim", {"limit": 100000}, "limit")
            await c.error("skim", {"agent": "nosuch"}, "expected one of claude")
            await c.error("skim", {"agent": 7}, "invalid type")
            await c.error("recall_query", {"agent": "x" * 100000}, "`agent`")
            await c.error("show", {}, "missing field `address`")
            await c.error("show", {"address": "cairn://session/sha256-nope"}, "sha256-nope")
            await c.error("show", {"address": f"cairn://session/{key}?record=999999"}, "no record")
            await c.error("show", {"address": f"cairn://session/{secrets[0]}"}, "session")
            await c.error("search", {"query": "x", "cursor": "skim.3"}, "cursor")
            await c.error("search", {"query": "x", "since": "yesterday"}, "not a date")
            await c.error("recall_feedback", {"entry_id": "nope", "verdict": "meh"}, "expected `helpful` or `wrong`")
            await c.error("recall_feedback", {"entry_id": "nope", "verdict": "wrong"}, "nope")
            await c.error("recall_propose", dict(prop_args, evidence=[]), "evidence")
            await c.error("recall_propose", dict(prop_args, title="\u200b\ufeff \u00ad"), "`title` is empty")
            await c.error("recall_propose", dict(prop_args, title="Other", evidence=["cairn://session/sha256-nope?record=1"]), "not in the archive")
            await c.error("recall_propose", dict(prop_args, title="Other", evidence=[f"cairn://session/{key}?record=999990-999991"]), "evidence")
            await c.error("recall_brief", {"max_tokens": 10**6}, "max_tokens")
            await c.error("search", {"query": "x", "extra": 1}, "unknown field")
            # rmcp quotes a field it does not know whole; the client gets one clean line.
            await c.error("skim", {"\x1b]0;owned\x07" + "k" * 5000: 1}, "unknown field")
            # No vectors in this archive: the agent is told, in the answer, to search by words.
            await c.refused("search", {"query": "phoenix", "mode": "hybrid"}, "lexical")

            # A session proposes at most 20 entries, even sent all at once (three were made
            # above, and the refused ones above took none); past the cap, the tool says so.
            async def attempt(n):
                try:
                    res = await c.session.call_tool("recall_propose", dict(
                        prop_args, title=f"Parallel proposal {n}", body=f"Parallel body number {n}"))
                except MCPError as e:
                    fail(f"the proposal cap is a JSON-RPC error, not the tool's answer: {e}")
                if res.is_error:
                    text = "".join(b.text for b in res.content if getattr(b, "type", "") == "text")
                    check("already proposed 20" in text, f"a refused proposal: {text}")
                return not res.is_error
            made = await asyncio.gather(*(attempt(n) for n in range(30)))
            check(sum(made) == 17, f"{sum(made)} of 30 proposals sent at once were kept; the cap leaves 17")

            still = await c.ok("search", {"query": "phoenix", "limit": 1})
            check(still["hits"], "the server stopped answering after bad input")
            # JSON Schema's integer: a number without a fraction, however written.
            as_float = await c.ok("search", {"query": "phoenix", "limit": 1.0})
            check(len(as_float["hits"]) == 1, f"limit 1.0 is not 1: {as_float}")

            check(set(c.seen) == TOOLS, f"not every tool was called: {sorted(set(c.seen))}")
            print(json.dumps({"tools": sorted(tools), "proposal": p["entry_id"], "helpful_entry": entry["id"]}))


asyncio.run(main())
