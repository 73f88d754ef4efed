// A fake OpenAI-compatible server for the e2e journeys, on 127.0.0.1 only (node:http, no
// dependencies). It answers `GET /v1/models` with one model and `POST /v1/chat/completions` the
// way tests/support/fake_llm.rs does: one entry per unit, titled "Records FIRST-LAST: …" and citing
// the unit's first ordinal, inside a chat completion. It records every request and what it found
// wrong with one (a missing or wrong bearer key, a chat request not shaped as Cairn's extraction
// sends it), counts the entries it served, and can hold its chat answers until released, so a
// journey can watch a pass run.
//
// Journeys import `startFakeLlm`; `node tests/e2e/fake-llm.mjs` runs one by hand
// (CAIRN_E2E_LLM_PORT, CAIRN_E2E_LLM_KEY) and prints its base URL.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** What is wrong with a chat request's shape (as tests/support/fake_llm.rs `chat_problems`). */
export function chatProblems(body) {
  const out = [];
  if (typeof body?.model !== 'string' || body.model === '') out.push('no model');
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  if (msgs.length !== 2 || msgs[0]?.role !== 'system' || msgs[1]?.role !== 'user') {
    out.push(`messages are not [system, user]: ${JSON.stringify(msgs.map((m) => m?.role))}`);
  }
  if (msgs.some((m) => typeof m?.content !== 'string' || m.content === '')) out.push('a message has no content');
  const rf = body?.response_format;
  if (rf?.type !== 'json_schema' || rf?.json_schema?.strict !== true) {
    out.push(`response_format is not a strict json_schema: ${JSON.stringify(rf)}`);
  }
  const items = rf?.json_schema?.schema?.properties?.entries?.items;
  if (items?.additionalProperties !== false || !Array.isArray(items?.required) || items.required.length === 0) {
    out.push('the schema does not pin the entry keys');
  }
  return out;
}

/** Ordinals labelled in a unit's text: `USER MESSAGE (ordinal N)` lines and `[N]` blocks. */
export function ordinals(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^USER MESSAGE \(ordinal (\d+)\)/.exec(line) ?? /^\[(\d+)\]/.exec(line);
    if (m) out.push(Number(m[1]));
  }
  return out;
}

/** The answer to a unit: one entry citing its first ordinal, none when it labels no ordinal. */
export function answer(user) {
  const at = user.indexOf('SEGMENT:\n');
  const segment = at >= 0 ? user.slice(at + 'SEGMENT:\n'.length) : user;
  const ords = ordinals(segment);
  if (ords.length === 0) return { entries: [] };
  const [first, last] = [ords[0], ords.at(-1)];
  const gist = [...(segment.split('\n')[1] ?? '')].slice(0, 60).join('');
  return {
    entries: [
      {
        type: segment.startsWith('USER MESSAGE') ? 'fact' : 'procedure',
        title: `Records ${first}-${last}: ${gist}`,
        body: `What happened in records ${first} to ${last}.`,
        trigger: `when revisiting record ${first}`,
        confidence: 0.75,
        entities: [`record-${first}`],
        evidence: { first, last: first },
      },
    ],
  };
}

/**
 * Start the server. `key`: the bearer key every request must carry (none: no Authorization
 * header allowed). `port` 0 picks a free one.
 */
export async function startFakeLlm({ key = '', model = 'e2e-fake-model', port = 0 } = {}) {
  const state = {
    requests: [],
    violations: [],
    entriesServed: 0,
    held: false,
    waiting: [],
  };
  const send = (res, status, value) => {
    const body = JSON.stringify(value);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').split('?')[0];
      const seen = { method: req.method, path, authorization: req.headers.authorization ?? null, body: text };
      state.requests.push(seen);
      const want = key ? `Bearer ${key}` : null;
      if (seen.authorization !== want) {
        state.violations.push(`${req.method} ${path}: authorization ${seen.authorization === null ? 'missing' : 'wrong'}`);
        return send(res, 401, { error: { message: 'invalid API key', type: 'invalid_request_error' } });
      }
      if (req.method === 'GET' && path === '/v1/models') {
        return send(res, 200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'cairn-e2e' }] });
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        return send(res, 404, { error: { message: 'no such route' } });
      }
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        state.violations.push('a chat request is not JSON');
        return send(res, 400, { error: { message: 'the body is not JSON' } });
      }
      state.violations.push(...chatProblems(body));
      const reply = answer(body?.messages?.[1]?.content ?? '');
      const respond = () => {
        state.entriesServed += reply.entries.length;
        send(res, 200, {
          id: `chatcmpl-e2e-${state.requests.length}`,
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(reply) }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 11, completion_tokens: 7 },
        });
      };
      if (state.held) state.waiting.push(respond);
      else respond();
    });
  });
  await new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolveListen);
  });
  const bound = server.address().port;
  const release = () => {
    state.held = false;
    for (const respond of state.waiting.splice(0)) respond();
  };
  return {
    url: `http://127.0.0.1:${bound}/v1`,
    port: bound,
    model,
    requests: () => [...state.requests],
    chats: () => state.requests.filter((r) => r.path === '/v1/chat/completions'),
    violations: () => [...state.violations],
    entriesServed: () => state.entriesServed,
    /** Hold chat answers until `release` (requests are still recorded as they come). */
    hold: () => {
      state.held = true;
    },
    release,
    close: () =>
      new Promise((resolveClose) => {
        release();
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const llm = await startFakeLlm({ key: process.env.CAIRN_E2E_LLM_KEY ?? '', port: Number(process.env.CAIRN_E2E_LLM_PORT ?? 0) });
  console.log(llm.url);
  const stop = () => void llm.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
