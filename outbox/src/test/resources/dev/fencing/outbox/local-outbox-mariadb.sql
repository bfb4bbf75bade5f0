-- A test-local outbox table on MariaDB following the column contract (OutboxSchema): the session fills lock, token
-- and grant; key_seq counts per order_key in commit order (the counter row's lock).
CREATE TABLE {t} (
  event_id varchar(64) PRIMARY KEY, lock_name varchar(128) NOT NULL, token bigint NOT NULL, grant_id varchar(64),
  channel varchar(16) NOT NULL, target varchar(2048) NOT NULL, method varchar(16), message_key text, headers text,
  payload text, order_key varchar(64) NOT NULL, key_seq bigint NOT NULL,
  state varchar(16) NOT NULL DEFAULT 'pending', attempts integer NOT NULL DEFAULT 0,
  next_attempt_at datetime(6) NOT NULL DEFAULT NOW(6), created_at datetime(6) NOT NULL DEFAULT NOW(6),
  delivered_at datetime(6), last_error varchar(1024), claimed_by varchar(128), claimed_until datetime(6));
-- @@
CREATE TABLE {t}_key (order_key varchar(64) PRIMARY KEY, last_seq bigint NOT NULL);
-- @@
CREATE TRIGGER {t}_insert BEFORE INSERT ON {t} FOR EACH ROW
BEGIN
  SET NEW.lock_name = @fencing_lock;
  SET NEW.token = CAST(@fencing_token AS SIGNED);
  SET NEW.grant_id = NULLIF(@fencing_grant, '');
  SET NEW.event_id = COALESCE(NEW.event_id, UUID());
  IF NEW.channel = 'http' THEN SET NEW.method = UPPER(COALESCE(NEW.method, 'POST')); END IF;
  SET NEW.order_key = MD5(CONCAT(NEW.channel, '\n', NEW.target, '\n', COALESCE(CONCAT('+', NEW.message_key), '-')));
  INSERT INTO {t}_key VALUES (NEW.order_key, 1) ON DUPLICATE KEY UPDATE last_seq = last_seq + 1;
  SET NEW.key_seq = (SELECT last_seq FROM {t}_key WHERE order_key = NEW.order_key);
END;
-- @@
