// Whether the window may write to the archive. A read-only archive (its folder or files not the
// person's to write, the disk full) is said once, in the notice at the top of the window; every
// button that would write (a review, an archive, a forget, a link correction, a pull, an
// extraction, a saved setting) is off meanwhile, its tooltip saying why, so no click ends in a
// refusal. App provides the answer; a component asks with `writeGate()` while it is made.
import { getContext, setContext } from 'svelte';

const KEY = Symbol('write-gate');

/** The tooltip of an action that is off because the archive is read-only. */
export const READ_ONLY_TITLE =
  'The archive is read-only, so this cannot be saved: the notice at the top of the window says why and how to make it writable';

/** Whether writes are off now, and the tooltip an action shows. */
export interface WriteGate {
  /** True while the archive is read-only. */
  readonly off: boolean;
  /** The tooltip of an action: why it is off, else its own (`usual`). */
  title(usual?: string): string | undefined;
}

/** Make `readOnly` the answer for every component below the caller (App). */
export function provideWriteGate(readOnly: () => boolean): void {
  setContext(KEY, readOnly);
}

/** The gate of the component being made. Outside App (a component mounted alone in a test) writes
 * are on. */
export function writeGate(): WriteGate {
  const readOnly = getContext<(() => boolean) | undefined>(KEY) ?? (() => false);
  return {
    get off() {
      return readOnly();
    },
    title: (usual) => (readOnly() ? READ_ONLY_TITLE : usual),
  };
}
