// The window's keyboard: the one map from key presses to actions (`keyAction`) and the one
// dispatch (`dispatchKey`) that hands each action to the window's controller, which asks the
// place on screen. Nothing else in the UI listens to window-wide keys.
import type { TriageVerb } from './place';

/** Is `target` a place where typing enters text (so single-letter shortcuts must not fire)? */
export function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) {
    return true;
  }
  return target instanceof HTMLInputElement && !['radio', 'checkbox', 'button', 'submit', 'reset'].includes(target.type);
}

export type KeyAction =
  | { type: 'move'; delta: number }
  | { type: 'edge'; to: 'first' | 'last' }
  | { type: 'open' }
  | { type: 'search' }
  | { type: 'back' }
  | { type: 'leave-field' }
  | { type: 'view'; index: number }
  | { type: 'triage'; verb: TriageVerb };

/** The Recall inbox's review letters. */
const TRIAGE: Readonly<Record<string, TriageVerb>> = { a: 'accept', r: 'reject', e: 'edit', m: 'merge', x: 'tick' };

/** What a key press means to the window: j/k and arrows move, Enter opens, / searches, Esc goes
 * back (or leaves a text field), 1–9 go to the nth view's tab, a/r/e/m/x review. Null for keys
 * the window leaves alone. */
export function keyAction(event: KeyboardEvent): KeyAction | null {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return null;
  const typing = isTextEntry(event.target);
  if (event.key === 'Escape') return typing ? { type: 'leave-field' } : { type: 'back' };
  if (typing) return null;
  // Buttons, links and a disclosure's summary (it opens and closes its list) handle their own Enter.
  const onControl =
    event.target instanceof HTMLButtonElement ||
    event.target instanceof HTMLAnchorElement ||
    (event.target instanceof HTMLElement && event.target.tagName === 'SUMMARY');
  switch (event.key) {
    case 'j':
    case 'ArrowDown':
      return { type: 'move', delta: 1 };
    case 'k':
    case 'ArrowUp':
      return { type: 'move', delta: -1 };
    case 'PageDown':
      return { type: 'move', delta: 10 };
    case 'PageUp':
      return { type: 'move', delta: -10 };
    case 'Home':
      return { type: 'edge', to: 'first' };
    case 'End':
      return { type: 'edge', to: 'last' };
    case 'Enter':
      return onControl ? null : { type: 'open' };
    case '/':
      return { type: 'search' };
    default: {
      if (/^[1-9]$/.test(event.key)) return { type: 'view', index: Number(event.key) - 1 };
      const verb = TRIAGE[event.key];
      return verb ? { type: 'triage', verb } : null;
    }
  }
}

/** What the keys act on: the window's controller, which asks the place on screen. Each returns
 * false when the place has no use for the key. */
export interface KeyHandler {
  move(delta: number): boolean;
  open(): boolean;
  search(): void;
  back(): void;
  /** Go to the view of the `index`th tab (0 first); false when there is none. */
  view(index: number): boolean;
  triage(verb: TriageVerb): boolean;
}

/** Carry out the key's action on `handler`; the key's default is prevented only when it was used
 * (Settings keeps the arrows and End for scrolling). True when the key was used. */
export function dispatchKey(event: KeyboardEvent, handler: KeyHandler): boolean {
  const action = keyAction(event);
  if (action === null || !perform(action, event.target, handler)) return false;
  event.preventDefault();
  return true;
}

function perform(action: KeyAction, target: EventTarget | null, handler: KeyHandler): boolean {
  switch (action.type) {
    case 'move':
      return handler.move(action.delta);
    case 'edge':
      return handler.move(action.to === 'first' ? -1e9 : 1e9);
    case 'open':
      return handler.open();
    case 'search':
      handler.search();
      return true;
    case 'back':
      handler.back();
      return true;
    case 'leave-field':
      (target as HTMLElement).blur();
      return true;
    case 'view':
      return handler.view(action.index);
    case 'triage':
      return handler.triage(action.verb);
  }
}
