DELIMITER $$

CREATE TABLE IF NOT EXISTS `shop`.fencing_fence (
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  token BIGINT NOT NULL,
  updated_at DATETIME(6) NULL,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  grant_token BIGINT NULL
) ENGINE=InnoDB$$

ALTER TABLE `shop`.fencing_fence ADD COLUMN IF NOT EXISTS grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL$$

ALTER TABLE `shop`.fencing_fence ADD COLUMN IF NOT EXISTS grant_token BIGINT NULL$$

CREATE TABLE IF NOT EXISTS `shop`.fencing_fence_stripe (
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  stripe INT NOT NULL,
  token BIGINT NOT NULL,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  grant_token BIGINT NULL,
  PRIMARY KEY (lock_name, stripe)
) ENGINE=InnoDB$$

ALTER TABLE `shop`.fencing_fence_stripe ADD COLUMN IF NOT EXISTS grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL$$

ALTER TABLE `shop`.fencing_fence_stripe ADD COLUMN IF NOT EXISTS grant_token BIGINT NULL$$

CREATE TABLE IF NOT EXISTS `shop`.fencing_fenced_table (
  table_schema VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  table_name VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  lock_name varchar(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  mode varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  installed_at DATETIME(6) NULL,
  PRIMARY KEY (table_schema, table_name, lock_name)
) ENGINE=InnoDB$$

INSERT IGNORE INTO `shop`.fencing_fence (lock_name, token, updated_at) VALUES ('ledger', 0, NULL)$$

INSERT IGNORE INTO `shop`.fencing_fence_stripe (lock_name, stripe, token, grant_id, grant_token)
  SELECT f.lock_name, n.n, f.token, f.grant_id, f.grant_token FROM `shop`.fencing_fence f, (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) n
  WHERE f.lock_name = 'ledger'$$

CREATE PROCEDURE IF NOT EXISTS `shop`.fencing_reject_stale_v1(
    IN p_lock VARCHAR(128) CHARACTER SET ascii, IN p_table VARCHAR(200) CHARACTER SET ascii,
    IN p_token BIGINT, IN p_current BIGINT)
  NO SQL SQL SECURITY DEFINER
  COMMENT 'Fencing Agent SQL fence: raises FN001 (stale token)'
BEGIN
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  SET v_msg = LEFT(CONCAT('fencing: stale token ', p_token, ' for lock ''', p_lock, ''' on ', p_table,
    ': current fence token is ', p_current), 128);
  SIGNAL SQLSTATE 'FN001' SET MESSAGE_TEXT = v_msg;
END$$

CREATE PROCEDURE IF NOT EXISTS `shop`.fencing_session_token_v1(
    IN p_lock VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin, IN p_permissive BOOLEAN,
    IN p_table VARCHAR(200) CHARACTER SET ascii, IN p_per_row BOOLEAN, IN p_row_token BIGINT,
    OUT p_token BIGINT)
  READS SQL DATA SQL SECURITY DEFINER
  COMMENT 'Fencing Agent SQL fence: validates the session token, raises FN002'
body: BEGIN
  DECLARE v_raw TEXT CHARACTER SET utf8mb4;
  DECLARE v_session_lock TEXT CHARACTER SET utf8mb4;
  DECLARE v_problem TEXT CHARACTER SET utf8mb4;
  DECLARE v_current BIGINT DEFAULT NULL;
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_current = NULL;
  SET p_token = NULL;
  SET v_raw = CAST(@fencing_token AS CHAR CHARACTER SET utf8mb4);
  SET v_session_lock = CAST(@fencing_lock AS CHAR CHARACTER SET utf8mb4);
  IF v_raw IS NULL OR v_raw = '' THEN
    IF p_permissive THEN
      LEAVE body;
    END IF;
    SET v_problem = 'missing token';
  ELSEIF NOT (v_raw REGEXP '^[1-9][0-9]{0,18}$') OR LOCATE(CHAR(10), v_raw) > 0
      OR (CHAR_LENGTH(v_raw) = 19 AND v_raw > '9223372036854775807') THEN
    SET v_problem = CONCAT('malformed token ''', LEFT(v_raw, 24), '''');
  ELSEIF v_session_lock IS NULL OR CAST(v_session_lock AS BINARY) <> CAST(p_lock AS BINARY) THEN
    SET v_problem = CONCAT('session lock ''', LEFT(IFNULL(v_session_lock, ''), 24), ''' for token ', v_raw);
  ELSE
    SET p_token = CAST(v_raw AS SIGNED);
    LEAVE body;
  END IF;
  IF p_per_row THEN
    SET v_current = p_row_token;
  ELSE
    SELECT token INTO v_current FROM fencing_fence WHERE lock_name = p_lock;
  END IF;
  SET v_msg = LEFT(CONCAT('fencing: ', v_problem, ' for lock ''', p_lock, ''' on ', p_table,
    ' (current fence token ', IFNULL(v_current, 'none'), ')'), 128);
  SIGNAL SQLSTATE 'FN002' SET MESSAGE_TEXT = v_msg;
END$$

CREATE PROCEDURE IF NOT EXISTS `shop`.fencing_check_v3(
    IN p_lock VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin, IN p_permissive BOOLEAN,
    IN p_table VARCHAR(200) CHARACTER SET ascii)
  MODIFIES SQL DATA SQL SECURITY DEFINER
  COMMENT 'Fencing Agent SQL fence, table mode: accepts a token >= the fence (equal: of the same grant), advances it'
body: BEGIN
  DECLARE v_token BIGINT;
  DECLARE v_fence BIGINT DEFAULT NULL;
  DECLARE v_fence_grant VARCHAR(64) CHARACTER SET ascii DEFAULT NULL;
  DECLARE v_grant TEXT CHARACTER SET utf8mb4;
  DECLARE v_grant_token BIGINT;
  DECLARE v_stripes INT DEFAULT 0;
  DECLARE v_raw TEXT CHARACTER SET utf8mb4;
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_fence = NULL;
  -- The common case inline; anything else goes to fencing_session_token_v1 (FN002 or permissive).
  SET v_raw = CAST(@fencing_token AS CHAR CHARACTER SET utf8mb4);
  IF v_raw REGEXP '^[1-9][0-9]{0,18}$' AND LOCATE(CHAR(10), v_raw) = 0
      AND (CHAR_LENGTH(v_raw) < 19 OR v_raw <= '9223372036854775807')
      AND CAST(@fencing_lock AS BINARY) = CAST(p_lock AS BINARY) THEN
    SET v_token = CAST(v_raw AS SIGNED);
  ELSE
    CALL fencing_session_token_v1(p_lock, p_permissive, p_table, FALSE, NULL, v_token);
    IF v_token IS NULL THEN
      LEAVE body;
    END IF;
  END IF;
  -- The grant id: 1 to 64 visible ASCII characters, or none (NULL or empty).
  SET v_grant = NULLIF(CAST(@fencing_grant AS CHAR CHARACTER SET utf8mb4), '');
  IF v_grant IS NOT NULL AND (NOT (v_grant REGEXP '^[!-~]{1,64}$') OR LOCATE(CHAR(10), v_grant) > 0) THEN
    SET v_msg = LEFT(CONCAT('fencing: malformed grant ''', LEFT(v_grant, 24), ''' for lock ''', p_lock,
      ''' on ', p_table, ': expected 1 to 64 visible ASCII characters'), 128);
    SIGNAL SQLSTATE 'FN002' SET MESSAGE_TEXT = v_msg;
  END IF;
  SET v_grant_token = IF(v_grant IS NULL, NULL, v_token);
  SELECT token INTO v_fence FROM fencing_fence WHERE lock_name = p_lock;
  IF v_fence IS NOT NULL AND v_token <= v_fence THEN
    SELECT token, IF(grant_token = token, grant_id, NULL) INTO v_fence, v_fence_grant FROM fencing_fence_stripe
      WHERE lock_name = p_lock AND stripe = CONNECTION_ID() % 16 FOR UPDATE;
    IF v_fence = v_token AND (v_fence_grant IS NULL OR CAST(v_fence_grant AS BINARY) = CAST(v_grant AS BINARY)) THEN
      LEAVE body;
    ELSEIF v_fence = v_token THEN
      SET v_msg = LEFT(CONCAT('fencing: token ', v_token, ' for lock ''', p_lock,
        ''' was issued to another grant (fence grant ', LEFT(v_fence_grant, 16), ', session grant ',
        IFNULL(LEFT(v_grant, 16), 'none'), ') on ', p_table), 128);
      SIGNAL SQLSTATE 'FN001' SET MESSAGE_TEXT = v_msg;
    ELSEIF v_fence > v_token THEN
      CALL fencing_reject_stale_v1(p_lock, p_table, v_token, v_fence);
    END IF;
  END IF;
  SELECT COUNT(*), MAX(token) INTO v_stripes, v_fence FROM fencing_fence_stripe
    WHERE lock_name = p_lock FOR UPDATE;
  IF v_stripes <> 16 THEN
    SIGNAL SQLSTATE '55000' SET MESSAGE_TEXT = 'fencing: the fence of this lock is incomplete (stripes missing): run sql install again';
  END IF;
  IF v_fence = v_token THEN
    -- Every stripe carries the fence's token and grant, and all of them are locked now.
    SELECT IF(grant_token = token, grant_id, NULL) INTO v_fence_grant FROM fencing_fence_stripe
      WHERE lock_name = p_lock AND token = v_fence LIMIT 1 FOR UPDATE;
    IF (v_fence_grant IS NULL OR CAST(v_fence_grant AS BINARY) = CAST(v_grant AS BINARY)) THEN
      LEAVE body;
    END IF;
    SET v_msg = LEFT(CONCAT('fencing: token ', v_token, ' for lock ''', p_lock,
        ''' was issued to another grant (fence grant ', LEFT(v_fence_grant, 16), ', session grant ',
        IFNULL(LEFT(v_grant, 16), 'none'), ') on ', p_table), 128);
      SIGNAL SQLSTATE 'FN001' SET MESSAGE_TEXT = v_msg;
  ELSEIF v_fence > v_token THEN
    CALL fencing_reject_stale_v1(p_lock, p_table, v_token, v_fence);
  END IF;
  UPDATE fencing_fence_stripe SET token = v_token, grant_id = v_grant, grant_token = v_grant_token WHERE lock_name = p_lock;
  INSERT INTO fencing_fence (lock_name, token, updated_at, grant_id, grant_token)
    VALUES (p_lock, v_token, NOW(6), v_grant, v_grant_token)
    ON DUPLICATE KEY UPDATE token = v_token, updated_at = NOW(6), grant_id = v_grant, grant_token = v_grant_token;
END$$

CREATE TABLE IF NOT EXISTS `shop`.`events_out` (
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
  KEY `events_out_pending` (state, next_attempt_at),
  CONSTRAINT state_values CHECK (state IN ('pending', 'delivered', 'parked'))
) ENGINE=InnoDB$$

ALTER TABLE `shop`.`events_out` ADD COLUMN IF NOT EXISTS fencing VARCHAR(213) CHARACTER SET ascii COLLATE ascii_bin NULL$$

CREATE TABLE IF NOT EXISTS `shop`.`events_out_key` (
  order_key CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  last_seq BIGINT NOT NULL
) ENGINE=InnoDB$$

CREATE TRIGGER IF NOT EXISTS `shop`.`fencing_events_out_obi_88a4e6b7`
  BEFORE INSERT ON `shop`.`events_out` FOR EACH ROW
BEGIN
  DECLARE v_seq BIGINT;
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  CALL `shop`.fencing_check_v3('ledger', FALSE, 'shop.events_out');
  -- The session's values, whatever the application wrote (the check accepted them).
  SET NEW.lock_name = 'ledger',
    NEW.token = CAST(CAST(@fencing_token AS CHAR) AS SIGNED),
    NEW.grant_id = NULLIF(CAST(@fencing_grant AS CHAR CHARACTER SET utf8mb4), '');
  -- The Kafka header's value: <token>;<lock>, then ;<grant> when there is a grant.
  SET NEW.fencing = CONCAT(NEW.token, ';', NEW.lock_name, IFNULL(CONCAT(';', NEW.grant_id), ''));
  IF NEW.event_id IS NULL OR NEW.event_id = '' THEN
    SET NEW.event_id = UUID();
  ELSEIF NOT (NEW.event_id REGEXP '^[!-~]{1,64}$') THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: event_id is not 1 to 64 visible ASCII characters, on ', 'shop.events_out'), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  IF NEW.channel = 'http' THEN
    IF NEW.target IS NULL OR NOT (NEW.target REGEXP '(?i)^https?://[!-~]+$') THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: target of an http event is not an absolute http(s) URL, on ', 'shop.events_out'), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
    SET NEW.method = UPPER(IFNULL(NEW.method, 'POST'));
    IF NOT (NEW.method REGEXP '^[A-Z]{1,16}$') THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: method ''', LEFT(NEW.method, 20), ''' is not an HTTP method, on ', 'shop.events_out'), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
  ELSEIF NEW.channel = 'kafka' THEN
    IF NEW.target IS NULL OR NOT (NEW.target REGEXP '^[A-Za-z0-9._-]{1,249}$') THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: target of a kafka event is not a topic name, on ', 'shop.events_out'), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
    IF NEW.method IS NOT NULL THEN
      SET v_msg = LEFT(CONCAT('fencing outbox: a kafka event has no method (leave it NULL), on ', 'shop.events_out'), 128);
      SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
    END IF;
  ELSE
    SET v_msg = LEFT(CONCAT('fencing outbox: channel ''', IFNULL(LEFT(NEW.channel, 20), 'NULL'),
      ''' is not ''http'' or ''kafka'', on ', 'shop.events_out'), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  IF NEW.headers IS NOT NULL AND NOT (NEW.headers
      REGEXP '^[!#$%&''*+.^_`|~0-9A-Za-z-]+:[^[:cntrl:]]*(\r?\n[!#$%&''*+.^_`|~0-9A-Za-z-]+:[^[:cntrl:]]*)*(\r?\n)?$') THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: headers are not lines of "Name: value", on ', 'shop.events_out'), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  IF LOWER(NEW.headers) REGEXP '(^|\n)(fencing(-[^:]*)?|idempotency-key):' THEN
    SET v_msg = LEFT(CONCAT('fencing outbox: headers may not set Fencing, Fencing-* or Idempotency-Key (the relay does), on ',
      'shop.events_out'), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
  SET NEW.order_key = SHA2(CONCAT(NEW.channel, '\n', NEW.target, '\n',
    IF(NEW.message_key IS NULL, '-', CONCAT('+', NEW.message_key))), 256);
  INSERT INTO `shop`.`events_out_key` (order_key, last_seq) VALUES (NEW.order_key, 1)
    ON DUPLICATE KEY UPDATE last_seq = last_seq + 1;
  SELECT last_seq INTO v_seq FROM `shop`.`events_out_key` WHERE order_key = NEW.order_key FOR UPDATE;
  SET NEW.key_seq = v_seq,
    NEW.state = 'pending',
    NEW.attempts = 0,
    NEW.created_at = UTC_TIMESTAMP(6),
    NEW.next_attempt_at = UTC_TIMESTAMP(6),
    NEW.delivered_at = NULL,
    NEW.last_error = NULL,
    NEW.claimed_by = NULL,
    NEW.claimed_until = NULL;
END$$

CREATE TRIGGER IF NOT EXISTS `shop`.`fencing_events_out_obu_b625afb1`
  BEFORE UPDATE ON `shop`.`events_out` FOR EACH ROW
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
      ' (only delivery columns may), on ', 'shop.events_out'), 128);
    SIGNAL SQLSTATE '23514' SET MESSAGE_TEXT = v_msg;
  END IF;
END$$

DELETE FROM `shop`.fencing_fenced_table WHERE table_schema = 'shop' AND table_name = 'events_out' AND lock_name <> 'ledger'$$

INSERT INTO `shop`.fencing_fenced_table (table_schema, table_name, lock_name, mode, installed_at)
  VALUES ('shop', 'events_out', 'ledger', 'outbox', NOW(6))
  ON DUPLICATE KEY UPDATE installed_at = IF(mode = VALUES(mode), installed_at, VALUES(installed_at)),
  mode = VALUES(mode)$$

GRANT SELECT ON `shop`.fencing_fence TO PUBLIC$$

GRANT SELECT ON `shop`.fencing_fenced_table TO PUBLIC$$

DELIMITER ;
