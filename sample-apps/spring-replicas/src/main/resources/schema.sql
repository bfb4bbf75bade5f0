-- Run by Spring's SQL init at every start (spring.sql.init.mode=always): startup writes, on every replica.
CREATE TABLE IF NOT EXISTS orders (
  id BIGSERIAL PRIMARY KEY,
  item TEXT NOT NULL,
  quantity INT NOT NULL,
  replica TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Not mapped by the entity: the fencing token the writing session carried, if any (see settlement_run).
  token_seen TEXT DEFAULT nullif(current_setting('fencing.token', true), '')
);
-- One row per settlement run. token_seen: the fencing token the writing session carried, if any (the SQL fence's
-- session variable; NULL when the write was not tagged).
CREATE TABLE IF NOT EXISTS settlement_run (
  id BIGSERIAL PRIMARY KEY,
  replica TEXT NOT NULL,
  orders_seen BIGINT NOT NULL,
  token_seen TEXT DEFAULT nullif(current_setting('fencing.token', true), ''),
  at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS replica_start (
  replica TEXT NOT NULL,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The JPA variant of the settlement job (app.settlement.store=jpa): ids from a pooled sequence, so a run's INSERT
-- leaves at the flush, when the transaction commits.
CREATE SEQUENCE IF NOT EXISTS settlement_entry_seq INCREMENT BY 50;
CREATE TABLE IF NOT EXISTS settlement_entry (
  id BIGINT PRIMARY KEY,
  replica TEXT NOT NULL,
  orders_seen BIGINT NOT NULL,
  token_seen TEXT DEFAULT nullif(current_setting('fencing.token', true), ''),
  at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Spring Session JDBC's tables (profile "session"), with the columns JdbcIndexedSessionRepository reads and writes.
CREATE TABLE IF NOT EXISTS spring_session (
  primary_id CHAR(36) NOT NULL PRIMARY KEY,
  session_id CHAR(36) NOT NULL UNIQUE,
  creation_time BIGINT NOT NULL,
  last_access_time BIGINT NOT NULL,
  max_inactive_interval INT NOT NULL,
  expiry_time BIGINT NOT NULL,
  principal_name VARCHAR(100)
);
CREATE INDEX IF NOT EXISTS spring_session_expiry ON spring_session (expiry_time);
CREATE TABLE IF NOT EXISTS spring_session_attributes (
  session_primary_id CHAR(36) NOT NULL REFERENCES spring_session (primary_id) ON DELETE CASCADE,
  attribute_name VARCHAR(200) NOT NULL,
  attribute_bytes BYTEA NOT NULL,
  PRIMARY KEY (session_primary_id, attribute_name)
);
-- ShedLock's lock table (profile "shedlock", JdbcTemplateLockProvider) and the rows its "settle" job writes, one
-- statement each (autocommit), so a reader sees which of a run's writes landed.
CREATE TABLE IF NOT EXISTS shedlock (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  lock_until TIMESTAMP NOT NULL,
  locked_at TIMESTAMP NOT NULL,
  locked_by VARCHAR(255) NOT NULL
);
CREATE TABLE IF NOT EXISTS settle_row (
  id BIGSERIAL PRIMARY KEY,
  replica TEXT NOT NULL,
  run BIGINT NOT NULL,
  step INT NOT NULL,
  token_seen TEXT DEFAULT nullif(current_setting('fencing.token', true), ''),
  at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The outbox profile's payments (app.outbox.enabled=true): each one defers its webhook to the outbox table, which the
-- DBA installs with `sql install --outbox outbox --lock <lock>`.
CREATE TABLE IF NOT EXISTS payment (
  id BIGSERIAL PRIMARY KEY,
  order_ref TEXT NOT NULL,
  replica TEXT NOT NULL,
  token_seen TEXT DEFAULT nullif(current_setting('fencing.token', true), '')
);
