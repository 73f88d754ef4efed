// Facts about the running app (data dir, version), loaded once for the footer.
import { backend, type AppInfo, type AppInfoBackend } from '../api';

export class AppInfoStore {
  info: AppInfo | null = $state(null);
  readonly #backend: AppInfoBackend;

  constructor(api: AppInfoBackend = backend) {
    this.#backend = api;
  }

  async load(): Promise<void> {
    try {
      this.info = await this.#backend.appInfo();
    } catch {
      // The footer is informational; the session list reports real failures.
      this.info = null;
    }
  }
}

export const appInfo = new AppInfoStore();
