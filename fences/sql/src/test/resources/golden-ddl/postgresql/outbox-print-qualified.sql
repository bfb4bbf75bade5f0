CREATE TABLE IF NOT EXISTS "shop".fencing_fence (
  lock_name varchar(128) PRIMARY KEY,
  token bigint NOT NULL,
  updated_at timestamp,
  grant_id varchar(64),
  grant_token bigint
);

ALTER TABLE "shop".fencing_fence ADD COLUMN IF NOT EXISTS grant_id varchar(64);

ALTER TABLE "shop".fencing_fence ADD COLUMN IF NOT EXISTS grant_token bigint;

CREATE TABLE IF NOT EXISTS "shop".fencing_fenced_table (
  table_schema varchar(128) NOT NULL,
  table_name varchar(128) NOT NULL,
  lock_name varchar(128) NOT NULL,
  mode varchar(16) NOT NULL,
  installed_at timestamp,
  PRIMARY KEY (table_schema, table_name, lock_name)
);

INSERT INTO "shop".fencing_fence (lock_name, token, updated_at) VALUES ('ledger', 0, NULL) ON CONFLICT (lock_name) DO NOTHING;

CREATE OR REPLACE FUNCTION "shop".fencing_check() RETURNS trigger LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = "shop", pg_temp
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
          v_problem, v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME, coalesce((SELECT f.token FROM "shop".fencing_fence f WHERE f.lock_name = v_lock)::text, 'none'));
      END IF;
    END IF;
    v_token := v_raw::bigint;
    IF v_grant !~ '^[!-~]{1,64}$' THEN
      RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(
        'fencing: malformed grant %L for lock ''%s'' on %I.%I: expected 1 to 64 visible ASCII characters',
        left(v_grant, 70), v_lock, TG_TABLE_SCHEMA, TG_TABLE_NAME);
    END IF;
    SELECT f.token INTO v_fence FROM "shop".fencing_fence f WHERE f.lock_name = v_lock;
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
        FROM "shop".fencing_fence f WHERE f.lock_name = v_lock;
    ELSE
      SELECT f.token, CASE WHEN f.grant_token = f.token THEN f.grant_id END INTO v_fence, v_fence_grant
        FROM "shop".fencing_fence f WHERE f.lock_name = v_lock FOR SHARE;
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
  INSERT INTO "shop".fencing_fence AS f (lock_name, token, updated_at, grant_id, grant_token)
    VALUES (v_lock, v_token, localtimestamp, v_grant, CASE WHEN v_grant IS NOT NULL THEN v_token END)
    ON CONFLICT (lock_name) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at,
      grant_id = excluded.grant_id, grant_token = excluded.grant_token;
  PERFORM set_config('fencing.verified', v_key, false);
  RETURN NULL;
END
$fencing$;

CREATE OR REPLACE FUNCTION "shop".fencing_check_row() RETURNS trigger LANGUAGE plpgsql AS $fencing$
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

CREATE OR REPLACE FUNCTION "shop".fencing_check_truncate() RETURNS trigger LANGUAGE plpgsql AS $fencing$
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

CREATE TABLE IF NOT EXISTS "shop"."events_out" (
  event_id varchar(64) PRIMARY KEY,
  lock_name varchar(128) NOT NULL,
  token bigint NOT NULL,
  grant_id varchar(64),
  channel varchar(16) NOT NULL,
  target varchar(2048) NOT NULL,
  method varchar(16),
  message_key text,
  headers text,
  payload text,
  order_key varchar(64) NOT NULL,
  key_seq bigint NOT NULL,
  state varchar(16) NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'parked')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  last_error varchar(1024),
  claimed_by varchar(128),
  claimed_until timestamptz,
  fencing varchar(213),
  UNIQUE (order_key, key_seq)
);

CREATE INDEX IF NOT EXISTS "events_out_pending" ON "shop"."events_out" (next_attempt_at) WHERE state = 'pending';

ALTER TABLE "shop"."events_out" ADD COLUMN IF NOT EXISTS fencing varchar(213);

CREATE TABLE IF NOT EXISTS "shop"."events_out_key" (
  order_key varchar(64) PRIMARY KEY,
  last_seq bigint NOT NULL
);

