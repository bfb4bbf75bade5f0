CREATE TABLE IF NOT EXISTS fencing_fence (
  lock_name varchar(128) PRIMARY KEY,
  token bigint NOT NULL,
  updated_at timestamp,
  grant_id varchar(64),
  grant_token bigint
);

ALTER TABLE fencing_fence ADD COLUMN IF NOT EXISTS grant_id varchar(64);

ALTER TABLE fencing_fence ADD COLUMN IF NOT EXISTS grant_token bigint;

CREATE TABLE IF NOT EXISTS fencing_fenced_table (
  table_schema varchar(128) NOT NULL,
  table_name varchar(128) NOT NULL,
  lock_name varchar(128) NOT NULL,
  mode varchar(16) NOT NULL,
  installed_at timestamp,
  PRIMARY KEY (table_schema, table_name, lock_name)
);

INSERT INTO fencing_fence (lock_name, token, updated_at) VALUES ('ledger', 0, NULL) ON CONFLICT (lock_name) DO NOTHING;

CREATE OR REPLACE FUNCTION fencing_check() RETURNS trigger LANGUAGE plpgsql
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
    IF (v_raw ~ '^[1-9][0-9]{0,17}$' AND current_setting('fencing.lock', true) = v_lock) IS NOT TRUE THEN
      IF v_raw IS NULL OR v_raw = '' THEN
        IF TG_ARGV[1] = 'permissive' THEN
          RETURN NULL;
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
          v_problem, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, coalesce((SELECT f.token FROM fencing_fence f WHERE f.lock_name = v_lock)::text, 'none'));
      END IF;
    END IF;
    v_token := v_raw::bigint;
    IF v_grant !~ '^[!-~]{1,64}$' THEN
      RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(
        'fencing: malformed grant %L for lock ''%s'' on %I.%I: expected 1 to 64 visible ASCII characters',
        left(v_grant, 70), v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME);
    END IF;
    SELECT f.token INTO v_fence FROM fencing_fence f WHERE f.lock_name = v_lock;
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
        FROM fencing_fence f WHERE f.lock_name = v_lock;
    ELSE
      SELECT f.token, CASE WHEN f.grant_token = f.token THEN f.grant_id END INTO v_fence, v_fence_grant
        FROM fencing_fence f WHERE f.lock_name = v_lock FOR SHARE;
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
  IF v_grant !~ '^[!-~]{1,64}$' THEN
    RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(
      'fencing: malformed grant %L for lock ''%s'' on %I.%I: expected 1 to 64 visible ASCII characters',
      left(v_grant, 70), v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME);
  END IF;
  END IF;
  INSERT INTO fencing_fence AS f (lock_name, token, updated_at, grant_id, grant_token)
    VALUES (v_lock, v_token, localtimestamp, v_grant, CASE WHEN v_grant IS NOT NULL THEN v_token END)
    ON CONFLICT (lock_name) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at,
      grant_id = excluded.grant_id, grant_token = excluded.grant_token;
  PERFORM set_config('fencing.verified', v_key, false);
  RETURN NULL;
END
$fencing$;

DO $fencing$ BEGIN
  EXECUTE format('ALTER FUNCTION %I.fencing_check() SECURITY DEFINER SET search_path = %I, pg_temp',
    current_schema(), current_schema());
END $fencing$;

CREATE OR REPLACE FUNCTION fencing_check_row() RETURNS trigger LANGUAGE plpgsql AS $fencing$
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
  IF (v_raw ~ '^[1-9][0-9]{0,17}$' AND current_setting('fencing.lock', true) = v_lock) IS NOT TRUE THEN
    IF v_raw IS NULL OR v_raw = '' THEN
      IF TG_ARGV[1] = 'permissive' THEN
        IF TG_OP = 'DELETE' THEN
          RETURN OLD;
        ELSIF TG_OP = 'UPDATE' THEN
          NEW.fencing_token := OLD.fencing_token;
        END IF;
        RETURN NEW;
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
        v_problem, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, coalesce((v_row)::text, 'none'));
    END IF;
  END IF;
  v_token := v_raw::bigint;
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
$fencing$;

CREATE OR REPLACE FUNCTION fencing_check_truncate() RETURNS trigger LANGUAGE plpgsql AS $fencing$
-- Fencing Agent SQL fence, per-row mode, TRUNCATE. TG_ARGV: lock name, 'strict' or 'permissive'.
DECLARE
  v_lock text := TG_ARGV[0];
  v_raw text := current_setting('fencing.token', true);
  v_problem text;
  v_token bigint;
  v_row bigint;
BEGIN
  EXECUTE format('SELECT max(fencing_token) FROM %I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME) INTO v_row;
  IF (v_raw ~ '^[1-9][0-9]{0,17}$' AND current_setting('fencing.lock', true) = v_lock) IS NOT TRUE THEN
    IF v_raw IS NULL OR v_raw = '' THEN
      IF TG_ARGV[1] = 'permissive' THEN
        RETURN NULL;
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
        v_problem, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, coalesce((v_row)::text, 'none'));
    END IF;
  END IF;
  v_token := v_raw::bigint;
  IF v_row > v_token THEN
    RAISE EXCEPTION USING ERRCODE = 'FN001', MESSAGE = format(
        'fencing: stale token %s for lock ''%s'' on %I.%I: current fence token is %s',
        v_token, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, v_row);
  END IF;
  RETURN NULL;
END
$fencing$;

DROP TRIGGER IF EXISTS "fencing_orders_stmt_ef035c55" ON "orders";
CREATE TRIGGER "fencing_orders_stmt_ef035c55"
  BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON "orders" FOR EACH STATEMENT EXECUTE FUNCTION fencing_check('ledger', 'permissive');

DELETE FROM fencing_fenced_table WHERE table_schema = current_schema() AND table_name = 'orders' AND lock_name <> 'ledger';

INSERT INTO fencing_fenced_table AS r (table_schema, table_name, lock_name, mode, installed_at)
  VALUES (current_schema(), 'orders', 'ledger', 'table', localtimestamp)
  ON CONFLICT (table_schema, table_name, lock_name) DO UPDATE
  SET mode = excluded.mode, installed_at = excluded.installed_at WHERE r.mode <> excluded.mode;

REVOKE ALL ON fencing_fence, fencing_fenced_table FROM PUBLIC;

GRANT SELECT ON fencing_fence, fencing_fenced_table TO PUBLIC;

REVOKE ALL ON FUNCTION fencing_check() FROM PUBLIC;

