-- Fencing Agent tokened outbox for MariaDB and MySQL: what `sql install --outbox` creates beside the SQL fence's own
-- objects (fence.sql: the fence and stripe tables, the registry and fencing_check_v3, which guards the outbox's
-- inserts), and what `sql uninstall --outbox` drops. `sql print` wraps it in DELIMITER $$ ... DELIMITER ;.
--
-- How to read this file: as fence.sql. Parameters:
--   ${schema}      the quoted database of the outbox followed by a dot (`shop`.), or empty
--   ${outbox}      the outbox table, quoted and qualified (`shop`.`outbox`)
--   ${key_table}   its ordering counter table, quoted and qualified (`shop`.`outbox_key`)
--   ${index}       the quoted name of the pending-events index (`outbox_pending`)
--   ${lock}        the lock name as a literal; ${table_name} the outbox as a literal for messages ('shop.outbox')
--   ${trigger}     a trigger name, quoted
--
-- An application writes channel, target, payload and optionally method, message_key, headers, event_id, in its own
-- transaction with the session values the agent sets (@fencing_lock, @fencing_token, @fencing_grant). The insert
-- trigger first calls the table-mode fence (strict): a stale, missing or foreign token fails the statement (FN001,
-- FN002); the application's rollback takes its other writes away. Then it fills the rest, always overriding
-- lock_name, token and grant_id with the session's. The relay updates only the delivery columns, without a token.
-- Errors of this file: SQLSTATE 23514 for an event the outbox cannot deliver or an update of an event column.
-- MESSAGE_TEXT holds at most 128 characters: the reason comes first, the table name last.
-- The triggers run as their definer (the installing account), so writers need INSERT on the outbox only.

