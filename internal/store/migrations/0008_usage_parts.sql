-- The token ledger of each model call (issue 37): a JSON array of
-- {part, tokens, cached} for the prompt's system, tools, history, injected
-- context and new input; '' for calls recorded without one.

ALTER TABLE usage ADD COLUMN parts TEXT NOT NULL DEFAULT '';
