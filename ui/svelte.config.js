// Read by vite-plugin-svelte, svelte-check and eslint-plugin-svelte.
/** @type {import('@sveltejs/vite-plugin-svelte').SvelteConfig} */
export default {
  compilerOptions: {
    runes: true,
  },
};
