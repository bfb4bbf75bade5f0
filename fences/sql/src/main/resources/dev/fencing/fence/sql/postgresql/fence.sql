-- Fencing Agent SQL fence for PostgreSQL: the objects `sql install` creates and `sql print` prints, in install order.
--
-- How to read this file. Each statement (or fragment of one) is a section between "-- @section <name>" and
-- "-- @end"; the installer (SqlFenceDdl) renders them in order. Comments outside sections, like this one, are for
-- the reviewer and never reach the database; comments inside a section are part of the installed code.
-- Parameters:
--   ${schema}     the quoted schema of the protected table followed by a dot ("shop".), or empty: the fence's own
--                 objects live beside the table
--   ${table}      the protected table, quoted and qualified ("shop"."orders")
--   ${lock}       the lock name as a SQL literal ('ledger'); lock names are [A-Za-z0-9._-]{1,128}
--   ${trigger}    a trigger name, quoted
-- A parameter alone on its line is a fragment rendered from another section (or nothing: then the line goes away).
--
-- Writers set per transaction or session: fencing.lock, fencing.token (decimal, 1 to 2^63-1) and optionally
-- fencing.grant (the grant id of the token). Errors: SQLSTATE FN001 = stale token (the write is rejected because a
-- newer holder wrote), FN002 = missing, malformed or mismatched session values.

