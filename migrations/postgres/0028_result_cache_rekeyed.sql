-- A job's result cache key was kept when a resume gave it a new input, when
-- a redrive ran it on a newer version's digest, and when it ended through a
-- fallback (issue 65): such a row served another digest's or another
-- input's output under the key. Every such path now writes the key again or
-- drops it; the rows keyed before cannot be told apart, so every key goes
-- (a later job runs once more, and is keyed by the rule).
UPDATE jobs SET cache_key = NULL WHERE cache_key IS NOT NULL;
