// Where the window is, and the way back. Routes and `cairn://` links are in `links.ts`.
import { parseLink, toLink, type Route } from './links';

export { LinkError, isSessionKey, parseLink, recordLink, toLink } from './links';
export type { Route, View } from './links';

/** The window's place and the way back. */
export class Router {
  current: Route = $state({ view: 'branches', branch: null, repo: null });
  /** Where Esc goes back to. */
  #history: Route[] = [];
  /** The last link that could not be opened, and why. */
  linkError: string | null = $state(null);

  get canGoBack(): boolean {
    return this.#history.length > 0;
  }

  go(route: Route): void {
    if (toLink(route) === toLink(this.current)) return;
    this.#history.push(this.current);
    if (this.#history.length > 100) this.#history.shift();
    this.current = route;
    this.linkError = null;
  }

  /** Replace the current place without adding to the way back (e.g. picking a branch). */
  replace(route: Route): void {
    this.current = route;
  }

  /** Go back one step; false when there is nowhere to go. */
  back(): boolean {
    const previous = this.#history.pop();
    if (previous === undefined) return false;
    this.current = previous;
    return true;
  }

  /** Open a `cairn://` link; false (and `linkError` set) when it is not valid. */
  open(link: string): boolean {
    try {
      this.go(parseLink(link.trim()));
      return true;
    } catch (error) {
      this.linkError = `Cannot open ${link.slice(0, 120)}: ${error instanceof Error ? error.message : String(error)}`;
      return false;
    }
  }
}

export const router = new Router();
