-- Fencing Agent SQL fence for MariaDB and MySQL: the objects `sql install` creates and `sql print` prints, in install
-- order (`sql print` wraps them in DELIMITER $$ ... DELIMITER ; because procedure and trigger bodies contain
-- semicolons; the mysql client and Flyway understand it).
--
-- How to read this file. Each statement is a section between "-- @section <name>" and "-- @end"; the installer
-- (SqlFenceDdl) renders them in order. Comments outside sections, like this one, are for the reviewer and never
-- reach the database; comments inside a section are part of the installed code.
-- Parameters:
--   ${schema}     the quoted database of the protected table followed by a dot (`shop`.), or empty: the fence's own
--                 objects live beside the table
--   ${table}      the protected table, quoted and qualified (`shop`.`orders`)
--   ${lock}       the lock name as a SQL literal ('ledger'); lock names are [A-Za-z0-9._-]{1,128}
--   ${trigger}    a trigger name, quoted
--
-- Writers set the user variables @fencing_lock, @fencing_token (decimal, 1 to 2^63-1) and optionally @fencing_grant
-- (the grant id of the token). Errors: SQLSTATE FN001 = stale token, FN002 = missing, malformed or mismatched
-- session values. MESSAGE_TEXT holds at most 128 characters, hence the short messages, cut with LEFT().
--
-- Procedures are versioned (_v1, _v2, _v3): a release with other bodies adds a new version beside them instead of
-- replacing them under live writes (the installer never replaces an existing procedure: CREATE ... IF NOT EXISTS).
-- New triggers call fencing_check_v3; fencing_check_v2 and fencing_check_v1 stay until the schema's last fence is
-- uninstalled, for triggers an earlier release created (run `sql install` again on each fenced table to replace
-- them).

