-- What pending requisitions hold on accounts (docs: account-codes.md "Holds").
-- A row is a hold (expires_at set) or a commitment (confirmed_at set).
CREATE TABLE budget_holds (
    community_id text        NOT NULL,
    requisition  text        NOT NULL,
    account      text        NOT NULL,
    amount       numeric     NOT NULL CHECK (amount > 0),
    held_at      timestamptz NOT NULL,
    expires_at   timestamptz,
    confirmed_at timestamptz,
    PRIMARY KEY (community_id, requisition, account),
    CHECK ((expires_at IS NULL) <> (confirmed_at IS NULL))
);

CREATE INDEX budget_holds_account ON budget_holds (community_id, account);
CREATE INDEX budget_holds_expiry ON budget_holds (community_id, expires_at) WHERE expires_at IS NOT NULL;

-- The audit log beside the holds: one row per check, release, confirm or
-- expiry, the entry as the JSON lines log writes it.
CREATE TABLE budget_audit (
    community_id text        NOT NULL,
    id           bigint      GENERATED ALWAYS AS IDENTITY,
    at           timestamptz NOT NULL,
    event        text        NOT NULL,
    requisition  text        NOT NULL,
    entry        jsonb       NOT NULL,
    PRIMARY KEY (community_id, id)
);
