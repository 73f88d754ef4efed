import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { app } from './lib/stores/app.svelte';
import { branches } from './lib/stores/branches.svelte';

// Start-up milestones are reported to the shell for scripts/measure-startup.sh.
app.mark('modules loaded');
// The first page is Branches: ask for it now, so the archive is read while the window lays out
// its first frame (the page's own load joins this one).
void branches.load();
const target = document.getElementById('app');
if (target === null) throw new Error('index.html has no #app element');

export default mount(App, { target });
