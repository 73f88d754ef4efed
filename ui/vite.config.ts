/// <reference types="vitest/config" />
// Vite root is ui/; one config serves `vite` (tauri dev), `vite build` (embedded by tauri build)
// and `vitest` (UI unit and component tests in happy-dom).
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

const uiDir = decodeURIComponent(new URL('.', import.meta.url).pathname);

export default defineConfig(({ mode }) => ({
  root: uiDir,
  plugins: [svelte()],
  // Vitest runs in Node: without the browser condition `svelte` resolves to its server build,
  // which cannot mount components.
  resolve: mode === 'test' ? { conditions: ['browser'] } : {},
  // Tauri prints its own output; keep Vite's visible above it.
  clearScreen: false,
  server: {
    port: 5173,
    strictPort: true,
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // WebKitGTK 2.50 (Debian 12) and current WebView2/WKWebView all handle ES2022.
    target: 'es2022',
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.ts'],
  },
}));
