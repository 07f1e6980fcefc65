-- What is held on each account, kept beside the rows so that a check reads
-- one row per account however many requisitions hold it. held sums the
-- unconfirmed rows (expired ones too, until removed: a check subtracts
-- those through budget_holds_account_expiry once soonest has passed);
-- committed sums the confirmed ones. soonest is no later than the
-- earliest expiry of the account's holds (NULL: none).
CREATE TABLE budget_hold_totals (
    community_id text        NOT NULL,
    account      text        NOT NULL,
    held         numeric     NOT NULL DEFAULT 0,
    committed    numeric     NOT NULL DEFAULT 0,
    soonest      timestamptz,
    PRIMARY KEY (community_id, account)
);

INSERT INTO budget_hold_totals (community_id, account, held, committed, soonest)
SELECT community_id, account,
       coalesce(sum(amount) FILTER (WHERE confirmed_at IS NULL), 0),
       coalesce(sum(amount) FILTER (WHERE confirmed_at IS NOT NULL), 0),
       min(expires_at)
FROM budget_holds GROUP BY community_id, account;

-- Each row written costs its indexes: the expiry sweep of a community
-- reads budget_holds_account_expiry instead of an index of its own.
DROP INDEX budget_holds_account;
DROP INDEX budget_holds_expiry;
CREATE INDEX budget_holds_account_expiry ON budget_holds (community_id, account, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX budget_holds_account_confirmed ON budget_holds (community_id, account, confirmed_at) WHERE confirmed_at IS NOT NULL;