-- The outbox. Event columns never change once written; delivery columns (state, attempts, next_attempt_at,
-- delivered_at, last_error, claimed_by, claimed_until) are the relay's. Times are the database clock's in UTC,
-- DATETIME(6): the trigger and the relay write and compare UTC_TIMESTAMP(6), so that sessions in different time zones
-- agree. The columns the trigger fills have defaults (the trigger overrides them), so that an insert that names only
-- channel, target and payload passes the strict SQL mode's checks. ${index} is the index of pending events by due
-- time, what the relay looks for (in the table's definition: MySQL has no CREATE INDEX IF NOT EXISTS). fencing is
-- token, lock and grant as the Kafka header `fencing` carries them (<token>;<lock>[;<grant>]), for a change-data-capture
-- router that places one column per header; it comes last because an outbox of an earlier release gets it by ALTER
-- TABLE (add_fencing_column), and it is NULL on the events written before that.
-- @section outbox_table
CREATE TABLE IF NOT EXISTS ${outbox} (
  event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  token BIGINT NOT NULL DEFAULT 0,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  channel VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  target VARCHAR(2048) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  method VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL,
  message_key TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  headers TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  payload LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  order_key CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  key_seq BIGINT NOT NULL DEFAULT 0,
  state VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'pending',
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  delivered_at DATETIME(6) NULL,
  last_error VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  claimed_by VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  claimed_until DATETIME(6) NULL,
  fencing VARCHAR(213) CHARACTER SET ascii COLLATE ascii_bin NULL,
  PRIMARY KEY (event_id),
  UNIQUE KEY order_key_seq (order_key, key_seq),
  KEY ${index} (state, next_attempt_at),
  CONSTRAINT state_values CHECK (state IN ('pending', 'delivered', 'parked'))
) ENGINE=InnoDB
-- @end

-- For an outbox an earlier release created without the fencing column (the installer skips it when the column
-- exists, and runs it as a plain ADD COLUMN, which MySQL understands too).
-- @section add_fencing_column
ALTER TABLE ${outbox} ADD COLUMN IF NOT EXISTS fencing VARCHAR(213) CHARACTER SET ascii COLLATE ascii_bin NULL
-- @end

-- The ordering counters: the last key_seq given out per order_key. The insert trigger upserts the key's row and holds
-- its row lock until the transaction ends, so two transactions writing events of one key take turns: the second
-- waits for the first to commit (or roll back) and gets the next number. key_seq order is therefore commit order per
-- key; the cost is that writers of one key serialize. Nobody but the trigger (running as its definer) writes it.
-- @section key_table
CREATE TABLE IF NOT EXISTS ${key_table} (
  order_key CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  last_seq BIGINT NOT NULL
) ENGINE=InnoDB
-- @end

-- BEFORE INSERT: the fence, then the event's lock, token, grant, id, order and delivery columns. An empty or omitted
-- event_id gets a UUID. order_key is the SHA-256 (hex) of channel, target and message key (NULL and '' kept apart).
-- @section trigger_insert
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE INSERT ON ${outbox} FOR EACH ROW
BEGIN
  DECLARE v_seq BIGINT;
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  CALL ${schema}fencing_check_v3(${lock}, FALSE, ${table_name});
  -- The session's values, whatever the application wrote (the check accepted them).
  SET NEW.lock_name = ${lock},
    NEW.token = CAST(CAST(@fencing_token AS CHAR) AS SIGNED),
    NEW.grant_id = NULLIF(CAST(@fencing_grant AS CHAR CHARACTER SET utf8mb4), '');
  -- The Kafka header's value: <token>;<lock>, then ;<grant> when there is a grant.
  SET NEW.fencing = CONCAT(NEW.token, ';', NEW.lock_name, IFNULL(CONCAT(';', NEW.grant_id), ''));
  IF NEW.event_id IS NULL OR NEW.event_id = '' THEN
    SET NEW.event_id = UUID();
  ELSEIF NOT (NEW.event_id REGEXP '^[!-~]{1,64}$') THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: event_id is not 1 to 64 visible ASCII characters, on ', ${table_name}), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  IF NEW.channel = 'http' THEN
    IF NEW.target IS NULL OR NOT (NEW.target REGEXP '(?i)^https?://[!-~]+$') THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: target of an http event is not an absolute http(s) URL, on ', ${table_name}), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
    SET NEW.method = UPPER(IFNULL(NEW.method, 'POST'));
    IF NOT (NEW.method REGEXP '^[A-Z]{1,16}$') THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: method ''', LEFT(NEW.method, 20), ''' is not an HTTP method, on ', ${table_name}), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
  ELSEIF NEW.channel = 'kafka' THEN
    IF NEW.target IS NULL OR NOT (NEW.target REGEXP '^[A-Za-z0-9._-]{1,249}$') THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: target of a kafka event is not a topic name, on ', ${table_name}), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
    IF NEW.method IS NOT NULL THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: a kafka event has no method (leave it NULL), on ', ${table_name}), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
  ELSE
    SET v_msg = LEFT(CONCAT('fencing outbox: channel ''', IFNULL(LEFT(NEW.channel, 20), 'NULL'),
      ''' is not ''http'' or ''kafka'', on ', ${table_name}), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  IF NEW.headers IS NOT NULL AND NOT (NEW.headers
      REGEXP '^[!#$%&''*+.^_`|~0-9A-Za-z-]+:[^[:cntrl:]]*(\r?\n[!#$%&''*+.^_`|~0-9A-Za-z-]+:[^[:cntrl:]]*)*(\r?\n)?$') THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: headers are not lines of "Name: value", on ', ${table_name}), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  IF LOWER(NEW.headers) REGEXP '(^|\n)(fencing(-[^:]*)?|idempotency-key):' THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: headers may not set Fencing, Fencing-* or Idempotency-Key (the relay does), on ',
      ${table_name}), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  SET NEW.order_key = SHA2(CONCAT(NEW.channel, '\n', NEW.target, '\n',
    IF(NEW.message_key IS NULL, '-', CONCAT('+', NEW.message_key))), 256);
  INSERT INTO ${key_table} (order_key, last_seq) VALUES (NEW.order_key, 1)
    ON DUPLICATE KEY UPDATE last_seq = last_seq + 1;
  SELECT last_seq INTO v_seq FROM ${key_table} WHERE order_key = NEW.order_key FOR UPDATE;
  SET NEW.key_seq = v_seq,
    NEW.state = 'pending',
    NEW.attempts = 0,
    NEW.created_at = UTC_TIMESTAMP(6),
    NEW.next_attempt_at = UTC_TIMESTAMP(6),
    NEW.delivered_at = NULL,
    NEW.last_error = NULL,
    NEW.claimed_by = NULL,
    NEW.claimed_until = NULL;
END
-- @end

-- BEFORE UPDATE: only the delivery columns may change, with or without a token (the relay writes them).
-- @section trigger_update
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE UPDATE ON ${outbox} FOR EACH ROW
BEGIN
  DECLARE v_changed VARCHAR(200) CHARACTER SET ascii;
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  SET v_changed = CONCAT_WS(', ',
    IF(NEW.event_id <=> OLD.event_id, NULL, 'event_id'),
    IF(NEW.lock_name <=> OLD.lock_name, NULL, 'lock_name'),
    IF(NEW.token <=> OLD.token, NULL, 'token'),
    IF(NEW.grant_id <=> OLD.grant_id, NULL, 'grant_id'),
    IF(NEW.channel <=> OLD.channel, NULL, 'channel'),
    IF(NEW.target <=> OLD.target, NULL, 'target'),
    IF(NEW.method <=> OLD.method, NULL, 'method'),
    IF(NEW.message_key <=> OLD.message_key, NULL, 'message_key'),
    IF(NEW.headers <=> OLD.headers, NULL, 'headers'),
    IF(NEW.payload <=> OLD.payload, NULL, 'payload'),
    IF(NEW.order_key <=> OLD.order_key, NULL, 'order_key'),
    IF(NEW.key_seq <=> OLD.key_seq, NULL, 'key_seq'),
    IF(NEW.created_at <=> OLD.created_at, NULL, 'created_at'),
    IF(NEW.fencing <=> OLD.fencing, NULL, 'fencing'));
  IF v_changed <> '' THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: an event cannot change its ', v_changed,
      ' (only delivery columns may), on ', ${table_name}), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
END
-- @end

-- A receiver's processed-events table (`sql install --processed-events`): the ids of the events it has applied. The
-- receiver inserts the id in the transaction of the effect (ProcessedEvents.markFirst), so the effect and the mark
-- commit together, and a second delivery of the event finds the id and skips the effect.
-- @section processed_events_table
CREATE TABLE IF NOT EXISTS ${table} (
  event_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  processed_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB
-- @end

-- ProcessedEvents.markFirst: one row the first time, none after (INSERT IGNORE; the helper checks the id's length
-- first, so that nothing is cut). A concurrent transaction inserting the same id waits for the first one's end.
-- @section mark_processed
INSERT IGNORE INTO ${table} (event_id) VALUES (?)
-- @end

-- Uninstall: the outbox goes with its triggers, then its counter table (the installer refuses while events are
-- pending); a processed-events table goes the same way (the installer refuses while it holds ids).
-- @section drop_table
DROP TABLE IF EXISTS ${table}
-- @end
