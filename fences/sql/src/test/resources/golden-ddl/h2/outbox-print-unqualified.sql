CREATE TABLE IF NOT EXISTS fencing_fence (
  lock_name VARCHAR(128) PRIMARY KEY,
  token BIGINT NOT NULL,
  updated_at TIMESTAMP,
  grant_id VARCHAR(64),
  grant_token BIGINT
);

ALTER TABLE fencing_fence ADD COLUMN IF NOT EXISTS grant_id varchar(64);

ALTER TABLE fencing_fence ADD COLUMN IF NOT EXISTS grant_token bigint;

CREATE TABLE IF NOT EXISTS fencing_fence_stripe (
  lock_name VARCHAR(128) NOT NULL,
  stripe INT NOT NULL,
  PRIMARY KEY (lock_name, stripe)
);

CREATE TABLE IF NOT EXISTS fencing_fenced_table (
  table_schema varchar(128) NOT NULL,
  table_name varchar(128) NOT NULL,
  lock_name varchar(128) NOT NULL,
  mode varchar(16) NOT NULL,
  installed_at timestamp,
  PRIMARY KEY (table_schema, table_name, lock_name)
);

INSERT INTO fencing_fence (lock_name, token, updated_at) SELECT 'ledger', 0, NULL WHERE NOT EXISTS (SELECT 1 FROM fencing_fence WHERE lock_name = 'ledger');

MERGE INTO fencing_fence_stripe (lock_name, stripe) KEY (lock_name, stripe) VALUES ('ledger', 0), ('ledger', 1), ('ledger', 2), ('ledger', 3), ('ledger', 4), ('ledger', 5), ('ledger', 6), ('ledger', 7);

CREATE TABLE IF NOT EXISTS "EVENTS_OUT" (
  event_id VARCHAR(64) DEFAULT '' PRIMARY KEY,
  lock_name VARCHAR(128),
  token BIGINT,
  grant_id VARCHAR(64),
  channel VARCHAR(16),
  target VARCHAR(2048),
  method VARCHAR(16),
  message_key VARCHAR,
  headers VARCHAR,
  payload VARCHAR,
  order_key VARCHAR(64),
  key_seq BIGINT,
  state VARCHAR(16) DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'parked')),
  attempts INT DEFAULT 0,
  next_attempt_at TIMESTAMP WITH TIME ZONE,
  created_at TIMESTAMP WITH TIME ZONE,
  delivered_at TIMESTAMP WITH TIME ZONE,
  last_error VARCHAR(1024),
  claimed_by VARCHAR(128),
  claimed_until TIMESTAMP WITH TIME ZONE,
  fencing VARCHAR(213),
  UNIQUE (order_key, key_seq)
);

CREATE INDEX IF NOT EXISTS "EVENTS_OUT_PENDING" ON "EVENTS_OUT" (state, next_attempt_at);

ALTER TABLE "EVENTS_OUT" ADD COLUMN IF NOT EXISTS fencing VARCHAR(213);

CREATE TABLE IF NOT EXISTS "EVENTS_OUT_KEY" (
  order_key VARCHAR(64) PRIMARY KEY,
  last_seq BIGINT NOT NULL
);

CREATE TRIGGER IF NOT EXISTS "fencing:outbox:ledger:EVENTS_OUT"
  BEFORE INSERT, UPDATE ON "EVENTS_OUT" FOR EACH ROW
  CALL 'dev.fencing.fence.sql.H2OutboxTrigger';

DELETE FROM fencing_fenced_table WHERE table_schema = CURRENT_SCHEMA AND table_name = 'EVENTS_OUT' AND lock_name <> 'ledger';

MERGE INTO fencing_fenced_table r
  USING (SELECT CURRENT_SCHEMA AS s, 'EVENTS_OUT' AS t, 'ledger' AS l, 'outbox' AS m) v
  ON r.table_schema = v.s AND r.table_name = v.t AND r.lock_name = v.l
  WHEN MATCHED AND r.mode <> v.m THEN UPDATE SET mode = v.m, installed_at = LOCALTIMESTAMP
  WHEN NOT MATCHED THEN INSERT (table_schema, table_name, lock_name, mode, installed_at)
    VALUES (v.s, v.t, v.l, v.m, LOCALTIMESTAMP);

