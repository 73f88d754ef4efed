import { describe, expect, it } from 'vitest';
import { LinkError, parseLink, recordLink, toLink } from './links';

const KEY = 'sha256-0123456789abcdef0123456789abcdef';

describe('cairn:// links', () => {
  it('open a session at a record, the anchor of every evidence link', () => {
    expect(parseLink(`cairn://session/${KEY}?record=42`)).toEqual({ view: 'session', key: KEY, record: 42, turn: null });
    expect(parseLink(`cairn://session/${KEY}?turn=3`)).toEqual({ view: 'session', key: KEY, record: null, turn: 3 });
    expect(recordLink(KEY, 7)).toBe(`cairn://session/${KEY}?record=7`);
  });

  it('open a saved report, the link a generated insight carries', () => {
    expect(parseLink('cairn://recall?tab=generated&insight=42')).toEqual({ view: 'recall', tab: 'generated', insight: 42 });
    expect(parseLink('cairn://recall')).toEqual({ view: 'recall', tab: 'corpus', insight: null });
  });

  it('open a teammate’s session in the team archive by its key and publisher', () => {
    expect(parseLink(`cairn://team?session=${KEY}&publisher=alice`)).toEqual({ view: 'team', session: { key: KEY, publisher: 'alice' } });
    expect(toLink({ view: 'team', session: { key: KEY, publisher: 'bob' } })).toBe(`cairn://team?session=${KEY}&publisher=bob`);
    expect(parseLink('cairn://team')).toEqual({ view: 'team', session: null });
  });

  it('round-trip every place', () => {
    const routes = [
      { view: 'session', key: KEY, record: 0, turn: null },
      { view: 'branches', branch: 'ref:refs/heads/feature/a-b', repo: null },
      { view: 'branches', branch: 'ref:refs/heads/main', repo: '/home/a b/repo' },
      { view: 'branches', branch: 'ref:refs/heads/main', repo: null, project: 'my notes' },
      { view: 'branches', branch: 'ref:refs/heads/main', repo: null, project: '' },
      { view: 'branches', branch: null, repo: null },
      { view: 'search', q: 'flaky "test"' },
      { view: 'search', q: 'src/login.ts:3-9', why: { repo: '/home/a b/shop', session: null } },
      { view: 'search', q: 'a1b2c3d', why: { repo: null, session: KEY } },
      { view: 'search', q: 'why retries', why: { repo: null, session: null } },
      { view: 'sessions' },
      { view: 'settings' },
      { view: 'recall', tab: 'inbox', insight: null },
      { view: 'recall', tab: 'agents', insight: null },
      { view: 'recall', tab: 'generated', insight: 12 },
      { view: 'team', session: null },
      { view: 'team', session: { key: KEY, publisher: 'alice_dev' } },
      { view: 'team', session: { key: KEY, publisher: 'renée.o-brien$2' } },
    ] as const;
    for (const route of routes) expect(parseLink(toLink(route))).toEqual(route);
  });

  it.each([
    ['https://example.com', 'not a cairn:// link'],
    ['cairn://session/../../etc/passwd', 'not a session key'],
    [`cairn://session/${KEY.toUpperCase()}`, 'not a session key'],
    [`cairn://session/${KEY}?record=12abc`, 'record must be a whole number'],
    [`cairn://session/${KEY}?record=-1`, 'record must be a whole number'],
    [`cairn://session/${KEY}?record=1e3`, 'record must be a whole number'],
    [`cairn://session/${KEY}?record=99999999999`, 'record must be a whole number'],
    [`cairn://session/${KEY}?turn=01`, 'turn must be a whole number'],
    ['cairn://branches?branch=main', 'not a branch key'],
    ['cairn://branches?branch=ref:refs/heads/main&project=a%1B%5B31m', 'project must be a name'],
    ['cairn://branches?branch=ref:refs/heads/main&project=a%E2%80%AEb', 'project must be a name'],
    [`cairn://branches?branch=ref:refs/heads/main&project=${'x'.repeat(201)}`, 'project must be a name'],
    ['cairn://ledger', 'not a place in Cairn'],
    ['cairn://recall?tab=secrets', 'tab must be one of corpus, inbox, agents, generated'],
    ['cairn://recall?tab=generated&insight=0', 'insight must be a report number'],
    ['cairn://recall?tab=generated&insight=1;drop', 'insight must be a report number'],
    ['cairn://recall?tab=generated&insight=12345678901234567', 'insight must be a report number'],
    ['cairn://recall?tab=inbox&insight=3', 'insight= belongs to tab=generated'],
    ['cairn://session/%E0%A4%A', 'malformed %-escape'],
    ['cairn://session/sha256-%', 'malformed %-escape'],
    ['cairn://session/%FF%FE', 'malformed %-escape'],
    ['cairn://search?q=HEAD&why=1&repo=relative/dir', 'repo must be an absolute path'],
    ['cairn://search?q=HEAD&why=1&repo=%2Fa%1B%5B31m', 'repo must be an absolute path'],
    ['cairn://search?q=HEAD&why=1&session=..%2F..%2Fetc', 'is not a session key'],
    [`cairn://search?q=HEAD&why=1&repo=%2Fa&session=${KEY}`, 'not both'],
    [`cairn://team?session=${KEY}`, 'needs both session= and publisher='],
    ['cairn://team?publisher=alice', 'needs both session= and publisher='],
    ['cairn://team?session=..%2F..%2Fetc&publisher=alice', 'is not a session key'],
    [`cairn://team?session=${KEY.toUpperCase()}&publisher=alice`, 'is not a session key'],
    [`cairn://team?session=${KEY}&publisher=`, 'publisher must be a database role'],
    [`cairn://team?session=${KEY}&publisher=a%1B%5B2Jb`, 'publisher must be a database role'],
    [`cairn://team?session=${KEY}&publisher=al%20ice`, 'publisher must be a database role'],
    [`cairn://team?session=${KEY}&publisher=a%E2%80%AEb`, 'publisher must be a database role'],
    [`cairn://team?session=${KEY}&publisher=${'a'.repeat(64)}`, 'publisher must be a database role'],
    [`cairn://team?session=${KEY}&publisher=${'é'.repeat(32)}`, 'publisher must be a database role'],
    // Decoded, these would put colour codes or a right-to-left override into the window's own words.
    ['cairn://search?q=%1b%5b31mred%1b%5b0m%e2%80%ae', 'control or invisible formatting characters'],
    ['cairn://search?q=abc%E2%80%AE', 'control or invisible formatting characters'],
    ['cairn://search?q=a%E2%81%A6b', 'control or invisible formatting characters'],
    ['cairn://search?q=a%E2%80%8Bb', 'control or invisible formatting characters'],
    ['cairn://search?q=line%0Abreak', 'control or invisible formatting characters'],
    ['cairn://branches?branch=ref:refs/heads/main&project=a%E2%80%8Fb', 'project must be a name'],
    ['cairn://settings?x=%00', 'control or invisible formatting characters'],
  ])('refuse %s', (link, why) => {
    expect(() => parseLink(link)).toThrow(LinkError);
    expect(() => parseLink(link)).toThrow(why);
  });

  it('take the joiners a script or an emoji needs, and a soft hyphen: words of their own', () => {
    for (const q of ['می\u200cخواهم', '👩\u200d💻 pairing', 'co\u00adoperate']) {
      expect(parseLink(toLink({ view: 'search', q }))).toEqual(expect.objectContaining({ view: 'search', q }));
    }
  });
});

