// The keyboard map and its dispatch: which key means what, where a key is left alone, and that a
// key's default is kept unless the window used it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dispatchKey, keyAction, type KeyHandler } from './keys';

afterEach(() => {
  document.body.innerHTML = '';
});

function key(name: string, init: KeyboardEventInit = {}, target?: HTMLElement): KeyboardEvent {
  const event = new KeyboardEvent('keydown', { key: name, bubbles: true, cancelable: true, ...init });
  if (target) {
    document.body.append(target);
    target.addEventListener('keydown', (e) => e.stopPropagation(), { once: true });
    target.dispatchEvent(event);
  }
  return event;
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  return el;
}

describe('the keyboard map', () => {
  it('moves with j/k, the arrows and the page keys, and jumps with Home/End', () => {
    expect(keyAction(key('j'))).toEqual({ type: 'move', delta: 1 });
    expect(keyAction(key('ArrowDown'))).toEqual({ type: 'move', delta: 1 });
    expect(keyAction(key('k'))).toEqual({ type: 'move', delta: -1 });
    expect(keyAction(key('ArrowUp'))).toEqual({ type: 'move', delta: -1 });
    expect(keyAction(key('PageDown'))).toEqual({ type: 'move', delta: 10 });
    expect(keyAction(key('PageUp'))).toEqual({ type: 'move', delta: -10 });
    expect(keyAction(key('Home'))).toEqual({ type: 'edge', to: 'first' });
    expect(keyAction(key('End'))).toEqual({ type: 'edge', to: 'last' });
  });

  it('opens with Enter, searches with /, goes back with Esc and reviews with a/r/e/x', () => {
    expect(keyAction(key('Enter'))).toEqual({ type: 'open' });
    expect(keyAction(key('/'))).toEqual({ type: 'search' });
    expect(keyAction(key('Escape'))).toEqual({ type: 'back' });
    expect(keyAction(key('a'))).toEqual({ type: 'triage', verb: 'accept' });
    expect(keyAction(key('r'))).toEqual({ type: 'triage', verb: 'reject' });
    expect(keyAction(key('e'))).toEqual({ type: 'triage', verb: 'edit' });
    expect(keyAction(key('x'))).toEqual({ type: 'triage', verb: 'tick' });
    expect(keyAction(key('m'))).toEqual({ type: 'triage', verb: 'merge' });
    expect(keyAction(key('q'))).toBeNull();
    expect(keyAction(key('A'))).toBeNull();
  });

  it('goes to the nth view with the digits 1–9, and leaves 0 and digits typed in a field alone', () => {
    expect(keyAction(key('1'))).toEqual({ type: 'view', index: 0 });
    expect(keyAction(key('6'))).toEqual({ type: 'view', index: 5 });
    expect(keyAction(key('0'))).toBeNull();
    expect(keyAction(key('3', {}, element('input')))).toBeNull();
    expect(keyAction(key('2', { ctrlKey: true }))).toBeNull();
  });

  it('leaves keys with a modifier, and keys already handled, alone', () => {
    expect(keyAction(key('j', { ctrlKey: true }))).toBeNull();
    expect(keyAction(key('a', { metaKey: true }))).toBeNull();
    expect(keyAction(key('Escape', { altKey: true }))).toBeNull();
    const handled = key('j');
    handled.preventDefault();
    expect(keyAction(handled)).toBeNull();
  });

  it('lets a text field keep its letters, Enter and arrows; Esc leaves the field', () => {
    for (const field of [element('input'), element('textarea'), element('select'), element('div', { contenteditable: 'true' })]) {
      expect(keyAction(key('j', {}, field))).toBeNull();
      expect(keyAction(key('a', {}, field))).toBeNull();
      expect(keyAction(key('/', {}, field))).toBeNull();
      expect(keyAction(key('Escape', {}, field))).toEqual({ type: 'leave-field' });
    }
    // A checkbox is not a text field.
    expect(keyAction(key('j', {}, element('input', { type: 'checkbox' })))).toEqual({ type: 'move', delta: 1 });
  });

  it('lets buttons, links and a disclosure take their own Enter', () => {
    expect(keyAction(key('Enter', {}, element('button')))).toBeNull();
    expect(keyAction(key('Enter', {}, element('a', { href: '#' })))).toBeNull();
    expect(keyAction(key('Enter', {}, element('summary')))).toBeNull();
    expect(keyAction(key('j', {}, element('button')))).toEqual({ type: 'move', delta: 1 });
  });
});

describe('the dispatch', () => {
  function handler(uses = true) {
    return {
      move: vi.fn(() => uses),
      open: vi.fn(() => uses),
      search: vi.fn(),
      back: vi.fn(),
      view: vi.fn(() => uses),
      triage: vi.fn(() => uses),
    } satisfies KeyHandler;
  }

  it('hands each action to the handler and prevents the default of a key it used', () => {
    const h = handler();
    const cases: [string, () => void][] = [
      ['j', () => expect(h.move).toHaveBeenLastCalledWith(1)],
      ['PageUp', () => expect(h.move).toHaveBeenLastCalledWith(-10)],
      ['Home', () => expect(h.move).toHaveBeenLastCalledWith(-1e9)],
      ['End', () => expect(h.move).toHaveBeenLastCalledWith(1e9)],
      ['Enter', () => expect(h.open).toHaveBeenCalledOnce()],
      ['/', () => expect(h.search).toHaveBeenCalledOnce()],
      ['Escape', () => expect(h.back).toHaveBeenCalledOnce()],
      ['r', () => expect(h.triage).toHaveBeenLastCalledWith('reject')],
      ['4', () => expect(h.view).toHaveBeenLastCalledWith(3)],
    ];
    for (const [name, check] of cases) {
      const event = key(name);
      expect(dispatchKey(event, h), name).toBe(true);
      expect(event.defaultPrevented, name).toBe(true);
      check();
    }
  });

  it('keeps the default of a key the place has no use for (the page scrolls)', () => {
    const h = handler(false);
    for (const name of ['ArrowDown', 'End', 'Enter', 'a']) {
      const event = key(name);
      expect(dispatchKey(event, h), name).toBe(false);
      expect(event.defaultPrevented, name).toBe(false);
    }
    const unmapped = key('q');
    expect(dispatchKey(unmapped, h)).toBe(false);
    expect(unmapped.defaultPrevented).toBe(false);
  });

  it('blurs the text field Esc leaves, without going back', () => {
    const h = handler();
    const field = element('input');
    document.body.append(field);
    field.focus();
    expect(document.activeElement).toBe(field);
    const event = key('Escape', {}, field);
    expect(dispatchKey(event, h)).toBe(true);
    expect(document.activeElement).not.toBe(field);
    expect(h.back).not.toHaveBeenCalled();
  });
});
