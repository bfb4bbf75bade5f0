-- Fencing Agent tokened outbox for H2 (tests and local development): what `sql install --outbox` creates beside the
-- SQL fence's own tables (fence.sql), and what `sql uninstall --outbox` drops. The triggers' work is Java, the class
-- dev.fencing.fence.sql.H2OutboxTrigger, which H2 runs inside the database: the table-mode, strict fence on INSERT,
-- then the event's lock, token, grant, id, order and delivery columns; on UPDATE only the delivery columns may change.
--
-- How to read this file: as fence.sql. Parameters:
--   ${schema}         the quoted schema of the outbox followed by a dot ("SHOP".), or empty
--   ${outbox}         the outbox table, quoted and qualified ("SHOP"."OUTBOX")
--   ${key_table}      its ordering counter table, quoted and qualified ("SHOP"."OUTBOX_KEY")
--   ${index}          the quoted name of the pending-events index
--   ${trigger}        the trigger name, quoted: fencing:outbox:<lock>:<table>
--   ${trigger_class}  the trigger class as a literal

-- The outbox: the columns of the PostgreSQL and MariaDB outboxes. The trigger fills and checks them (H2 checks NOT
-- NULL before a BEFORE trigger runs, so only the key is declared NOT NULL; an omitted event_id is '' until the
-- trigger gives it a UUID). fencing, last for the same reason as on PostgreSQL, is the Kafka header's value.
-- @section outbox_table
CREATE TABLE IF NOT EXISTS ${outbox} (
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
)
-- @end

-- For an outbox an earlier release created without the fencing column.
-- @section add_fencing_column
ALTER TABLE ${outbox} ADD COLUMN IF NOT EXISTS fencing VARCHAR(213)
-- @end

-- What the relay looks for: pending events by due time.
-- @section pending_index
CREATE INDEX IF NOT EXISTS ${index} ON ${outbox} (state, next_attempt_at)
-- @end

-- The ordering counters: the last key_seq given out per order_key; the trigger's update holds the key's row lock
-- until the transaction ends, so key_seq order is commit order per key.
-- @section key_table
CREATE TABLE IF NOT EXISTS ${key_table} (
  order_key VARCHAR(64) PRIMARY KEY,
  last_seq BIGINT NOT NULL
)
-- @end

-- @section trigger
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE INSERT, UPDATE ON ${outbox} FOR EACH ROW
  CALL ${trigger_class}
-- @end

-- A receiver's processed-events table (`sql install --processed-events`): the ids of the events it has applied.
-- @section processed_events_table
CREATE TABLE IF NOT EXISTS ${table} (
  event_id VARCHAR(64) PRIMARY KEY,
  processed_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL
)
-- @end

-- ProcessedEvents.markFirst: one row the first time; after, a duplicate-key error (SQLSTATE 23505) that the helper
-- reads as "already applied" (H2 rolls back only the failed statement, not the transaction).
-- @section mark_processed
INSERT INTO ${table} (event_id) VALUES (?)
-- @end

-- Uninstall: the outbox goes with its trigger, then its counter table.
-- @section drop_table
DROP TABLE IF EXISTS ${table}
-- @end
