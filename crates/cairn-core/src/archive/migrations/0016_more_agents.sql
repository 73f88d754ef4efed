-- Cairn reads more agents than Claude Code and Codex (GitHub Copilot CLI, Qwen Code, ...).
-- `sessions.agent` listed the two it first read; it now only refuses an empty name, and the
-- Rust side (`Agent::parse`) decides which names are agents, so the next agent needs no
-- migration. Only the text of the CHECK changes and every stored row satisfies the new one,
-- so the table definition is edited in place as 0009 did, not copied.
PRAGMA writable_schema = ON;

UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (agent IN (''claude'', ''codex''))',
    'CHECK (agent <> '''')')
WHERE type = 'table' AND name = 'sessions';

PRAGMA writable_schema = RESET;
