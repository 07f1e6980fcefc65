-- Usernames compare under Unicode simple case folding (user.UsernameKey;
-- docs: users.md), no longer under lower-casing: username_key is
-- recomputed by the application for every username that is not plain
-- ASCII (for ASCII both are the same), in the Go hook of this migration
-- (foldUsernameKeys): SQL has no simple case folding. The unique index
-- users_community_username then refuses two usernames that
-- strings.EqualFold calls equal. Nothing of the schema changes.
COMMENT ON COLUMN users.username_key IS 'user.UsernameKey(username): Unicode simple case folding';
