-- Fencing Agent tokened outbox for PostgreSQL: what `sql install --outbox` creates beside the SQL fence's own objects
-- (fence.sql: the fence table, the registry and fencing_check(), which guards the outbox's inserts), and what
-- `sql uninstall --outbox` drops.
--
-- How to read this file: as fence.sql. Parameters:
--   ${schema}     the quoted schema of the outbox followed by a dot ("shop".), or empty
--   ${outbox}     the outbox table, quoted and qualified ("shop"."outbox")
--   ${key_table}  its ordering counter table, quoted and qualified ("shop"."outbox_key")
--   ${key_name}   the counter table's bare name as a literal ('outbox_key'), a trigger argument
--   ${index}      the quoted name of the pending-events index ("outbox_pending")
--   ${lock}       the lock name as a literal; ${channel} the NOTIFY channel as a literal (the outbox's name)
--   ${trigger}    a trigger name, quoted
--
-- An application writes channel, target, payload and optionally method, message_key, headers, event_id, in its own
-- transaction and with the session values the agent sets (fencing.lock, fencing.token, fencing.grant). The insert
-- trigger fills the rest and always overrides lock_name, token and grant_id with the session's. The table-mode fence
-- (fencing_check, strict) runs before it: a stale, missing or foreign token fails the statement (FN001, FN002) and
-- with it the application's transaction. The relay updates only the delivery columns, without a token.
-- Errors of this file: SQLSTATE 23514 (check_violation) for an event the outbox cannot deliver or an update of an
-- event column, with a message naming the column.

-- The outbox. Event columns (event_id to key_seq, created_at, fencing) never change once written; delivery columns
-- (state, attempts, next_attempt_at, delivered_at, last_error, claimed_by, claimed_until) are the relay's. Times are
-- the database clock's. fencing is token, lock and grant as the Kafka header `fencing` carries them
-- (<token>;<lock>[;<grant>]), for a change-data-capture router that places one column per header; it comes last
-- because an outbox of an earlier release gets it by ALTER TABLE (add_fencing_column), and it is NULL on the events
-- written before that.
-- @section outbox_table
CREATE TABLE IF NOT EXISTS ${outbox} (
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
)
-- @end

-- For an outbox an earlier release created without the fencing column (the installer skips it when the column
-- exists).
-- @section add_fencing_column
ALTER TABLE ${outbox} ADD COLUMN IF NOT EXISTS fencing varchar(213)
-- @end

-- What the relay looks for: pending events by due time.
-- @section pending_index
CREATE INDEX IF NOT EXISTS ${index} ON ${outbox} (next_attempt_at) WHERE state = 'pending'
-- @end

-- The ordering counters: the last key_seq given out per order_key. The insert trigger upserts the key's row and holds
-- its row lock until the transaction ends, so two transactions writing events of one key take turns: the second
-- waits for the first to commit (or roll back) and gets the next number. key_seq order is therefore commit order per
-- key; the cost is that writers of one key serialize. Nobody but the trigger (running as its owner) writes it.
-- @section key_table
CREATE TABLE IF NOT EXISTS ${key_table} (
  order_key varchar(64) PRIMARY KEY,
  last_seq bigint NOT NULL
)
-- @end

-- Row-level BEFORE INSERT: fills an event. TG_ARGV: the lock, the counter table's name (in the outbox's schema).
-- Runs as its owner (SECURITY DEFINER, search path pinned as for fencing_check), so that writers need INSERT on the
-- outbox only, nothing on the counter table; EXECUTE is taken from PUBLIC (see the privileges below). The statement
-- trigger's fencing_check has already accepted the session's token for the lock; the values are read again here.
-- order_key is the SHA-256 (hex) of channel, target and message key (NULL and '' kept apart), so that the counter's
-- key has a bounded length. The function is shared by the schema's outboxes, and one of an earlier release may not
-- have the fencing column yet: jsonb_populate_record sets it where the table has it and ignores it where not.
-- @section insert_function
CREATE OR REPLACE FUNCTION ${schema}fencing_outbox_insert() RETURNS trigger LANGUAGE plpgsql
  ${security_definer}
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
$fencing$
-- @end

-- The insert function's SECURITY DEFINER clause when the schema is known; ${search_path} is the quoted schema.
-- @section security_definer
SECURITY DEFINER SET search_path = ${search_path}, pg_temp
-- @end

-- `sql print` of an unqualified outbox: the function is made SECURITY DEFINER in the schema it was created in.
-- @section definer_in_current_schema
DO $fencing$ BEGIN
  EXECUTE format('ALTER FUNCTION %I.fencing_outbox_insert() SECURITY DEFINER SET search_path = %I, pg_temp',
    current_schema(), current_schema());
END $fencing$
-- @end

-- Row-level BEFORE UPDATE: only the delivery columns may change, with or without a token (the relay writes them).
-- fencing is compared through to_jsonb, as the insert function sets it: an outbox of an earlier release may lack it.
-- @section update_function
CREATE OR REPLACE FUNCTION ${schema}fencing_outbox_update() RETURNS trigger LANGUAGE plpgsql AS $fencing$
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
$fencing$
-- @end

-- Statement-level AFTER INSERT: wakes the relays. NOTIFY is delivered when the transaction commits, never before nor
-- after a rollback; one notification per transaction and channel. TG_ARGV: the channel.
-- @section notify_function
CREATE OR REPLACE FUNCTION ${schema}fencing_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $fencing$
-- Fencing Agent tokened outbox: NOTIFY the relays at commit.
BEGIN
  PERFORM pg_notify(TG_ARGV[0], '');
  RETURN NULL;
END
$fencing$
-- @end

-- The triggers, named fencing_<outbox>_<kind>_<hash of lock and table>, so that the agent counts the outbox as a
-- fenced table and a re-install for another lock replaces them. The fence check runs first (statement-level BEFORE
-- triggers fire before row-level ones), on INSERT only: updates and deletes are the relay's and the operator's.
-- @section trigger_fence
DROP TRIGGER IF EXISTS ${trigger} ON ${outbox};
CREATE TRIGGER ${trigger}
  BEFORE INSERT ON ${outbox} FOR EACH STATEMENT EXECUTE FUNCTION ${schema}fencing_check(${lock}, 'strict')
-- @end

-- @section trigger_insert
DROP TRIGGER IF EXISTS ${trigger} ON ${outbox};
CREATE TRIGGER ${trigger}
  BEFORE INSERT ON ${outbox} FOR EACH ROW EXECUTE FUNCTION ${schema}fencing_outbox_insert(${lock}, ${key_name})
-- @end

-- @section trigger_update
DROP TRIGGER IF EXISTS ${trigger} ON ${outbox};
CREATE TRIGGER ${trigger}
  BEFORE UPDATE ON ${outbox} FOR EACH ROW EXECUTE FUNCTION ${schema}fencing_outbox_update()
-- @end

-- @section trigger_notify
DROP TRIGGER IF EXISTS ${trigger} ON ${outbox};
CREATE TRIGGER ${trigger}
  AFTER INSERT ON ${outbox} FOR EACH STATEMENT EXECUTE FUNCTION ${schema}fencing_outbox_notify(${channel})
-- @end

-- Nobody attaches the SECURITY DEFINER function to a table of their own (a trigger runs it whatever the writer's
-- rights, so it must not be callable by just anyone).
-- @section revoke_insert_function
REVOKE ALL ON FUNCTION ${schema}fencing_outbox_insert() FROM PUBLIC
-- @end

-- A receiver's processed-events table (`sql install --processed-events`): the ids of the events it has applied. The
-- receiver inserts the id in the transaction of the effect (ProcessedEvents.markFirst), so the effect and the mark
-- commit together, and a second delivery of the event finds the id and skips the effect.
-- @section processed_events_table
CREATE TABLE IF NOT EXISTS ${table} (
  event_id varchar(64) PRIMARY KEY,
  processed_at timestamptz NOT NULL DEFAULT now()
)
-- @end

-- ProcessedEvents.markFirst: one row the first time, none after. A concurrent transaction inserting the same id
-- waits for the first one's end: none if it committed, one if it rolled back. ${table} as the application names it.
-- @section mark_processed
INSERT INTO ${table} (event_id) VALUES (?) ON CONFLICT (event_id) DO NOTHING
-- @end

-- Uninstall: the outbox goes with its triggers, then its counter table (the installer refuses while events are
-- pending); a processed-events table goes the same way (the installer refuses while it holds ids).
-- @section drop_table
DROP TABLE IF EXISTS ${table}
-- @end
