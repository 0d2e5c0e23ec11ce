-- 0008_agent_duration: the agent's own account of how long its session took
-- (Claude Code's and the stand-in's result event duration_ms), kept beside
-- wfb's wall clock (duration_ms) rather than instead of it: the two measure
-- different spans (the agent's from its own start, wfb's from the spawn to
-- the exit), and a disagreement is worth seeing. NULL: the agent reported
-- none, or reported something that is not a non-negative integer (never
-- coerced).
ALTER TABLE results ADD COLUMN agent_duration_ms INTEGER
    CHECK (agent_duration_ms IS NULL OR agent_duration_ms >= 0);
