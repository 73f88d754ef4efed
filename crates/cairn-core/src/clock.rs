//! The crate's one clock: the time Cairn stamps on what it stores (captures, links, ledger
//! events, extraction runs, vectors, reports), as RFC 3339 UTC with milliseconds.
//!
//! It sits on the bottom floor so every room reads the same clock without reaching into the
//! archive for it.

/// Now, as stored: `2026-01-02T03:04:05.678Z` (sorts as text in time order).
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
