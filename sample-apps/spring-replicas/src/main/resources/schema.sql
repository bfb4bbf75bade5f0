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
