-- Fencing Agent SQL fence for H2: the objects `sql install` creates and `sql print` prints, in install order. The
-- check itself is Java, the trigger class dev.fencing.fence.sql.H2FenceTrigger, which H2 runs inside the database;
-- this file holds its tables and the trigger that calls it.
--
-- How to read this file. Each statement is a section between "-- @section <name>" and "-- @end"; the installer
-- (SqlFenceDdl) renders them in order. Comments outside sections, like this one, are for the reviewer and never
-- reach the database.
-- Parameters:
--   ${schema}     the quoted schema of the protected table followed by a dot ("SHOP".), or empty: the fence's own
--                 objects live beside the table
--   ${table}      the protected table, quoted and qualified ("SHOP"."ORDERS")
--   ${lock}       the lock name as a SQL literal ('ledger'); lock names are [A-Za-z0-9._-]{1,128}
--   ${trigger}    the trigger name, quoted
--
-- Writers set the session variables @fencing_lock, @fencing_token and optionally @fencing_grant. Errors: SQLSTATE
-- FN001 = stale token, FN002 = missing, malformed or mismatched session values.

-- The fence: one row per lock, the highest token that wrote, and the grant id it came with. grant_token is the
-- token grant_id was stored for: the grant counts only while grant_token = token, the rule of every fence sharing
-- this row (the HTTP fence's JDBC store too).
-- @section fence_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fence (
  lock_name VARCHAR(128) PRIMARY KEY,
  token BIGINT NOT NULL,
  updated_at TIMESTAMP,
  grant_id VARCHAR(64),
  grant_token BIGINT
)
-- @end

-- For a fence table an earlier release created without the grant columns (the installer skips a column that
-- exists). ${name} is the fence table's name.
-- @section add_grant_column
ALTER TABLE ${schema}${name} ADD COLUMN IF NOT EXISTS grant_id varchar(64)
-- @end

-- @section add_grant_token_column
ALTER TABLE ${schema}${name} ADD COLUMN IF NOT EXISTS grant_token bigint
-- @end

-- The stripes: 8 rows per lock that stand in for a shared lock, which H2 does not have. A same-token writer locks
-- the row of its session (session id % 8) FOR UPDATE, so same-token writers of other sessions rarely wait for it;
-- an advancing writer locks all of them, which waits for every transaction that passed with the old token.
-- @section stripe_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fence_stripe (
  lock_name VARCHAR(128) NOT NULL,
  stripe INT NOT NULL,
  PRIMARY KEY (lock_name, stripe)
)
-- @end

-- The registry of fenced tables: one row per fenced (table, lock), names as the database reports them. The agent
-- finds fenced tables with it.
-- @section registry_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fenced_table (
  table_schema varchar(128) NOT NULL,
  table_name varchar(128) NOT NULL,
  lock_name varchar(128) NOT NULL,
  mode varchar(16) NOT NULL,
  installed_at timestamp,
  PRIMARY KEY (table_schema, table_name, lock_name)
)
-- @end

-- The lock's fence row at token 0 (no write yet), so that writers find a row to lock from the first write on.
-- @section seed
INSERT INTO ${schema}fencing_fence (lock_name, token, updated_at) SELECT ${lock}, 0, NULL WHERE NOT EXISTS (SELECT 1 FROM ${schema}fencing_fence WHERE lock_name = ${lock})
-- @end

-- The lock's 8 stripes; ${rows} is the list of (lock, stripe) rows, (${lock}, 0) to (${lock}, 7).
-- @section seed_stripes
MERGE INTO ${schema}fencing_fence_stripe (lock_name, stripe) KEY (lock_name, stripe) VALUES ${rows}
-- @end

-- Per-row mode, when the table has no fencing_token column yet. The comment marks the column as the installer's, so
-- that uninstall removes only a column it added.
-- @section add_token_column
ALTER TABLE ${table} ADD COLUMN fencing_token BIGINT
-- @end

-- @section comment_token_column
COMMENT ON COLUMN ${table}.fencing_token IS 'fencing token of the last write; added by the fencing-agent SQL fence installer'
-- @end

-- The trigger. H2 hands a trigger class only its names, so the trigger name carries the configuration:
-- fencing:<table|row>[-permissive]:<lock>:<table>, which H2FenceTrigger parses back. ${trigger_class} is the class
-- name as a literal.
-- @section trigger
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE INSERT, UPDATE, DELETE ON ${table} FOR EACH ROW
  CALL ${trigger_class}
-- @end

-- The table's registry row: a table has one fence, so rows for other locks go (their trigger was replaced), and an
-- unchanged re-install keeps installed_at. ${table_schema} is the schema as a literal, or CURRENT_SCHEMA when the
-- table name is unqualified; ${table_name} is the table name as a literal; ${mode} is 'table' or 'row'.
-- @section unregister_other_locks
DELETE FROM ${schema}fencing_fenced_table WHERE table_schema = ${table_schema} AND table_name = ${table_name} AND lock_name <> ${lock}
-- @end

-- @section register
MERGE INTO ${schema}fencing_fenced_table r
  USING (SELECT ${table_schema} AS s, ${table_name} AS t, ${lock} AS l, ${mode} AS m) v
  ON r.table_schema = v.s AND r.table_name = v.t AND r.lock_name = v.l
  WHEN MATCHED AND r.mode <> v.m THEN UPDATE SET mode = v.m, installed_at = LOCALTIMESTAMP
  WHEN NOT MATCHED THEN INSERT (table_schema, table_name, lock_name, mode, installed_at)
    VALUES (v.s, v.t, v.l, v.m, LOCALTIMESTAMP)
-- @end
