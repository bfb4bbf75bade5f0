-- A test-local outbox table on PostgreSQL following the column contract (OutboxSchema): the session fills lock,
-- token and grant; key_seq counts per order_key in commit order (the counter row's lock); NOTIFY at commit.
CREATE TABLE {t} (
  event_id varchar(64) PRIMARY KEY, lock_name varchar(128) NOT NULL, token bigint NOT NULL, grant_id varchar(64),
  channel varchar(16) NOT NULL, target varchar(2048) NOT NULL, method varchar(16), message_key text, headers text,
  payload text, order_key varchar(64) NOT NULL, key_seq bigint NOT NULL,
  state varchar(16) NOT NULL DEFAULT 'pending', attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz, last_error varchar(1024), claimed_by varchar(128), claimed_until timestamptz);
-- @@
CREATE TABLE {t}_key (order_key varchar(64) PRIMARY KEY, last_seq bigint NOT NULL);
-- @@
CREATE FUNCTION {t}_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.lock_name := current_setting('fencing.lock');
  NEW.token := current_setting('fencing.token')::bigint;
  NEW.grant_id := nullif(current_setting('fencing.grant', true), '');
  NEW.event_id := coalesce(NEW.event_id, gen_random_uuid()::text);
  IF NEW.channel = 'http' THEN NEW.method := upper(coalesce(NEW.method, 'POST')); END IF;
  NEW.order_key := md5(NEW.channel || E'\n' || NEW.target || E'\n' || coalesce('+' || NEW.message_key, '-'));
  INSERT INTO {t}_key AS k VALUES (NEW.order_key, 1) ON CONFLICT (order_key)
    DO UPDATE SET last_seq = k.last_seq + 1 RETURNING k.last_seq INTO NEW.key_seq;
  RETURN NEW;
END $$;
-- @@
CREATE TRIGGER {t}_insert BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_insert();
-- @@
CREATE FUNCTION {t}_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('{t}', '');
  RETURN NULL;
END $$;
-- @@
CREATE TRIGGER {t}_notify AFTER INSERT ON {t} FOR EACH STATEMENT EXECUTE FUNCTION {t}_notify();
-- @@
