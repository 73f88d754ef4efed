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
  | { type: 'leave-field' };

/** What a key press means to the window: j/k and arrows move, Enter opens, / searches, Esc goes
 * back (or leaves a text field). Null for keys the window leaves alone. */
export function keyAction(event: KeyboardEvent): KeyAction | null {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return null;
  const typing = isTextEntry(event.target);
  if (event.key === 'Escape') return typing ? { type: 'leave-field' } : { type: 'back' };
  if (typing) return null;
  // Buttons and links handle their own Enter.
  const onControl = event.target instanceof HTMLButtonElement || event.target instanceof HTMLAnchorElement;
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
    default:
      return null;
  }
}