CREATE OR REPLACE FUNCTION "shop".fencing_outbox_insert() RETURNS trigger LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = "shop", pg_temp
AS $fencing$
-- Fencing Agent tokened outbox: fills an event's lock, token, grant, id, order and delivery columns.
DECLARE
  v_lock text := TG_ARGV[0];
  v_raw text := current_setting('fencing.token', true);
  v_where text := format('%I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME);
BEGIN
  IF (v_raw ~ '^[1-9][0-9]{0,18}$' AND current_setting('fencing.lock', true) = v_lock) IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'FN002', MESSAGE = format(
      'fencing: outbox %s needs the session''s token for lock ''%s'' (fencing.lock %L, fencing.token %L)',
      v_where, v_lock, current_setting('fencing.lock', true), left(v_raw, 40));
  END IF;
  -- The session's values, whatever the application wrote.
  NEW.lock_name := v_lock;
  NEW.token := v_raw::bigint;
  NEW.grant_id := nullif(current_setting('fencing.grant', true), '');
  -- The Kafka header's value: <token>;<lock>, then ;<grant> when there is a grant.
  NEW := jsonb_populate_record(NEW, jsonb_build_object('fencing',
    NEW.token::text || ';' || NEW.lock_name || coalesce(';' || NEW.grant_id, '')));
  IF NEW.event_id IS NULL THEN
    NEW.event_id := gen_random_uuid()::text;
  ELSIF NEW.event_id !~ '^[!-~]{1,64}$' THEN
    RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
      'fencing outbox %s: event_id %L is not 1 to 64 visible ASCII characters (leave it NULL for a generated UUID)',
      v_where, left(NEW.event_id, 70));
  END IF;
  IF NEW.channel = 'http' THEN
    IF NEW.target IS NULL OR NEW.target !~* '^https?://[!-~]+$' THEN
      RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
        'fencing outbox %s: target %L of an http event is not an absolute http(s) URL', v_where, left(NEW.target, 200));
    END IF;
    NEW.method := upper(coalesce(NEW.method, 'POST'));
    IF NEW.method !~ '^[A-Z]{1,16}$' THEN
      RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
        'fencing outbox %s: method %L is not an HTTP method (letters, e.g. POST)', v_where, left(NEW.method, 40));
    END IF;
  ELSIF NEW.channel = 'kafka' THEN
    IF NEW.target IS NULL OR NEW.target !~ '^[A-Za-z0-9._-]{1,249}$' THEN
      RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
        'fencing outbox %s: target %L of a kafka event is not a topic name (1 to 249 of A-Z a-z 0-9 . _ -)',
        v_where, left(NEW.target, 200));
    END IF;
    IF NEW.method IS NOT NULL THEN
      RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
        'fencing outbox %s: a kafka event has no method (got %L): leave it NULL', v_where, left(NEW.method, 40));
    END IF;
  ELSE
    RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
      'fencing outbox %s: channel %L is not ''http'' or ''kafka''', v_where, left(NEW.channel, 40));
  END IF;
  IF NEW.headers IS NOT NULL AND NEW.headers
      !~ '^[!#$%&''*+.^_`|~0-9A-Za-z-]+:[^[:cntrl:]]*(\r?\n[!#$%&''*+.^_`|~0-9A-Za-z-]+:[^[:cntrl:]]*)*(\r?\n)?$' THEN
    RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
      'fencing outbox %s: headers %L are not lines of "Name: value"', v_where, left(NEW.headers, 200));
  END IF;
  IF lower(NEW.headers) ~ '(^|\n)(fencing(-[^:]*)?|idempotency-key):' THEN
    RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
      'fencing outbox %s: headers name a Fencing, Fencing-* or Idempotency-Key header; the relay sets those from the '
      || 'event', v_where);
  END IF;
  NEW.order_key := encode(sha256(convert_to(NEW.channel || E'\n' || NEW.target || E'\n'
    || CASE WHEN NEW.message_key IS NULL THEN '-' ELSE '+' || NEW.message_key END, 'UTF8')), 'hex');
  EXECUTE format('INSERT INTO %I.%I AS k (order_key, last_seq) VALUES ($1, 1) ON CONFLICT (order_key)'
    || ' DO UPDATE SET last_seq = k.last_seq + 1 RETURNING k.last_seq', TG_TABLE_SCHEMA, TG_ARGV[1])
    INTO NEW.key_seq USING NEW.order_key;
  NEW.state := 'pending';
  NEW.attempts := 0;
  NEW.created_at := now();
  NEW.next_attempt_at := now();
  NEW.delivered_at := NULL;
  NEW.last_error := NULL;
  NEW.claimed_by := NULL;
  NEW.claimed_until := NULL;
  RETURN NEW;
END
$fencing$;

CREATE OR REPLACE FUNCTION "shop".fencing_outbox_update() RETURNS trigger LANGUAGE plpgsql AS $fencing$
-- Fencing Agent tokened outbox: an event, once written, keeps its event columns.
DECLARE
  v_changed text;