/** A small seeded generator (mulberry32), so a failure names a link that replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('cairn:// links from outside (random)', () => {
  // What a hostile or broken link is made of: every place with its own parameters and others,
  // values each parameter takes and values none does (escapes whole and cut off, controls, bidi
  // overrides, path tricks, numbers out of range, a value too long).
  const places: Record<string, string[]> = {
    session: ['record', 'turn'],
    branches: ['branch', 'repo', 'project'],
    sessions: [],
    search: ['q', 'why', 'repo', 'session'],
    recall: ['tab', 'insight'],
    settings: [],
    team: ['session', 'publisher'],
    ledger: [],
    '': [],
  };
  const good: Record<string, string[]> = {
    path: [KEY],
    record: ['0', '42'],
    turn: ['3'],
    branch: ['ref:refs/heads/main', 'ref:refs/heads/a%20b'],
    repo: ['%2Fhome%2Fa', '/home/a%20b'],
    project: ['notes', 'my%20notes'],
    q: ['flaky', '%22x%22+OR+y', ''],
    why: ['1'],
    tab: ['generated', 'inbox', 'corpus', 'agents'],
    insight: ['7'],
    session: [KEY],
    publisher: ['alice', 'ren%C3%A9e.o-brien'],
  };
  const bad = [
    KEY.slice(0, 20), KEY.toUpperCase(), 'relative', '-1', '1e3', '99999999999', '01', '%', '%E0%A4%A', '%FF',
    '%1B%5B2J', '%E2%80%AE', '%00', '..%2F..', '+', ' ', '\u001b[31m', '\u202e', 'é', '\u0000', '#frag', '&', '=',
    'x'.repeat(600), '',
  ];
  const others = ['x', 'record', 'q', 'tab', 'session'];

  it('either open a place or say what is wrong, and the place opened is the link it writes', () => {
    const next = random(20261204);
    const pick = <T>(xs: readonly T[]): T => {
      const x = xs[Math.floor(next() * xs.length)];
      if (x === undefined) throw new Error('nothing to pick from');
      return x;
    };
    const value = (name: string) => (next() < 0.7 && good[name] ? pick(good[name]) : pick(bad));
    const opened = new Set<string>();
    for (let i = 0; i < 20000; i++) {
      const place = pick(Object.keys(places));
      let link = (next() < 0.95 ? 'cairn://' : pick(['', 'https://', 'cairn:', 'CAIRN://'])) + place;
      if (place === 'session' || next() < 0.1) link += `/${value('path')}${next() < 0.1 ? value('path') : ''}`;
      const n = Math.floor(next() * 4);
      const own = places[place] ?? [];
      for (let k = 0; k < n; k++) {
        const name = next() < 0.8 && own.length > 0 ? pick(own) : pick(others);
        link += `${k === 0 ? '?' : '&'}${name}=${value(name)}`;
      }
      let route;
      try {
        route = parseLink(link);
      } catch (e) {
        if (!(e instanceof LinkError)) throw new Error(`${JSON.stringify(link)} threw ${String(e)}`, { cause: e });
        continue;
      }
      // What opened is what its own link opens again.
      expect(parseLink(toLink(route)), JSON.stringify(link)).toEqual(route);
      opened.add(route.view === 'session' && route.record !== null && route.turn !== null ? 'session at a turn and record' : route.view);
    }
    // The generator reaches every place, so the round trip above is not vacuous.
    expect([...opened].sort()).toEqual(
      ['branches', 'recall', 'search', 'session', 'session at a turn and record', 'sessions', 'settings', 'team'].sort(),
    );
  });
});