-- The fence: one row per lock, the highest token that wrote, and the grant id it came with. grant_id tells two
-- holders with the same token apart (after a coordinator restore a new holder can get the old holder's token).
-- grant_token is the token grant_id was stored for: the grant counts only while grant_token = token, the rule of
-- every fence sharing this row (the HTTP fence's JDBC store too), so a writer that moves the token without writing
-- the grant (triggers of an earlier release) leaves no grant behind. Binary ASCII collations: lock names and grant
-- ids compare byte for byte.
-- @section fence_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fence (
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  token BIGINT NOT NULL,
  updated_at DATETIME(6) NULL,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  grant_token BIGINT NULL
) ENGINE=InnoDB
-- @end

-- For a fence or stripe table an earlier release created without the grant columns (the installer skips a column
-- that exists). ${name} is the table's name.
-- @section add_grant_column
ALTER TABLE ${schema}${name} ADD COLUMN IF NOT EXISTS grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL
-- @end

-- @section add_grant_token_column
ALTER TABLE ${schema}${name} ADD COLUMN IF NOT EXISTS grant_token BIGINT NULL
-- @end

-- The stripes: 16 rows per lock, each a copy of the fence's token and grant (with the same grant_token rule), that
-- stand in for a shared lock (see fencing_check_v3). A writer locks the row of its connection, CONNECTION_ID() % 16.
-- @section stripe_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fence_stripe (
  lock_name VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  stripe INT NOT NULL,
  token BIGINT NOT NULL,
  grant_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  grant_token BIGINT NULL,
  PRIMARY KEY (lock_name, stripe)
) ENGINE=InnoDB
-- @end

-- The registry of fenced tables: one row per fenced (table, lock), names as the database reports them (binary
-- collation: MariaDB/MySQL table names may be case sensitive). Every role may read it (see the privileges below): the
-- agent finds fenced tables with it, whatever role it connects as.
-- @section registry_table
CREATE TABLE IF NOT EXISTS ${schema}fencing_fenced_table (
  table_schema VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  table_name VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  lock_name varchar(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  mode varchar(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  installed_at DATETIME(6) NULL,
  PRIMARY KEY (table_schema, table_name, lock_name)
) ENGINE=InnoDB
-- @end

-- The lock's fence row at token 0 (no write yet), so that writers find a row to lock from the first write on.
-- @section seed
INSERT IGNORE INTO ${schema}fencing_fence (lock_name, token, updated_at) VALUES (${lock}, 0, NULL)
-- @end

-- The lock's 16 stripes, starting at the fence's token, so that a lock whose stripes were lost does not restart at 0.
-- ${numbers} is the derived table of the stripe numbers 0 to 15 (SELECT 0 AS n UNION ALL SELECT 1 ...).
-- @section seed_stripes
INSERT IGNORE INTO ${schema}fencing_fence_stripe (lock_name, stripe, token, grant_id, grant_token)
  SELECT f.lock_name, n.n, f.token, f.grant_id, f.grant_token FROM ${schema}fencing_fence f, (${numbers}) n
  WHERE f.lock_name = ${lock}
-- @end

-- FN001 for a stale token. In a procedure of its own so that the per-row triggers share the message.
-- @section reject_stale
CREATE PROCEDURE IF NOT EXISTS ${schema}fencing_reject_stale_v1(
    IN p_lock VARCHAR(128) CHARACTER SET ascii, IN p_table VARCHAR(200) CHARACTER SET ascii,
    IN p_token BIGINT, IN p_current BIGINT)
  NO SQL SQL SECURITY DEFINER
  COMMENT 'Fencing Agent SQL fence: raises FN001 (stale token)'
BEGIN
  DECLARE v_msg VARCHAR(128) CHARACTER SET utf8mb4;
  SET v_msg = LEFT(CONCAT('fencing: stale token ', p_token, ' for lock ''', p_lock, ''' on ', p_table,
    ': current fence token is ', p_current), 128);
  SIGNAL SQLSTATE 'FN001' SET MESSAGE_TEXT = v_msg;
END
-- @end

-- Reads @fencing_token and @fencing_lock; returns the token in p_token, NULL for a missing token in permissive mode,
-- or raises FN002 saying what is wrong (missing, malformed: not a decimal bigint above 0, or a session lock that is
-- not the fence's). p_row_token is the row's token in per-row mode, for the message.
-- @section session_token
CREATE PROCEDURE IF NOT EXISTS ${schema}fencing_session_token_v1(
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
END
-- @end

-- Table mode, one call per row. MariaDB/MySQL lock every table a trigger's routines touch for the whole statement in
-- the strongest mode any of them needs, so a LOCK IN SHARE MODE read of the fence row would become exclusive here,
-- the fence table being written on advance. The shared lock is therefore striped: a same-token writer locks the
-- stripe row of its connection FOR UPDATE (same-token writers of other connections never wait for it), an advancing
-- writer locks all stripes, which waits for every transaction that passed with the old token. The stripe rows carry
-- the fence token, and a locking read returns the latest committed row in any isolation level. A plain (consistent)
-- read of the fence row first chooses which lock to take, which spares the deadlock of two writers going from one
-- stripe to all. An equal token is accepted only from the grant stored with it (or when none is stored; a grant_id
-- whose grant_token is not the stripe's token is none); a token that advances the fence stores the session's grant
-- and, for it, grant_token (both NULL when the session has none). In messages the grants come before the table
-- name, which is cut first.
-- @section check
CREATE PROCEDURE IF NOT EXISTS ${schema}fencing_check_v3(
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
END
-- @end

-- Per-row mode, when the table has no fencing_token column yet. The comment marks the column as the installer's, so
-- that uninstall removes only a column it added.
-- @section add_token_column
ALTER TABLE ${table} ADD COLUMN fencing_token BIGINT NULL COMMENT 'fencing token of the last write; added by the fencing-agent SQL fence installer'
-- @end

-- The triggers, one per event (BEFORE INSERT, UPDATE, DELETE: MariaDB/MySQL have no statement triggers, nor
-- TRUNCATE ones). Their names (fencing_<table>_<bi|bu|bd>_<hash of lock, table, options and procedure>) change with
-- the options and the procedure version, so that a re-install creates the new triggers before it drops the old ones
-- and the table is never unguarded. ${permissive} is TRUE or FALSE, ${table_name} the table as a literal for the
-- messages ('shop.orders').
--
-- Table mode: every event calls fencing_check_v3. ${event} is INSERT, UPDATE or DELETE.
-- @section trigger_table
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE ${event} ON ${table} FOR EACH ROW
CALL ${schema}fencing_check_v3(${lock}, ${permissive}, ${table_name})
-- @end

-- Per-row mode: the row's own token (column fencing_token) is the fence. An insert stamps the new row with the
-- session's token (none in permissive mode without a token); an update needs a token at least the row's and stamps
-- the row with it (without a token, permissive, the row keeps its token); a delete needs a token at least the row's.
-- @section trigger_row_insert
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE INSERT ON ${table} FOR EACH ROW
BEGIN
  DECLARE v_token BIGINT;
  CALL ${schema}fencing_session_token_v1(${lock}, ${permissive}, ${table_name}, TRUE, NULL, v_token);
  IF v_token IS NOT NULL THEN
    SET NEW.fencing_token = v_token;
  END IF;
END
-- @end

-- @section trigger_row_update
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE UPDATE ON ${table} FOR EACH ROW
BEGIN
  DECLARE v_token BIGINT;
  CALL ${schema}fencing_session_token_v1(${lock}, ${permissive}, ${table_name}, TRUE, OLD.fencing_token, v_token);
  IF v_token IS NULL THEN
    SET NEW.fencing_token = OLD.fencing_token;
  ELSEIF OLD.fencing_token > v_token THEN
    CALL ${schema}fencing_reject_stale_v1(${lock}, ${table_name}, v_token, OLD.fencing_token);
  ELSE
    SET NEW.fencing_token = v_token;
  END IF;
END
-- @end

-- @section trigger_row_delete
CREATE TRIGGER IF NOT EXISTS ${schema}${trigger}
  BEFORE DELETE ON ${table} FOR EACH ROW
BEGIN
  DECLARE v_token BIGINT;
  CALL ${schema}fencing_session_token_v1(${lock}, ${permissive}, ${table_name}, TRUE, OLD.fencing_token, v_token);
  IF OLD.fencing_token > v_token THEN
    CALL ${schema}fencing_reject_stale_v1(${lock}, ${table_name}, v_token, OLD.fencing_token);
  END IF;
END
-- @end

-- The table's registry row: a table has one fence, so rows for other locks go (their triggers were replaced), and an
-- unchanged re-install keeps installed_at. ${table_schema} is the database as a literal, or DATABASE() when the table
-- name is unqualified; ${table_name} is the table name as a literal; ${mode} is 'table' or 'row'.
-- @section unregister_other_locks
DELETE FROM ${schema}fencing_fenced_table WHERE table_schema = ${table_schema} AND table_name = ${table_name} AND lock_name <> ${lock}
-- @end

-- @section register
INSERT INTO ${schema}fencing_fenced_table (table_schema, table_name, lock_name, mode, installed_at)
  VALUES (${table_schema}, ${table_name}, ${lock}, ${mode}, NOW(6))
  ON DUPLICATE KEY UPDATE installed_at = IF(mode = VALUES(mode), installed_at, VALUES(installed_at)),
  mode = VALUES(mode)
-- @end

-- Privileges: every role may read the fence and the registry (fence detection). The procedures run as their definer
-- (SQL SECURITY DEFINER), so writers need no right on the fence's tables. ${name} is fencing_fence or
-- fencing_fenced_table. MariaDB 10.11+ knows PUBLIC; on MySQL and older MariaDB the installer leaves these out and
-- says so, and `sql print` puts public_grant_note before them.
-- @section grant_select
GRANT SELECT ON ${schema}${name} TO PUBLIC
-- @end

-- @section public_grant_note
-- MariaDB 10.11+ (GRANT ... TO PUBLIC). On MySQL or older MariaDB, grant SELECT on these two tables to the writers
-- instead: the agent detects the fence with it.
-- @end
