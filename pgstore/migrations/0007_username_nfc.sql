-- Usernames compare in Unicode normalisation form NFC as well as under
-- simple case folding (user.UsernameKey; docs: users.md "Usernames"), so
-- that "é" composed and "e" with a combining accent are one username.
-- username_key is recomputed by the application for every username that
-- is not plain ASCII, in the Go hook of this migration (foldUsernameKeys,
-- as for 0004): SQL has no NFC with case folding of its own. Two users of
-- one community whose usernames become one key make the migration fail,
-- naming both. Usernames themselves are not rewritten.
COMMENT ON COLUMN users.username_key IS 'user.UsernameKey(username): NFC, then Unicode simple case folding';
