DELIMITER $$

CREATE TABLE IF NOT EXISTS `Shop`.fencing_fence (
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  token BIGINT NOT NULL,
  updated_at DATETIME(6) NULL,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  grant_token BIGINT NULL
) ENGINE=InnoDB$$

ALTER TABLE `Shop`.fencing_fence ADD COLUMN IF NOT EXISTS grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL$$

ALTER TABLE `Shop`.fencing_fence ADD COLUMN IF NOT EXISTS grant_token BIGINT NULL$$

CREATE TABLE IF NOT EXISTS `Shop`.fencing_fence_stripe (
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  stripe INT NOT NULL,
  token BIGINT NOT NULL,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  grant_token BIGINT NULL,
  PRIMARY KEY (lock_name, stripe)
) ENGINE=InnoDB$$

ALTER TABLE `Shop`.fencing_fence_stripe ADD COLUMN IF NOT EXISTS grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL$$

ALTER TABLE `Shop`.fencing_fence_stripe ADD COLUMN IF NOT EXISTS grant_token BIGINT NULL$$

CREATE TABLE IF NOT EXISTS `Shop`.fencing_fenced_table (
  table_schema VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  table_name VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  lock_name varchar(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  mode varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  installed_at DATETIME(6) NULL,
  PRIMARY KEY (table_schema, table_name, lock_name)
) ENGINE=InnoDB$$

INSERT IGNORE INTO `Shop`.fencing_fence (lock_name, token, updated_at) VALUES ('ledger', 0, NULL)$$

INSERT IGNORE INTO `Shop`.fencing_fence_stripe (lock_name, stripe, token, grant_id, grant_token)
  SELECT f.lock_name, n.n, f.token, f.grant_id, f.grant_token FROM `Shop`.fencing_fence f, (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 UNION ALL SELECT 14 UNION ALL SELECT 15) n
  WHERE f.lock_name = 'ledger'$$

CREATE PROCEDURE IF NOT EXISTS `Shop`.fencing_reject_stale_v1(
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

CREATE PROCEDURE IF NOT EXISTS `Shop`.fencing_session_token_v1(
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

CREATE PROCEDURE IF NOT EXISTS `Shop`.fencing_check_v3(
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

CREATE TRIGGER IF NOT EXISTS `Shop`.`fencing_orders_bi_b0cdc195`
  BEFORE INSERT ON `Shop`.`Orders` FOR EACH ROW
CALL `Shop`.fencing_check_v3('ledger', TRUE, 'Shop.Orders')$$

CREATE TRIGGER IF NOT EXISTS `Shop`.`fencing_orders_bu_b0cdc195`
  BEFORE UPDATE ON `Shop`.`Orders` FOR EACH ROW
CALL `Shop`.fencing_check_v3('ledger', TRUE, 'Shop.Orders')$$

CREATE TRIGGER IF NOT EXISTS `Shop`.`fencing_orders_bd_b0cdc195`
  BEFORE DELETE ON `Shop`.`Orders` FOR EACH ROW
CALL `Shop`.fencing_check_v3('ledger', TRUE, 'Shop.Orders')$$

DELETE FROM `Shop`.fencing_fenced_table WHERE table_schema = 'Shop' AND table_name = 'Orders' AND lock_name <> 'ledger'$$

INSERT INTO `Shop`.fencing_fenced_table (table_schema, table_name, lock_name, mode, installed_at)
  VALUES ('Shop', 'Orders', 'ledger', 'table', NOW(6))
  ON DUPLICATE KEY UPDATE installed_at = IF(mode = VALUES(mode), installed_at, VALUES(installed_at)),
  mode = VALUES(mode)$$

-- MariaDB 10.11+ (GRANT ... TO PUBLIC). On MySQL or older MariaDB, grant SELECT on these two tables to the writers
-- instead: the agent detects the fence with it.
GRANT SELECT ON `Shop`.fencing_fence TO PUBLIC$$

GRANT SELECT ON `Shop`.fencing_fenced_table TO PUBLIC$$

DELIMITER ;
