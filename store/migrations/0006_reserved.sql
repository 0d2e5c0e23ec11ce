-- 0006_reserved: a placeholder. Version 6 belongs to another branch's
-- migration; this file only keeps the versions contiguous on the branch that
-- added 0007, and is deleted when that migration is merged.
SELECT 1;