-- The fence: one row per lock, the highest token that wrote, and the grant id it came with. grant_id tells two
-- holders with the same token apart (after a coordinator restore a new holder can get the old holder's token).
-- grant_token is the token grant_id was stored for: the grant counts only while grant_token = token, the rule of
-- every fence sharing this row (the HTTP fence's JDBC store too), so a writer that moves the token without writing
-- the grant (triggers of an earlier release) leaves no grant behind.
-- @section fence_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fence (
  lock_name varchar(128) PRIMARY KEY,
  token bigint NOT NULL,
  updated_at timestamp,
  grant_id varchar(64),
  grant_token bigint
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

-- The registry of fenced tables: one row per fenced (table, lock), names as the database reports them. Every role
-- may read it (see the privileges below): the agent finds fenced tables with it, whatever role it connects as.
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
INSERT INTO ${schema}fencing_fence (lock_name, token, updated_at) VALUES (${lock}, 0, NULL) ON CONFLICT (lock_name) DO NOTHING
-- @end

-- Table mode: fencing_check(), one call per statement (the trigger passes TG_ARGV: lock name, 'strict' or
-- 'permissive'; permissive lets a write without any token pass).
--
-- A plain read of the fence row chooses the lock: a shared transaction-scoped advisory lock when the token is not
-- above the fence (same-token writers never wait for each other), an exclusive one to advance it (waits for every
-- transaction that passed with the old token, and makes later old-token writers wait, then fail). The advisory key
-- is (1178947139 = 'FENC', hashtext(lock)): its two-key space stays apart from the one-bigint keys applications use.
-- The fence row is read again once the lock is held: in READ COMMITTED a fresh snapshot sees any advance committed
-- before; in the other isolation levels FOR SHARE fails the write with a serialization error instead of reading an
-- old version.
--
-- An equal token is accepted only from the grant stored with it (or when none is stored; a grant_id whose
-- grant_token is not the fence token is none). A token that advances the fence stores the session's grant and, for
-- it, grant_token (both NULL when the session has none).
--
-- The usual write skips the token's validation and the plain read: when this session already found this token valid
-- and equal to the fence (fencing.verified, a session setting this function writes itself, holding
-- "lock:token:grant") and its lock is still the fence's, the shared lock is the right choice, since fences only grow.
-- The setting only chooses the lock mode; the decision is always the read under the lock. A wrong value (after a
-- fence reset, or set by a client) costs the upgrade path a reset already has, never a wrong decision (a forged key
-- with a malformed token fails the write with PostgreSQL's own cast error instead of FN002).
--
-- The function runs as its owner (SECURITY DEFINER), so that writers need no right on the fence table, with the
-- search path pinned to the fence's schema and pg_temp last, as PostgreSQL's documentation prescribes for such
-- functions: pg_catalog stays first, so no writer's function or operator, nor a temporary table, can stand in for
-- the ones the body uses. The SET clause restores only search_path on exit: the session setting the body writes with
-- set_config(..., false) persists.
-- @section check
CREATE OR REPLACE FUNCTION ${schema}fencing_check() RETURNS trigger LANGUAGE plpgsql
  ${security_definer}
AS $fencing$
-- Fencing Agent SQL fence, table mode. TG_ARGV: lock name, 'strict' or 'permissive'.
DECLARE
  v_lock text := TG_ARGV[0];
  v_raw text := current_setting('fencing.token', true);
  v_problem text;
  v_token bigint;
  v_grant text := nullif(current_setting('fencing.grant', true), '');
  v_fence bigint;
  v_fence_grant text;
  v_exclusive boolean;
  v_key text;
  v_verified boolean;
BEGIN
  v_key := v_lock || ':' || v_raw || ':' || coalesce(v_grant, '');
  v_verified := current_setting('fencing.verified', true) = v_key
    AND current_setting('fencing.lock', true) = v_lock;
  IF v_verified THEN
    v_token := v_raw::bigint;
    v_exclusive := false;
  ELSE
    ${validate_token}
    ${validate_grant}
    SELECT f.token INTO v_fence FROM ${schema}fencing_fence f WHERE f.lock_name = v_lock;
    v_exclusive := v_fence IS NULL OR v_token > v_fence;
  END IF;
  LOOP
    -- Locked in a condition rather than with PERFORM: a function call in an expression runs no query.
    IF v_exclusive THEN
      IF pg_advisory_xact_lock(1178947139, hashtext(v_lock)) IS NULL THEN NULL; END IF;
    ELSE
      IF pg_advisory_xact_lock_shared(1178947139, hashtext(v_lock)) IS NULL THEN NULL; END IF;
    END IF;
    IF current_setting('transaction_isolation') = 'read committed' THEN
      SELECT f.token, CASE WHEN f.grant_token = f.token THEN f.grant_id END INTO v_fence, v_fence_grant
        FROM ${schema}fencing_fence f WHERE f.lock_name = v_lock;
    ELSE
      SELECT f.token, CASE WHEN f.grant_token = f.token THEN f.grant_id END INTO v_fence, v_fence_grant
        FROM ${schema}fencing_fence f WHERE f.lock_name = v_lock FOR SHARE;
    END IF;
    IF v_token = v_fence AND (v_fence_grant IS NULL OR v_fence_grant = v_grant) THEN
      IF v_verified IS NOT TRUE THEN
        PERFORM set_config('fencing.verified', v_key, false);
      END IF;
      RETURN NULL;
    ELSIF v_token = v_fence THEN
      -- The same token from another grant: a holder after a coordinator restore got the old token again.
      RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(
        'fencing: token %s for lock ''%s'' on %I.%I was issued to another grant (fence grant %s, session grant %s)',
        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, v_fence_grant, coalesce(v_grant, 'none'));
    ELSIF v_token < v_fence THEN
      RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(
        'fencing: stale token %s for lock ''%s'' on %I.%I: current fence token is %s',
        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, v_fence);
    END IF;
    EXIT WHEN v_exclusive;
    v_exclusive := true;
  END LOOP;
  IF v_verified THEN
    -- A remembered key is never trusted with what the fence stores.
  ${validate_grant}
  END IF;
  INSERT INTO ${schema}fencing_fence AS f (lock_name, token, updated_at, grant_id, grant_token)
    VALUES (v_lock, v_token, localtimestamp, v_grant, CASE WHEN v_grant IS NOT NULL THEN v_token END)
    ON CONFLICT (lock_name) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at,
      grant_id = excluded.grant_id, grant_token = excluded.grant_token;
  PERFORM set_config('fencing.verified', v_key, false);
  RETURN NULL;
END
$fencing$
-- @end

-- The check's SECURITY DEFINER clause when the schema is known; ${search_path} is the quoted schema.
-- @section security_definer
SECURITY DEFINER SET search_path = ${search_path}, pg_temp
-- @end

-- `sql print` of an unqualified table cannot name the schema the function goes to: the function is created as the
-- invoker's (no security_definer above), then made SECURITY DEFINER with the search path pinned to the schema it was
-- created in.
-- @section definer_in_current_schema
DO $fencing$ BEGIN
  EXECUTE format('ALTER FUNCTION %I.fencing_check() SECURITY DEFINER SET search_path = %I, pg_temp',
    current_schema(), current_schema());
END $fencing$
-- @end

-- Fragment of the three functions: reads the session values, raises FN002 for a missing (unless permissive:
-- ${permissive_exit}), malformed or mismatched pair, leaves the token in v_token. ${current} is an expression for the
-- fence token the message shows. One expression decides the usual case (each PL/pgSQL expression costs about a
-- microsecond per write); the detailed checks run only when it fails, to tell a missing token from a malformed one
-- or a foreign lock. The token must be a decimal bigint above 0; 19 digits are compared as text with COLLATE "C".
-- @section validate_token
IF (v_raw ~ '^[1-9][0-9]{0,17}$' AND current_setting('fencing.lock', true) = v_lock) IS NOT TRUE THEN
  IF v_raw IS NULL OR v_raw = '' THEN
    IF TG_ARGV[1] = 'permissive' THEN
      ${permissive_exit}
    END IF;
    v_problem := 'missing token';
  ELSIF v_raw !~ '^[1-9][0-9]{0,18}$'
      OR (length(v_raw) = 19 AND v_raw COLLATE "C" > '9223372036854775807') THEN
    v_problem := format('malformed token %L', left(v_raw, 40));
  ELSIF current_setting('fencing.lock', true) IS DISTINCT FROM v_lock THEN
    v_problem := format('session lock %L for token %s', current_setting('fencing.lock', true), v_raw);
  END IF;
  IF v_problem IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(
      'fencing: %s for lock ''%s'' on %I.%I (current fence token %s): set fencing.lock and fencing.token',
      v_problem, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, coalesce((${current})::text, 'none'));
  END IF;
END IF;
v_token := v_raw::bigint;
-- @end

-- Permissive exit of a statement-level function: the write goes on, unfenced.
-- @section permissive_exit_statement
RETURN NULL;
-- @end

-- Fragment: FN002 for a grant id that is not 1 to 64 visible ASCII characters (a missing one is NULL and passes).
-- @section validate_grant
IF v_grant !~ '^[!-~]{1,64}$' THEN
  RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(
    'fencing: malformed grant %L for lock ''%s'' on %I.%I: expected 1 to 64 visible ASCII characters',
    left(v_grant, 70), v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME);
END IF;
-- @end

-- Per-row mode: fencing_check_row(), one call per row. The row's own token (column fencing_token) is the fence: a
-- write may touch a row only with a token at least the row's, and stamps the row with its token, as a
-- "WHERE token <= :token" would. No shared state, no lock beyond the row's.
-- @section check_row
CREATE OR REPLACE FUNCTION ${schema}fencing_check_row() RETURNS trigger LANGUAGE plpgsql AS $fencing$
-- Fencing Agent SQL fence, per-row mode. TG_ARGV: lock name, 'strict' or 'permissive'.
DECLARE
  v_lock text := TG_ARGV[0];
  v_raw text := current_setting('fencing.token', true);
  v_problem text;
  v_token bigint;
  v_row bigint;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    v_row := OLD.fencing_token;
  END IF;
  ${validate_token}
  IF v_row > v_token THEN
    RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(
        'fencing: stale token %s for lock ''%s'' on %I.%I: current fence token is %s',
        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, v_row);
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  NEW.fencing_token := v_token;
  RETURN NEW;
END
$fencing$
-- @end

-- Permissive exit of the per-row function: the write goes on, and an UPDATE keeps the row's token.
-- @section permissive_exit_row
IF TG_OP = 'DELETE' THEN
  RETURN OLD;
ELSIF TG_OP = 'UPDATE' THEN
  NEW.fencing_token := OLD.fencing_token;
END IF;
RETURN NEW;
-- @end

-- Per-row mode's TRUNCATE guard: the table is locked by then, so the highest row token is exact.
-- @section check_truncate
CREATE OR REPLACE FUNCTION ${schema}fencing_check_truncate() RETURNS trigger LANGUAGE plpgsql AS $fencing$
-- Fencing Agent SQL fence, per-row mode, TRUNCATE. TG_ARGV: lock name, 'strict' or 'permissive'.
DECLARE
  v_lock text := TG_ARGV[0];
  v_raw text := current_setting('fencing.token', true);
  v_problem text;
  v_token bigint;
  v_row bigint;
BEGIN
  EXECUTE format('SELECT max(fencing_token) FROM %I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME) INTO v_row;
  ${validate_token}
  IF v_row > v_token THEN
    RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(
        'fencing: stale token %s for lock ''%s'' on %I.%I: current fence token is %s',
        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, v_row);
  END IF;
  RETURN NULL;
END
$fencing$
-- @end

-- Per-row mode, when the table has no fencing_token column yet. The comment marks the column as the installer's, so
-- that uninstall removes only a column it added.
-- @section add_token_column
ALTER TABLE ${table} ADD COLUMN fencing_token bigint
-- @end

-- @section comment_token_column
COMMENT ON COLUMN ${table}.fencing_token IS 'fencing token of the last write; added by the fencing-agent SQL fence installer'
-- @end

-- The triggers. Their names (fencing_<table>_<kind>_<hash of lock, table and options>) change with the options, so
-- that a re-install with other options creates the new triggers before it drops the old ones and the table is never
-- unguarded. DROP + CREATE rather than CREATE OR REPLACE TRIGGER (PostgreSQL 14+): the install runs in one
-- transaction. ${strictness} is 'strict' or 'permissive'.
-- @section trigger_table
DROP TRIGGER IF EXISTS ${trigger} ON ${table};
CREATE TRIGGER ${trigger}
  BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION ${schema}fencing_check(${lock}, ${strictness})
-- @end

-- @section trigger_row
DROP TRIGGER IF EXISTS ${trigger} ON ${table};
CREATE TRIGGER ${trigger}
  BEFORE INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${schema}fencing_check_row(${lock}, ${strictness})
-- @end

-- @section trigger_truncate
DROP TRIGGER IF EXISTS ${trigger} ON ${table};
CREATE TRIGGER ${trigger}
  BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION ${schema}fencing_check_truncate(${lock}, ${strictness})
-- @end

-- The table's registry row: a table has one fence, so rows for other locks go (their triggers were replaced), and an
-- unchanged re-install keeps installed_at. ${table_schema} is the schema as a literal, or current_schema() when the
-- table name is unqualified; ${table_name} is the table name as a literal; ${mode} is 'table' or 'row'.
-- @section unregister_other_locks
DELETE FROM ${schema}fencing_fenced_table WHERE table_schema = ${table_schema} AND table_name = ${table_name} AND lock_name <> ${lock}
-- @end

-- @section register
INSERT INTO ${schema}fencing_fenced_table AS r (table_schema, table_name, lock_name, mode, installed_at)
  VALUES (${table_schema}, ${table_name}, ${lock}, ${mode}, localtimestamp)
  ON CONFLICT (table_schema, table_name, lock_name) DO UPDATE
  SET mode = excluded.mode, installed_at = excluded.installed_at WHERE r.mode <> excluded.mode
-- @end

-- Privileges: every role may read the fence and the registry (fence detection), no role but the owner may change
-- them, since the check runs as its owner. EXECUTE on the SECURITY DEFINER function is taken from PUBLIC too, so that
-- nobody attaches it to a table of their own to move a lock's fence (a trigger runs it whatever the writer's rights).
-- @section revoke_tables
REVOKE ALL ON ${schema}fencing_fence, ${schema}fencing_fenced_table FROM PUBLIC
-- @end

-- @section grant_select
GRANT SELECT ON ${schema}fencing_fence, ${schema}fencing_fenced_table TO PUBLIC
-- @end

-- @section revoke_check
REVOKE ALL ON FUNCTION ${schema}fencing_check() FROM PUBLIC
-- @end
