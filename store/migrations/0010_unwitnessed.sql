-- 0010_unwitnessed: a usage verdict for an attempt only its agent
-- witnessed. 'unwitnessed': the attempt was metered and its agent reported
-- billed usage (a token count or a cost), but no model request reached the
-- meter — the agent bypassed the base URL it was given (the sandbox shares
-- the host's network) or invented the figures. Its usage_check says what
-- the agent reported; the figures stay in the token columns as reported
-- (usage_source 'reported') unless the run required a witness, which
-- refuses the row. Nothing older is rewritten: before this migration such
-- an attempt had no verdict (NULL), and it keeps none.
DROP TRIGGER results_usage_verdict_check;
CREATE TRIGGER results_usage_verdict_check BEFORE INSERT ON results
WHEN (NEW.usage_verdict IS NOT NULL AND NEW.usage_verdict NOT IN ('agree', 'disagree', 'refused', 'unwitnessed'))
  OR ((NEW.usage_verdict IS NULL) <> (NEW.usage_check IS NULL))
BEGIN SELECT RAISE(ABORT, 'results.usage_verdict must be agree, disagree, refused or unwitnessed, and set exactly when usage_check is'); END;
