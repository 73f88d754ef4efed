// The context key under which the window gives components a way into Settings → Recall
// extraction (the router is the window's, so components do not import one of their own).
export const OPEN_EXTRACTION_SETUP = Symbol('open-extraction-setup');
