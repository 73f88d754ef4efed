-- The capture writer's hot tables checked their enumerated columns with `col IN (...)`. SQLite
-- evaluates such a CHECK by building a temporary B-tree of the list for every inserted row:
-- four of them per record insert, about an eighth of the writer's time in a cold sync. The
-- same constraints written as chains of `=` allow exactly the same values and cost a few
-- comparisons.
--
-- Only the text of the constraints changes, not what they accept, so the stored table
-- definitions are edited in place (SQLite documents this as safe for CHECK constraints) instead
-- of copying the records table, which can be gigabytes.
PRAGMA writable_schema = ON;

UPDATE sqlite_schema SET sql = replace(replace(replace(replace(sql,
    'CHECK (kind IN (''message'', ''tool_call'', ''tool_result'', ''reasoning'', ''event''))',
    'CHECK (kind = ''message'' OR kind = ''tool_call'' OR kind = ''tool_result'' OR kind = ''reasoning'' OR kind = ''event'')'),
    'CHECK (tool_kind IN (''exec'', ''file_edit'', ''sub_agent'', ''housekeeping'', ''web_search'', ''other''))',
    'CHECK (tool_kind = ''exec'' OR tool_kind = ''file_edit'' OR tool_kind = ''sub_agent'' OR tool_kind = ''housekeeping'' OR tool_kind = ''web_search'' OR tool_kind = ''other'')'),
    'CHECK (outcome IN (''succeeded'', ''failed'', ''could_not_execute''))',
    'CHECK (outcome = ''succeeded'' OR outcome = ''failed'' OR outcome = ''could_not_execute'')'),
    'CHECK (prompt_source IN (''human'', ''spawned_agent'', ''system_injected''))',
    'CHECK (prompt_source = ''human'' OR prompt_source = ''spawned_agent'' OR prompt_source = ''system_injected'')')
WHERE type = 'table' AND name = 'records';

UPDATE sqlite_schema SET sql = replace(replace(sql,
    'CHECK (capture_kind IN (''backfill'', ''incremental''))',
    'CHECK (capture_kind = ''backfill'' OR capture_kind = ''incremental'')'),
    'CHECK (trigger IN (''hook'', ''sync''))',
    'CHECK (trigger = ''hook'' OR trigger = ''sync'')')
WHERE type = 'table' AND name = 'captures';

UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (confidence IN (''definite'', ''candidate''))',
    'CHECK (confidence = ''definite'' OR confidence = ''candidate'')')
WHERE type = 'table' AND name = 'secret_findings';

-- Off, and the connection's parsed schema dropped so it reads the new definitions.
PRAGMA writable_schema = RESET;