BEGIN
  v_changed := concat_ws(', ',
    CASE WHEN NEW.event_id IS DISTINCT FROM OLD.event_id THEN 'event_id' END,
    CASE WHEN NEW.lock_name IS DISTINCT FROM OLD.lock_name THEN 'lock_name' END,
    CASE WHEN NEW.token IS DISTINCT FROM OLD.token THEN 'token' END,
    CASE WHEN NEW.grant_id IS DISTINCT FROM OLD.grant_id THEN 'grant_id' END,
    CASE WHEN NEW.channel IS DISTINCT FROM OLD.channel THEN 'channel' END,
    CASE WHEN NEW.target IS DISTINCT FROM OLD.target THEN 'target' END,
    CASE WHEN NEW.method IS DISTINCT FROM OLD.method THEN 'method' END,
    CASE WHEN NEW.message_key IS DISTINCT FROM OLD.message_key THEN 'message_key' END,
    CASE WHEN NEW.headers IS DISTINCT FROM OLD.headers THEN 'headers' END,
    CASE WHEN NEW.payload IS DISTINCT FROM OLD.payload THEN 'payload' END,
    CASE WHEN NEW.order_key IS DISTINCT FROM OLD.order_key THEN 'order_key' END,
    CASE WHEN NEW.key_seq IS DISTINCT FROM OLD.key_seq THEN 'key_seq' END,
    CASE WHEN NEW.created_at IS DISTINCT FROM OLD.created_at THEN 'created_at' END,
    CASE WHEN to_jsonb(NEW) -> 'fencing' IS DISTINCT FROM to_jsonb(OLD) -> 'fencing' THEN 'fencing' END);
  IF v_changed <> '' THEN
    RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = format(
      'fencing outbox %I.%I: event %s cannot change its %s; only state, attempts, next_attempt_at, delivered_at, '
      || 'last_error, claimed_by and claimed_until may be updated', TG_TABLE_SCHEMA, TG_TABLE_NAME, OLD.event_id,
      v_changed);
  END IF;
  RETURN NEW;
END
$fencing$;

CREATE OR REPLACE FUNCTION "shop".fencing_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $fencing$
-- Fencing Agent tokened outbox: NOTIFY the relays at commit.
BEGIN
  PERFORM pg_notify(TG_ARGV[0], '');
  RETURN NULL;
END
$fencing$;

DROP TRIGGER IF EXISTS "fencing_events_out_ofence_3d6dd018" ON "shop"."events_out";
CREATE TRIGGER "fencing_events_out_ofence_3d6dd018"
  BEFORE INSERT ON "shop"."events_out" FOR EACH STATEMENT EXECUTE FUNCTION "shop".fencing_check('ledger', 'strict');

DROP TRIGGER IF EXISTS "fencing_events_out_oins_3d6dd018" ON "shop"."events_out";
CREATE TRIGGER "fencing_events_out_oins_3d6dd018"
  BEFORE INSERT ON "shop"."events_out" FOR EACH ROW EXECUTE FUNCTION "shop".fencing_outbox_insert('ledger', 'events_out_key');

DROP TRIGGER IF EXISTS "fencing_events_out_oupd_3d6dd018" ON "shop"."events_out";
CREATE TRIGGER "fencing_events_out_oupd_3d6dd018"
  BEFORE UPDATE ON "shop"."events_out" FOR EACH ROW EXECUTE FUNCTION "shop".fencing_outbox_update();

DROP TRIGGER IF EXISTS "fencing_events_out_onotify_3d6dd018" ON "shop"."events_out";
CREATE TRIGGER "fencing_events_out_onotify_3d6dd018"
  AFTER INSERT ON "shop"."events_out" FOR EACH STATEMENT EXECUTE FUNCTION "shop".fencing_outbox_notify('events_out');

DELETE FROM "shop".fencing_fenced_table WHERE table_schema = 'shop' AND table_name = 'events_out' AND lock_name <> 'ledger';

INSERT INTO "shop".fencing_fenced_table AS r (table_schema, table_name, lock_name, mode, installed_at)
  VALUES ('shop', 'events_out', 'ledger', 'outbox', localtimestamp)
  ON CONFLICT (table_schema, table_name, lock_name) DO UPDATE
  SET mode = excluded.mode, installed_at = excluded.installed_at WHERE r.mode <> excluded.mode;

REVOKE ALL ON "shop".fencing_fence, "shop".fencing_fenced_table FROM PUBLIC;

GRANT SELECT ON "shop".fencing_fence, "shop".fencing_fenced_table TO PUBLIC;

REVOKE ALL ON FUNCTION "shop".fencing_check() FROM PUBLIC;

REVOKE ALL ON FUNCTION "shop".fencing_outbox_insert() FROM PUBLIC;

